"""The Prometheus exporter's cost: throughput with and without it, per-event cost, and how
long a scrape takes with 8 GPUs x 4 workers.

    python3 benchmarks/bench_metrics.py [--pairs 5] [--parts 24] [--scale 0.05]

1. Sim runs side by side (alternating, so load drift hits both): profile rtx5070ti-16g,
   real proofs at 2^8, 3 workers, mem_sync=stream; the exporter attached and scraped over
   HTTP at --scrape-hz (1 Hz; Prometheus' default is every 15 s: the harsher case). Throughput is
   the steady one from the run's own summary; the ratio is median(with) / median(without).
   On a shared, loaded machine that ratio is noise-bound, so the exporter's own CPU time is
   also counted (its fold thread by thread_time, scrapes as count x CPU of one exposition)
   as a share of the run's process CPU: the throughput it could cost a CPU-bound run.
2. The worst case for the exporter: the engine's bookkeeping alone (NullPhases, every phase
   0 s, ~33 events a partition at tens of thousands of events/s), ms per partition.
3. Per event: the sink's append on the engine's thread, and the fold (DashboardState +
   histograms) on the exporter's thread.
4. Scrapes with 8 simulated GPUs x 4 workers: during the run (the fold busy) and after.

Writes benchmarks/results/metrics_<date>.json and prints a summary.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import threading
import time
import urllib.request
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from bench_engine import mixed_events  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.device.profiles import PROFILES, register_profile  # noqa: E402
from prover.observe.metrics import MetricsExporter, MetricsFold  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.pipeline.nullphases import NullPhases  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402


class Scraper:
    """GETs /metrics every `period` s on its own thread; keeps each scrape's wall time."""

    def __init__(self, port: int, period: float) -> None:
        self.url, self.period = f"http://127.0.0.1:{port}/metrics", period
        self.times: list[float] = []
        self.bytes = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def once(self) -> float:
        t0 = time.perf_counter()
        body = urllib.request.urlopen(self.url, timeout=10).read()
        dt = time.perf_counter() - t0
        self.times.append(dt)
        self.bytes = len(body)
        return dt

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.once()

    def stop(self) -> None:
        self._stop.set()
        self._t.join()


class TimedExporter(MetricsExporter):
    """The exporter with its fold's CPU time counted (thread_time around each drain)."""

    fold_cpu = 0.0

    def _drain_locked(self) -> None:
        c = time.thread_time()
        super()._drain_locked()
        self.fold_cpu += time.thread_time() - c


def scrape_cpu(exp: MetricsExporter, n: int = 15) -> float:
    """Median CPU seconds of one exposition (collect + text), in this thread."""
    from prometheus_client import generate_latest

    xs = []
    for _ in range(n):
        c = time.thread_time()
        generate_latest(exp.registry)
        xs.append(time.thread_time() - c)
    return statistics.median(xs)


def _attach(eng: Engine, scrape_period: float) -> tuple[TimedExporter, Scraper]:
    exp = TimedExporter()
    port = exp.start(0)
    eng.add_sink(exp.sink)
    return exp, Scraper(port, scrape_period)


def sim_run(with_exporter: bool, parts: int, scale: float, scrape_hz: float) -> dict:
    cfg = load_config(None, backend="sim", profile="rtx5070ti-16g", constraints_log2=8, partitions=parts, sectors=1,
                      time_scale=scale, workers_per_gpu=3, vram_budget="24GiB", lock_mode="two-lock",
                      mem_sync="stream", seed=3)
    evs: list = []
    eng = Engine(cfg, [evs.append])
    exp = scr = None
    if with_exporter:
        exp, scr = _attach(eng, 1.0 / scrape_hz)
    c0, t0 = time.process_time(), time.perf_counter()
    eng.start()
    assert eng.wait(900)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    row = {"exporter": with_exporter}
    if exp is not None:
        scr.stop()
        per_scrape = scrape_cpu(exp)
        exp.stop()
        exporter_cpu = exp.fold_cpu + len(scr.times) * per_scrape
        row.update(scrapes=len(scr.times), fold_cpu_s=round(exp.fold_cpu, 4), scrape_cpu_ms=round(1000 * per_scrape, 2),
                   fold_cpu_share=round(exp.fold_cpu / cpu, 4),
                   scrapes_cpu_share=round(len(scr.times) * per_scrape / cpu, 4),
                   exporter_cpu_share_of_run_cpu=round(exporter_cpu / cpu, 4))
    sm = summarize(fold(evs))
    assert sm.partitions_ok == parts and sm.proofs_failed == 0
    row.update(steady_per_min=round(sm.steady_throughput_per_min, 3), events=sm.events, cpu_s=round(cpu, 3),
               wall_s=round(wall, 3))
    return row


def _zero_profile() -> str:
    if "zero" not in PROFILES:
        register_profile(replace(PROFILES["tiny"], name="zero", description="all phase times 0 (benchmark)",
                                 synthesis=0, prep_msm=0, prestage=0, ntt_h=0, msm=0, epilogue=0, fallback_upload=0,
                                 b_g2_msm_cpu=0, b_g2_msm_gpu=0, assemble=0, verify=0))
    return "zero"


