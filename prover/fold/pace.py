"""The fold's pace concept: per GPU, where its time and its workers' time went, over the last
window and over the run, so that the dashboard, `summary`, `status` and the metrics can say what
sets the pace now (the verdict and its words: prover/fold/pace_verdict.py).

What it folds: each worker's phase spans (prep_msm's too: it runs on a thread beside the
worker, found on its partition's GPU), its lock waits, the holder's wait for its own prep_msm
between its NTT-H and its MSMs (single's barrier), waits for host RAM, the compute lock's
holds, the workers present, and the host's cores (HostHealth).

Cost: the fold runs at 100k+ events/s and the view at 10 Hz for every GPU, so the window is
kept in one-second buckets (label -> seconds in that second), each closed span spread over the
seconds it covered; a reading sums the window's ~30 buckets plus the spans still open, never a
list of spans. Time before a GPU's first compute acquire is not counted (as the rates: every
GPU idles behind its first synthesis); the run's totals start there too.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from prover import events as ev
from prover.disciplines import COMPUTE
from prover.fold.concept import Concept
from prover.fold.pace_verdict import B_G2_GPU, HOST_RAM_WAIT, PREP_WAIT, Pace, Work, classify
from prover.fold.world import World

PACE_WINDOW_S = 30.0  # the window the pace is read over (the rate's)
MIN_SPAN_S = 5.0  # less of the window seen since the first GPU section: settling
HELD, WORKERS = "(held)", "(workers)"  # keys beside the labels: compute held (buckets), workers present (readings)


@dataclass
class Bucket:
    """One second of a GPU: seconds by key (labels, HELD, WORKERS), and the spans that ended in it."""

    sec: int
    seconds: dict[str, float] = field(default_factory=dict)
    ended: dict[str, tuple[int, float]] = field(default_factory=dict)  # label (or HELD) -> (count, total s)


@dataclass
class GpuPace:
    """One GPU's recent seconds, what is open now, and its whole-run totals."""

    buckets: dict[int, Bucket] = field(default_factory=dict)  # second -> its bucket, the window's
    opened: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)  # (worker, key) -> (start, label)
    hold_open: float | None = None
    workers: set[str] = field(default_factory=set)
    first_t: float | None = None  # its first worker's start
    first_compute_t: float | None = None  # nothing is counted before it
    presence: list[tuple[float, int]] = field(default_factory=list)  # (t, workers from t on), recent changes
    worker_s: float = 0.0  # workers present x seconds since first_compute_t, up to presence[-1]'s t
    totals: dict[str, float] = field(default_factory=dict)  # since first_compute_t: key -> seconds
    counts: dict[str, int] = field(default_factory=dict)  # since first_compute_t: label -> closed spans

    def bucket(self, sec: int, keep_from: float) -> Bucket:
        """The bucket of second `sec` (made where missing; older ones than `keep_from` dropped then)."""
        b = self.buckets.get(sec)
        if b is None:
            for old in [k for k in self.buckets if k + 1 < keep_from]:
                del self.buckets[old]
            b = self.buckets[sec] = Bucket(sec)
        return b


@dataclass
class PaceState:
    gpus: dict[int, GpuPace] = field(default_factory=dict)
    host: deque[tuple[float, float, int]] = field(default_factory=deque)  # HostHealth: (t, mean busy, cores)
    window_s: float = PACE_WINDOW_S
    modelled_host: bool = False  # the host phases' times are a profile's (not native): host_threads cannot change them

    def gpu(self, i: int) -> GpuPace:
        g = self.gpus.get(i)
        if g is None:
            g = self.gpus[i] = GpuPace()
        return g

    def readout(self, gpu: int, now: float) -> Pace | None:
        """The pace of `gpu` over the window ending at `now` (None: no worker seen there)."""
        g = self.gpus.get(gpu)
        if g is None or g.first_t is None:
            return None
        return window_pace(g, gpu, now, self.window_s, self.host).model_copy(update={"modelled_host": self.modelled_host})

    def readouts(self, now: float) -> dict[int, Pace]:
        return {i: p for i in sorted(self.gpus) if (p := self.readout(i, now)) is not None}

    def run(self, gpu: int, end: float) -> Pace | None:
        """The pace of `gpu` over the run, from its first compute acquire to `end` (summary)."""
        g = self.gpus.get(gpu)
        r = None if g is None else run_pace(g, gpu, end, self.host)
        return None if r is None else r.model_copy(update={"modelled_host": self.modelled_host})


