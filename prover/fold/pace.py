"""The fold's pace concept: per GPU, where its time and its workers' time went, over the last
window and over the run, so that the dashboard, `summary`, `status` and the metrics can say what
sets the pace now (the verdict and its words: prover/fold/pace_verdict.py).

What it folds: each worker's phase spans (prep_msm's too: it runs on a thread beside the
worker, found on its partition's GPU), its lock waits, the holder's wait for its own prep_msm
between its NTT-H and its MSMs (single's barrier), waits for host RAM, the compute lock's
holds, the workers present, and the host's cores (HostHealth).

Cost: the fold runs at 100k+ events/s and half its events are a pace event, so an event does
O(1) work in place: a closed span adds into the one-second buckets of the seconds it covered
and into the kept buckets' sums (prover/fold/pace_buckets.py), and allocates nothing the
garbage collector keeps counting; a reading takes those sums less the one or two
buckets the window has left, plus the spans still open (never a list of spans), and the view
reads a GPU at most every 0.5 s of fold time. Time before a GPU's first compute acquire is
not counted (as the rates: every GPU idles behind its first synthesis); the run's totals start
there too.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from prover import events as ev
from prover.events import Phase
from prover.disciplines import COMPUTE
from prover.fold.concept import Concept
from prover.fold.pace_buckets import GpuPace, add_span
from prover.fold.pace_verdict import B_G2_GPU, HOST_RAM_WAIT, PREP_WAIT, Pace, Work, classify
from prover.fold.world import World

PACE_WINDOW_S = 30.0  # the window the pace is read over (the rate's)
MIN_SPAN_S = 5.0  # less of the window seen since the first GPU section: settling
HELD, WORKERS = "(held)", "(workers)"  # keys beside the labels: compute held (buckets), workers present (readings)


@dataclass
class PaceState:
    gpus: dict[int, GpuPace] = field(default_factory=dict)
    host: deque[tuple[float, float, int]] = field(default_factory=deque)  # HostHealth: (t, mean busy, cores)
    window_s: float = PACE_WINDOW_S
    modelled_host: bool = False  # the host phases' times are a profile's (not native): host_threads cannot change them
    worker_gpu: dict[str, int] = field(default_factory=dict)  # a running worker's GPU
    shown: dict[int, tuple[float, Pace]] = field(default_factory=dict)  # the view's last reading of each GPU

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
        return window_pace(g, gpu, now, self.window_s, self.host, self.modelled_host)

    def readouts(self, now: float) -> dict[int, Pace]:
        return {i: p for i in sorted(self.gpus) if (p := self.readout(i, now)) is not None}

    def run(self, gpu: int, end: float) -> Pace | None:
        """The pace of `gpu` over the run, from its first compute acquire to `end` (summary)."""
        g = self.gpus.get(gpu)
        return None if g is None else run_pace(g, gpu, end, self.host, self.modelled_host)


# --- reading ------------------------------------------------------------------------------------

def _overlap(t0: float, t1: float, lo: float, hi: float) -> float:
    return max(0.0, min(t1, hi) - max(t0, lo))


def _host_cores(host: deque[tuple[float, float, int]], lo: float) -> tuple[float | None, int | None]:
    recent = [(b, n) for t, b, n in host if t >= lo]
    if not recent:
        return None, None
    return sum(b for b, _ in recent) / len(recent), recent[-1][1]


def window_pace(g: GpuPace, gpu: int, now: float, window_s: float, host: deque, modelled: bool = False) -> Pace:
    """The pace over (now - window, now], from the GPU's first compute acquire on; settling until then."""
    start = g.first_compute_t if g.first_compute_t is not None else g.first_t
    lo = max(now - window_s, start if start is not None else now)
    span = max(0.0, now - lo)
    kept = g.kept
    seconds = {k: kept[i] for k, i in g.keys.items()}
    ended = {k: [kept[i + 1], kept[i + 2]] for k, i in g.keys.items()}
    for sec, b in g.buckets.items():  # the kept buckets the window has left, or left in part
        if sec >= lo:
            continue
        out = min(1.0, lo - sec)  # the part of the window's first second before it (spread evenly)
        for k, i in g.keys.items():
            seconds[k] -= out * b[i]
            if out >= 1.0:
                ended[k][0] -= b[i + 1]
                ended[k][1] -= b[i + 2]
    if g.first_compute_t is not None:  # what is open now counts up to now
        for (worker, key), a in g.opened.items():
            label = B_G2_GPU if key == _B_G2_HOST and worker in g.b_g2_gpu else key
            seconds[label] = seconds.get(label, 0.0) + _overlap(a, now, lo, now)
        if g.hold_open is not None:
            seconds[HELD] = seconds.get(HELD, 0.0) + _overlap(g.hold_open, now, lo, now)
    seconds = {k: v for k, v in seconds.items() if v > 1e-9}
    seconds[WORKERS] = worker_seconds(g, lo, now)
    return _verdict(gpu, span, seconds, {k: (int(round(n)), t) for k, (n, t) in ended.items() if n >= 0.5},
                    len(g.workers), _host_cores(host, lo), g.first_compute_t is not None and span >= MIN_SPAN_S,
                    modelled)


