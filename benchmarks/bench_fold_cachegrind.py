"""The fold's work counted, not timed: instructions, data reads and simulated cache misses an
event under valgrind's cachegrind, this tree against an older one (a loaded shared machine
makes times noisy; counts are the same run to run).

    python benchmarks/bench_fold_cachegrind.py [--base REV] [--out FILE]

For each tree (REV exported with `git archive`, and this one) and each of bench_fold_view's
two streams (8 GPUs x 4 workers, 60 s; a 64-GPU fleet, 30 s), a process folds the stream 1 and
then 3 times under cachegrind (PYTHONHASHSEED=0); the difference over 2 passes, per event, is
what one fold of it costs: Ir (instructions), Dr (data reads), D1 misses (32 KiB L1) and LL
misses with the last level set to 1 MiB (as an L2: the fold's working set against a core's
own cache), and, for this tree, the same without the pace concept (its share). Needs valgrind;
~8.5 min on the 2-core session machine (12 runs under cachegrind, one at a time). Counts, not
times: a change that trades instructions for misses (or back) is weighed by a timed bench.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import harness

ROOT = harness.ROOT
BASE = "a84f0be"
CACHES = ["--D1=32768,8,64", "--I1=32768,8,64", "--LL=1048576,16,64"]
COUNTS = {"Ir": "I   refs", "Dr": "D   refs", "D1_misses": "D1  misses", "LLd_misses": "LLd misses"}


def worker(tree: str, stream: str, passes: int, without: str) -> None:
    sys.path.insert(0, tree)
    from tests.helpers.fleet_synth import fleet_stream
    from tests.helpers.tui_synth import Synth

    import prover.fold  # noqa: F401  (registers the concepts)
    from prover.fold.apply import fold
    from prover.fold.concept import unregister

    evs = (Synth(gpus=8, workers_per_gpu=4, sectors=40, partitions=10, seed=3, progress_steps=4).run(until=60.0)
           if stream == "dashboard_8gpu" else fleet_stream(8, 30.0))
    if without:
        unregister(without)
    for _ in range(passes):
        fold(evs)
    print(len(evs))


def counted(tree: str, stream: str, passes: int, without: str) -> tuple[dict[str, int], int]:
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", *CACHES, "--cachegrind-out-file=/dev/null",
           sys.executable, __file__, "--worker", tree, "--stream", stream, "--passes", str(passes),
           "--without", without]
    out = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    got = {}
    for name, label in COUNTS.items():
        m = re.search(re.escape(label) + r":\s+([\d,]+)", out.stderr)
        if m is None:
            raise SystemExit(f"cachegrind said no {label!r}:\n{out.stderr[-2000:]}")
        got[name] = int(m.group(1).replace(",", ""))
    return got, int(out.stdout.strip().splitlines()[-1])


def per_event(tree: str, stream: str, without: str = "") -> dict[str, float]:
    one, n = counted(tree, stream, 1, without)
    three, _ = counted(tree, stream, 3, without)
    return {k: round((three[k] - one[k]) / 2 / n, 1) for k in COUNTS} | {"events": n}


def main() -> None:
    ap = harness.parser(__doc__, out=str(ROOT / "benchmarks" / "results" / "fold_cachegrind.json"))
    ap.add_argument("--base", default=BASE, help="the older tree's git revision")
    ap.add_argument("--worker", help=argparse_hidden())
    ap.add_argument("--stream", help=argparse_hidden())
    ap.add_argument("--passes", type=int, default=1, help=argparse_hidden())
    ap.add_argument("--without", default="", help=argparse_hidden())
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.stream, a.passes, a.without)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_fold_cg_") as old:
        subprocess.run(f"git -C {ROOT} archive {a.base} prover c2tui tests/helpers themes | tar -x -C {old}",
                       shell=True, check=True)
        for stream in ("dashboard_8gpu", "fleet_64gpu"):
            for label, tree, without in (("before", old, ""), ("after", str(ROOT), ""),
                                         ("after without pace", str(ROOT), "pace")):
                row = {"stream": stream, "tree": label, **per_event(tree, stream, without)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    result = {"machine": harness.machine(), "base": a.base, "caches": CACHES, "per_event": rows,
              "command": "python benchmarks/bench_fold_cachegrind.py " + " ".join(sys.argv[1:])}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'stream':16} {'tree':20} " + " ".join(f"{k:>11}" for k in COUNTS))
    for r in rows:
        print(f"{r['stream']:16} {r['tree']:20} " + " ".join(f"{r[k]:>11,.1f}" for k in COUNTS))


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