# --- reading ------------------------------------------------------------------------------------

def _overlap(t0: float, t1: float, lo: float, hi: float) -> float:
    return max(0.0, min(t1, hi) - max(t0, lo))


def _host_cores(host: deque[tuple[float, float, int]], lo: float) -> tuple[float | None, int | None]:
    recent = [(b, n) for t, b, n in host if t >= lo]
    if not recent:
        return None, None
    return sum(b for b, _ in recent) / len(recent), recent[-1][1]


def window_pace(g: GpuPace, gpu: int, now: float, window_s: float, host: deque) -> Pace:
    """The pace over (now - window, now], from the GPU's first compute acquire on; settling until then."""
    start = g.first_compute_t if g.first_compute_t is not None else g.first_t
    lo = max(now - window_s, start if start is not None else now)
    span = max(0.0, now - lo)
    seconds: dict[str, float] = {}
    ended: dict[str, list[float]] = {}
    for b in g.buckets.values():
        if b.sec + 1 <= lo:
            continue
        weight = min(1.0, b.sec + 1 - lo)  # the window's first second, in part (spread evenly)
        for k, v in b.seconds.items():
            seconds[k] = seconds.get(k, 0.0) + weight * v
        for k, (n, total) in b.ended.items():
            acc = ended.setdefault(k, [0, 0.0])
            acc[0] += n
            acc[1] += total
    if g.first_compute_t is not None:  # what is open now counts up to now
        for a, label in g.opened.values():
            seconds[label] = seconds.get(label, 0.0) + _overlap(a, now, lo, now)
        if g.hold_open is not None:
            seconds[HELD] = seconds.get(HELD, 0.0) + _overlap(g.hold_open, now, lo, now)
    seconds[WORKERS] = worker_seconds(g, lo, now)
    return _verdict(gpu, span, seconds, {k: (int(n), t) for k, (n, t) in ended.items()}, len(g.workers),
                    _host_cores(host, lo), settled=g.first_compute_t is not None and span >= MIN_SPAN_S)


def run_pace(g: GpuPace, gpu: int, end: float, host: deque) -> Pace | None:
    """The pace over the run from the GPU's first compute acquire to `end` (closed spans)."""
    if g.first_compute_t is None:
        return None
    span = max(0.0, end - g.first_compute_t)
    totals = dict(g.totals)
    last_t, n = g.presence[-1] if g.presence else (end, 0)
    totals[WORKERS] = g.worker_s + n * _overlap(last_t, end, g.first_compute_t, end)
    workers = totals[WORKERS] / span if span > 0 else float(len(g.workers))
    ended = {k: (n, g.totals.get(k, 0.0)) for k, n in g.counts.items()}
    return _verdict(gpu, span, totals, ended, workers, _host_cores(host, g.first_compute_t),
                    settled=span >= MIN_SPAN_S and g.counts.get(HELD, 0) > 0)


def worker_seconds(g: GpuPace, lo: float, hi: float) -> float:
    """Workers present x seconds over [lo, hi] (workers come and go: the window's denominator)."""
    total = 0.0
    for i, (t, n) in enumerate(g.presence):
        end = g.presence[i + 1][0] if i + 1 < len(g.presence) else hi
        total += n * _overlap(t, end, lo, hi)
    return total


def _verdict(gpu: int, span: float, seconds: dict[str, float], ended: dict[str, tuple[int, float]],
             workers: float, cores: tuple[float | None, int | None], settled: bool) -> Pace:
    held, hold_n = seconds.pop(HELD, 0.0), ended.pop(HELD, (0, 0.0))
    worker_s = seconds.pop(WORKERS, 0.0)
    work = Work(span=span, held=held, busy=seconds, worker_s=worker_s,
                means={k: t / n for k, (n, t) in ended.items() if n},
                gpu_section_s=hold_n[1] / hold_n[0] if hold_n[0] else None)
    return classify(gpu, work, workers, cores[0], cores[1], settled)


