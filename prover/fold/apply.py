"""The fold's apply side: the core's handlers (the run, its GPUs and partitions, locks, memory,
proofs, the counts and the log: the model's own fields), and `fold(events)`.

The core is one concept among the registered ones (prover/fold/concept.py, its name CORE):
its handlers take the state itself as their own sub-state. Every other concept's handlers sit
in its own module; `DashboardState.apply` runs them all, in registration order
(prover/fold/__init__.py). The live TUI, replay, `summary` and the tests all fold through
here, so what the screen shows and what the summary counts can never disagree."""
from __future__ import annotations

from typing import Any, Iterable

from prover import events as ev
from prover.disciplines import COMPUTE
from prover.events import Phase
from prover.fold.concept import CORE, Concept
from prover.fold.model import RECENT_PARTITIONS, DashboardState
from prover.fold.parts import PartitionState, PhaseStats, close_lane, lane
from prover.fold.segments import on_off
from prover.knobs import KNOBS

STOPPED = "stopped"  # a PhaseEnd's error when the run was stopped under it (prover/pipeline/partition.py)
OOM_ERROR = "OomError: "  # a PhaseEnd's error when an OOM ended it: the partition may go on (retried)


# --- handlers, one per event type (state, event, world: the state again) ---------------------

def _run_started(s: DashboardState, e: ev.RunStarted, _: Any) -> None:
    s.started = True
    s.backend, s.simulated, s.profile = e.backend, e.simulated, e.profile
    s.proved_log2, s.modelled_log2 = e.proved_log2, e.modelled_log2
    s.schema_version = e.schema_version
    s.config = dict(e.config)
    for knob in KNOBS:
        if knob in e.config:
            s.knobs[knob] = str(e.config[knob])
    for i in range(e.gpus):
        s.gpu(i)


def _gpu_info(s: DashboardState, e: ev.GpuInfo, _: Any) -> None:
    g = s.gpu(e.gpu)
    g.name, g.total, g.budget, g.simulated, g.nvml = e.name, e.total_bytes, e.budget_bytes, e.simulated, e.nvml
    g.host = e.host


def _worker_started(s: DashboardState, e: ev.WorkerStarted, _: Any) -> None:
    g = s.gpu(e.gpu)
    if e.worker not in g.workers:
        g.workers.append(e.worker)


def _worker_stopped(s: DashboardState, e: ev.WorkerStopped, _: Any) -> None:
    g = s.gpu(e.gpu)
    if e.worker in g.workers:
        g.workers.remove(e.worker)
    close_lane(g, e.worker, e.t)


def _partition_queued(s: DashboardState, e: ev.PartitionQueued, _: Any) -> None:
    s.partitions[e.part] = PartitionState(part=e.part, sector=e.sector, index=e.index, queued_t=e.t)
    _trim_partitions(s)


def _trim_partitions(s: DashboardState) -> None:
    """Forget the oldest finished partitions (bounded memory); again once the table grew by half."""
    if len(s.partitions) <= max(4 * RECENT_PARTITIONS, s.trim_at):
        return
    done = sorted((p for p in s.partitions.values() if p.done_t is not None), key=lambda p: p.done_t or 0.0)
    for p in done[: len(s.partitions) - 2 * RECENT_PARTITIONS]:
        del s.partitions[p.part]
    s.trim_at = len(s.partitions) * 3 // 2


def _part(s: DashboardState, part: str) -> PartitionState:
    p = s.partitions.get(part)
    if p is None:  # a recording may start mid-run; tolerate unknown ids
        p = s.partitions[part] = PartitionState(part=part, sector=-1, index=-1, queued_t=s.t)
    return p


# The phase handlers run for half the fold's events: a phase is named by its member's `_value_`
# (`.value` is a property: a call each time), read once; no default object made to be thrown away.
_KERNELS = (Phase.ntt_h, Phase.msm)
_PRESTAGE = Phase.prestage._value_
_R1CS = Phase.r1cs


