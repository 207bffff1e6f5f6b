"""The fold's model: `DashboardState`, its fields, the figures derived from them and the view
the UI reads.

The core fields (the run, its GPUs and partitions, the counts, the log) are the model's own;
each concept (prover/fold/concept.py) keeps a sub-state in the attribute of its name, made by
its Concept. `apply(event)` is the fold step: every registered concept's handler for the
event's type, in registration order. `view()` is the bounded copy the UI may keep and read
while the fold goes on (memray's producer-owned snapshot): the core copied here, each
concept's sub-state by its own declared copy; what never changes once made (closed timeline
stretches, device syncs, history points and marks, the config's values) is shared, not copied.
Plain dataclasses, cheap to update at 100k events/s; pydantic stays at the boundaries.
"""
from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from prover import events as ev
from prover.fold.concept import DISPATCH, TICKS, Handler, concepts
from prover.fold.experiments import ExperimentsState
from prover.fold.history import History
from prover.fold.host_ram import HostRamState
from prover.fold.hosts import HostState
from prover.fold.jobs import JobsState
from prover.fold.keys import KeysState
from prover.fold.ops import OpsState
from prover.fold.pace import PaceState
from prover.fold.parts import GpuState, PartitionState, PhaseStats, copy_gpu, copy_part, copy_stats
from prover.fold.queues import QueueState
from prover.fold.rates import RATE_WINDOW_S, OkTimes, Rates, first_gpu_t, interval, window_count
from prover.fold.segments import RunSegment, rate_basis
from prover.fold.startup import StartupState, starting_of

LOG_LINES, RECENT_PARTITIONS = 200, 64
VIEW_PARTITIONS = 96  # partitions a view carries: every one in flight first, then the latest done (then the rest of their sectors)


