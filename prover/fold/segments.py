"""Segments: the run split at every knob change, so a switch has a before and an after.

The fold keeps one `RunSegment` open (the state's `segments[-1]`); a ModeChange closes it
and opens the next with the knobs as they are now. Each counts what happened inside it:
verified partitions (with the first and last time, for a steady rate within the segment),
fallbacks, OOMs, mem waits and holds, the compute lock's held time and the device-global
syncs. `segment_rows(state)` derives the figures (rates, shares, the ratio to the segment
before) once, for `summary`, the dashboard's panel and `compare` alike.

Attribution (issue 33): each figure counts the GPU sections begun under the segment's knobs
(prover/fold/sections.py says when one began); what a section begun earlier does inside a
later segment is that segment's *transitional* figures (`carried`), never its own. Every
rate comes with its proofs and a 95% interval (prover/stats/intervals.py, docs/figures.md).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Protocol

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.sections import SectionBook, section_begun
from prover.fold.world import World
from prover.knobs import KNOBS
from prover.stats.intervals import rate_interval, rate_ratio_interval

# changes this close together open one segment: a knob set (`--switch AT:a=1,b=2`, an arm) emits its
# ModeChanges back to back, but a GIL hand-over between them (5 ms, sys.getswitchinterval) can part them
SAME_MOMENT_S = 0.02
MAX_SEGMENTS = 500  # the oldest go first (a script flipping a knob all day stays bounded)


@dataclass
class Counts:
    """What GPU sections did: a segment's own (begun under its knobs) or carried (begun under an
    earlier segment's knobs, seen inside this one); counted alike, kept apart."""

    done: int = 0
    verified: int = 0
    fallbacks: int = 0
    ooms: int = 0
    ooms_retried: int = 0  # by the Oom's outcome; an older recording's (outcome not said) in ooms only
    ooms_failed: int = 0
    device_syncs: int = 0
    device_sync_s: float = 0.0

    def oom(self, outcome: str | None) -> None:
        self.ooms += 1
        self.ooms_retried += outcome == "retried"
        self.ooms_failed += outcome == "failed"

    def device_sync(self, seconds: float) -> None:
        self.device_syncs += 1
        self.device_sync_s += seconds


@dataclass
class RunSegment:
    index: int
    t0: float
    knobs: dict[str, str]  # as the fold keeps them (event text)
    change: str | None = None  # what opened it ("mem_sync: device -> stream (switch)"); None: the start
    t1: float | None = None  # None: still open
    own: Counts = field(default_factory=Counts)  # the sections begun under its knobs
    carried: Counts = field(default_factory=Counts)  # transitional: sections begun before it, seen in it
    gpu_verified: dict[int, int] = field(default_factory=dict)
    first_ok_t: float | None = None
    last_ok_t: float | None = None
    failed: int = 0
    mem_acquisitions: int = 0
    mem_wait: float = 0.0
    mem_hold: float = 0.0
    compute_hold: float = 0.0  # seconds of compute held, summed over GPUs

    def duration(self, now: float) -> float:
        return max(0.0, (self.t1 if self.t1 is not None else now) - self.t0)


class Segments(list[RunSegment]):
    """The segments (a list, as every reader takes it) and the book of which one each running
    section belongs to."""

    def __init__(self, items: list[RunSegment] | None = None, book: SectionBook | None = None) -> None:
        super().__init__(items or [])
        self.book = book if book is not None else SectionBook()

    def by_index(self, index: int | None) -> RunSegment | None:
        """The segment of that index (None: unknown, or dropped as the oldest)."""
        if index is None or not self:
            return None
        i = index - self[0].index
        return self[i] if 0 <= i < len(self) else None


def copy_segments(segs: list[RunSegment]) -> Segments:
    """A copy the UI may read while the fold goes on."""
    book = segs.book.copy() if isinstance(segs, Segments) else None
    return Segments([replace(sg, knobs=dict(sg.knobs), gpu_verified=dict(sg.gpu_verified), own=replace(sg.own),
                             carried=replace(sg.carried)) for sg in segs], book)