def run_pace(g: GpuPace, gpu: int, end: float, host: deque, modelled: bool = False) -> Pace | None:
    """The pace over the run from the GPU's first compute acquire to `end` (closed spans)."""
    if g.first_compute_t is None:
        return None
    span = max(0.0, end - g.first_compute_t)
    totals = g.totals()
    seconds = {k: v[0] for k, v in totals.items()}
    last_t, n = g.presence[-1] if g.presence else (end, 0)
    seconds[WORKERS] = g.worker_s + n * _overlap(last_t, end, g.first_compute_t, end)
    workers = seconds[WORKERS] / span if span > 0 else float(len(g.workers))
    ended = {k: (int(v[1]), v[2]) for k, v in totals.items() if v[1]}
    return _verdict(gpu, span, seconds, ended, workers, _host_cores(host, g.first_compute_t),
                    span >= MIN_SPAN_S and HELD in ended, modelled)


def worker_seconds(g: GpuPace, lo: float, hi: float) -> float:
    """Workers present x seconds over [lo, hi] (workers come and go: the window's denominator)."""
    total = 0.0
    for i, (t, n) in enumerate(g.presence):
        end = g.presence[i + 1][0] if i + 1 < len(g.presence) else hi
        total += n * _overlap(t, end, lo, hi)
    return total


def _verdict(gpu: int, span: float, seconds: dict[str, float], ended: dict[str, tuple[int, float]],
             workers: float, cores: tuple[float | None, int | None], settled: bool, modelled: bool) -> Pace:
    held, hold_n = seconds.pop(HELD, 0.0), ended.pop(HELD, (0, 0.0))
    worker_s = seconds.pop(WORKERS, 0.0)
    work = Work(span=span, held=held, busy=seconds, worker_s=worker_s,
                means={k: t / n for k, (n, t) in ended.items() if n},
                gpu_section_s=hold_n[1] / hold_n[0] if hold_n[0] else None)
    return classify(gpu, work, workers, cores[0], cores[1], settled, modelled)


# --- folding ------------------------------------------------------------------------------------

def _presence(p: PaceState, g: GpuPace, t: float) -> None:
    """The workers present changed at t: integrate the run's worker-seconds up to t, note the
    new count (the window's changes kept back to its start)."""
    if g.presence and g.first_compute_t is not None:
        last_t, n = g.presence[-1]
        g.worker_s += n * _overlap(last_t, t, g.first_compute_t, t)
    g.presence.append((t, len(g.workers)))
    while len(g.presence) > 1 and g.presence[1][0] < t - p.window_s - 1:
        del g.presence[0]


