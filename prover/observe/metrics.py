"""Prometheus metrics fed from the event stream (prometheus-client, a custom Collector).

    exp = MetricsExporter(host="node1")
    engine.add_sink(exp.sink)            # cheap: appends to a deque, never raises
    exp.start(port=9464, addr="127.0.0.1")
    ...
    exp.stop()

Events go through the one fold (prover.fold.model.DashboardState) for everything the dashboard
shows (lock holders and waiters, VRAM, knobs, fallbacks, OOMs); a few distributions the fold
does not keep (lock wait/hold times, phase durations by impl, outcomes per GPU) are counted
beside it by `MetricsFold`. Nothing polls the engine. The engine's threads only append to a
deque; a fold thread drains it a few times a second, and a scrape drains what is left first,
so a scrape always sees every event emitted before it.
"""
from __future__ import annotations

import bisect
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily,
                                    InfoMetricFamily, Metric)
from prometheus_client.registry import Collector

from prover import events as ev
from prover.observe.metrics_health import dcgm_families, gpu_families, growth_families, host_families, oom_family
from prover.observe.metrics_ops import host_ram_families, key_families, lock_age_families, queue_families
from prover.observe.metrics_pace import pace_families
from prover.observe.ops_figures import OpsFigures
from prover.fold.model import DashboardState

PREFIX = "c2tui_"
# seconds: lock waits run from microseconds (stream mode) to the seed's ~2 s device syncs and
# minutes when a GPU is wedged; phases from ms (sim at small time scales) to 100 s (fallback)
# (few buckets: with 8 GPUs the histograms are most of a scrape's samples)
LOCK_BUCKETS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)
PHASE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)
NUMERIC_KNOBS = ("workers_per_gpu", "prestage", "paused", "host_threads")  # host_threads 0: auto
_TRUE, _FALSE = {"true", "on", "yes", "1"}, {"false", "off", "no", "0"}


@dataclass
class Histogram:
    """Bucket counts (not cumulative) + sum; cumulated at collect time."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def observe(self, v: float) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)
        self.counts[bisect.bisect_left(self.bounds, v)] += 1
        self.total += v
        self.n += 1

    def buckets(self) -> list[tuple[str, int]]:
        out, acc = [], 0
        counts = self.counts or [0] * (len(self.bounds) + 1)
        for b, c in zip(self.bounds, counts):
            acc += c
            out.append((repr(float(b)), acc))
        out.append(("+Inf", self.n))
        return out


def _gpu_label(g: int | None) -> str:
    return "" if g is None else str(g)


class MetricsFold:
    """The fold's state plus the distributions and per-GPU outcome counts it does not keep."""

    def __init__(self) -> None:
        self.state = DashboardState()
        self.lock_wait: dict[tuple[str, str], Histogram] = {}   # (gpu, lock)
        self.lock_hold: dict[tuple[str, str], Histogram] = {}
        self.phase: dict[tuple[str, str, str], Histogram] = {}  # (gpu, phase, impl)
        self.phase_failed: dict[tuple[str, str], int] = {}      # (gpu, phase)
        self.partitions: dict[tuple[str, str], int] = {}        # (gpu, ok|failed)
        self.proofs: dict[tuple[str, str], int] = {}            # (gpu, verified|failed|unchecked)
        self.stalls: dict[tuple[str, str], int] = {}            # (gpu, lock|phase)
        self.mode_changes: dict[tuple[str, str], int] = {}      # (knob, source)
        self.device_sync: dict[tuple[str], Histogram] = {}      # (gpu,): device-global sync waits
        self.switch_settle: dict[tuple[str], Histogram] = {}    # (gpu,): a new regime's wait for the old to leave
        self.buffers: dict[str, set[str]] = {}                  # gpu -> buffer names seen (stable series)
        self._impl: dict[tuple[str, str], str] = {}             # (part, phase) -> impl of the open phase
        self._worker_gpu: dict[str, int] = {}
        self.errors = 0  # events that could not be folded (exported, never raised at the engine)
        self.ops = OpsFigures()  # OOM outcomes, GPU progress, VRAM growth, GPU and host health

    def apply(self, e: Any) -> None:
        self.state.apply(e)
        self.ops.apply(e)
        k = e.kind
        if k == "lock_acquired":
            self.lock_wait.setdefault((str(e.gpu), e.lock), Histogram(LOCK_BUCKETS)).observe(e.wait)
        elif k == "lock_released":
            self.lock_hold.setdefault((str(e.gpu), e.lock), Histogram(LOCK_BUCKETS)).observe(e.hold)
        elif k == "phase_start":
            self._impl[(e.part, e.phase.value)] = e.impl
        elif k == "phase_end":
            self._phase_end(e)
        elif k == "alloc":
            self.buffers.setdefault(str(e.gpu), set()).add(e.name)
        elif k == "worker_started":
            self._worker_gpu[e.worker] = e.gpu
        elif k == "partition_done":
            _inc(self.partitions, (self._part_gpu(e.part), "ok" if e.ok else "failed"))
        elif k == "proof_result":
            outcome = "unchecked" if not e.checked else ("verified" if e.ok else "failed")
            _inc(self.proofs, (self._part_gpu(e.part), outcome))
        elif k == "stall":
            _inc(self.stalls, (_gpu_label(e.gpu), e.what))
        elif k == "mode_change":
            _inc(self.mode_changes, (e.knob, e.source))
        elif k == "device_sync_end":
            self.device_sync.setdefault((str(e.gpu),), Histogram(LOCK_BUCKETS)).observe(e.duration)
        elif k == "switch_settled":
            self.switch_settle.setdefault((str(e.gpu),), Histogram(LOCK_BUCKETS)).observe(e.waited)

    def _phase_end(self, e: ev.PhaseEnd) -> None:
        phase = e.phase.value
        impl = self._impl.pop((e.part, phase), "unknown")
        gpu = e.gpu if e.gpu is not None else self._worker_gpu.get(e.worker)
        self.phase.setdefault((_gpu_label(gpu), phase, impl), Histogram(PHASE_BUCKETS)).observe(e.duration)
        if not e.ok:
            _inc(self.phase_failed, (_gpu_label(gpu), phase))

    def _part_gpu(self, part: str) -> str:
        p = self.state.partitions.get(part)
        return _gpu_label(p.gpu if p is not None else None)