def typed_knobs(knobs: dict[str, str]) -> dict[str, str | bool | int]:
    """The fold keeps knobs as event text ('True', '3'); JSON output wants their types."""
    out: dict[str, str | bool | int] = {}
    for k, v in knobs.items():
        try:
            out[k] = KNOBS[k].parse(v) if k in KNOBS else v
        except ValueError:
            out[k] = v
    return out


class Transitional(BaseModel):
    """What sections begun before a segment (under the knobs before its switch) did inside it:
    shown apart, never counted in the segment's own figures."""

    done: int = 0
    verified: int = 0
    fallbacks: int = 0
    ooms: int = 0
    ooms_retried: int = 0
    ooms_failed: int = 0
    device_syncs: int = 0
    device_sync_s: float = 0.0


class SegmentSummary(BaseModel):
    """One segment's figures (JSON in `summary --json`, rows of the panel and of `compare`)."""

    index: int
    t0: float = Field(description="s since run start")
    t1: float = Field(description="s since run start (the fold's time if still open)")
    duration_s: float
    open: bool = Field(description="still running (the last segment of a live or cut-short run)")
    change: str | None = Field(None, description="the knob change that opened it; None for the first")
    knobs: dict[str, str | bool | int]
    verified: int
    done: int
    failed: int
    verified_per_min: float | None = Field(
        None, description="steady within the segment: (verified - 1) / (last - first verified); None under 2")
    mean_per_min: float = Field(description="verified / duration")
    ratio: float | None = Field(None, description="verified_per_min / the segment before's (None: first, or unknown)")
    fallbacks: int
    ooms: int
    ooms_retried: int = Field(0, description="OOMs after which the partition went on (fallback, its GPU section again)")
    ooms_failed: int = Field(0, description="OOMs that ended the attempt (older recordings say neither: in ooms only)")
    mem_wait_mean: float
    mem_hold_mean: float
    mem_wait_total: float
    mem_hold_total: float
    compute_held_share: float = Field(description="compute held / (duration x GPUs)")
    device_syncs: int
    device_sync_s: float = Field(description="total time mem holders waited in device-global syncs, summed over GPUs")
    proofs: int = Field(0, description="verified proofs per_min rests on (sections begun under these knobs)")
    per_min: float = Field(0.0, description="verified/min: verified_per_min from 2 proofs on, else mean_per_min")
    per_min_ci: tuple[float, float] | None = Field(
        None, description="95% interval of per_min: exact Poisson interval of the proofs counted over its span")
    ratio_ci: tuple[float, float] | None = Field(None, description="95% interval of ratio (two Poisson counts)")
    ratio_significant: bool | None = Field(None, description="ratio_ci excludes 1 (None: no ratio)")
    transitional: Transitional = Field(default_factory=lambda: Transitional(),
                                       description="sections begun under an earlier segment's knobs, seen in this one")


def open_segment(segs: list[RunSegment], knobs: dict[str, str], t: float, change: str | None) -> RunSegment:
    """Close the open segment at t and open the next (the first one at the run's start)."""
    if segs:
        cur = segs[-1]
        if t - cur.t0 < SAME_MOMENT_S and cur.index > 0:  # the same moment: one change of several knobs
            cur.knobs = dict(knobs)
            cur.change = f"{cur.change}, {change}" if cur.change and change else (change or cur.change)
            return cur
        cur.t1 = t
    seg = RunSegment(index=segs[-1].index + 1 if segs else 0, t0=t, knobs=dict(knobs), change=change)
    segs.append(seg)
    if len(segs) > MAX_SEGMENTS:
        del segs[0]
    return seg


def on_off(v: object) -> str:
    """Booleans as an operator says them (on/off), in the event log and text output."""
    if isinstance(v, bool):
        return "on" if v else "off"
    return {"True": "on", "False": "off"}.get(str(v), str(v))


def change_label(e: ev.ModeChange) -> str:
    where = "" if e.gpu is None else f"gpu{e.gpu} "
    return f"{where}{e.knob}: {on_off(e.old)} -> {on_off(e.new)} ({e.source})"