@dataclass
class DashboardState:
    t: float = 0.0
    started: bool = False
    ended: bool = False
    end_reason: str | None = None
    backend: str = "?"
    simulated: bool = True
    profile: str = "?"
    proved_log2: int = 0
    modelled_log2: int = 0
    schema_version: int = 0  # the recording's (RunStarted); device syncs are recorded from 3 on
    config: dict = field(default_factory=dict)
    knobs: dict[str, str] = field(default_factory=dict)  # lock_mode, mem_sync, workers_per_gpu, ...
    gpus: dict[int, GpuState] = field(default_factory=dict)
    trim_at: int = 0  # partitions table size at which it is trimmed next
    partitions: dict[str, PartitionState] = field(default_factory=dict)
    phase_stats: dict[str, PhaseStats] = field(default_factory=dict)
    proofs_ok: int = 0
    proofs_failed: int = 0
    proofs_unchecked: int = 0
    partitions_ok: int = 0  # finished with a verified proof
    partitions_unchecked: int = 0  # finished, but the proof was never verified: not counted as ok
    partitions_failed: int = 0
    fallbacks: int = 0
    ooms: int = 0
    stalls: int = 0
    mode_changes: int = 0
    events: int = 0
    first_ok_t: float | None = None  # first and last verified partition: the steady-state window
    last_ok_t: float | None = None
    partitions_abandoned: int = 0  # stopped mid-way (quit now, ctrl+c): neither done nor failed
    rate_window_s: float = RATE_WINDOW_S  # the window of the windowed rate (named on screen)
    ok_times: OkTimes = field(default_factory=OkTimes)  # when verified partitions finished (recent)
    # (t, level, text, the event that made the note: the dashboard's detail view shows its fields)
    log: deque[tuple[float, str, str, ev.Event | None]] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    # the concepts' sub-states, each made by its Concept (prover/fold/<name>.py)
    hosts: dict[str, HostState] = field(init=False)  # empty on one host
    host_ram: HostRamState = field(init=False)
    keys: KeysState = field(init=False)  # keys by size: cold, loading, hot
    startup: StartupState = field(init=False)
    queues: QueueState = field(init=False)  # by proof class
    jobs: JobsState = field(init=False)  # cancelled partitions, cordoned GPUs
    segments: list[RunSegment] = field(init=False)  # the run split at every knob change
    history: History = field(init=False)
    experiments: ExperimentsState = field(init=False)  # experiments' arms, counted (view: ExperimentsCopy)
    ops: OpsState = field(init=False)  # the operators' console: OOM outcomes, health, growth, recent counts
    pace: PaceState = field(init=False)  # what sets each GPU's pace (view: PaceView, read at the fold's time)

    tick_at: float = field(default=float("-inf"), init=False, repr=False)  # the next time a concept's tick is due
    # event type -> ((handler, its own sub-state; None: the state itself), ...): DISPATCH with the
    # sub-states looked up once, not at every event (filled as types come; not pickled or copied)
    _bound: dict[type, tuple[tuple[Handler, Any], ...]] = field(default_factory=dict, init=False, repr=False,
                                                                compare=False)

    def __post_init__(self) -> None:
        for c in concepts():
            if c.make is not None:
                setattr(self, c.name, c.make())

    def __getstate__(self) -> dict[str, Any]:  # pickle and deepcopy (checkpoints): the copy binds its own
        state = dict(self.__dict__)
        state["_bound"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # --- the fold -------------------------------------------------------------------------
    def apply(self, e: ev.Event) -> None:
        self.events += 1
        t = e.t
        if t > self.t:
            self.t = t
        if t > self.tick_at:  # a tick returns when it is next due (history: its bucket's end)
            self.tick_at = min((tick(getattr(self, name) if name else self, t, self) for name, tick in TICKS),
                               default=float("inf"))
        bound = self._bound.get(type(e))
        if bound is None:
            bound = self._bind(type(e))
        for handler, own in bound:
            handler(self if own is None else own, e, self)

    def _bind(self, kind: type) -> tuple[tuple[Handler, Any], ...]:
        bound = self._bound[kind] = tuple((h, getattr(self, name) if name else None)
                                          for name, h in DISPATCH.get(kind, ()))
        return bound

    def snapshot(self) -> "DashboardState":
        """A whole deep copy (checkpoints); the UI reads `view()`."""
        return copy.deepcopy(self)

    def view(self, partitions: int = VIEW_PARTITIONS) -> "DashboardState":
        """A copy the UI may keep and read while the fold goes on: everything the screen
        shows, bounded (the recent timeline, `partitions` partitions and the rest of their
        sectors, at most as many again), at a cost independent of the run's length."""
        c = copy.copy(self)
        c._bound = {}  # its handlers' sub-states are its own (were it ever folded into)
        c.config, c.knobs = dict(self.config), dict(self.knobs)
        c.gpus = {i: copy_gpu(g, self.t) for i, g in self.gpus.items()}
        live = [p for p in self.partitions.values() if p.done_t is None]
        done = [p for p in self.partitions.values() if p.done_t is not None]
        done.sort(key=lambda p: p.done_t or 0.0)
        keep = live[:partitions] + done[-max(0, partitions - len(live)):] if partitions > len(live) else live[:partitions]
        keep_ids = {p.part for p in keep}
        # whole sectors: a sector cut at the bound read "6 of 10" in its row (at most `partitions` more)
        sectors = {p.sector for p in keep if p.sector >= 0}
        keep_ids.update([p.part for p in self.partitions.values()
                         if p.sector in sectors and p.part not in keep_ids][:partitions])
        c.partitions = {k: copy_part(p) for k, p in self.partitions.items() if k in keep_ids}
        c.phase_stats = {k: copy_stats(v) for k, v in self.phase_stats.items()}
        c.log = deque(self.log, maxlen=self.log.maxlen)
        c.ok_times = self.ok_times.copy()
        for k in concepts():
            if k.make is not None:
                setattr(c, k.name, k.view(getattr(self, k.name), self.t))  # type: ignore[misc]
        return c

    # --- derived figures ------------------------------------------------------------------
    @property
    def partitions_done(self) -> int:
        return self.partitions_ok + self.partitions_unchecked + self.partitions_failed

    def throughput_per_min(self) -> float:
        """Verified partitions per minute of run time, the mean since start (unchecked and
        failed ones do not count). What a switch did: `rates()`."""
        return 60.0 * self.partitions_ok / self.t if self.t > 0 else 0.0

    def rates(self, gpu: int | None = None, t: float | None = None) -> Rates:
        """The run's rates (or one GPU's) at t (default: the fold's time): windowed, since the
        last knob change and the mean since start (prover/fold/rates.py)."""
        t = self.t if t is None else t
        w = self.rate_window_s
        if gpu is None:
            ok, anchor, n = self.ok_times, first_gpu_t(self.gpus.values()), self.partitions_ok
        else:
            g = self.gpu(gpu)
            ok, anchor, n = g.ok_times, g.first_compute_t, g.verified
        windowed, span, wn = window_count(ok, t, w, anchor)
        seg = self.segments[-1] if self.segments else None
        since = since_s = since_ci = None
        change, verified = None, 0
        before = before_ci = None
        if seg is not None and seg.index > 0:
            change = seg.change
            since_s = t - seg.t0
            t0 = max(seg.t0, anchor) if anchor is not None else t
            if t > t0:
                verified = seg.own.verified if gpu is None else seg.gpu_verified.get(gpu, 0)
                since, since_ci = 60.0 * verified / (t - t0), interval(verified, t - t0)
            if gpu is None and len(self.segments) > 1:  # the switch's before, beside its after
                before, count, over = rate_basis(self.segments[-2], t)
                before_ci = interval(count, over)
        return Rates(t=t, window_s=w, windowed_per_min=windowed, window_span_s=span,
                     mean_per_min=60.0 * n / t if t > 0 else 0.0, since_change_per_min=since,
                     since_change_s=since_s, change=change, window_proofs=wn, window_ci=interval(wn, span),
                     since_change_proofs=verified, since_change_ci=since_ci, before_per_min=before, before_ci=before_ci)

    def gpu(self, i: int) -> GpuState:
        if i not in self.gpus:
            self.gpus[i] = GpuState(gpu=i)
        return self.gpus[i]

    def note(self, level: str, text: str, event: ev.Event | None = None) -> None:
        self.log.append((self.t, level, text, event))

    def recent_partitions(self, limit: int = RECENT_PARTITIONS) -> list[PartitionState]:
        """In-flight partitions first, then the most recently finished."""
        live = [p for p in self.partitions.values() if p.done_t is None]
        done = sorted((p for p in self.partitions.values() if p.done_t is not None),
                      key=lambda p: p.done_t or 0.0, reverse=True)
        return (live + done)[:limit]


def starting(s: DashboardState) -> bool:
    """Whether start-up is what there is to show (prover/fold/startup.py)."""
    return starting_of(s.startup, s.partitions)