def _open(p: PaceState, gpu: int, worker: str, key: str, t: float) -> None:
    g = p.gpus.get(gpu) or p.gpu(gpu)
    if g.first_t is None:
        g.first_t = t
    g.opened[(worker, key)] = t


def _close(p: PaceState, gpu: int, worker: str, key: str, t: float, t0: float | None = None) -> None:
    g = p.gpus.get(gpu) or p.gpu(gpu)
    start = g.opened.pop((worker, key), t0)
    if start is not None:
        add_span(g, start, t, key, t - p.window_s - 1)


# The handlers below run for half the fold's events: each reads an event's fields once, keeps
# Phase members in module names (a class attribute of an Enum is a descriptor call) and names a
# phase by its `_value_` (`.value` is a property), and adds a closed span in place (`add_span`).
_MSM, _NTT_H, _B_G2 = Phase.msm, Phase.ntt_h, Phase.b_g2_msm
_B_G2_HOST = _B_G2._value_
_WAIT: dict[str, str] = {}  # lock -> "wait:lock", made once a lock


def _wait_key(lock: str) -> str:
    key = _WAIT[lock] = f"wait:{lock}"
    return key


def _phase_start(p: PaceState, e: ev.PhaseStart, w: World) -> None:
    gpu = e.gpu
    if gpu is None:  # its partition's GPU (prep_msm runs off the GPU), else its worker's (older recordings' host phases)
        part = w.partitions.get(e.part)
        gpu = part.gpu if part is not None and part.gpu is not None else p.worker_gpu.get(e.worker)
        if gpu is None:
            return
    g = p.gpus.get(gpu) or p.gpu(gpu)
    ph, t, worker = e.phase, e.t, e.worker
    if ph is _MSM:  # the holder's wait for its prep_msm ends where its MSMs start
        got = g.opened.pop((worker, PREP_WAIT), None)
        if got is not None:
            add_span(g, got, t, PREP_WAIT, t - p.window_s - 1)
    if g.first_t is None:
        g.first_t = t
    g.opened[(worker, ph._value_)] = t
    if ph is _B_G2:  # a kernel under compute, not host work, where it runs on the GPU
        if e.impl != "cpu":
            g.b_g2_gpu.add(worker)
        else:
            g.b_g2_gpu.discard(worker)


def _phase_end(p: PaceState, e: ev.PhaseEnd, w: World) -> None:
    gpu = e.gpu
    if gpu is None:  # its partition's GPU (prep_msm runs off the GPU), else its worker's (older recordings' host phases)
        part = w.partitions.get(e.part)
        gpu = part.gpu if part is not None and part.gpu is not None else p.worker_gpu.get(e.worker)
        if gpu is None:
            return
    g = p.gpus.get(gpu) or p.gpu(gpu)
    ph, t, worker = e.phase, e.t, e.worker
    name = ph._value_
    start = g.opened.pop((worker, name), None)
    if start is None:
        add_span(g, t - e.duration, t, name, t - p.window_s - 1)
    elif ph is _B_G2 and worker in g.b_g2_gpu:
        g.b_g2_gpu.discard(worker)
        add_span(g, start, t, B_G2_GPU, t - p.window_s - 1)
    else:
        add_span(g, start, t, name, t - p.window_s - 1)
    if ph is _NTT_H and e.ok:  # until its MSMs start, the holder waits for its prep_msm
        if g.first_t is None:
            g.first_t = t
        g.opened[(worker, PREP_WAIT)] = t


def _lock_requested(p: PaceState, e: ev.LockRequested, w: World) -> None:
    gpu, t = e.gpu, e.t
    g = p.gpus.get(gpu) or p.gpu(gpu)
    if g.first_t is None:
        g.first_t = t
    g.opened[(e.worker, _WAIT.get(e.lock) or _wait_key(e.lock))] = t