# the segments' handlers run after the core's (prover/fold/__init__.py): the knobs are the new ones
def _mode_change(segs: Segments, e: ev.ModeChange, w: World) -> None:
    last = segs[-1] if segs else None
    seg = open_segment(segs, w.knobs, e.t, change_label(e))
    prev = seg.index - 1 if seg is last else (last.index if last is not None else 0)
    before, after = {**w.knobs, e.knob: e.old}, {**w.knobs, e.knob: e.new}
    segs.book.switch([e.gpu] if e.gpu is not None else list(w.gpus), before, after, prev)


def _job_action(segs: Segments, e: ev.JobAction, w: World) -> None:
    """A cordon changes the GPUs that take work: a rate across it would include the hole (issue 36)."""
    if e.action in ("cordon", "uncordon"):
        open_segment(segs, w.knobs, e.t, f"{e.action}: - -> {e.target} ({e.source})")  # reads "cordon→gpu1"


def _switch_settled(segs: Segments, e: ev.SwitchSettled, w: World) -> None:
    segs.book.settled(e.gpu)


def _run_started(segs: Segments, e: ev.RunStarted, w: World) -> None:
    segs.clear()
    segs.book = SectionBook()
    open_segment(segs, w.knobs, e.t, None)
    segs[0].knobs = dict(w.knobs)


def _charged(segs: Segments, part: str | None) -> tuple[RunSegment, RunSegment | None]:
    """(the segment a section's event counts for, the open one when that is a later segment:
    the event is transitional there)."""
    own = segs.by_index(segs.book.of(part)) or segs[-1]
    return own, (segs[-1] if own is not segs[-1] else None)


def _count(segs: Segments, part: str | None, add: Callable[[Counts], None]) -> RunSegment:
    """Count a section's event in its segment's own figures and, where it is a later segment's
    business too, in that one's carried figures (once, the same way)."""
    seg, later = _charged(segs, part)
    add(seg.own)
    if later is not None:
        add(later.carried)
    return seg


def _begin(segs: Segments, e: Any, w: World | None = None) -> None:
    """A section's start, by the one rule (prover/fold/sections.py: section_begun)."""
    got = section_begun(e)
    if got is None:
        return
    part, gpu, exact = got
    if gpu is None:
        return
    if exact:
        segs.book.announce(part, gpu, segs[-1].index)
    else:
        segs.book.begin(part, gpu, segs[-1].index)


def _partition_done(segs: Segments, e: ev.PartitionDone, w: World) -> None:
    p = w.partitions.get(e.part)
    ok = e.ok and p is not None and p.verified is True

    def add(c: Counts) -> None:
        c.done += 1
        c.verified += ok

    seg = _count(segs, e.part, add)
    segs.book.end(e.part)
    seg.failed += not e.ok
    if ok:
        if p is not None and p.gpu is not None:
            seg.gpu_verified[p.gpu] = seg.gpu_verified.get(p.gpu, 0) + 1
        seg.first_ok_t = e.t if seg.first_ok_t is None else seg.first_ok_t
        seg.last_ok_t = e.t


def _cancelled(segs: Segments, e: ev.PartitionCancelled, w: World) -> None:
    segs.book.end(e.part)


def _fallback(segs: Segments, e: ev.Fallback, w: World) -> None:
    _begin(segs, e)

    def add(c: Counts) -> None:
        c.fallbacks += 1

    _count(segs, e.part, add)


def _oom(segs: Segments, e: ev.Oom, w: World) -> None:
    _begin(segs, e)
    _count(segs, e.part, lambda c: c.oom(e.outcome))


def _lock_acquired(segs: Segments, e: ev.LockAcquired, w: World) -> None:
    _begin(segs, e)
    if e.lock == "mem":
        seg = _charged(segs, e.part)[0]
        seg.mem_acquisitions += 1
        seg.mem_wait += e.wait


def _lock_released(segs: Segments, e: ev.LockReleased, w: World) -> None:
    if e.lock == "mem":
        _charged(segs, e.part)[0].mem_hold += e.hold
    if e.lock != "compute":
        return
    # compute held is a share of each segment's time: a hold that began before this segment
    # is split by time (its earlier part belongs to the segments before)
    start = e.t - e.hold
    for sg in reversed(segs):
        part = min(e.t, sg.t1 if sg.t1 is not None else e.t) - max(start, sg.t0)
        if part > 0:
            sg.compute_hold += part
        if sg.t0 <= start:
            break