def _inc(d: dict, key: Any) -> None:
    d[key] = d.get(key, 0) + 1


def knob_number(v: str) -> float | None:
    s = str(v).strip().lower()
    if s in _TRUE:
        return 1.0
    if s in _FALSE:
        return 0.0
    try:
        return float(s)
    except ValueError:
        return None


class FoldCollector(Collector):
    """Turns a MetricsFold into metric families at scrape time (under the exporter's lock)."""

    def __init__(self, exporter: "MetricsExporter") -> None:
        self.exp = exporter

    def describe(self) -> list[Metric]:
        return []  # names are fixed by this module; skip the registry's collect-to-describe

    def collect(self) -> Iterator[Metric]:
        with self.exp.folding():
            return iter(list(families(self.exp.fold, self.exp.host)))


class _Labels:
    """Label names and values: `simulated` on every series (a sim run's figures are modelled:
    a dashboard or alert that mixes them with native ones can tell them apart), then `host`
    where there is one."""

    def __init__(self, host: str | None, simulated: bool = False) -> None:
        self.names, self.values = ["simulated"], [str(simulated).lower()]
        if host:
            self.names.append("host")
            self.values.append(host)

    def n(self, *names: str) -> list[str]:
        return [*self.names, *names]

    def v(self, *values: Any) -> list[str]:
        return [*self.values, *(str(x) for x in values)]


def families(f: MetricsFold, host: str | None = None) -> Iterator[Metric]:
    lab = _Labels(host, f.state.simulated)
    yield from _run_families(f.state, lab)
    yield from _lock_families(f, lab)
    yield from _vram_families(f, lab)
    yield from _outcome_families(f, lab)
    yield from _phase_families(f, lab)
    yield from lock_age_families(f.state, lab, _gauge)
    yield from host_ram_families(f.state, lab, _gauge, _counter)
    yield from queue_families(f.state, lab, _gauge, _counter)
    yield from key_families(f.state, lab, _gauge, _counter)
    yield from dcgm_families(f.ops, {i: g.name for i, g in f.state.gpus.items()}, lab)
    yield from gpu_families(f.ops, lab, _gauge)
    yield from host_families(f.ops, lab, _gauge)
    yield from growth_families(f.ops, lab, _gauge)
    yield from pace_families(f.state, lab, _gauge)
    yield _counter("exporter_errors", "events the exporter could not fold (a bug if not 0)", [], {(): f.errors}, lab)