def _phase_start(s: DashboardState, e: ev.PhaseStart, _: Any) -> None:
    if e.phase is _R1CS:  # the one sub-phase (ev.SUB_PHASES); an identity test on the hot path
        return _sub_phase_start(s, e)
    p = s.partitions.get(e.part) or _part(s, e.part)
    name, t = e.phase._value_, e.t
    p.phases[name] = [t, None]
    p.current = name
    p.worker = e.worker
    p.impl = e.impl
    if e.gpu is not None:
        p.gpu = e.gpu
        lane(s.gpus.get(e.gpu) or s.gpu(e.gpu), e.worker, name, t)


def _phase_progress(s: DashboardState, e: ev.PhaseProgress, _: Any) -> None:
    (s.partitions.get(e.part) or _part(s, e.part)).progress[e.phase._value_] = e.frac


def _phase_end(s: DashboardState, e: ev.PhaseEnd, _: Any) -> None:
    if e.phase is _R1CS:  # the one sub-phase (ev.SUB_PHASES)
        return _sub_phase_end(s, e)
    p = s.partitions.get(e.part) or _part(s, e.part)
    name, t, duration = e.phase._value_, e.t, e.duration
    span = p.phases.get(name)
    if span is None:
        p.phases[name] = [t - duration, t]
    else:
        span[1] = t
    p.progress[name] = 1.0
    if p.current == name:
        p.current = None
    st = s.phase_stats.get(name)
    if st is None:
        st = s.phase_stats[name] = PhaseStats()
    st.count += 1
    st.total += duration
    if duration > st.max:
        st.max = duration
    if not e.ok:
        _phase_failed(s, e, p, st)
    if e.gpu is not None:
        g = s.gpus.get(e.gpu) or s.gpu(e.gpu)
        if e.phase in _KERNELS:
            g.kernel_busy += duration
        close_lane(g, e.worker, t)


def _phase_failed(s: DashboardState, e: ev.PhaseEnd, p: PartitionState, st: PhaseStats) -> None:
    name = e.phase._value_
    if e.error == STOPPED:  # quit now, ctrl+c, SIGINT: abandoned, not failed
        if not p.abandoned and p.done_t is None:
            p.abandoned = True
            s.partitions_abandoned += 1
            s.note("warn", f"{e.part} abandoned in {name} (stopped)", e)
    elif (e.error or "").startswith(OOM_ERROR):  # its Oom event says retried or failed, next
        s.note("warn", f"{e.part} {name} stopped by an OOM: {(e.error or '').removeprefix(OOM_ERROR)}", e)
    else:
        st.failed += 1
        s.note("error", f"{e.part} {name} failed: {e.error}", e)


def _sub_phase_start(s: DashboardState, e: ev.PhaseStart) -> None:
    """A sub-phase (r1cs, inside its pre-stage): its span and its lane; the partition's current
    phase stays the one it runs inside."""
    p = _part(s, e.part)
    p.phases[e.phase.value] = [e.t, None]
    if e.gpu is not None:
        lane(s.gpu(e.gpu), e.worker, e.phase.value, e.t)


def _sub_phase_end(s: DashboardState, e: ev.PhaseEnd) -> None:
    """Its span and time (the summary's phase table); the lane goes back to the phase it ran in.
    A failure is the enclosing phase's to say (it ends failed with the same error)."""
    p = _part(s, e.part)
    p.phases.setdefault(e.phase.value, [e.t - e.duration, None])[1] = e.t
    p.progress[e.phase.value] = 1.0
    st = s.phase_stats.setdefault(e.phase.value, PhaseStats())
    st.count += 1
    st.total += e.duration
    st.max = max(st.max, e.duration)
    if e.gpu is not None:
        g = s.gpu(e.gpu)
        if p.current:
            lane(g, e.worker, p.current, e.t)
        else:
            close_lane(g, e.worker, e.t)


def _lock_requested(s: DashboardState, e: ev.LockRequested, _: Any) -> None:
    g = s.gpus.get(e.gpu) or s.gpu(e.gpu)
    (g.locks.get(e.lock) or g.lock(e.lock)).waiters[e.worker] = (e.part, e.t)
    lane(g, e.worker, _WAITING.get(e.lock) or _waiting(e.lock), e.t)


