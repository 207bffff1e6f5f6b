"""Engine benchmarks: recorder throughput, pipeline bookkeeping per partition, and the seed's
three modes on SimDevice (real proofs at 2^8).

    python3 benchmarks/bench_engine.py [--events 200000] [--partitions 1500] [--seed-parts 14]

Writes benchmarks/results/engine_<date>.json and prints a markdown summary.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover import events as ev  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.device.profiles import PROFILES, register_profile  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.pipeline.nullphases import NullPhases  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter, read_recording  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402


def mixed_events(n: int) -> list:
    kinds = [
        lambda i: ev.LockRequested(t=i * 1e-5, gpu=0, lock="mem", worker="g0w1", part=f"s0p{i % 10}"),
        lambda i: ev.LockAcquired(t=i * 1e-5, gpu=0, lock="compute", worker="g0w1", part=f"s0p{i % 10}", wait=0.01),
        lambda i: ev.PhaseStart(t=i * 1e-5, part=f"s0p{i % 10}", phase=ev.Phase.ntt_h, worker="g0w1", gpu=0, impl="sim"),
        lambda i: ev.PhaseEnd(t=i * 1e-5, part=f"s0p{i % 10}", phase=ev.Phase.msm, worker="g0w1", gpu=0, duration=1.1),
        lambda i: ev.Alloc(t=i * 1e-5, gpu=0, owner="g0w1", part=f"s0p{i % 10}", name="d_bc", bytes=8 << 30),
        lambda i: ev.VramSample(t=i * 1e-5, gpu=0, budget=24 << 30, pool_reserved=12 << 30, pool_used=12 << 30, util=0.5),
    ]
    return [kinds[i % len(kinds)](i) for i in range(n)]


def bench_recorder(n: int) -> dict:
    evs = mixed_events(n)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "bench.jsonl"
        t0 = time.perf_counter()
        w = RecordingWriter(p, RecordingHeader())
        for e in evs:
            w.write(e)
        t_enq = time.perf_counter() - t0
        w.close()
        t_all = time.perf_counter() - t0
        size = p.stat().st_size
        t1 = time.perf_counter()
        rec = read_recording(p)
        t_read = time.perf_counter() - t1
        assert rec.error is None and len(rec.events) == n
        # from 4 producer threads at once
        p2 = Path(d) / "bench4.jsonl"
        w2 = RecordingWriter(p2, RecordingHeader())
        chunks = [evs[i::4] for i in range(4)]
        t2 = time.perf_counter()
        ts = [threading.Thread(target=lambda c=c: [w2.write(e) for e in c]) for c in chunks]
        [t.start() for t in ts]
        [t.join() for t in ts]
        w2.close()
        t_mt = time.perf_counter() - t2
    return {
        "events": n, "bytes_per_event": round(size / n, 1),
        "write_events_per_s": round(n / t_all), "enqueue_us_per_event": round(1e6 * t_enq / n, 3),
        "write_4_threads_events_per_s": round(n / t_mt),
        "read_validate_events_per_s": round(n / t_read),
    }


def bench_bookkeeping(parts: int, workers: int, record: bool) -> dict:
    if "zero" not in PROFILES:
        register_profile(replace(PROFILES["tiny"], name="zero", description="all phase times 0 (benchmark)",
                                 synthesis=0, prep_msm=0, prestage=0, ntt_h=0, msm=0, epilogue=0, fallback_upload=0,
                                 b_g2_msm_cpu=0, b_g2_msm_gpu=0, assemble=0, verify=0))
    cfg = load_config(None, backend="sim", profile="zero", time_scale=1.0, sectors=1, partitions=parts,
                      workers_per_gpu=workers, lock_mode="two-lock", mem_sync="stream", vram_sample_s=0.2)
    n_events = [0]

    def count(e):
        n_events[0] += 1

    sinks = [count]
    tmp = None
    w = None
    if record:
        tmp = tempfile.TemporaryDirectory()
        w = RecordingWriter(Path(tmp.name) / "b.jsonl", RecordingHeader())
        sinks.append(w.write)
    eng = Engine(cfg, sinks, phases=NullPhases())
    t0 = time.perf_counter()
    eng.start()  # NullPhases: no setup; what is timed is the engine's own work
    assert eng.wait(600)
    dt = time.perf_counter() - t0
    if w is not None:
        w.close()
        tmp.cleanup()
    return {"partitions": parts, "workers": workers, "recorded": record, "seconds": round(dt, 3),
            "ms_per_partition": round(1000 * dt / parts, 3), "events_per_partition": round(n_events[0] / parts, 1)}


def best_of(k: int, *args) -> dict:
    """The machine is shared (load from other jobs): report the best of k runs, and all."""
    runs = [bench_bookkeeping(*args) for _ in range(k)]
    best = min(runs, key=lambda r: r["ms_per_partition"])
    return dict(best, runs_ms_per_partition=[r["ms_per_partition"] for r in runs])


def bench_seed(parts: int, scale: float) -> dict:
    out = {}
    for mode, ms in (("single", "device"), ("two-lock", "device"), ("two-lock", "stream")):
        cfg = load_config(None, backend="sim", profile="rtx5070ti-16g", workers_per_gpu=3, vram_budget="two-prestage",
                          lock_mode=mode, mem_sync=ms, constraints_log2=8, partitions=parts, sectors=1,
                          time_scale=scale, seed=3)
        evs: list = []
        eng = Engine(cfg, [evs.append])
        eng.start()
        assert eng.wait(600)
        sm = summarize(fold(evs))
        g = sm.gpus[0]
        out[f"{mode}+{ms}"] = {
            "partitions_per_modelled_min": round(sm.modelled_throughput_per_min or 0, 2),
            "fallbacks": sm.fallbacks, "proofs_verified": sm.proofs_ok, "proofs_failed": sm.proofs_failed,
            "mem_section_mean_modelled_s": round(g.mem.section_mean / scale, 3),
            "prestage_max_modelled_s": round(sm.phases["prestage"].max / scale, 3),
            "compute_hold_mean_modelled_s": round(g.compute.hold_mean / scale, 3),
            "gpu_busy_share": round(g.busy_share, 3),
        }
    base = out["single+device"]["partitions_per_modelled_min"]
    for v in out.values():
        v["vs_single"] = round(v["partitions_per_modelled_min"] / base, 2) if base else None
    return out


def bench_storm(seconds: float, seed: int = 1) -> dict:
    """Issue 7's storm: mode switches every 10 ms, workers up and down, faults injected, on
    2 simulated GPUs (tiny profile, no math), for `seconds`; then a drain. Invariants are
    checked from the event stream (tests/helpers/invariants.py)."""
    import random

    from tests.helpers.invariants import InvariantChecker

    cfg = load_config(None, backend="sim", profile="tiny", gpus=2, workers_per_gpu=3, sectors=None, partitions=10,
                      time_scale=1.0, seed=seed, prestage_wait_s=0.05,
                      vram_budget=2 * PROFILES["tiny"].partition_bytes(),
                      faults={"phase_error": {p.value: 0.01 for p in ev.Phase}, "oom_rate": 0.02,
                              "worker_death_rate": 0.005, "cuda_error_rate": 0.01, "corrupt_proof_rate": 0.02})
    chk = InvariantChecker()
    eng = Engine(cfg, [chk], phases=NullPhases())
    rnd = random.Random(seed)
    switches = ["single", "two-lock", "mem_sync=device", "mem_sync=stream", "prestage=off", "prestage=on",
                "b_g2=gpu", "b_g2=cpu", "workers_per_gpu=1", "workers_per_gpu=3", "workers_per_gpu=6"]
    eng.start()
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < seconds:
        time.sleep(0.01)
        eng.controller.apply(rnd.choice(switches), source="storm")
        n += 1
    drained = eng.drain(timeout=60)
    problems = chk.final(all_done=False)
    done = list(chk.done.values())
    reasons: dict[str, int] = {}
    for d in done:
        if not d.ok:
            key = (d.reason or "?").split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
    started = {e.part for e in chk.events if e.kind == "phase_start"}
    never_started = len(chk.queued - started)
    started_not_done = len(started - set(chk.done))
    return {"seconds": seconds, "switches": n, "mode_change_events": chk.kinds["mode_change"],
            "ended_cleanly": drained, "invariant_violations": problems,
            "partitions_done": len(done), "partitions_ok": sum(d.ok for d in done),
            "partitions_failed_with_reason": sum(1 for d in done if not d.ok and d.reason),
            "partitions_failed_without_reason": sum(1 for d in done if not d.ok and not d.reason),
            "failure_reasons": reasons, "ooms": chk.kinds["oom"], "fallbacks": chk.kinds["fallback"],
            "worker_deaths": sum(1 for e in chk.events if e.kind == "worker_stopped" and e.reason.startswith("died")),
            "proofs_failed_verification": sum(1 for e in chk.events if e.kind == "proof_result" and not e.ok),
            "queued_not_started_at_drain": never_started, "started_not_finished": started_not_done}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--seed-parts", type=int, default=14)
    ap.add_argument("--seed-scale", type=float, default=0.15)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--storm", type=float, default=0.0, help="also run the fault storm for this many seconds")
    ap.add_argument("--storm-only", action="store_true")
    a = ap.parse_args()
    if a.storm_only:
        r = bench_storm(a.storm or 60.0)
        out = a.out or ROOT / "benchmarks" / "results" / f"engine_storm_{datetime.now(timezone.utc):%Y%m%d}.json"
        out.write_text(json.dumps(r, indent=2) + "\n")
        print(json.dumps(r, indent=2))
        return
    res = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {**harness.machine(), "load_avg_1m_at_start": round(os.getloadavg()[0], 2)},
        "recorder": bench_recorder(a.events),
        "bookkeeping": [best_of(3, a.partitions, 1, False), best_of(3, a.partitions, 3, False),
                        best_of(3, a.partitions, 3, True)],
        "seed": {"profile": "rtx5070ti-16g", "modelled_log2": 27, "budget": "24GiB", "workers_per_gpu": 3,
                 "proved_log2": 8, "time_scale": a.seed_scale, "partitions": a.seed_parts,
                 "modes": bench_seed(a.seed_parts, a.seed_scale)},
    }
    if a.storm:
        res["storm"] = bench_storm(a.storm)
    out = a.out or ROOT / "benchmarks" / "results" / f"engine_{datetime.now(timezone.utc):%Y%m%d}.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    r = res["recorder"]
    print(f"recorder: {r['write_events_per_s']:,} events/s written (1 thread), {r['write_4_threads_events_per_s']:,} "
          f"(4 threads), enqueue {r['enqueue_us_per_event']} us, read+validate {r['read_validate_events_per_s']:,}/s, "
          f"{r['bytes_per_event']} B/event")
    for b in res["bookkeeping"]:
        print(f"bookkeeping: {b['workers']} worker(s){' +recorder' if b['recorded'] else ''}: "
              f"{b['ms_per_partition']} ms/partition (best of {b['runs_ms_per_partition']}), "
              f"{b['events_per_partition']} events/partition")
    print(f"load average at start: {res['machine']['load_avg_1m_at_start']}")
    print("| mode | partitions / modelled min | vs single | fallbacks | mem section mean (modelled s) | prestage max | compute hold mean | proofs |")
    print("|---|---|---|---|---|---|---|---|")
    for k, v in res["seed"]["modes"].items():
        print(f"| {k} | {v['partitions_per_modelled_min']} | {v['vs_single']}x | {v['fallbacks']} | "
              f"{v['mem_section_mean_modelled_s']} | {v['prestage_max_modelled_s']} | {v['compute_hold_mean_modelled_s']} | "
              f"{v['proofs_verified']} ok / {v['proofs_failed']} failed |")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
