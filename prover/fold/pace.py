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

from collections import deque
from dataclasses import dataclass, field

from prover import events as ev
from prover.events import Phase
from prover.disciplines import COMPUTE
from prover.fold.concept import Concept
from prover.fold.pace_verdict import B_G2_GPU, HOST_RAM_WAIT, PREP_WAIT, Pace, Work, classify
from prover.fold.world import World

PACE_WINDOW_S = 30.0  # the window the pace is read over (the rate's)
MIN_SPAN_S = 5.0  # less of the window seen since the first GPU section: settling
HELD, WORKERS = "(held)", "(workers)"  # keys beside the labels: compute held (buckets), workers present (readings)


@dataclass
class Bucket:
    """One second of a GPU: by key (labels, HELD), [seconds in it, spans that ended in it, their seconds]."""

    sec: int
    data: dict[str, list[float]] = field(default_factory=dict)


def _acc(d: dict[str, list[float]], key: str) -> list[float]:
    got = d.get(key)
    if got is None:
        got = d[key] = [0.0, 0, 0.0]
    return got


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
    # by key, as a Bucket's: the kept buckets summed (a reading subtracts the one or two the window
    # has left, instead of adding ~30 up at every view), and what they forgot (the run's, with kept)
    kept: dict[str, list[float]] = field(default_factory=dict)
    old: dict[str, list[float]] = field(default_factory=dict)

    def bucket(self, sec: int, keep_from: float) -> Bucket:
        """The bucket of second `sec` (made where missing; older ones than `keep_from` dropped then)."""
        b = self.buckets.get(sec)
        if b is None:
            for gone in [k for k in self.buckets if k + 1 < keep_from]:
                self._forget(self.buckets.pop(gone))
            b = self.buckets[sec] = Bucket(sec)
        return b

    def _forget(self, b: Bucket) -> None:
        for k, d in b.data.items():
            kept, old = self.kept[k], _acc(self.old, k)
            for i in range(3):
                kept[i] -= d[i]
                old[i] += d[i]

    def totals(self) -> dict[str, list[float]]:
        """The run's, by key: [seconds, spans ended, their seconds] since the first compute acquire."""
        out = {k: list(v) for k, v in self.old.items()}
        for k, v in self.kept.items():
            o = _acc(out, k)
            for i in range(3):
                o[i] += v[i]
        return out


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
    seconds = {k: v[0] for k, v in g.kept.items()}
    ended = {k: [v[1], v[2]] for k, v in g.kept.items()}
    for b in g.buckets.values():  # the kept buckets the window has left, or left in part
        if b.sec >= lo:
            continue
        out = min(1.0, lo - b.sec)  # the part of the window's first second before it (spread evenly)
        for k, d in b.data.items():
            seconds[k] -= out * d[0]
            if out >= 1.0:
                ended[k][0] -= d[1]
                ended[k][1] -= d[2]
    if g.first_compute_t is not None:  # what is open now counts up to now
        for a, label in g.opened.values():
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

def _add(g: GpuPace, t0: float, t1: float, key: str, keep_from: float) -> None:
    """A span of `key` over [t0, t1] closed: its seconds after the first compute acquire into the
    buckets of the seconds it covered (those still kept; an older part straight into the run's),
    and its end counted in its last second (the mean a partition). The fold's hot path: one
    bucket lookup and one list a second it covers."""
    first = g.first_compute_t
    if first is None or t1 <= first:
        return
    a = t0 if t0 > first else first
    if a < keep_from:  # a span longer than the window: its part before the kept seconds
        _acc(g.old, key)[0] += (t1 if t1 < keep_from else keep_from) - a
        a = keep_from
    kept = _acc(g.kept, key)
    buckets = g.buckets
    sec, last = int(a), int(t1)  # times are >= 0: int() floors
    d = None
    while sec < t1:
        part = (t1 if t1 < sec + 1 else sec + 1) - (a if a > sec else sec)
        b = buckets.get(sec) or g.bucket(sec, keep_from)
        d = _acc(b.data, key)
        d[0] += part
        kept[0] += part
        sec += 1
    if d is None or sec - 1 != last:
        d = _acc((buckets.get(last) or g.bucket(last, keep_from)).data, key)
    d[1] += 1
    d[2] += t1 - t0
    kept[1] += 1
    kept[2] += t1 - t0


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
    g = p.gpus.get(gpu) or p.gpu(gpu)
    if g.first_t is None:
        g.first_t = t
    g.opened[(worker, key)] = (t, label or key)


def _close(p: PaceState, gpu: int, worker: str, key: str, t: float, t0: float | None = None) -> None:
    g = p.gpus.get(gpu) or p.gpu(gpu)
    start, label = g.opened.pop((worker, key), (t0, key))
    if start is not None:
        _add(g, start, t, label, t - p.window_s - 1)


def _gpu_of(p: PaceState, e: ev.PhaseStart | ev.PhaseEnd, w: World) -> int | None:
    """The phase's GPU; prep_msm runs off the GPU (its partition's), and older recordings say
    none for the host phases (the worker's)."""
    if e.gpu is not None:
        return e.gpu
    part = w.partitions.get(e.part)
    return part.gpu if part is not None and part.gpu is not None else p.worker_gpu.get(e.worker)


_NAME = {ph: ph.value for ph in Phase}  # a dict lookup: Enum.value is a property, slow on the hot path


def _phase_start(p: PaceState, e: ev.PhaseStart, w: World) -> None:
    gpu = e.gpu if e.gpu is not None else _gpu_of(p, e, w)
    if gpu is None:
        return
    ph = e.phase
    if ph is Phase.msm:
        _close(p, gpu, e.worker, PREP_WAIT, e.t)
    gpu_b_g2 = ph is Phase.b_g2_msm and e.impl != "cpu"  # a kernel under compute, not host work
    _open(p, gpu, e.worker, _NAME[ph], e.t, B_G2_GPU if gpu_b_g2 else None)


def _phase_end(p: PaceState, e: ev.PhaseEnd, w: World) -> None:
    gpu = e.gpu if e.gpu is not None else _gpu_of(p, e, w)
    if gpu is None:
        return
    t = e.t
    _close(p, gpu, e.worker, _NAME[e.phase], t, t - e.duration)
    if e.phase is Phase.ntt_h and e.ok:  # until its MSMs start, the holder waits for its prep_msm
        _open(p, gpu, e.worker, PREP_WAIT, t)


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
    _add(g, start, e.t, HELD, e.t - p.window_s - 1)


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
        _close(p, e.gpu, e.worker, key[1], e.t)


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