# --- folding ------------------------------------------------------------------------------------

def _spread(g: GpuPace, t0: float, t1: float, key: str, per_s: float, keep_from: float) -> None:
    """Add per_s x the seconds of [t0, t1] after the first compute acquire to the buckets they
    fall in (only those still in the window) and to the run's totals."""
    if g.first_compute_t is None:
        return
    a = max(t0, g.first_compute_t)
    if t1 <= a:
        return
    g.totals[key] = g.totals.get(key, 0.0) + per_s * (t1 - a)
    a = max(a, keep_from)
    sec = math.floor(a)
    if t1 <= sec + 1:  # most spans fall within one second
        if t1 > a:
            b = g.bucket(sec, keep_from)
            b.seconds[key] = b.seconds.get(key, 0.0) + per_s * (t1 - a)
        return
    while sec < t1:
        part = _overlap(a, t1, sec, sec + 1)
        if part > 0:
            b = g.bucket(sec, keep_from)
            b.seconds[key] = b.seconds.get(key, 0.0) + per_s * part
        sec += 1


def _ended(g: GpuPace, t1: float, key: str, duration: float, keep_from: float) -> None:
    """A span of `key` ended at t1 (its mean a partition: the window's and the run's)."""
    if g.first_compute_t is None or t1 <= g.first_compute_t:
        return
    b = g.bucket(math.floor(t1), keep_from)
    n, total = b.ended.get(key, (0, 0.0))
    b.ended[key] = (n + 1, total + duration)
    g.counts[key] = g.counts.get(key, 0) + 1


def _presence(p: PaceState, g: GpuPace, t: float) -> None:
    """The workers present changed at t: integrate the run's worker-seconds up to t, note the
    new count (the window's changes kept back to its start)."""
    if g.presence and g.first_compute_t is not None:
        last_t, n = g.presence[-1]
        g.worker_s += n * _overlap(last_t, t, g.first_compute_t, t)
    g.presence.append((t, len(g.workers)))
    while len(g.presence) > 1 and g.presence[1][0] < t - p.window_s - 1:
        del g.presence[0]


def _open(p: PaceState, gpu: int, worker: str, key: str, t: float, label: str | None = None) -> None:
    g = p.gpu(gpu)
    if g.first_t is None:
        g.first_t = t
    g.opened[(worker, key)] = (t, label or key)


def _close(p: PaceState, gpu: int, worker: str, key: str, t: float, t0: float | None = None) -> None:
    g = p.gpu(gpu)
    start, label = g.opened.pop((worker, key), (t0, key))
    if start is None:
        return
    _spread(g, start, t, label, 1.0, t - p.window_s - 1)
    _ended(g, t, label, t - start, t - p.window_s - 1)


def _gpu_of(p: PaceState, e: ev.PhaseStart | ev.PhaseEnd, w: World) -> int | None:
    """The phase's GPU; prep_msm runs off the GPU (its partition's), and older recordings say
    none for the host phases (the worker's)."""
    if e.gpu is not None:
        return e.gpu
    part = w.partitions.get(e.part)
    return part.gpu if part is not None and part.gpu is not None else _worker_gpu(p, e.worker)


def _phase_start(p: PaceState, e: ev.PhaseStart, w: World) -> None:
    gpu = _gpu_of(p, e, w)
    if gpu is None:
        return
    if e.phase.value == "msm":
        _close(p, gpu, e.worker, PREP_WAIT, e.t)
    gpu_b_g2 = e.phase.value == "b_g2_msm" and e.impl != "cpu"  # a kernel under compute, not host work
    _open(p, gpu, e.worker, e.phase.value, e.t, B_G2_GPU if gpu_b_g2 else None)


def _phase_end(p: PaceState, e: ev.PhaseEnd, w: World) -> None:
    gpu = _gpu_of(p, e, w)
    if gpu is None:
        return
    _close(p, gpu, e.worker, e.phase.value, e.t, e.t - e.duration)
    if e.phase.value == "ntt_h" and e.ok:  # until its MSMs start, the holder waits for its prep_msm
        _open(p, gpu, e.worker, PREP_WAIT, e.t)


