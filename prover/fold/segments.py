"""Segments: the run split at every knob change, so a switch has a before and an after.

The fold keeps one `RunSegment` open (the state's `segments[-1]`); a ModeChange closes it
and opens the next with the knobs as they are now. Each counts what happened inside it:
verified partitions (with the first and last time, for a steady rate within the segment),
fallbacks, OOMs, mem waits and holds, the compute lock's held time and the device-global
syncs. `segment_rows(state)` derives the figures (rates, shares, the ratio to the segment
before) once, for `summary`, the dashboard's panel and `compare` alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.world import World
from prover.knobs import KNOBS

SAME_MOMENT_S = 1e-3  # changes this close together (one `--switch AT:a,b` or a profile) open one segment
MAX_SEGMENTS = 500  # the oldest go first (a script flipping a knob all day stays bounded)


@dataclass
class RunSegment:
    index: int
    t0: float
    knobs: dict[str, str]  # as the fold keeps them (event text)
    change: str | None = None  # what opened it ("mem_sync: device -> stream (switch)"); None: the start
    t1: float | None = None  # None: still open
    verified: int = 0
    gpu_verified: dict[int, int] = field(default_factory=dict)
    first_ok_t: float | None = None
    last_ok_t: float | None = None
    done: int = 0
    failed: int = 0
    fallbacks: int = 0
    ooms: int = 0
    mem_acquisitions: int = 0
    mem_wait: float = 0.0
    mem_hold: float = 0.0
    compute_hold: float = 0.0  # seconds of compute held, summed over GPUs
    device_syncs: int = 0
    device_sync_s: float = 0.0

    def duration(self, now: float) -> float:
        return max(0.0, (self.t1 if self.t1 is not None else now) - self.t0)


def copy_segments(segs: list[RunSegment]) -> list[RunSegment]:
    """A copy the UI may read while the fold goes on."""
    return [replace(sg, knobs=dict(sg.knobs), gpu_verified=dict(sg.gpu_verified)) for sg in segs]


def typed_knobs(knobs: dict[str, str]) -> dict[str, str | bool | int]:
    """The fold keeps knobs as event text ('True', '3'); JSON output wants their types."""
    out: dict[str, str | bool | int] = {}
    for k, v in knobs.items():
        try:
            out[k] = KNOBS[k].parse(v) if k in KNOBS else v
        except ValueError:
            out[k] = v
    return out


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
    mem_wait_mean: float
    mem_hold_mean: float
    mem_wait_total: float
    mem_hold_total: float
    compute_held_share: float = Field(description="compute held / (duration x GPUs)")
    device_syncs: int
    device_sync_s: float = Field(description="total time mem holders waited in device-global syncs")


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
def _mode_change(segs: list[RunSegment], e: ev.ModeChange, w: World) -> None:
    open_segment(segs, w.knobs, e.t, change_label(e))


def _job_action(segs: list[RunSegment], e: ev.JobAction, w: World) -> None:
    """A cordon changes the GPUs that take work: a rate across it would include the hole (issue 36)."""
    if e.action in ("cordon", "uncordon"):
        open_segment(segs, w.knobs, e.t, f"{e.action}: - -> {e.target} ({e.source})")  # reads "cordon→gpu1"


def _run_started(segs: list[RunSegment], e: ev.RunStarted, w: World) -> None:
    segs.clear()
    open_segment(segs, w.knobs, e.t, None)
    segs[0].knobs = dict(w.knobs)


def _partition_done(segs: list[RunSegment], e: ev.PartitionDone, w: World) -> None:
    seg = segs[-1]
    p = w.partitions.get(e.part)
    seg.done += 1
    seg.failed += not e.ok
    if e.ok and p is not None and p.verified is True:
        seg.verified += 1
        if p.gpu is not None:
            seg.gpu_verified[p.gpu] = seg.gpu_verified.get(p.gpu, 0) + 1
        seg.first_ok_t = e.t if seg.first_ok_t is None else seg.first_ok_t
        seg.last_ok_t = e.t


def _fallback(segs: list[RunSegment], e: ev.Fallback, w: World) -> None:
    segs[-1].fallbacks += 1


def _oom(segs: list[RunSegment], e: ev.Oom, w: World) -> None:
    segs[-1].ooms += 1


def _lock_acquired(segs: list[RunSegment], e: ev.LockAcquired, w: World) -> None:
    if e.lock == "mem":
        seg = segs[-1]
        seg.mem_acquisitions += 1
        seg.mem_wait += e.wait


def _lock_released(segs: list[RunSegment], e: ev.LockReleased, w: World) -> None:
    seg = segs[-1]
    if e.lock == "mem":
        seg.mem_hold += e.hold
    if e.lock != "compute":
        return
    # a hold that began before this segment: its earlier part belongs to the segments before
    start = e.t - e.hold
    for sg in reversed(segs):
        part = min(e.t, sg.t1 if sg.t1 is not None else e.t) - max(start, sg.t0)
        if part > 0:
            sg.compute_hold += part
        if sg.t0 <= start:
            break


def _device_sync_end(segs: list[RunSegment], e: ev.DeviceSyncEnd, w: World) -> None:
    segs[-1].device_sync_s += e.duration
    segs[-1].device_syncs += 1


def _first() -> list[RunSegment]:
    return [RunSegment(index=0, t0=0.0, knobs={})]


CONCEPT = Concept("segments", _first, {
    ev.JobAction: _job_action,
    ev.RunStarted: _run_started, ev.ModeChange: _mode_change, ev.PartitionDone: _partition_done,
    ev.Fallback: _fallback, ev.Oom: _oom, ev.LockAcquired: _lock_acquired, ev.LockReleased: _lock_released,
    ev.DeviceSyncEnd: _device_sync_end,
}, view=lambda segs, now: copy_segments(segs))


def _steady(seg: RunSegment) -> float | None:
    if seg.verified >= 2 and seg.first_ok_t is not None and seg.last_ok_t is not None and seg.last_ok_t > seg.first_ok_t:
        return 60.0 * (seg.verified - 1) / (seg.last_ok_t - seg.first_ok_t)
    return None


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
    prev: float | None = None
    for seg in s.segments:
        dur = seg.duration(s.t)
        rate = _steady(seg)
        n = seg.mem_acquisitions
        rows.append(SegmentSummary(
            index=seg.index, t0=seg.t0, t1=seg.t1 if seg.t1 is not None else s.t, duration_s=dur,
            open=seg.t1 is None and not s.ended, change=seg.change, knobs=typed_knobs(seg.knobs), verified=seg.verified,
            done=seg.done, failed=seg.failed, verified_per_min=rate,
            mean_per_min=60.0 * seg.verified / dur if dur > 0 else 0.0,
            ratio=rate / prev if rate is not None and prev else None,
            fallbacks=seg.fallbacks, ooms=seg.ooms, mem_wait_mean=seg.mem_wait / n if n else 0.0,
            mem_hold_mean=seg.mem_hold / n if n else 0.0, mem_wait_total=seg.mem_wait, mem_hold_total=seg.mem_hold,
            compute_held_share=min(1.0, seg.compute_hold / (dur * ngpu)) if dur > 0 else 0.0,
            device_syncs=seg.device_syncs, device_sync_s=seg.device_sync_s))
        prev = rate
    return rows