_WAITING: dict[str, str] = {}  # lock -> its lane's label, made once a lock


def _waiting(lock: str) -> str:
    label = _WAITING[lock] = f"wait:{lock}"
    return label


def _lock_acquired(s: DashboardState, e: ev.LockAcquired, _: Any) -> None:
    g = s.gpus.get(e.gpu) or s.gpu(e.gpu)
    lk = g.locks.get(e.lock) or g.lock(e.lock)
    t, wait = e.t, e.wait
    lk.waiters.pop(e.worker, None)
    lk.holder, lk.holder_part, lk.since = e.worker, e.part, t
    if g.first_compute_t is None and e.lock == COMPUTE:
        g.first_compute_t, g.util_at_first = t, (g.util_sum, g.util_n)
    lk.wait_total += wait
    lk.acquisitions += 1
    if wait > lk.max_wait:
        lk.max_wait = wait
    close_lane(g, e.worker, t)


def _lock_released(s: DashboardState, e: ev.LockReleased, _: Any) -> None:
    g = s.gpus.get(e.gpu) or s.gpu(e.gpu)
    lk = g.locks.get(e.lock) or g.lock(e.lock)
    lk.hold_total += e.hold
    if e.lock == COMPUTE:
        g.last_release_t, g.util_at_last = e.t, (g.util_sum, g.util_n)
    if lk.holder == e.worker:
        lk.holder, lk.holder_part = None, None


def _alloc(s: DashboardState, e: ev.Alloc, _: Any) -> None:
    g = s.gpus.get(e.gpu) or s.gpu(e.gpu)
    bufs = g.live.get(e.owner)
    if bufs is None:
        bufs = g.live[e.owner] = {}
    bufs[e.name] = bufs.get(e.name, 0) + e.bytes
    g.live_total += e.bytes
    if e.part is not None:
        p = s.partitions.get(e.part) or _part(s, e.part)
        if p.prestaged is None:
            p.prestaged = p.current == _PRESTAGE


def _free(s: DashboardState, e: ev.Free, _: Any) -> None:
    g = s.gpus.get(e.gpu) or s.gpu(e.gpu)
    bufs = g.live.get(e.owner)
    if not bufs:
        return
    had, n = bufs.get(e.name, 0), e.bytes
    if had > n:
        bufs[e.name] = had - n
    else:
        bufs.pop(e.name, None)
    g.live_total -= had if had < n else n
    if not bufs:
        del g.live[e.owner]


def _vram_sample(s: DashboardState, e: ev.VramSample, _: Any) -> None:
    g = s.gpus.get(e.gpu) or s.gpu(e.gpu)
    g.budget, g.pool_reserved, g.pool_used = e.budget, e.pool_reserved, e.pool_used
    g.device_used = e.device_used
    if e.device_total:
        g.total = e.device_total
    if e.util is not None:
        g.util = e.util
        g.util_history.append(e.util)
        g.util_sum += e.util
        g.util_n += 1


def _fallback(s: DashboardState, e: ev.Fallback, _: Any) -> None:
    s.fallbacks += 1
    s.gpu(e.gpu).fallbacks += 1
    p = _part(s, e.part)
    p.fallback, p.prestaged = True, False
    s.note("warn", f"gpu{e.gpu} {e.part} fallback: {e.reason}", e)


def _oom(s: DashboardState, e: ev.Oom, _: Any) -> None:
    s.ooms += 1
    s.gpu(e.gpu).ooms += 1
    # retried: the partition went on (a warning, never listed as an error); failed: an error
    said = " ".join(x for x in (e.outcome, e.cause and f"({e.cause})") if x)
    s.note("error" if e.outcome == "failed" else "warn", f"gpu{e.gpu} OOM {e.worker} {e.part or ''}"
           f"{' ' + said if said else ''}: wanted {e.requested >> 20} MiB, {e.free >> 20} MiB free", e)


