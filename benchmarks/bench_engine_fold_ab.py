"""bench_engine's and bench_fold_view's figures, this tree against an older one, interleaved, with
95% intervals of after/before (issue 43: the seat per GPU and the rooms must be no slower).

    python benchmarks/bench_engine_fold_ab.py --base main [--rounds 10] [--partitions 600] [--out FILE]

REV is exported with `git archive` (prover, c2tui, tests/helpers, themes, benchmarks) into a
temporary directory. Each round runs one worker process per tree, the order flipped every
round (ABBA...), so the drift of this shared machine falls on both alike. A worker imports its
own tree's prover (checked) and runs that tree's benchmark functions, the same code in both:

- bench_engine.bench_bookkeeping: wall ms per partition of the engine's own bookkeeping
  (NullPhases, every phase time 0, sim, two-lock + stream) with 1 worker, 3 workers, and 3
  workers with the recorder attached (`--partitions` each);
- bench_engine.bench_recorder: events/s written end to end and read back validated (`--events`);
- bench_fold_view.worker: the fold's events/s (8 GPUs, a 64-GPU fleet; best of 3 passes, CPU
  time) and ms a view copy (median of 40).

Per figure: the median of each tree's runs and the paired ratio after/before per round, its
geometric mean and a 95% t-interval (on the logs, rounds as pairs). Simulated: no GPU, no math.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import harness

ROOT = harness.ROOT
# t quantiles (0.975) by degrees of freedom, for the paired intervals
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 25: 2.060, 30: 2.042}
# higher is better for these; lower for the rest (ms)
_HIGHER = ("_per_s",)


def worker(tree: str, partitions: int, events: int) -> dict:
    sys.path[:0] = [tree, str(Path(tree) / "benchmarks")]
    import prover

    assert str(Path(prover.__file__).resolve()).startswith(str(Path(tree).resolve())), prover.__file__
    import bench_engine as be
    import bench_fold_view as bf

    out: dict = {"tree": tree, "load_avg_1m": round(os.getloadavg()[0], 2)}
    for workers, record in ((1, False), (3, False), (3, True)):
        r = be.bench_bookkeeping(partitions, workers, record)
        out[f"bookkeeping_{workers}w{'_rec' if record else ''}_ms"] = r["ms_per_partition"]
    rec = be.bench_recorder(events)
    out["recorder_write_per_s"] = rec["write_events_per_s"]
    out["recorder_read_per_s"] = rec["read_validate_events_per_s"]
    fv = bf.worker(tree)
    out.update({k: v for k, v in fv.items() if k.endswith(("_per_s", "_ms"))})
    return out


def _t(df: int) -> float:
    return _T975.get(df) or _T975[max(k for k in _T975 if k <= df)]


def paired(before: list[float], after: list[float], higher: bool) -> dict:
    """after/before per round: geometric mean and 95% t-interval; `faster` > 1 means after is better."""
    logs = [math.log(a / b) for a, b in zip(after, before)]
    m = statistics.fmean(logs)
    half = _t(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else math.inf
    ratio, lo, hi = math.exp(m), math.exp(m - half), math.exp(m + half)
    return {"after_over_before": round(ratio, 4), "ci95": [round(lo, 4), round(hi, 4)],
            "after_better": (lo > 1) if higher else (hi < 1), "after_worse": (hi < 1) if higher else (lo > 1)}


def main() -> None:
    ap = harness.parser(__doc__, out=str(ROOT / "benchmarks" / "results" / "engine_fold_ab.json"))
    ap.add_argument("--base", default="main", help="the older tree's git revision")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=600)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--worker", help=bf_hidden())
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.partitions, a.events)))
        return
    with tempfile.TemporaryDirectory(prefix="bench_ab_base_") as old:
        subprocess.run(f"git -C {ROOT} archive {a.base} prover c2tui tests/helpers themes benchmarks "
                       f"| tar -x -C {old}", shell=True, check=True)
        base_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", a.base], capture_output=True,
                                     text=True).stdout.strip()
        trees = {"before": old, "after": str(ROOT)}
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for r in range(a.rounds):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")  # ABBA
            for label in order:
                res = subprocess.run([sys.executable, __file__, "--worker", trees[label], "--partitions",
                                      str(a.partitions), "--events", str(a.events)], capture_output=True, text=True,
                                     cwd=trees[label])
                if res.returncode != 0:
                    raise SystemExit(f"{label} worker failed:\n{res.stderr[-3000:]}")
                runs[label].append(json.loads(res.stdout.strip().splitlines()[-1]))
                print(f"round {r + 1}/{a.rounds} {label}: done", file=sys.stderr)
    keys = [k for k in runs["after"][0] if k.endswith(("_per_s", "_ms"))]
    table = {}
    for k in keys:
        b, n = [x[k] for x in runs["before"]], [x[k] for x in runs["after"]]
        table[k] = {"before_median": statistics.median(b), "after_median": statistics.median(n),
                    **paired(b, n, k.endswith(_HIGHER))}
    result = {"machine": harness.machine(), "base": a.base, "base_commit": base_commit, "rounds": a.rounds,
              "partitions": a.partitions, "events": a.events, "figures": table, "runs": runs,
              "command": "python benchmarks/bench_engine_fold_ab.py " + " ".join(sys.argv[1:])}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'figure':32} {'before':>12} {'after':>12} {'after/before':>13}  95% interval")
    for k, v in table.items():
        fmt = ",.0f" if k.endswith("_per_s") else ".3f"
        print(f"{k:32} {v['before_median']:>12{fmt}} {v['after_median']:>12{fmt}} {v['after_over_before']:>13.3f}"
              f"  [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]")


def bf_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
