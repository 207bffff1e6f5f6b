"""Each discipline alone (no switch), on two source trees, interleaved: is a change neutral to
throughput? (Issue 33: the switch protocol must not slow any discipline down.)

    python3 benchmarks/discipline_ab.py --tree before=/path/to/old/checkout --tree after=. \\
        --rounds 3 --out benchmarks/results/discipline_ab_sim.json

Per round, per budget, per discipline, one run from each tree in turn, the order flipped every
round (ABBA...), so that a machine's drift (other jobs, thermal) falls on both alike. Each run:
sim, profile rtx5070ti-16g (2^27 modelled), --sectors N, time scale 0.1; its rate is the
summary's modelled verified/min (at the modelled time scale: SIMULATED). `--phases real`: a
`c2tui record` (real Groth16 at 2^10 on the CPU beside the modelled GPU); `--phases null`: the
engine in a process of its own with NullPhases (no math: only the pipeline's scheduling, the
part a lock discipline changes, and far less noise on a shared machine). Prints the median per
(budget, discipline, tree) and after/before; writes every run to --out.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = {"single": ("single", "device"), "narrow": ("narrow", "device"), "two-lock+device": ("two-lock", "device"),
        "two-lock+stream": ("two-lock", "stream"), "reserved": ("reserved", "stream")}


NULL_DRIVER = """
import json, sys
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from prover.fold.apply import fold
from prover.fold.summary import summarize
events = []
eng = Engine(load_config(None, **json.loads(sys.argv[1])), [events.append], phases=NullPhases())
eng.start()
assert eng.wait(600)
sm = summarize(fold(events))
print(json.dumps({"modelled_throughput_per_min": sm.modelled_throughput_per_min, "steady_throughput_per_min":
                  sm.steady_throughput_per_min, "fallbacks": sm.fallbacks, "ooms": sm.ooms, "proofs_ok": sm.proofs_ok,
                  "proofs_failed": sm.proofs_failed}))
"""


def one_null(tree: Path, budget: str, lock: str, sync: str, a: argparse.Namespace) -> dict:
    cfg = {"backend": "sim", "profile": "rtx5070ti-16g", "vram_budget": budget, "lock_mode": lock, "mem_sync": sync,
           "workers_per_gpu": a.workers, "sectors": a.sectors, "time_scale": a.time_scale, "seed": 1}
    r = subprocess.run([sys.executable, "-c", NULL_DRIVER, json.dumps(cfg)], cwd=tree, capture_output=True, text=True,
                       timeout=600)
    sm = json.loads(r.stdout.strip().splitlines()[-1])
    return {"exit": r.returncode, "modelled_per_min": sm["modelled_throughput_per_min"],
            "steady_per_min": sm["steady_throughput_per_min"], "fallbacks": sm["fallbacks"], "ooms": sm["ooms"],
            "proofs_ok": sm["proofs_ok"], "proofs_failed": sm["proofs_failed"]}


def one(tree: Path, budget: str, lock: str, sync: str, a: argparse.Namespace, tmp: Path) -> dict:
    if a.phases == "null":
        return one_null(tree, budget, lock, sync, a)
    out = tmp / f"r{time.monotonic_ns()}.jsonl"
    cmd = [sys.executable, "-m", "c2tui", "record", "-q", "--out", str(out), "--backend", "sim", "--profile",
           "rtx5070ti-16g", "--vram-budget", budget, "--lock-mode", lock, "--mem-sync", sync, "--workers-per-gpu",
           str(a.workers), "--sectors", str(a.sectors), "--time-scale", str(a.time_scale), "--seed", "1"]
    r = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=600)
    sm = json.loads(subprocess.run([sys.executable, "-m", "c2tui", "summary", "--json", str(out)], cwd=tree,
                                   capture_output=True, text=True, timeout=120).stdout)
    out.unlink()
    return {"exit": r.returncode, "modelled_per_min": sm["modelled_throughput_per_min"],
            "steady_per_min": sm["steady_throughput_per_min"], "fallbacks": sm["fallbacks"], "ooms": sm["ooms"],
            "proofs_ok": sm["proofs_ok"], "proofs_failed": sm["proofs_failed"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, metavar="NAME=PATH", help="a source tree (twice)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budgets", default="card,two-prestage")
    ap.add_argument("--runs", default=",".join(RUNS))
    ap.add_argument("--sectors", type=int, default=3)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--time-scale", type=float, default=0.1)
    ap.add_argument("--phases", default="real", choices=("real", "null"))
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    trees = [(n, Path(p).resolve()) for n, _, p in (t.partition("=") for t in a.tree)]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            for budget in a.budgets.split(","):
                for run in a.runs.split(","):
                    for name, tree in (trees if rnd % 2 == 0 else trees[::-1]):
                        r = one(tree, budget, *RUNS[run], a, Path(tmp))
                        rows.append({"round": rnd, "budget": budget, "run": run, "tree": name, **r})
                        print(f"round {rnd} {budget:>12} {run:<16} {name:<8} {r['modelled_per_min']:7.2f}/min "
                              f"fallbacks {r['fallbacks']:>3} OOMs {r['ooms']}", flush=True)
                        a.out.write_text(json.dumps({"argv": sys.argv, "when": time.strftime("%Y-%m-%d %H:%M"),
                                                     "rows": rows}, indent=1))
    print(f"\n{'budget':>12} {'discipline':<16} " + " ".join(f"{n:>9}" for n, _ in trees) + "  ratio  OOMs")
    for budget in a.budgets.split(","):
        for run in a.runs.split(","):
            med = [statistics.median(r["modelled_per_min"] for r in rows if (r["budget"], r["run"], r["tree"]) ==
                                     (budget, run, n)) for n, _ in trees]
            ooms = [sum(r["ooms"] for r in rows if (r["budget"], r["run"], r["tree"]) == (budget, run, n)) for n, _ in trees]
            print(f"{budget:>12} {run:<16} " + " ".join(f"{m:9.2f}" for m in med) + f"  {med[-1] / med[0]:.3f}  {ooms}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