def _lock_acquired(p: PaceState, e: ev.LockAcquired, w: World) -> None:
    gpu, t, lock = e.gpu, e.t, e.lock
    g = p.gpus.get(gpu) or p.gpu(gpu)
    compute = lock == COMPUTE
    if compute and g.first_compute_t is None:
        g.first_compute_t = t
    key = _WAIT.get(lock) or _wait_key(lock)
    start = g.opened.pop((e.worker, key), None)
    add_span(g, t - e.wait if start is None else start, t, key, t - p.window_s - 1)
    if compute:
        g.hold_open = t


def _lock_released(p: PaceState, e: ev.LockReleased, w: World) -> None:
    if e.lock != COMPUTE:
        return
    t = e.t
    g = p.gpus.get(e.gpu) or p.gpu(e.gpu)
    start = g.hold_open if g.hold_open is not None else t - e.hold
    g.hold_open = None
    add_span(g, start, t, HELD, t - p.window_s - 1)


def _worker_started(p: PaceState, e: ev.WorkerStarted, w: World) -> None:
    g = p.gpu(e.gpu)
    g.workers.add(e.worker)
    p.worker_gpu[e.worker] = e.gpu
    _presence(p, g, e.t)
    if g.first_t is None:
        g.first_t = e.t


def _worker_stopped(p: PaceState, e: ev.WorkerStopped, w: World) -> None:
    g = p.gpu(e.gpu)
    g.workers.discard(e.worker)
    if p.worker_gpu.get(e.worker) == e.gpu:
        del p.worker_gpu[e.worker]
    _presence(p, g, e.t)
    for key in [k for k in g.opened if k[0] == e.worker]:  # a stopped worker's spans end with it
        label = B_G2_GPU if key[1] == _B_G2_HOST and e.worker in g.b_g2_gpu else key[1]
        add_span(g, g.opened.pop(key), e.t, label, e.t - p.window_s - 1)
    g.b_g2_gpu.discard(e.worker)


def _host_ram_wait(p: PaceState, e: ev.HostRamWait, w: World) -> None:
    gpu = p.worker_gpu.get(e.worker)
    if gpu is not None:
        _open(p, gpu, e.worker, HOST_RAM_WAIT, e.t)


def _host_ram_admit(p: PaceState, e: ev.HostRamAdmit, w: World) -> None:
    gpu = p.worker_gpu.get(e.worker)
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
    """The view's copy: each GPU's pace read at the fold's time (what the UI shows; the run's
    reading is summary's, from the fold itself)."""

    paces: dict[int, Pace]

    def readout(self, gpu: int, now: float) -> Pace | None:
        return self.paces.get(gpu)

    def readouts(self, now: float) -> dict[int, Pace]:
        return dict(self.paces)


VIEW_EVERY_S = 0.5  # the view reads a GPU's pace at most this often (the line moves over 30 s, not 0.1)


def _view(p: PaceState, now: float) -> PaceView:
    """Each GPU's reading for the UI, read again once VIEW_EVERY_S of fold time has passed (or
    the clock went back: a replay's seek); status, summary and the metrics read the fold."""
    paces: dict[int, Pace] = {}
    for i in sorted(p.gpus):
        hit = p.shown.get(i)
        if hit is not None and 0.0 <= now - hit[0] < VIEW_EVERY_S:
            paces[i] = hit[1]
            continue
        got = p.readout(i, now)
        if got is not None:
            p.shown[i] = (now, got)
            paces[i] = got
    return PaceView(paces)


CONCEPT = Concept("pace", PaceState, {
    ev.PhaseStart: _phase_start, ev.PhaseEnd: _phase_end, ev.LockRequested: _lock_requested,
    ev.LockAcquired: _lock_acquired, ev.LockReleased: _lock_released, ev.WorkerStarted: _worker_started,
    ev.WorkerStopped: _worker_stopped, ev.HostHealth: _host_health, ev.HostRamWait: _host_ram_wait,
    ev.HostRamAdmit: _host_ram_admit, ev.RunStarted: _run_started,
}, view=_view)
