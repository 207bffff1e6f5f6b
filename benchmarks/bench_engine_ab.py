"""bench_engine, this tree against an older one, interleaved: is the engine's own work slower?

    python benchmarks/bench_engine_ab.py [--base REV] [--rounds N] [--events N] [--partitions N]
                                         [--seed-parts N] [--out FILE]

REV (default a84f0be: main before issue 41's pace and host threads) is exported with `git
archive` (prover, c2tui, tests/helpers, themes and its own benchmarks/bench_engine.py and
harness.py) into a temporary directory. Each round runs each tree's bench_engine.py once, in a
process of its own, alternating (ABBA), so both see the same load; what is compared is each
figure's median over the rounds, after/before, with the 95% interval of that ratio (bootstrap
over rounds, a round's two runs kept together):
- recorder: events/s written (1 and 4 threads) and read back with validation (wall time);
- bookkeeping: ms a partition of the engine's own work on NullPhases (no math, zero phase
  times; 1 worker, 3 workers, 3 workers + recorder; bench_engine's best of 3, wall time);
- seed: the three modes' verified partitions a *modelled* minute (sim, real 2^8 proofs on the
  rtx5070ti profile's modelled times): modelled, not this machine's speed; said beside.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import harness

ROOT = harness.ROOT
BASE = "a84f0be"
HIGHER_IS_BETTER = ("_per_s", "_per_modelled_min")


def figures(doc: dict) -> dict[str, float]:
    """One bench_engine result as flat figures."""
    r = doc["recorder"]
    out = {f"recorder_{k}": float(r[k]) for k in ("write_events_per_s", "write_4_threads_events_per_s",
                                                  "read_validate_events_per_s")}
    for b in doc["bookkeeping"]:
        name = f"bookkeeping_{b['workers']}w{'_recorded' if b['recorded'] else ''}_ms_per_partition"
        out[name] = float(b["ms_per_partition"])
    for mode, m in doc["seed"]["modes"].items():
        out[f"seed_{mode}_per_modelled_min"] = float(m["partitions_per_modelled_min"])
    return out


def run_tree(tree: str, a, out: Path) -> dict[str, float]:
    cmd = [sys.executable, str(Path(tree) / "benchmarks" / "bench_engine.py"), "--events", str(a.events),
           "--partitions", str(a.partitions), "--seed-parts", str(a.seed_parts), "--out", str(out)]
    subprocess.run(cmd, cwd=tree, check=True, capture_output=True, text=True)
    return figures(json.loads(out.read_text()))


def main() -> None:
    ap = harness.parser(__doc__, out=str(ROOT / "benchmarks" / "results" / "engine_ab.json"))
    ap.add_argument("--base", default=BASE, help="the older tree's git revision")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=500)
    ap.add_argument("--seed-parts", type=int, default=6)
    a = ap.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="bench_engine_base_") as old:
        subprocess.run(f"git -C {ROOT} archive {a.base} prover c2tui tests/helpers themes benchmarks/bench_engine.py "
                       f"benchmarks/harness.py | tar -x -C {old}", shell=True, check=True)
        trees = {"before": old, "after": str(ROOT)}
        for r in range(a.rounds):
            for label in (("before", "after") if r % 2 == 0 else ("after", "before")):  # ABBA
                got = run_tree(trees[label], a, Path(old) / f"{label}_{r}.json")
                runs[label].append(got)
                print(f"round {r} {label}: " + ", ".join(f"{k}={v:g}" for k, v in got.items()), flush=True)
    table = {}
    for k in runs["after"][0]:
        bs, ns = [x[k] for x in runs["before"]], [x[k] for x in runs["after"]]
        lo, hi = harness.ratio_interval(bs, ns)
        table[k] = {"before": statistics.median(bs), "after": statistics.median(ns),
                    "after_over_before": round(statistics.median(ns) / statistics.median(bs), 3),
                    "ci95": [round(lo, 3), round(hi, 3)], "better": "higher" if k.endswith(HIGHER_IS_BETTER) else "lower"}
    machine = {**harness.machine(), "load_avg_1m_5m_15m_at_start": load, "load_avg_at_end": list(os.getloadavg())}
    result = {"machine": machine, "base": a.base, "rounds": a.rounds, "median_of_rounds": table, "runs": runs,
              "command": "python benchmarks/bench_engine_ab.py " + " ".join(sys.argv[1:])}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'figure':48} {'before':>12} {'after':>12} {'after/before':>13} {'95% interval':>16}  better")
    for k, v in table.items():
        ci = f"[{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"
        print(f"{k:48} {v['before']:>12,.3f} {v['after']:>12,.3f} {v['after_over_before']:>13.3f} {ci:>16}  {v['better']}")
    print(f"load average at start {load}, at end {[round(x, 2) for x in os.getloadavg()]}")


if __name__ == "__main__":
    main()