def _hist(name: str, doc: str, labels: list[str], data: dict, lab: _Labels) -> HistogramMetricFamily:
    m = HistogramMetricFamily(PREFIX + name, doc, labels=lab.n(*labels))
    for key, h in sorted(data.items()):
        m.add_metric(lab.v(*key), h.buckets(), h.total)
    return m


def _counter(name: str, doc: str, labels: list[str], data: dict, lab: _Labels) -> CounterMetricFamily:
    m = CounterMetricFamily(PREFIX + name, doc, labels=lab.n(*labels))
    for key, n in sorted(data.items()):
        m.add_metric(lab.v(*key), n)
    return m


def _gauge(name: str, doc: str, labels: list[str], lab: _Labels) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, doc, labels=lab.n(*labels))


def _run_families(s: DashboardState, lab: _Labels) -> Iterator[Metric]:
    info = InfoMetricFamily(PREFIX + "run", "the run: backend, profile, proved and modelled size (simulated or native)",
                            labels=lab.n())
    info.add_metric(lab.v(), {"backend": s.backend, "profile": s.profile,  # simulated: every series' label
                              "proved_log2": str(s.proved_log2), "modelled_log2": str(s.modelled_log2),
                              "time_scale": str(s.config.get("time_scale", 1.0))})
    yield info
    elapsed = _gauge("run_elapsed_seconds", "seconds since run start (the latest event)", [], lab)
    elapsed.add_metric(lab.v(), s.t)
    ended = _gauge("run_ended", "1 once the run has ended", [], lab)
    ended.add_metric(lab.v(), float(s.ended))
    yield from (elapsed, ended, _counter("events", "events folded", [], {(): s.events}, lab))
    knobs = InfoMetricFamily(PREFIX + "knob", "current value of each live knob (one series per knob)",
                             labels=lab.n("knob"))
    values = _gauge("knob_value", "numeric live knobs (booleans as 0/1)", ["knob"], lab)
    for k, v in sorted(s.knobs.items()):
        knobs.add_metric(lab.v(k), {"value": str(v)})
        num = knob_number(v)
        if k in NUMERIC_KNOBS and num is not None:
            values.add_metric(lab.v(k), num)
    yield knobs
    yield values
    gi = InfoMetricFamily(PREFIX + "gpu", "each GPU: name, NVML present (simulated: the label every series has)",
                          labels=lab.n("gpu"))
    workers = _gauge("workers", "workers running on the GPU", ["gpu"], lab)
    for i, g in sorted(s.gpus.items()):
        gi.add_metric(lab.v(i), {"name": g.name, "nvml": str(g.nvml).lower()})
        workers.add_metric(lab.v(i), len(g.workers))
    yield gi
    yield workers
    yield from _rate_families(s, lab)


def _rate_families(s: DashboardState, lab: _Labels) -> Iterator[Metric]:
    """The rates the header shows (prover.fold.rates): over the window, since the last knob
    change, the mean since start; and the window itself."""
    rate = _gauge("verified_per_minute", "verified partitions per minute over: window (the last "
                  "rate_window_seconds), since_change (the last knob change), since_start (the mean)", ["over"], lab)
    r = s.rates()
    rate.add_metric(lab.v("window"), r.windowed_per_min)
    if r.since_change_per_min is not None:
        rate.add_metric(lab.v("since_change"), r.since_change_per_min)
    rate.add_metric(lab.v("since_start"), r.mean_per_min)
    proofs = _gauge("verified_per_minute_proofs", "verified proofs each verified_per_minute rests on", ["over"], lab)
    bound = _gauge("verified_per_minute_ci", "95% interval of verified_per_minute (exact Poisson interval of its "
                   "proofs over its span; docs/figures.md)", ["over", "bound"], lab)
    for over, n, ci in (("window", r.window_proofs, r.window_ci), ("since_change", r.since_change_proofs,
                                                                    r.since_change_ci)):
        if over == "since_change" and r.since_change_per_min is None:
            continue
        proofs.add_metric(lab.v(over), n)
        for side, x in zip(("low", "high"), ci or ()):
            bound.add_metric(lab.v(over, side), x)
    per_gpu = _gauge("gpu_verified_per_minute", "verified partitions per minute on the GPU over the rate window",
                     ["gpu"], lab)
    for i in sorted(s.gpus):
        per_gpu.add_metric(lab.v(i), s.rates(i).windowed_per_min)
    window = _gauge("rate_window_seconds", "the window of verified_per_minute{over=window}", [], lab)
    window.add_metric(lab.v(), s.rate_window_s)
    yield from (rate, proofs, bound, per_gpu, window)


