"""The fold's rate and the view's cost, this tree against an older one, side by side in one
run (issue 32: the fold moved into prover/fold/ and made the UI's view; neither may be more
than 10% slower than before).

    python benchmarks/bench_fold_view.py [--base REV] [--rounds N] [--passes N] [--out FILE]

REV (default: the commit before the fold package) is exported with `git archive` into a
temporary directory; each round runs one worker process per tree, alternating (ABBA), and a
worker measures in CPU time (process_time, so the box's other load weighs less):
- fold: events/s folding a whole stream into a fresh state: the dashboard's 8 GPUs x 4
  workers (tests/helpers/tui_synth.py, bench_tui's stream) and a 64-GPU fleet (8 hosts x 8
  GPUs, tests/helpers/fleet_synth.py); best of --passes (3) passes;
- view: ms per UI copy of the 64-GPU state (and the 8-GPU one): today `DashboardState.view()`,
  before it `c2tui.sources.fast_snapshot`; median of 40, and their mean with the pace read
  anew every 5th view (the live cadence: 10 views a second, the pace every 0.5 s); a full
  garbage collection first (the fold's passes leave one due, ~100 ms, that would land in
  either tree's views by chance). `view_*` at the UI's bound (96 partitions: a tree that
  carries whole sectors carries up to twice as many), `view_*_like` at the largest bound that
  carries at most 96 (like for like); `*_partitions` says how many each carried.
Simulated streams (no prover runs): the figures are the fold's own bookkeeping. Each figure is
the median of the rounds; its after/before comes with a 95% interval (bootstrap over rounds,
a round's two runs kept together); the load average is written beside them.
"""
from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

ROOT = harness.ROOT
BASE = "097728e"  # main before issue 32


def worker(tree: str, n_passes: int = 3) -> dict:
    sys.path.insert(0, tree)
    import prover

    from tests.helpers.fleet_synth import fleet_stream
    from tests.helpers.tui_synth import Synth

    try:
        from prover.fold.apply import fold
    except ImportError:  # before the fold package
        from prover.state import fold
    from prover import DashboardState

    if hasattr(DashboardState, "view"):
        def view(s, partitions=96):
            return s.view(partitions=partitions)
    else:
        from c2tui.sources import fast_snapshot  # a tree before the fold's view (its c2tui/sources.py)

        def view(s, partitions=96):
            return fast_snapshot(s, partitions=partitions)

    streams = {"dashboard_8gpu": Synth(gpus=8, workers_per_gpu=4, sectors=40, partitions=10, seed=3,
                                       progress_steps=4).run(until=60.0),
               "fleet_64gpu": fleet_stream(8, 30.0)}
    out: dict = {"tree": tree, "prover": prover.__file__}
    for name, evs in streams.items():
        passes = []
        for _ in range(n_passes):
            t0 = time.process_time()
            st = fold(evs)
            passes.append(time.process_time() - t0)
        out[f"fold_{name}_events"] = len(evs)
        out[f"fold_{name}_events_per_s"] = round(len(evs) / min(passes))
        like = bound_carrying(st, view, 96)
        for label, bound in (("", 96), ("_like", like)):
            gc.collect()  # the fold's passes leave a full collection due: not the view's to pay
            ms = []
            for i in range(40):
                if i % 5 == 0:  # the live cadence: 10 views a second, the pace read anew every 0.5 s
                    forget_pace(st)
                t0 = time.process_time()
                view(st, bound)
                ms.append((time.process_time() - t0) * 1e3)
            out[f"view_{name}{label}_ms"] = round(statistics.median(ms), 3)
            out[f"view_{name}{label}_mean_ms"] = round(statistics.mean(ms), 3)
            out[f"view_{name}{label}_partitions"] = len(view(st, bound).partitions)
        out[f"view_{name}_gpus"] = len(st.gpus)
    return out


def bound_carrying(st, view, carried: int) -> int:
    """The largest partition bound whose view carries at most `carried` partitions: the like for
    like figure (a tree whose view carries whole sectors carries up to twice its bound: the
    64-GPU fleet's 96 carry 192 there, 96 in a84f0be)."""
    lo, hi = 1, carried
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(view(st, mid).partitions) <= carried:
            lo = mid
        else:
            hi = mid - 1
    return lo


def forget_pace(st) -> None:
    """The view's last pace readings dropped (trees with the pace concept): the next view reads
    every GPU's pace again, as it does once 0.5 s of fold time has passed."""
    shown = getattr(getattr(st, "pace", None), "shown", None)
    if shown is not None:
        shown.clear()


def main() -> None:
    ap = harness.parser(__doc__, out=str(ROOT / "benchmarks" / "results" / "fold_view.json"))
    ap.add_argument("--base", default=BASE, help="the older tree's git revision")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--passes", type=int, default=3, help="fold passes a worker, its best counted")
    ap.add_argument("--worker", help=argparse_hidden())
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.passes)))
        return
    load = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="bench_fold_base_") as old:
        subprocess.run(f"git -C {ROOT} archive {a.base} prover c2tui tests/helpers themes "
                       f"| tar -x -C {old}", shell=True, check=True)
        trees = {"before": old, "after": str(ROOT)}
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for r in range(a.rounds):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")  # ABBA
            for label in order:
                res = subprocess.run([sys.executable, __file__, "--worker", trees[label], "--passes", str(a.passes)],
                                     capture_output=True,
                                     text=True, cwd=trees[label], check=True)
                runs[label].append(json.loads(res.stdout.strip().splitlines()[-1]))
    keys = [k for k in runs["after"][0] if k.endswith(("_per_s", "_ms")) and k in runs["before"][0]]
    table = {}
    for k in keys:
        bs, ns = [x[k] for x in runs["before"]], [x[k] for x in runs["after"]]
        b, n = statistics.median(bs), statistics.median(ns)
        lo, hi = harness.ratio_interval(bs, ns)
        table[k] = {"before": b, "after": n, "after_over_before": round(n / b, 3),
                    "ci95": [round(lo, 3), round(hi, 3)]}
    machine = {**harness.machine(), "load_avg_1m_5m_15m_at_start": load, "load_avg_at_end": list(os.getloadavg())}
    result = {"machine": machine, "base": a.base, "rounds": a.rounds, "median_of_rounds": table,
              "runs": runs, "command": "python benchmarks/bench_fold_view.py " + " ".join(sys.argv[1:])}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'figure':38} {'before':>12} {'after':>12} {'after/before':>13} {'95% interval':>16}")
    for k, v in table.items():
        fmt = ",.0f" if k.endswith("_per_s") else ".3f"
        ci = f"[{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"
        print(f"{k:38} {v['before']:>12{fmt}} {v['after']:>12{fmt}} {v['after_over_before']:>13.3f} {ci:>16}")
    for label in ("before", "after"):
        carried = {k: v for k, v in runs[label][0].items() if k.endswith("_partitions")}
        print(f"partitions the view carried, {label}: {carried}")
    print(f"load average at start {load}, at end {[round(x, 2) for x in os.getloadavg()]}")


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