def _lock_requested(p: PaceState, e: ev.LockRequested, w: World) -> None:
    _open(p, e.gpu, e.worker, f"wait:{e.lock}", e.t)


def _lock_acquired(p: PaceState, e: ev.LockAcquired, w: World) -> None:
    g = p.gpu(e.gpu)
    if e.lock == COMPUTE and g.first_compute_t is None:
        g.first_compute_t = e.t
    _close(p, e.gpu, e.worker, f"wait:{e.lock}", e.t, e.t - e.wait)
    if e.lock == COMPUTE:
        g.hold_open = e.t


def _lock_released(p: PaceState, e: ev.LockReleased, w: World) -> None:
    if e.lock != COMPUTE:
        return
    g = p.gpu(e.gpu)
    start = g.hold_open if g.hold_open is not None else e.t - e.hold
    g.hold_open = None
    _spread(g, start, e.t, HELD, 1.0, e.t - p.window_s - 1)
    _ended(g, e.t, HELD, e.t - start, e.t - p.window_s - 1)


def _worker_started(p: PaceState, e: ev.WorkerStarted, w: World) -> None:
    g = p.gpu(e.gpu)
    g.workers.add(e.worker)
    _presence(p, g, e.t)
    if g.first_t is None:
        g.first_t = e.t


def _worker_stopped(p: PaceState, e: ev.WorkerStopped, w: World) -> None:
    g = p.gpu(e.gpu)
    g.workers.discard(e.worker)
    _presence(p, g, e.t)
    for key in [k for k in g.opened if k[0] == e.worker]:  # a stopped worker's spans end with it
        _close(p, e.gpu, e.worker, key[1], e.t)


def _worker_gpu(p: PaceState, worker: str) -> int | None:
    return next((i for i, g in p.gpus.items() if worker in g.workers), None)


def _host_ram_wait(p: PaceState, e: ev.HostRamWait, w: World) -> None:
    gpu = _worker_gpu(p, e.worker)
    if gpu is not None:
        _open(p, gpu, e.worker, HOST_RAM_WAIT, e.t)


def _host_ram_admit(p: PaceState, e: ev.HostRamAdmit, w: World) -> None:
    gpu = _worker_gpu(p, e.worker)
    if gpu is not None:
        _close(p, gpu, e.worker, HOST_RAM_WAIT, e.t, e.t - e.wait)


def _run_started(p: PaceState, e: ev.RunStarted, w: World) -> None:
    p.modelled_host = e.profile != "native"


def _host_health(p: PaceState, e: ev.HostHealth, w: World) -> None:
    if e.cpu_busy:
        p.host.append((e.t, sum(e.cpu_busy) / len(e.cpu_busy), len(e.cpu_busy)))
    while p.host and p.host[0][0] < e.t - p.window_s:
        p.host.popleft()


@dataclass(frozen=True)
class PaceView:
    """The view's copy: each GPU's pace read at the fold's time (what the UI shows), and the
    run's (the same reading over the whole run)."""

    paces: dict[int, Pace]
    runs: dict[int, Pace]

    def readout(self, gpu: int, now: float) -> Pace | None:
        return self.paces.get(gpu)

    def readouts(self, now: float) -> dict[int, Pace]:
        return dict(self.paces)

    def run(self, gpu: int, end: float) -> Pace | None:
        return self.runs.get(gpu)


def _view(p: PaceState, now: float) -> PaceView:
    runs = {i: r for i in sorted(p.gpus) if (r := p.run(i, now)) is not None}
    return PaceView(p.readouts(now), runs)


CONCEPT = Concept("pace", PaceState, {
    ev.PhaseStart: _phase_start, ev.PhaseEnd: _phase_end, ev.LockRequested: _lock_requested,
    ev.LockAcquired: _lock_acquired, ev.LockReleased: _lock_released, ev.WorkerStarted: _worker_started,
    ev.WorkerStopped: _worker_stopped, ev.HostHealth: _host_health, ev.HostRamWait: _host_ram_wait,
    ev.HostRamAdmit: _host_ram_admit, ev.RunStarted: _run_started,
}, view=_view)
