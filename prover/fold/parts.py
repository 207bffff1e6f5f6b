"""The parts of the dashboard state: one lock, a lane segment, a GPU, a partition, a phase's
statistics, a device sync. Plain dataclasses the fold updates in place (the core's handlers,
prover/fold/apply.py, and the concepts through prover/fold/world.py), and the copies of a GPU
and a partition the UI's view takes (prover/fold/model.py: `DashboardState.view`)."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from prover.disciplines import COMPUTE, lock_order
from prover.fold.rates import OkTimes

VIEW_WINDOW_S = 40.0  # seconds of timeline a view carries (the UI shows <= 30)


@dataclass
class DeviceSyncState:
    """One device-global sync by a mem holder, in progress (duration None) or finished."""

    gpu: int
    worker: str
    part: str | None
    t0: float
    behind_worker: str | None = None  # the compute holder when it started (None: nobody else)
    behind_part: str | None = None
    trim: bool = True
    duration: float | None = None  # None while it still waits

    def waited(self, now: float) -> float:
        """Seconds waited so far (the whole wait once it ended)."""
        return self.duration if self.duration is not None else max(0.0, now - self.t0)

    @property
    def behind(self) -> str:
        """"g0w0 s3p1", or "nobody" when no other worker held compute."""
        if self.behind_worker is None:
            return "nobody"
        return f"{self.behind_worker} {self.behind_part}" if self.behind_part else self.behind_worker

    def label(self, now: float) -> str:
        """The lane's words: "mem g0w2 device sync behind g0w0 s3p1 41 ms"."""
        return f"mem {self.worker} device sync behind {self.behind} {self.waited(now) * 1000:.0f} ms"


@dataclass
class LockState:
    holder: str | None = None
    holder_part: str | None = None
    since: float = 0.0
    waiters: dict[str, tuple[str | None, float]] = field(default_factory=dict)  # worker -> (part, since)
    wait_total: float = 0.0
    hold_total: float = 0.0
    acquisitions: int = 0
    max_wait: float = 0.0


@dataclass
class Segment:
    """One stretch of a worker lane on the timeline: a phase, or waiting for a lock."""

    worker: str
    label: str  # a Phase value, "wait:mem" / "wait:compute", or "device_sync"
    t0: float
    t1: float | None = None
    detail: str | None = None  # e.g. "behind g0w0 s3p1" on a device_sync stretch


@dataclass
class GpuState:
    gpu: int
    host: str | None = None
    name: str = "?"
    total: int = 0
    budget: int = 0
    simulated: bool = True
    nvml: bool = False
    locks: dict[str, LockState] = field(default_factory=lambda: {n: LockState() for n in lock_order()})
    live: dict[str, dict[str, int]] = field(default_factory=dict)  # owner -> buffer name -> bytes
    live_total: int = 0  # the bytes in `live`, kept by the fold: a sum over every buffer at each
                         # history bucket was O(buffers x buckets) (issue 35's audit)
    pool_reserved: int = 0
    pool_used: int = 0
    device_used: int | None = None
    util: float | None = None
    util_history: deque[float] = field(default_factory=lambda: deque(maxlen=120))
    workers: list[str] = field(default_factory=list)
    timeline: deque[Segment] = field(default_factory=lambda: deque(maxlen=4000))
    kernel_busy: float = 0.0  # seconds of GPU phases (ntt_h, msm) run on this GPU
    # GPU busy, steady state: compute held and mean utilisation between the first compute
    # acquire and the last compute release (start-up and drain left out). Running sums, so
    # day-long runs stay O(1).
    first_compute_t: float | None = None
    last_release_t: float | None = None
    util_sum: float = 0.0
    util_n: int = 0
    util_at_first: tuple[float, int] = (0.0, 0)
    util_at_last: tuple[float, int] = (0.0, 0)
    fallbacks: int = 0
    ooms: int = 0
    done: int = 0
    verified: int = 0  # done with a proof that verified (what throughput counts)
    ok_times: OkTimes = field(default_factory=OkTimes)  # when this GPU's verified partitions finished (recent)
    device_sync: DeviceSyncState | None = None  # a mem holder waiting in a device-global sync now
    last_device_sync: DeviceSyncState | None = None  # the last one that ended (kept for the lane)
    device_syncs: int = 0
    device_sync_total: float = 0.0  # seconds waited in device-global syncs on this GPU

    def lock(self, name: str) -> LockState:
        """The lock's state; one no discipline declares now (an older or newer recording)
        gets its own, so the fold never fails on a lock name."""
        lk = self.locks.get(name)
        if lk is None:
            lk = self.locks[name] = LockState()
        return lk

    @property
    def live_bytes(self) -> int:
        return self.live_total

    def steady_busy(self) -> tuple[float | None, float | None]:
        """(compute-held share, mean utilisation) between the first compute acquire and the
        last compute release; None where there is no such window or no sample in it."""
        if self.first_compute_t is None or self.last_release_t is None:
            return None, None
        span = self.last_release_t - self.first_compute_t
        # compute hold_total only grows at a release, so it is the total as of the last one
        held = min(1.0, self.lock(COMPUTE).hold_total / span) if span > 0 else None
        n = self.util_at_last[1] - self.util_at_first[1]
        util = (self.util_at_last[0] - self.util_at_first[0]) / n if n > 0 else None
        return held, util