def _mode_change(s: DashboardState, e: ev.ModeChange, _: Any) -> None:
    s.mode_changes += 1
    if e.gpu is None:  # a one-GPU setting is in the log, not the fleet's knobs
        s.knobs[e.knob] = e.new
    s.note("info", f"{'' if e.gpu is None else f'gpu{e.gpu} '}{e.knob}: {on_off(e.old)} -> {on_off(e.new)} ({e.source})", e)


def _sector_submitted(s: DashboardState, e: ev.SectorSubmitted, _: Any) -> None:
    cls = "" if e.proof_class == "c2" else f"{e.proof_class} "
    size = "" if e.log2 is None else f", 2^{e.log2}"
    s.note("info", f"{cls}sector {e.sector} submitted ({e.partitions} partitions{size}"
                   f"{f', {e.source}' if e.source else ''})", e)


def _proof_result(s: DashboardState, e: ev.ProofResult, _: Any) -> None:
    p = _part(s, e.part)
    p.checked = e.checked
    if not e.checked:
        s.proofs_unchecked += 1
        return
    p.verified = e.ok
    if e.ok:
        s.proofs_ok += 1
    else:
        s.proofs_failed += 1
        s.note("error", f"{e.part} proof FAILED verification: {e.reason or ''}", e)


def _partition_done(s: DashboardState, e: ev.PartitionDone, _: Any) -> None:
    p = _part(s, e.part)
    if p.abandoned:  # stopped once, then done after all (a fleet requeues a lost host's partitions)
        p.abandoned = False
        s.partitions_abandoned -= 1
    p.ok, p.reason, p.done_t, p.current = e.ok, e.reason, e.t, None
    if e.ok and p.verified is True:
        s.partitions_ok += 1
    elif e.ok:  # no error, but nothing vouches for the proof (not sampled, or no check recorded)
        s.partitions_unchecked += 1
    else:
        s.partitions_failed += 1
        s.note("error", f"{e.part} failed: {e.reason}", e)
    g = None if p.gpu is None else s.gpus.get(p.gpu) or s.gpu(p.gpu)
    if g is not None:
        g.done += 1
        g.verified += e.ok and p.verified is True
    if e.ok and p.verified is True:
        s.first_ok_t = e.t if s.first_ok_t is None else s.first_ok_t
        s.last_ok_t = e.t
        keep = 2 * s.rate_window_s
        s.ok_times.add(e.t, keep)
        if g is not None:
            g.ok_times.add(e.t, keep)


def _stall(s: DashboardState, e: ev.Stall, _: Any) -> None:
    s.stalls += 1
    s.note("warn", f"stall: {e.worker} {e.what} {e.name} {e.seconds:.1f}s {e.part or ''}", e)


def _note(s: DashboardState, e: ev.Note, _: Any) -> None:
    s.note(e.level, e.text, e)


def _run_ended(s: DashboardState, e: ev.RunEnded, _: Any) -> None:
    s.ended, s.end_reason = True, e.reason
    s.note("info", f"run ended: {e.reason}", e)


CONCEPT = Concept(CORE, None, {
    ev.RunStarted: _run_started, ev.GpuInfo: _gpu_info, ev.WorkerStarted: _worker_started,
    ev.WorkerStopped: _worker_stopped, ev.PartitionQueued: _partition_queued,
    ev.PhaseStart: _phase_start, ev.PhaseProgress: _phase_progress, ev.PhaseEnd: _phase_end,
    ev.LockRequested: _lock_requested, ev.LockAcquired: _lock_acquired,
    ev.LockReleased: _lock_released, ev.Alloc: _alloc, ev.Free: _free,
    ev.VramSample: _vram_sample, ev.Fallback: _fallback, ev.Oom: _oom,
    ev.ModeChange: _mode_change, ev.SectorSubmitted: _sector_submitted,
    ev.ProofResult: _proof_result, ev.PartitionDone: _partition_done, ev.Stall: _stall,
    ev.Note: _note, ev.RunEnded: _run_ended,
})


def fold(events: Iterable[ev.Event], state: DashboardState | None = None) -> DashboardState:
    """Fold a stream of events into dashboard state (a new one unless given)."""
    s = state if state is not None else DashboardState()
    for e in events:
        s.apply(e)
    return s