def _lock_families(f: MetricsFold, lab: _Labels) -> Iterator[Metric]:
    holders = _gauge("lock_holders", "workers holding the lock (0 or 1)", ["gpu", "lock"], lab)
    waiters = _gauge("lock_waiters", "workers waiting for the lock", ["gpu", "lock"], lab)
    for i, g in sorted(f.state.gpus.items()):
        for name, lk in sorted(g.locks.items()):
            holders.add_metric(lab.v(i, name), 0 if lk.holder is None else 1)
            waiters.add_metric(lab.v(i, name), len(lk.waiters))
    yield holders
    yield waiters
    yield _hist("lock_wait_seconds", "time from lock request to acquire", ["gpu", "lock"], f.lock_wait, lab)
    yield _hist("lock_hold_seconds", "time the lock was held", ["gpu", "lock"], f.lock_hold, lab)
    yield _hist("device_sync_seconds", "mem holders' device-global syncs (+ pool trim): time waited behind the "
                "GPU's queued kernels", ["gpu"], f.device_sync, lab)
    now = _gauge("device_sync_wait_seconds", "how long a mem holder has waited in a device sync so far (0: none)",
                 ["gpu"], lab)
    for i, g in sorted(f.state.gpus.items()):
        now.add_metric(lab.v(i), g.device_sync.waited(f.state.t) if g.device_sync is not None else 0.0)
    yield now


def _vram_families(f: MetricsFold, lab: _Labels) -> Iterator[Metric]:
    live = _gauge("vram_live_bytes", "live buffer bytes by buffer kind (d_a, d_bc, ...)", ["gpu", "buffer"], lab)
    reserved = _gauge("vram_pool_reserved_bytes", "bytes the memory pool holds from the device", ["gpu"], lab)
    used = _gauge("vram_pool_used_bytes", "bytes of the pool handed to live buffers", ["gpu"], lab)
    budget = _gauge("vram_budget_bytes", "the VRAM budget the allocator enforces", ["gpu"], lab)
    nvml = _gauge("vram_device_used_bytes", "device used bytes from NVML (absent where unknown)", ["gpu"], lab)
    total = _gauge("vram_device_total_bytes", "device memory size", ["gpu"], lab)
    util = _gauge("gpu_utilization_ratio", "GPU utilisation 0..1 (NVML, or modelled in sim)", ["gpu"], lab)
    for i, g in sorted(f.state.gpus.items()):
        by_kind: dict[str, int] = dict.fromkeys(f.buffers.get(str(i), ()), 0)
        for bufs in g.live.values():
            for name, n in bufs.items():
                by_kind[name] = by_kind.get(name, 0) + n
        for name, n in sorted(by_kind.items()):
            live.add_metric(lab.v(i, name), n)
        gl = lab.v(i)
        reserved.add_metric(gl, g.pool_reserved)
        used.add_metric(gl, g.pool_used)
        budget.add_metric(gl, g.budget)
        total.add_metric(gl, g.total)
        if g.device_used is not None:
            nvml.add_metric(gl, g.device_used)
        if g.util is not None:
            util.add_metric(gl, g.util)
    yield from (live, reserved, used, budget, nvml, total, util)


