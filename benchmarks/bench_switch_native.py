"""Issue 22 natively: a live switch mem_sync device -> stream, recorded with the device-global
syncs as events (schema 3), in ONE process (circuit and keys built once, bench_native's way).

    python3 benchmarks/bench_switch_native.py --log2 22 --seconds 20 --out-dir $OUT [--budgets tight,card]
        [--workers 8] [--backend cuda|sim] [--deadline EPOCH_S]

Each run: two-lock, mem_sync=device, until the first verified partition, `--seconds` more, then
`mem_sync=stream` through the controller (source "switch", as `record --switch` does), `--seconds`
more, drained. Writes <out-dir>/n<log2>_switch_<budget>.jsonl.gz (replay, summary, compare read
it) and <out-dir>/switch_<log2>.json as it goes: per run the segment rows (steady verified/min
before and after, the ratio, fallbacks, device-sync totals) and the device syncs' waits
(median, p90, share that waited behind another worker's compute section). One line per run
is printed. Every figure is native (profile native, modelled = proved size) on --backend cuda.
"""
from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from bench_native import ListSink, MemoPhases, device_total, free_cached_blocks  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.device.profiles import get_profile  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402


def sync_stats(events: list[Any]) -> dict[str, Any]:
    """The device syncs' waits: how many, median / p90 ms, and how many waited behind a holder."""
    waits = sorted(e.duration for e in events if e.kind == "device_sync_end")
    behind = sum(1 for e in events if e.kind == "device_sync_end" and e.behind_worker)
    if not waits:
        return {"count": 0}
    p90 = waits[min(len(waits) - 1, int(0.9 * len(waits)))]
    return {"count": len(waits), "median_ms": 1e3 * statistics.median(waits), "p90_ms": 1e3 * p90,
            "total_s": sum(waits), "behind_a_compute_holder": behind}


def wait_first_ok(eng: Any, sink: ListSink, timeout: float) -> None:
    t0 = time.monotonic()
    while not eng.finished and not any(e.kind == "partition_done" and e.ok for e in sink.events[-400:]):
        if time.monotonic() - t0 > timeout:
            return
        time.sleep(0.2)


def run_switch(name: str, base: dict[str, Any], phases: MemoPhases, out_dir: Path, seconds: float) -> dict[str, Any]:
    cfg = load_config(None, **base)
    sink = ListSink()
    plain = out_dir / f"{name}.jsonl"
    writer = RecordingWriter(plain, RecordingHeader(argv=sys.argv, config=cfg.public_dict(),
                                                    note=f"bench_switch_native {name}: device, then --switch stream"))
    eng = Engine(cfg, [sink, writer], phases=phases)
    eng.start()
    wait_first_ok(eng, sink, timeout=900)
    eng.wait(seconds)
    eng.controller.apply("mem_sync=stream", source="switch")
    eng.wait(seconds)
    eng.drain(timeout=60)
    eng.wait(30)
    writer.close()
    with open(plain, "rb") as f, gzip.open(f"{plain}.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    plain.unlink()
    st = fold(sink.events)
    sm = summarize(st)
    segs = [s.model_dump(mode="json") for s in sm.segments]
    row = {"name": name, "config": cfg.public_dict(), "segments": segs, "device_syncs": sync_stats(sink.events),
           "steady_per_min": sm.steady_throughput_per_min, "proofs_ok": sm.proofs_ok, "proofs_failed": sm.proofs_failed,
           "partitions_failed": sm.partitions_failed, "native": not sm.simulated}
    rates = " -> ".join(f"{s['verified_per_min'] or 0:.1f}" for s in segs)
    ratio = segs[-1]["ratio"] if segs else None
    ds = row["device_syncs"]
    print(f"{name}: segments verified/min {rates} (ratio {ratio if ratio is None else round(ratio, 2)}), fallbacks "
          f"{[s['fallbacks'] for s in segs]}, device syncs {ds.get('count')} median {ds.get('median_ms', 0):.1f} ms "
          f"p90 {ds.get('p90_ms', 0):.1f} ms, {ds.get('behind_a_compute_holder', 0)} behind a compute holder | proofs "
          f"verified {sm.proofs_ok} failed {sm.proofs_failed} | {'native' if row['native'] else 'SIMULATED'}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2", type=int, default=22)
    ap.add_argument("--seconds", type=float, default=20.0, help="before and after the switch, each")
    ap.add_argument("--workers", type=int, default=None, help="workers per GPU (default: nproc/2, 2..16)")
    ap.add_argument("--budgets", default="tight,card", help="tight (2.5 pre-stages), card")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=None, help="epoch seconds; a run that would end later is skipped")
    ap.add_argument("--out-dir", type=Path, default=Path("."))
    ap.add_argument("--cache-dir", type=Path, default=ROOT / ".cache" / "keys")
    a = ap.parse_args(argv)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    workers = a.workers or max(2, min(16, (os.cpu_count() or 2) // 2))
    tight = int(2.5 * get_profile("native").partition_bytes(a.log2))
    total = device_total(a.backend)
    base = {"backend": a.backend, "profile": "native", "constraints_log2": a.log2, "modelled_log2": a.log2,
            "workers_per_gpu": workers, "seed": a.seed, "verify_share": 1.0, "time_scale": 1.0, "b_g2": "auto",
            "cache_dir": str(a.cache_dir), "lock_mode": "two-lock", "mem_sync": "device"}
    phases = MemoPhases()
    rows: list[dict[str, Any]] = []
    out = a.out_dir / f"switch_{a.log2}.json"
    started = time.time()
    for budget in a.budgets.split(","):
        per_run = 2 * a.seconds + 40 + (time.time() - started if not rows else 0.0)
        if a.deadline is not None and rows and time.time() + per_run > a.deadline:
            print(f"n{a.log2}_switch_{budget}: skipped, {a.deadline - time.time():.0f}s left < ~{per_run:.0f}s", flush=True)
            continue
        b = total if budget == "card" else tight
        rows.append(run_switch(f"n{a.log2}_switch_{budget}", {**base, "vram_budget": b}, phases, a.out_dir, a.seconds))
        out.write_text(json.dumps(rows, indent=1))
        gc.collect()
        free_cached_blocks(a.backend)
    return 0 if rows and all(r["proofs_failed"] == r["partitions_failed"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
