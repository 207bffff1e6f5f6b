"""Every lock discipline natively, back to back in ONE process (issue 21): one circuit and one
key per size (set up once, compiled setup), then single, narrow, two-lock + stream, reserved
and two-lock + device on the whole card and on the tight budget (two pre-stages fit, three
do not), then two-lock + stream, single (cuzk's point) and narrow with b_g2 on the CPU on the
card; every proof verified.

    python3 benchmarks/bench_disciplines.py --log2 22 --out-dir "$OUT"            # one device call
    python3 benchmarks/bench_disciplines.py --log2 24 --seconds 15 --out-dir "$OUT" # a second one
    python3 benchmarks/bench_disciplines.py --backend sim --log2 12 --seconds 3 --out-dir /tmp/d  # here

Deadline-aware (`--budget-s`, from the script's start: a run that would end later is skipped
and said so), results written as they are made: <out-dir>/n<log2>_<run>_<budget>.jsonl.gz
(gzipped recordings that `c2tui replay` / `summary` read), <out-dir>/disciplines_<log2>.json
(one row per run) and, after each run, <out-dir>/disciplines_<log2>.md (the RESULTS table
and the decomposition, benchmarks/disciplines_table.py over the recordings so far).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from bench_native import MODES, MemoPhases, device_total, run_plan, tight_budget  # noqa: E402
from disciplines_table import report  # noqa: E402

from prover.device.profiles import get_profile  # noqa: E402

# the decomposition's runs first (a deadline cuts from the end), each on both budgets
RUNS = "single,narrow,stream,reserved,device,stream_cpu,single_cpu,narrow_cpu"


def plan_runs(log2: int, runs: list[str], budgets: list[str], base: dict[str, Any], card: int) -> list[tuple[str, dict[str, Any]]]:
    plan = []
    for mode in runs:
        if mode not in MODES:
            raise SystemExit(f"unknown run {mode!r}; known: {', '.join(MODES)}")
        for budget in budgets:
            if mode.endswith("_cpu") and budget == "tight":
                continue  # the cuzk point on the card only: the deadline is better spent on the rest
            nbytes = card if budget == "card" else tight_budget(log2)
            plan.append((f"n{log2}_{mode}_{budget}", {**base, **MODES[mode], "vram_budget": nbytes}))
    return plan


def main(argv: list[str] | None = None) -> int:
    t0 = time.time()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2", type=int, default=22)
    ap.add_argument("--seconds", type=float, default=20.0, help="each run's steady length before draining")
    ap.add_argument("--workers", type=int, default=None, help="workers per GPU (default: 8 at 2^22, 12 at 2^24)")
    ap.add_argument("--runs", default=RUNS, help=f"comma separated, of {', '.join(MODES)}")
    ap.add_argument("--budgets", default="card,tight")
    ap.add_argument("--budget-s", type=float, default=560.0, help="seconds this call may take in all")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out-dir", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args(argv)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    workers = a.workers or (12 if a.log2 >= 24 else 8)
    card = device_total(a.backend)
    part = get_profile("native").partition_bytes(a.log2)
    print(f"bench_disciplines: 2^{a.log2} native, backend {a.backend}, {os.cpu_count()} CPUs, {workers} workers/GPU, "
          f"{a.seconds:g}s a run; pre-stage {part / 2**20:.1f} MiB a partition; budgets card {card >> 20} MiB, "
          f"tight {tight_budget(a.log2) >> 20} MiB", flush=True)
    base = {"backend": a.backend, "profile": "native", "constraints_log2": a.log2, "modelled_log2": a.log2,
            "workers_per_gpu": workers, "seed": a.seed, "verify_share": 1.0, "time_scale": 1.0, "b_g2": "auto",
            "cache_dir": str(ROOT / ".cache" / "keys")}
    plan = plan_runs(a.log2, a.runs.split(","), a.budgets.split(","), base, card)
    table = a.out_dir / f"disciplines_{a.log2}.md"

    def after_run(_row: dict[str, Any]) -> None:
        table.write_text(report(sorted(a.out_dir.glob(f"n{a.log2}_*.jsonl.gz"))) + "\n")

    run_plan(plan, MemoPhases(), a.out_dir, a.seconds, a.out_dir / f"disciplines_{a.log2}.json",
             deadline=t0 + a.budget_s, gzip_recording=True, after_run=after_run)
    print(table.read_text() if table.exists() else "no run finished", flush=True)
    print(f"bench_disciplines: done in {time.time() - t0:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