def _zeros(gpus: Any, values: tuple[str, ...], seen: dict) -> dict:
    """Every GPU x value series from the start (0 until counted), so that rate() and alerts
    see a series before its first increment."""
    out = {(str(i), v): 0 for i in gpus for v in values}
    out.update(seen)
    return out


def _outcome_families(f: MetricsFold, lab: _Labels) -> Iterator[Metric]:
    s = f.state
    yield _counter("partitions", "partitions finished, by outcome (ok | failed)", ["gpu", "outcome"],
                   _zeros(s.gpus, ("ok", "failed"), f.partitions), lab)
    yield _counter("proofs", "proofs by outcome (verified | failed | unchecked)", ["gpu", "outcome"],
                   _zeros(s.gpus, ("verified", "failed", "unchecked"), f.proofs), lab)
    yield _counter("fallbacks", "partitions that took the fallback path (no pre-stage room)", ["gpu"],
                   {(str(i), ): g.fallbacks for i, g in s.gpus.items()}, lab)
    yield oom_family(f.ops, s.gpus, lab)
    yield _hist("switch_settle_seconds", "how long a new regime's first section waited for the sections begun "
                "under the old knobs to leave the GPU (SwitchSettled)", ["gpu"], f.switch_settle, lab)
    yield _counter("stalls", "watchdog stalls (a lock or phase past its limit)", ["gpu", "what"],
                   _zeros(s.gpus, ("lock", "phase"), f.stalls), lab)
    yield _counter("mode_changes", "live knob changes", ["knob", "source"], f.mode_changes, lab)


def _phase_families(f: MetricsFold, lab: _Labels) -> Iterator[Metric]:
    yield _hist("phase_duration_seconds", "phase wall time (modelled phases scaled by time_scale)",
                ["gpu", "phase", "impl"], f.phase, lab)
    failed = {(gpu, phase): 0 for (gpu, phase, _) in f.phase}  # 0 from a phase's first run, for alerts
    failed.update(f.phase_failed)
    yield _counter("phase_failures", "phases that ended with an error", ["gpu", "phase"], failed, lab)


class MetricsExporter:
    """A sink for the engine plus a Prometheus HTTP endpoint over its own registry."""

    def __init__(self, host: str | None = None, fold_every: float = 0.25) -> None:
        self.host = host  # a host label only where there is a host level (a cluster); else none
        self.fold = MetricsFold()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(FoldCollector(self))
        self._q: deque[Any] = deque()
        self._lock = threading.Lock()
        self._every = fold_every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._httpd: Any = None

    def sink(self, e: Any) -> None:
        """The engine's sink: an append, so the prover never waits for a scrape."""
        self._q.append(e)

    __call__ = sink

    def folding(self) -> "_Folded":
        """Context: drain what is queued into the fold and hold the fold still while reading."""
        return _Folded(self)

    def _drain_locked(self) -> None:
        q, apply = self._q, self.fold.apply
        while q:
            e = q.popleft()
            try:
                apply(e)
            except Exception:  # one odd event must not stop the metrics (counted, shown as a metric)
                self.fold.errors += 1

    def drain(self) -> None:
        with self._lock:
            self._drain_locked()

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            self.drain()

    def start(self, port: int, addr: str = "127.0.0.1") -> int:
        """Serve /metrics on addr:port (port 0: any free port); returns the bound port.
        Raises OSError with the address named when it cannot bind."""
        from prover.observe.metrics_http import serve_metrics

        try:
            self._httpd, _ = serve_metrics(self.registry, port, addr)
        except OSError as exc:
            raise OSError(f"cannot serve metrics on {addr}:{port}: {exc.strerror or exc}") from None
        self._thread = threading.Thread(target=self._loop, name="metrics-fold", daemon=True)
        self._thread.start()
        return int(self._httpd.server_address[1])

    @property
    def port(self) -> int | None:
        return None if self._httpd is None else int(self._httpd.server_address[1])

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.drain()


class _Folded:
    def __init__(self, exp: MetricsExporter) -> None:
        self.exp = exp

    def __enter__(self) -> MetricsFold:
        self.exp._lock.acquire()
        self.exp._drain_locked()
        return self.exp.fold

    def __exit__(self, *exc: Any) -> None:
        self.exp._lock.release()
