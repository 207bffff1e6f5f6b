"""Issue 26 on the GPU in one call (< ~5 min): (A) a native 2^22 run under a host-RAM budget
that holds fewer workers than asked (the waits shown, no OOM, proofs verified), and (B) the
start-up steps (circuit, keys set-up or load, host kernels, devices, CUDA kernels) timed at 2^24.

    OUT=/dir python3 benchmarks/gpu_host_ram_startup.py --out-dir $OUT            # on the H200
    python3 benchmarks/gpu_host_ram_startup.py --backend sim --log2 10 --startup-log2 12 \\
        --seconds 3 --out-dir /tmp/x                                                # locally

(A) profile native at --log2 with --workers workers, started paused; once set-up has sized
the key and a worker's buffers (HostRam events: native, the real arrays), host_ram_budget is
set to key + --hold workers + half a worker, then resumed for --seconds and drained. The
recording is <out>/host_ram_2^N.jsonl (c2tui replay / summary read it); the process's real
peak RSS (getrusage) is printed beside the accounted peak.
(B) one partition at --startup-log2, stopped after it: <out>/startup_2^N.jsonl. Skipped, and
said so, when less than --startup-budget-s is left of --deadline-s.
Rows go to <out>/host_ram_startup.json after each part.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover.config import load_config  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.host_ram import is_key  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402

GiB = float(1 << 30)


def sz(n: float) -> str:
    return f"{n / GiB:.2f} GiB" if n >= GiB else f"{n / 2**20:.1f} MiB"


def _wait_for(pred: Any, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def _engine(a: argparse.Namespace, name: str, events: list, **kw: Any) -> tuple[Engine, RecordingWriter]:
    base = {"backend": a.backend, "profile": "native", "seed": 1, "verify_share": 1.0, "time_scale": 1.0,
            "mem_sync": "stream", "lock_mode": "two-lock", "cache_dir": str(a.cache_dir)}
    cfg = load_config(None, **{**base, **kw})
    writer = RecordingWriter(a.out_dir / f"{name}.jsonl",
                             RecordingHeader(argv=sys.argv, config=cfg.public_dict(), note=f"gpu_host_ram_startup {name}"))
    return Engine(cfg, [events.append, writer]), writer


def held_workers_peak(events: list) -> int:
    held: set[str] = set()
    peak = 0
    for e in events:
        if e.kind == "host_ram" and not is_key(e.owner):
            (held.add if e.bytes else held.discard)(e.owner)
            peak = max(peak, len(held))
    return peak


def part_a(a: argparse.Namespace) -> dict[str, Any]:
    name = f"host_ram_2^{a.log2}"
    evs: list = []
    eng, writer = _engine(a, name, evs, constraints_log2=a.log2, modelled_log2=a.log2, workers_per_gpu=a.workers,
                          paused=True)
    t0 = time.monotonic()
    eng.start()
    if not _wait_for(lambda: any(e.kind == "host_ram" and is_key(e.owner) for e in evs) or eng.finished, 600):
        raise SystemExit("set-up did not size the key in 600 s")
    key = next(e.bytes for e in evs if e.kind == "host_ram" and is_key(e.owner))
    need = eng.host_ram.need
    budget = key + a.hold * need + need // 2
    eng.controller.set("host_ram_budget", budget, source="benchmark")
    eng.controller.resume("benchmark")
    print(f"[A] 2^{a.log2} native, {a.workers} workers asked; key {sz(key)}, a worker {sz(need)} "
          f"-> host_ram_budget {sz(budget)} (holds {a.hold})", flush=True)
    _wait_for(lambda: any(e.kind == "partition_done" for e in evs[-500:]) or eng.finished, 300)
    eng.wait(a.seconds)
    eng.drain(timeout=60)
    eng.wait(30)
    writer.close()
    sm = summarize(fold(evs))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    h = sm.host_ram
    row = {"part": "A", "name": name, "log2": a.log2, "backend": a.backend, "workers_asked": a.workers,
           "workers_holding_peak": held_workers_peak(evs), "key_bytes": key, "worker_bytes": need, "budget": budget,
           "host_ram": h.model_dump() if h else None, "process_peak_rss": rss, "ooms": sm.ooms,
           "proofs_ok": sm.proofs_ok, "proofs_failed": sm.proofs_failed, "partitions_ok": sm.partitions_ok,
           "steady_per_min": sm.steady_throughput_per_min, "startup": sm.startup.model_dump() if sm.startup else None,
           "wall_s": time.monotonic() - t0}
    print(f"[A] workers holding at most {row['workers_holding_peak']} of {a.workers}; held back {h.waits if h else 0}x "
          f"({h.wait_total if h else 0:.1f} s); OOMs {sm.ooms}; verified {sm.proofs_ok}, failed {sm.proofs_failed}; "
          f"{sm.steady_throughput_per_min:.1f}/min steady; accounted peak {sz(h.peak if h else 0)} of "
          f"{sz(budget)}, process peak RSS {sz(rss)}", flush=True)
    return row


def part_b(a: argparse.Namespace) -> dict[str, Any]:
    name = f"startup_2^{a.startup_log2}"
    evs: list = []
    eng, writer = _engine(a, name, evs, constraints_log2=a.startup_log2, modelled_log2=a.startup_log2,
                          workers_per_gpu=1, sectors=1, partitions=1)
    t0 = time.monotonic()
    eng.start()
    eng.wait(max(30.0, a.deadline - time.monotonic()))
    if not eng.finished:
        eng.stop(timeout=30, reason="benchmark deadline")
    writer.close()
    sm = summarize(fold(evs))
    row = {"part": "B", "name": name, "log2": a.startup_log2, "backend": a.backend,
           "startup": sm.startup.model_dump() if sm.startup else None, "proofs_ok": sm.proofs_ok,
           "proofs_failed": sm.proofs_failed, "end_reason": sm.end_reason, "wall_s": time.monotonic() - t0}
    steps = ", ".join(f"{k} {v:.1f}s" for k, v in (sm.startup.steps.items() if sm.startup else ()))
    print(f"[B] 2^{a.startup_log2} start-up {sm.startup.seconds if sm.startup else 0:.1f} s: {steps}; "
          f"keys: {(sm.startup.details.get('keys') if sm.startup else '') or '?'}; then {sm.proofs_ok} proof(s) "
          f"verified ({sm.end_reason})", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--log2", type=int, default=22)
    ap.add_argument("--workers", type=int, default=8, help="workers per GPU asked for in part A")
    ap.add_argument("--hold", type=int, default=4, help="workers the host-RAM budget holds")
    ap.add_argument("--seconds", type=float, default=40.0, help="part A's run after its first partition")
    ap.add_argument("--startup-log2", type=int, default=24)
    ap.add_argument("--deadline-s", type=float, default=290.0, help="the whole script's budget (seconds)")
    ap.add_argument("--startup-budget-s", type=float, default=150.0, help="skip part B with less than this left")
    ap.add_argument("--out-dir", type=Path, default=Path("."))
    ap.add_argument("--cache-dir", type=Path, default=ROOT / ".cache" / "keys")
    a = ap.parse_args(argv)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    a.deadline = time.monotonic() + a.deadline_s
    out = a.out_dir / "host_ram_startup.json"
    rows = [part_a(a)]
    out.write_text(json.dumps(rows, indent=1))
    left = a.deadline - time.monotonic()
    if left < a.startup_budget_s:
        print(f"[B] skipped: {left:.0f} s left of the {a.deadline_s:.0f} s budget (< {a.startup_budget_s:.0f})", flush=True)
        rows.append({"part": "B", "skipped": f"{left:.0f} s left"})
    else:
        rows.append(part_b(a))
    out.write_text(json.dumps(rows, indent=1))
    ok = rows[0]["ooms"] == 0 and rows[0]["proofs_failed"] == 0 and rows[0]["workers_holding_peak"] <= a.hold
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
