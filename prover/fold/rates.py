"""Rates that answer "what did that switch do": verified/min over a recent window, since the
last knob change, and the mean since start (labelled so wherever it appears).

The mean since t=0 carries warm-up and key set-up, so after a switch it creeps for minutes;
the windowed rate follows the run within one window. Every figure is on the event clock (the
fold's `t`), so a replay at time T shows the rates as they were at T.

Window start: never before the first GPU section on that GPU (the first compute acquire),
so a run still in set-up is not averaged with empty seconds.

Each rate says what it rests on (issue 33): the proofs counted and a 95% interval, the exact
Poisson interval of that count over the span (prover/stats/intervals.py: rate_interval;
docs/figures.md). A rate on fewer than SETTLE_PROOFS proofs is *settling*: the screen says so
before the number.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from prover.stats.intervals import rate_interval

RATE_WINDOW_S = 30.0  # the default window; the state's rate_window_s names the one in use
SETTLE_PROOFS = 10  # fewer proofs in a window: "settling" (its 95% interval reaches past 1.85x the rate: 1.90x at 9)


@dataclass
class OkTimes:
    """When verified partitions finished, the last few windows' worth (bounded by time)."""

    times: deque[float] = field(default_factory=deque)

    def add(self, t: float, keep_s: float) -> None:
        self.times.append(t)
        while self.times and self.times[0] < t - keep_s:
            self.times.popleft()

    def copy(self) -> "OkTimes":
        return OkTimes(deque(self.times))

    def count_in(self, t0: float, t1: float) -> int:
        """Verified partitions finished in (t0, t1]."""
        n = 0
        for x in reversed(self.times):  # newest first: stop at the window's start
            if x <= t0:
                break
            n += x <= t1
        return n


@dataclass
class Rates:
    """The run's (or one GPU's) rates at `t`; per minute, verified partitions only."""

    t: float
    window_s: float  # the window asked for (named on screen)
    windowed_per_min: float  # over (t - window, t], never before the first GPU section
    window_span_s: float  # the part of the window that counted (< window_s early in a run)
    mean_per_min: float  # mean since start (t = 0, set-up included): label it so
    since_change_per_min: float | None  # since the last knob change (None: no change yet, or no time since)
    since_change_s: float | None  # how long ago the last change was
    change: str | None  # the last change, e.g. "mem_sync: device -> stream"
    window_proofs: int = 0  # verified proofs the windowed rate rests on
    window_ci: tuple[float, float] | None = None  # its 95% interval (per minute)
    since_change_proofs: int = 0  # proofs of sections begun since the change
    since_change_ci: tuple[float, float] | None = None
    # the segment before the last change (the run's rates only): its steady rate, as Segments shows it
    before_per_min: float | None = None
    before_ci: tuple[float, float] | None = None
    settle_proofs: int = SETTLE_PROOFS  # the count below which a rate is "settling" (said on screen)

    @property
    def settling(self) -> bool:
        """The windowed rate rests on too few proofs to mean much yet."""
        return self.window_proofs < SETTLE_PROOFS

    @property
    def since_change_settling(self) -> bool:
        return self.since_change_proofs < SETTLE_PROOFS


def window_rate(ok: OkTimes, t: float, window_s: float, anchor: float | None) -> tuple[float, float]:
    """(verified/min over the window ending at t, seconds of it that counted)."""
    rate, span, _ = window_count(ok, t, window_s, anchor)
    return rate, span


def window_count(ok: OkTimes, t: float, window_s: float, anchor: float | None) -> tuple[float, float, int]:
    """(verified/min over the window ending at t, seconds of it that counted, proofs counted)."""
    if anchor is None or t <= anchor:
        return 0.0, 0.0, 0
    t0 = max(t - window_s, anchor)
    n = ok.count_in(t0, t)
    return 60.0 * n / (t - t0), t - t0, n


def interval(n: int, span_s: float) -> tuple[float, float] | None:
    """The 95% interval (per minute) of n proofs counted over span_s seconds."""
    return rate_interval(n, span_s)


def first_gpu_t(gpus: Iterable[Any]) -> float | None:
    """The run's first GPU section (first compute acquire on any GPU); None before it."""
    ts = [g.first_compute_t for g in gpus if g.first_compute_t is not None]
    return min(ts) if ts else None
