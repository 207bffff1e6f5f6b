"""Aligning recordings in time: `--align start|first-gpu|steady` and `--at first-gpu+10`.

Two runs started at t = 0 are rarely at the same point at t = 10: one may still be building
its keys while the other has proved a hundred partitions. An anchor names a moment every run
has, so that "10 s after it" means the same in each:

  start      t = 0 (the run's start)
  first-gpu  the first GPU section: the first lock acquired on any GPU (set-up done)
  steady     the first verified partition (where the steady-state rate is measured from)

`Alignment` puts several recordings on one clock: common time c is seconds since each one's
anchor, run i's own time anchors[i] + c. Pure: nothing here reads a clock (compare's screen,
c2tui/dashboard/compare_app.py, plays the runs with the anchors as offsets).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Sequence, get_args

from prover import events as ev
from prover.fold.model import DashboardState

Anchor = Literal["start", "first-gpu", "steady"]
ANCHORS: tuple[str, ...] = get_args(Anchor)
_AT = re.compile(r"^\s*(?:(start|first-gpu|steady)\s*)?([+-]?\s*\d+(?:\.\d*)?|[+-]?\s*\.\d+)?\s*$")


def anchor_time(events: Iterable[ev.Event], anchor: str) -> float:
    """The recording's time of `anchor`; ValueError if the recording never reaches it."""
    if anchor == "start":
        return 0.0
    if anchor not in ANCHORS:
        raise ValueError(f"unknown anchor {anchor!r}; have {', '.join(ANCHORS)}")
    verified: set[str] = set()
    for e in events:
        if anchor == "first-gpu" and isinstance(e, ev.LockAcquired):
            return e.t
        if anchor == "steady":
            if isinstance(e, ev.ProofResult) and e.ok and e.checked:
                verified.add(e.part)
            elif isinstance(e, ev.PartitionDone) and e.ok and e.part in verified:
                return e.t
    what = "no GPU section (no lock was ever acquired)" if anchor == "first-gpu" else "no verified partition"
    raise ValueError(f"the recording has {what}, so it cannot be aligned at {anchor}")


def parse_at(spec: str) -> tuple[str | None, float]:
    """'25' -> (None, 25.0); 'first-gpu+10' -> ('first-gpu', 10.0); 'steady' -> ('steady', 0.0).
    Plain seconds are any float ('nan' too: the caller's range check then names the span)."""
    try:
        return None, float(spec)
    except ValueError:
        pass
    m = _AT.match(spec)
    if m is None or (m.group(1) is None and m.group(2) is None):
        raise ValueError(f"--at {spec!r}: give seconds (25) or an anchor and an offset "
                         f"({', '.join(a + '+10' for a in ANCHORS)})")
    offset = float(m.group(2).replace(" ", "")) if m.group(2) else 0.0
    return m.group(1), offset


def resolve_at(spec: str, events: Sequence[ev.Event]) -> float:
    """A recording's own time for an `--at` spec (not clamped: the caller checks its span)."""
    anchor, offset = parse_at(spec)
    return offset if anchor is None else anchor_time(events, anchor) + offset


@dataclass
class Alignment:
    """Several recordings aligned at one anchor: common time c is run i's own time anchors[i] + c."""

    anchors: list[float]  # each recording's anchor, in its own time
    ends: list[float]  # each recording's last event time

    @classmethod
    def of(cls, recordings: Sequence[Sequence[ev.Event]], anchor: str) -> "Alignment":
        return cls(anchors=[anchor_time(r, anchor) for r in recordings],
                   ends=[r[-1].t if r else 0.0 for r in recordings])

    @property
    def hi(self) -> float:
        """The last common time with anything to show: the longest tail after its anchor."""
        return max((e - a for a, e in zip(self.anchors, self.ends)), default=0.0)


def sample_rates(events: Sequence[ev.Event], times: Sequence[float], window_s: float) -> list[Any]:
    """The fold's Rates at each of `times` (ascending, the recording's own time), in one pass."""
    st = DashboardState(rate_window_s=window_s)
    out: list[Any] = []
    it = iter(events)  # one pass, each event read once: a replay's store parses an event a read
    e = next(it, None)
    for t in times:
        while e is not None and e.t <= t:
            st.apply(e)
            e = next(it, None)
        out.append(st.rates(t=max(st.t, t)))  # between events the clock is t, as in a replay
    return out


def nice_step(span: float, rows: int = 8) -> float:
    """A round sampling step (1, 2, 5 x 10^k s) giving about `rows` rows over `span`."""
    raw = max(span, 1e-3) / max(1, rows)
    k = 10 ** math.floor(math.log10(raw))
    return next(m * k for m in (1, 2, 5, 10) if m * k >= raw)