def _device_sync_end(segs: Segments, e: ev.DeviceSyncEnd, w: World) -> None:
    _count(segs, e.part, lambda c: c.device_sync(e.duration))


def _first() -> Segments:
    return Segments([RunSegment(index=0, t0=0.0, knobs={})])


CONCEPT = Concept("segments", _first, {
    ev.JobAction: _job_action,
    ev.RunStarted: _run_started, ev.ModeChange: _mode_change, ev.SwitchSettled: _switch_settled,
    ev.PartitionDone: _partition_done, ev.PartitionCancelled: _cancelled, ev.Fallback: _fallback, ev.Oom: _oom,
    ev.LockRequested: _begin, ev.LockAcquired: _lock_acquired, ev.LockReleased: _lock_released,
    ev.PhaseStart: _begin, ev.Alloc: _begin, ev.DeviceSyncStart: _begin, ev.SectionBegan: _begin,
    ev.DeviceSyncEnd: _device_sync_end,
}, view=lambda segs, now: copy_segments(segs))


def _steady(seg: RunSegment) -> float | None:
    n = seg.own.verified
    if n >= 2 and seg.first_ok_t is not None and seg.last_ok_t is not None and seg.last_ok_t > seg.first_ok_t:
        return 60.0 * (n - 1) / (seg.last_ok_t - seg.first_ok_t)
    return None


def rate_basis(seg: RunSegment, now: float) -> tuple[float, int, float]:
    """(per minute, the count the interval is of, the span in seconds it is over): from 2
    proofs on, the gaps between the first and the last completion (n - 1 over their span: a
    Poisson count conditional on the first); before that, the proofs over the segment's time."""
    rate = _steady(seg)
    if rate is not None and seg.first_ok_t is not None and seg.last_ok_t is not None:
        return rate, seg.own.verified - 1, seg.last_ok_t - seg.first_ok_t
    dur = seg.duration(now)
    return (60.0 * seg.own.verified / dur if dur > 0 else 0.0), seg.own.verified, dur


class _Run(Protocol):
    """What segment_rows reads of the state."""

    t: float
    ended: bool
    segments: list[RunSegment]
    gpus: dict[int, Any]


def segment_rows(s: _Run) -> list[SegmentSummary]:
    """Every segment's figures at the fold's time, each with its ratio to the one before."""
    rows: list[SegmentSummary] = []
    ngpu = max(1, len(s.gpus))
    prev: tuple[float, int, float] | None = None
    for seg in s.segments:
        dur = seg.duration(s.t)
        rate = _steady(seg)
        basis = rate_basis(seg, s.t)
        n = seg.mem_acquisitions
        ratio = rate / prev[0] if rate is not None and prev and prev[0] else None
        rci = rate_ratio_interval(basis[1], basis[2], prev[1], prev[2]) if ratio is not None and prev else None
        own = seg.own
        rows.append(SegmentSummary(
            index=seg.index, t0=seg.t0, t1=seg.t1 if seg.t1 is not None else s.t, duration_s=dur,
            open=seg.t1 is None and not s.ended, change=seg.change, knobs=typed_knobs(seg.knobs), verified=own.verified,
            done=own.done, failed=seg.failed, verified_per_min=rate,
            mean_per_min=60.0 * own.verified / dur if dur > 0 else 0.0,
            ratio=ratio, ratio_ci=rci, ratio_significant=None if rci is None else not rci[0] <= 1.0 <= rci[1],
            fallbacks=own.fallbacks, ooms=own.ooms, ooms_retried=own.ooms_retried, ooms_failed=own.ooms_failed,
            mem_wait_mean=seg.mem_wait / n if n else 0.0,
            mem_hold_mean=seg.mem_hold / n if n else 0.0, mem_wait_total=seg.mem_wait, mem_hold_total=seg.mem_hold,
            compute_held_share=min(1.0, seg.compute_hold / (dur * ngpu)) if dur > 0 else 0.0,
            device_syncs=own.device_syncs, device_sync_s=own.device_sync_s,
            proofs=own.verified, per_min=basis[0], per_min_ci=rate_interval(basis[1], basis[2]),
            transitional=Transitional(**asdict(seg.carried))))
        prev = basis if rate is not None else None
    return rows