@dataclass
class PartitionState:
    part: str
    sector: int
    index: int
    queued_t: float
    worker: str | None = None
    gpu: int | None = None
    phases: dict[str, list[float | None]] = field(default_factory=dict)  # phase -> [t0, t1]
    progress: dict[str, float] = field(default_factory=dict)
    current: str | None = None
    impl: str | None = None
    prestaged: bool | None = None
    fallback: bool = False
    verified: bool | None = None  # True / False: the proof checked; None: not (yet) checked
    checked: bool | None = None  # False: the proof was made but not sampled for verification
    ok: bool | None = None  # the engine's word (no error); a partition counts ok only if verified too
    reason: str | None = None
    done_t: float | None = None
    abandoned: bool = False  # stopped mid-way (quit now, ctrl+c, SIGINT): not a failure
    device_sync_s: float = 0.0  # waited in device-global syncs during its pre-stage
    device_sync_behind: str | None = None  # whom the last one waited behind ("g0w0 s3p1")


@dataclass
class PhaseStats:
    count: int = 0
    total: float = 0.0
    max: float = 0.0
    failed: int = 0

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


def lane(g: GpuState, worker: str, label: str, t: float, detail: str | None = None) -> None:
    """Start a new stretch of the worker's timeline lane (closing the one before)."""
    close_lane(g, worker, t)
    g.timeline.append(Segment(worker=worker, label=label, t0=t, detail=detail))


def close_lane(g: GpuState, worker: str, t: float) -> None:
    for seg in reversed(g.timeline):
        if seg.worker == worker:
            if seg.t1 is None:
                seg.t1 = t
            return


# --- the UI's copies (bounded; what never changes once made is shared) ------------------------

def copy_gpu(g: GpuState, now: float) -> GpuState:
    """A GPU as the view carries it: its locks, buffers, workers and samples copied, the
    timeline's last VIEW_WINDOW_S seconds (open stretches copied, closed ones shared)."""
    c = GpuState.__new__(GpuState)  # a shallow copy by its fields (as copy_part's), then its parts
    c.__dict__.update(g.__dict__)
    c.locks = {k: LockState(v.holder, v.holder_part, v.since, dict(v.waiters), v.wait_total,
                            v.hold_total, v.acquisitions, v.max_wait) for k, v in g.locks.items()}
    c.live = {o: dict(b) for o, b in g.live.items()}
    c.util_history = deque(g.util_history, maxlen=g.util_history.maxlen)
    c.workers = list(g.workers)
    c.ok_times = g.ok_times.copy()
    segs: list[Segment] = []
    lo = now - VIEW_WINDOW_S
    for s in reversed(g.timeline):
        if s.t1 is not None and s.t1 < lo and s.t0 < lo:
            # segments are ordered by t0; older ones may still be open (long phases)
            if len(segs) > 64 and s.t0 < lo - VIEW_WINDOW_S:
                break
            continue
        # a closed segment is never changed again (the fold sets t1 and detail once): shared,
        # not copied; at 64 GPUs the copies were most of a snapshot (20 ms, 20 times a second)
        segs.append(s if s.t1 is not None else Segment(s.worker, s.label, s.t0, s.t1, s.detail))
    segs.reverse()
    c.timeline = deque(segs, maxlen=g.timeline.maxlen)
    return c


def copy_part(p: PartitionState) -> PartitionState:
    # a shallow copy by its fields (copy.copy's reduce protocol costs ~5x as much: a view
    # carries up to 192 partitions, 10 times a second)
    c = PartitionState.__new__(PartitionState)
    c.__dict__.update(p.__dict__)
    c.phases = {k: list(v) for k, v in p.phases.items()}
    c.progress = dict(p.progress)
    return c


def copy_stats(st: PhaseStats) -> PhaseStats:
    return PhaseStats(st.count, st.total, st.max, st.failed)
