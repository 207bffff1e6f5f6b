"""History: the last minutes of a run, per GPU and for the run, sampled on the event clock.

Every `step_s` of event time (bucket ends at multiples of step_s from t = 0, so a replay and
the live run sample the same instants) the fold closes a bucket: verified/min over the rate
window ending there, mean utilisation, VRAM live and pool-cached against the budget,
fallbacks and OOMs per minute over the same sliding window (the state's rate_window_s, named
on screen; not one bucket scaled up, issue 33) and the share of the bucket with `compute` held. A mark is kept
at every knob change, labelled with it. Bounded: `HISTORY_POINTS` per series, so day-long
runs stay small. The fold closes a bucket when an event's time passes its end, so a replay
folded to time T shows the history up to T and no further.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.rates import OkTimes, first_gpu_t, window_rate
from prover.fold.segments import change_label
from prover.fold.world import World

HISTORY_STEP_S = 2.0
HISTORY_POINTS = 180  # 6 minutes at 2 s


@dataclass
class HistoryPoint:
    t: float  # the bucket's end (event clock)
    verified_per_min: float  # over the rate window ending at t
    util: float | None  # mean of the bucket's samples (NVML or modelled); None: no sample
    vram_live: int  # bytes of live buffers at t
    vram_cached: int  # pool reserved but not handed out, at t
    budget: int
    fallbacks_per_min: float  # over the sliding window ending at t (History.window_s)
    ooms_per_min: float  # every OOM (an older recording's too, whose outcome is not said)
    compute_held: float  # share of the bucket with compute held (run: mean over GPUs)
    ooms_retried_per_min: float = 0.0  # by the Oom's outcome: a retried one is not a failure
    ooms_failed_per_min: float = 0.0


@dataclass
class HistoryMark:
    t: float
    label: str  # "mem_sync: device -> stream (switch)"
    knob: str
    old: str
    new: str
    source: str
    gpu: int | None = None


@dataclass
class _Bucket:
    """What one GPU gathered in the open bucket."""

    util_sum: float = 0.0
    util_n: int = 0
    fallbacks: int = 0
    ooms: int = 0
    held: float = 0.0  # seconds of compute held inside the bucket


def _series() -> deque[HistoryPoint]:
    return deque(maxlen=HISTORY_POINTS)


@dataclass
class History:
    step_s: float = HISTORY_STEP_S
    run: deque[HistoryPoint] = field(default_factory=_series)
    gpus: dict[int, deque[HistoryPoint]] = field(default_factory=dict)
    marks: deque[HistoryMark] = field(default_factory=lambda: deque(maxlen=256))
    bucket_t0: float = 0.0
    open: dict[int, _Bucket] = field(default_factory=dict)
    window_s: float = 30.0  # the sliding window of the per-minute series (the fold's rate window)
    fallback_times: dict[int, OkTimes] = field(default_factory=dict)  # per GPU, the last window's worth
    oom_times: dict[int, OkTimes] = field(default_factory=dict)
    oom_said: dict[tuple[int, str], OkTimes] = field(default_factory=dict)  # (gpu, retried|failed) -> times

    def gpu(self, i: int) -> _Bucket:
        b = self.open.get(i)
        if b is None:
            b = self.open[i] = _Bucket()
        return b

    def copy(self) -> "History":
        """A copy the UI may read while the fold goes on (points are never changed once made)."""
        return History(step_s=self.step_s, run=deque(self.run, maxlen=self.run.maxlen),
                       gpus={i: deque(d, maxlen=d.maxlen) for i, d in self.gpus.items()},
                       marks=deque(self.marks, maxlen=self.marks.maxlen), bucket_t0=self.bucket_t0,
                       open={i: _Bucket(b.util_sum, b.util_n, b.fallbacks, b.ooms, b.held) for i, b in self.open.items()},
                       window_s=self.window_s, fallback_times={i: o.copy() for i, o in self.fallback_times.items()},
                       oom_times={i: o.copy() for i, o in self.oom_times.items()},
                       oom_said={k: o.copy() for k, o in self.oom_said.items()})

    def series(self, gpu: int | None = None) -> list[HistoryPoint]:
        """The run's series (gpu None) or one GPU's, oldest first."""
        return list(self.run if gpu is None else self.gpus.get(gpu, ()))


def advance(h: History, t: float, w: World) -> float:
    """Close every bucket that ends before t (before the event at t is folded; an event at
    exactly a bucket's end still belongs to it); returns the open bucket's end."""
    end = h.bucket_t0 + h.step_s
    if t <= end:
        return end
    if t - end > h.step_s * HISTORY_POINTS:  # a long gap: the skipped buckets would all fall off
        h.bucket_t0 = end = h.step_s * (int(t / h.step_s) - HISTORY_POINTS)
        end += h.step_s
    while t > end:
        _close(h, w, end)
        h.bucket_t0, end = end, end + h.step_s
    return end


def _per_min(times: OkTimes | None, end: float, window_s: float) -> float:
    """Events per minute over the sliding window ending at end (never before t = 0)."""
    span = min(window_s, end)
    return 60.0 * times.count_in(end - window_s, end) / span if times is not None and span > 0 else 0.0


def _close(h: History, w: World, end: float) -> None:
    h.window_s = w.rate_window_s
    pts: list[HistoryPoint] = []
    for i in sorted(w.gpus):
        g = w.gpus[i]
        b = h.gpu(i)
        lk = g.locks.get("compute")
        if lk is not None and lk.holder is not None:  # the hold still open: its part inside this bucket
            b.held += max(0.0, end - max(lk.since, h.bucket_t0))
        rate, _ = window_rate(g.ok_times, end, w.rate_window_s, g.first_compute_t)
        pt = HistoryPoint(t=end, verified_per_min=rate, util=b.util_sum / b.util_n if b.util_n else None,
                          vram_live=g.live_bytes, vram_cached=max(0, g.pool_reserved - g.pool_used), budget=g.budget,
                          fallbacks_per_min=_per_min(h.fallback_times.get(i), end, h.window_s),
                          ooms_per_min=_per_min(h.oom_times.get(i), end, h.window_s),
                          compute_held=min(1.0, b.held / h.step_s),
                          ooms_retried_per_min=_per_min(h.oom_said.get((i, "retried")), end, h.window_s),
                          ooms_failed_per_min=_per_min(h.oom_said.get((i, "failed")), end, h.window_s))
        h.gpus.setdefault(i, _series()).append(pt)
        pts.append(pt)
    h.open.clear()
    utils = [p.util for p in pts if p.util is not None]
    rate, _ = window_rate(w.ok_times, end, w.rate_window_s, first_gpu_t(w.gpus.values()))
    h.run.append(HistoryPoint(
        t=end, verified_per_min=rate, util=sum(utils) / len(utils) if utils else None,
        vram_live=sum(p.vram_live for p in pts), vram_cached=sum(p.vram_cached for p in pts),
        budget=sum(p.budget for p in pts), fallbacks_per_min=sum(p.fallbacks_per_min for p in pts),
        ooms_per_min=sum(p.ooms_per_min for p in pts),
        compute_held=sum(p.compute_held for p in pts) / len(pts) if pts else 0.0,
        ooms_retried_per_min=sum(p.ooms_retried_per_min for p in pts),
        ooms_failed_per_min=sum(p.ooms_failed_per_min for p in pts)))


def _vram_sample(h: History, e: ev.VramSample, w: World) -> None:
    if e.util is not None:
        b = h.gpu(e.gpu)
        b.util_sum += e.util
        b.util_n += 1


def _fallback(h: History, e: ev.Fallback, w: World) -> None:
    h.gpu(e.gpu).fallbacks += 1
    h.fallback_times.setdefault(e.gpu, OkTimes()).add(e.t, w.rate_window_s)


def _oom(h: History, e: ev.Oom, w: World) -> None:
    h.gpu(e.gpu).ooms += 1
    h.oom_times.setdefault(e.gpu, OkTimes()).add(e.t, w.rate_window_s)
    if e.outcome is not None:  # an older recording's: in ooms_per_min only, never guessed
        h.oom_said.setdefault((e.gpu, e.outcome), OkTimes()).add(e.t, w.rate_window_s)


def _lock_released(h: History, e: ev.LockReleased, w: World) -> None:
    if e.lock == "compute":
        h.gpu(e.gpu).held += max(0.0, min(e.hold, e.t - h.bucket_t0))


def _mode_change(h: History, e: ev.ModeChange, w: World) -> None:
    h.marks.append(HistoryMark(t=e.t, label=change_label(e), knob=e.knob, old=e.old, new=e.new,
                               source=e.source, gpu=e.gpu))


def _job_action(h: History, e: ev.JobAction, w: World) -> None:
    """A cordon is a mark like a knob change: the GPUs taking work changed there."""
    if e.action in ("cordon", "uncordon"):
        h.marks.append(HistoryMark(t=e.t, label=f"{e.action}: - -> {e.target} ({e.source})", knob=e.action, old="-",
                                   new=e.target, source=e.source))  # the target names the GPU: "cordon→gpu1"


CONCEPT = Concept("history", History, {
    ev.JobAction: _job_action,
    ev.VramSample: _vram_sample, ev.Fallback: _fallback, ev.Oom: _oom, ev.LockReleased: _lock_released,
    ev.ModeChange: _mode_change,
}, view=lambda h, now: h.copy(), tick=advance)