def bookkeeping_run(with_exporter: bool, parts: int) -> dict:
    cfg = load_config(None, backend="sim", profile=_zero_profile(), time_scale=1.0, sectors=1, partitions=parts,
                      workers_per_gpu=3, lock_mode="two-lock", mem_sync="stream", vram_sample_s=0.2)
    eng = Engine(cfg, [], phases=NullPhases())
    exp = scr = None
    if with_exporter:
        exp, scr = _attach(eng, 0.5)
    t0 = time.perf_counter()
    eng.start()
    assert eng.wait(600)
    dt = time.perf_counter() - t0
    if exp is not None:
        scr.stop()
        exp.stop()
    return {"exporter": with_exporter, "ms_per_partition": round(1000 * dt / parts, 4)}


def per_event(n: int) -> dict:
    evs = mixed_events(n)
    exp = MetricsExporter(host="bench")
    t0 = time.perf_counter()
    for e in evs:
        exp.sink(e)
    t_sink = time.perf_counter() - t0
    f = MetricsFold()
    t1 = time.perf_counter()
    for e in evs:
        f.apply(e)
    t_fold = time.perf_counter() - t1
    return {"events": n, "sink_append_us": round(1e6 * t_sink / n, 3), "fold_us": round(1e6 * t_fold / n, 3)}


def scrape_8x4(parts: int, n_after: int) -> dict:
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=1.0, gpus=8, workers_per_gpu=4, sectors=1,
                      partitions=parts, vram_budget="1GiB", lock_mode="two-lock", mem_sync="device", vram_sample_s=0.2)
    eng = Engine(cfg, [], phases=NullPhases())
    exp, scr = _attach(eng, 0.2)
    eng.start()
    assert eng.wait(600)
    scr.stop()
    during = list(scr.times)
    after = [scr.once() for _ in range(n_after)]
    cpu_ms = 1000 * scrape_cpu(exp, n_after)
    series = sum(1 for line in _body(scr.url).splitlines() if line and not line.startswith("#"))
    with exp.folding() as f:
        seen = {"gpus": len(f.state.gpus), "workers": len(f._worker_gpu), "partitions_done": f.state.partitions_done}
    exp.stop()
    return {"gpus": 8, "workers_per_gpu": 4, "partitions": parts, "seen": seen, "samples_per_scrape": series, "bytes": scr.bytes,
            "cpu_ms_per_scrape_median": round(cpu_ms, 2), "during_run_wall_ms": _ms_stats(during),
            "after_run_wall_ms": _ms_stats(after)}


def _body(url: str) -> str:
    return urllib.request.urlopen(url, timeout=10).read().decode()


def _ms_stats(xs: list[float]) -> dict:
    if not xs:
        return {}
    ms = sorted(1000 * x for x in xs)
    return {"n": len(ms), "median": round(statistics.median(ms), 2), "p95": round(ms[int(0.95 * (len(ms) - 1))], 2),
            "max": round(ms[-1], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--parts", type=int, default=16)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--scrape-hz", type=float, default=1.0, help="scrapes a second during the sim runs")
    ap.add_argument("--book-parts", type=int, default=1000)
    ap.add_argument("--scrape-parts", type=int, default=800)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    load0 = os.getloadavg()[0]
    sim = []
    book = []
    for _ in range(a.pairs):  # alternate, so drifting load hits both sides alike
        sim += [sim_run(False, a.parts, a.scale, a.scrape_hz), sim_run(True, a.parts, a.scale, a.scrape_hz)]
        book += [bookkeeping_run(False, a.book_parts), bookkeeping_run(True, a.book_parts)]

    def med(rows: list[dict], key: str, flag: bool) -> float:
        return statistics.median(r[key] for r in rows if r["exporter"] == flag)

    sim_ratio = med(sim, "steady_per_min", True) / med(sim, "steady_per_min", False)
    cpu_share = statistics.median(r["exporter_cpu_share_of_run_cpu"] for r in sim if r["exporter"])
    book_ratio = med(book, "ms_per_partition", False) / med(book, "ms_per_partition", True)
    res = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {**harness.machine(),
                    "load_avg_1m_at_start": round(load0, 2), "load_avg_1m_at_end": round(os.getloadavg()[0], 2)},
        "command": " ".join(["python3", "benchmarks/bench_metrics.py", *sys.argv[1:]]),
        "sim": {"profile": "rtx5070ti-16g", "proved_log2": 8, "time_scale": a.scale, "partitions": a.parts,
                "workers_per_gpu": 3, "mem_sync": "stream", "scrape_hz": a.scrape_hz, "runs": sim,
                "throughput_ratio_with_over_without": round(sim_ratio, 4),
                "exporter_cpu_share_median": cpu_share},
        "bookkeeping": {"partitions": a.book_parts, "runs": book,
                        "throughput_ratio_with_over_without": round(book_ratio, 4)},
        "per_event": per_event(200_000),
        "scrape_8gpus_x_4workers": scrape_8x4(a.scrape_parts, 50),
    }
    out = a.out or ROOT / "benchmarks" / "results" / f"metrics_{datetime.now(timezone.utc):%Y%m%d}.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    s = res["scrape_8gpus_x_4workers"]
    print(f"sim throughput with/without exporter: {sim_ratio:.4f} (median of pairs); the exporter's CPU "
          f"(fold + scrapes) = {100 * cpu_share:.2f}% of the run's CPU")
    print(f"bookkeeping-only (worst case) with/without: {book_ratio:.4f}")
    print(f"per event: sink {res['per_event']['sink_append_us']} us, fold {res['per_event']['fold_us']} us")
    print(f"scrape 8x4: {s['samples_per_scrape']} samples, {s['bytes']} B; CPU {s['cpu_ms_per_scrape_median']} ms; "
          f"wall during run {s['during_run_wall_ms']}, after {s['after_run_wall_ms']}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
