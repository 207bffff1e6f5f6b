"""Issue 41: the 2^22 and 2^24 rates not lower than before: an interleaved before/after,
natively, in ONE device call. WRITTEN BEFORE IT WAS RUN (sessions of 2026-12-07, no device lent).

Before: main before a/b/c moved to the GPU (915c6e3: the host threads merged, a/b/c built on the
host and uploaded), or any other tree (a84f0be: before the host threads too); after: this tree,
where `abc` auto makes a/b/c on the GPU (the R1CS kernel over the resident matrices). Or one tree
both ways: `--before-tree . --before-abc host` (the same code, the knob apart). Each run is its
own process in its tree (`python3 -m c2tui record` with that tree as the working directory), the
same knobs (two-lock + stream, the card's room, --workers, profile
native, proved = modelled size, every proof verified by py_arkworks; the after tree's
host_threads at its default, auto), for --seconds after its first partition; runs alternate
B A A B B A ... so drift hits both alike; both trees share one key cache (the key format is the
same), so only the first run of a size sets its key up.

Prepare the before tree here (git archive of the code alone, ~2 MB), and carry it:

    mkdir -p .main && git archive 915c6e3 prover c2tui themes pyproject.toml | tar -x -C .main
    echo /.main/ >> "$(git rev-parse --git-common-dir)/info/exclude"

Command (device: nvidia-h200 or nvidia-h100-x1, one GPU; carry [".main"]; timeout_s 600):

    PYTHONUNBUFFERED=1 python3 benchmarks/gpu_before_after.py --before-tree .main --out-dir $OUT/ba \
        [--sizes 22,24] [--pairs 3] [--seconds 20] [--budget-s 560]
    python3 benchmarks/gpu_before_after.py --before-tree /tmp/c2main --backend sim --sizes 10 --pairs 2 \
        --seconds 6 --start-s 3 --out-dir /tmp/ba                       # a CPU dry run of the plumbing

Writes under --out-dir: before_after.json (every run: its tree, commit, summary figures; per
size the ratio after/before of the steady verified/min, paired over the pairs, with its 95%
interval: prover.stats.experiment.paired_ratio over each run's verified partitions and span),
each run's recording (<size>_<before|after>_<pair>.jsonl.gz) and a table printed last, with
MET / MISSED for "the ratio interval's low end >= 0.97" at each size. Deadline-aware: a run that
would end past --budget-s is skipped and said so (fewer pairs: a wider interval, said).
Exit status 0: every size met; 1: one missed or had fewer than 2 pairs; 2: nothing ran.

The VRAM budget is `card` (the device's memory): right at 2^22 and 2^24, where the key's points
(2^24: 8.6 GiB), the matrices (0.55 GiB) and 12 plans (2^24: 1.52 GiB each with z's upload form,
1.99 with z whole) take a fraction of an H100's 80 GB. Not at 2^26 and up, where the resident key
and the H MSM's scratch leave a small part of it: those sizes are refused here (gpu_host27.py and
gpu_experiment27.sh give 2^27 runs the room measured after the set-up, docs/scale.md).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: this tree's reader and stats)

from prover.stats.experiment import HoldCount, paired_ratio  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402
from prover.record import read_recording  # noqa: E402

WORKERS = {22: 8, 24: 12}  # RESULTS' settings at these sizes (2^24: 12, the most seen to run there)
START_S = {22: 25.0, 24: 40.0}  # a run's start to its first GPU section (kernels from cache, circuit, key): a guess
DRAIN_S = 15.0  # in-flight partitions finishing, the process ending
LOW_END = 0.97
MAX_CARD_LOG2 = 26  # from here the key is resident on the device: `card` is no budget (the docstring)


def _start(log2: int, a: argparse.Namespace) -> float:
    return a.start_s if a.start_s is not None else START_S.get(log2, 30.0)


def _commit(tree: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "(not a git checkout: a git archive)"


def run_one(tree: Path, log2: int, a: argparse.Namespace, out: Path, which: str = "after") -> dict[str, Any]:
    """One `c2tui record` in `tree`; its recording read back with this tree's reader."""
    workers = a.workers or WORKERS.get(log2, 8)
    cmd = [sys.executable, "-m", "c2tui", "record", "--backend", a.backend, "--profile", "native",
           "--constraints-log2", str(log2), "--modelled-log2", str(log2), "--workers-per-gpu", str(workers),
           "--lock-mode", "two-lock", "--mem-sync", "stream", "--vram-budget", "card", "--seed", "1",
           "--duration", str(_start(log2, a) + a.warm_s + a.seconds),  # counted from the engine's start
           "--cache-dir", str(a.cache_dir.resolve()), "--out", str(out), "-q"]
    abc = a.before_abc if which == "before" else a.after_abc
    if abc:  # where a/b/c are made (a tree before the knob takes none)
        cmd[cmd.index("--seed"):cmd.index("--seed")] = ["--abc", abc]
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()))
    t0 = time.time()
    res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=a.seconds + 300)
    row: dict[str, Any] = {"tree": str(tree), "rc": res.returncode, "wall_s": round(time.time() - t0, 1),
                           "stderr_tail": res.stderr[-600:], "workers": workers}
    if not out.exists():
        return row
    evs = read_recording(out).events
    sm = summarize(fold(evs))
    first = min((e.t for e in evs if e.kind == "lock_acquired" and e.lock == "compute"), default=0.0)
    t_from = first + a.warm_s  # counted from warm_s after the first GPU section to the run's end
    done = [e.t for e in evs if e.kind == "partition_done" and e.ok and e.t >= t_from]
    span = max(1e-9, (max(done) if done else t_from) - t_from)
    row.update(verified=len(done), span_s=round(span, 2), per_min=round(60 * len(done) / span, 2),
               proofs_ok=sm.proofs_ok, proofs_failed=sm.proofs_failed, proofs_unchecked=sm.proofs_unchecked,
               ooms=sm.ooms, fallbacks=sm.fallbacks, steady_per_min=round(sm.steady_throughput_per_min, 2),
               phases_mean_s={k: round(v.mean, 4) for k, v in sm.phases.items()},
               pace=sm.gpus[0].pace.sentence() if sm.gpus and sm.gpus[0].pace else None)
    with open(out, "rb") as src, gzip.open(f"{out}.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    out.unlink()
    return row


def order(pairs: int) -> list[tuple[int, str]]:
    """(pair, which) in B A A B B A ... order."""
    seq = []
    for p in range(pairs):
        seq += [(p, "before"), (p, "after")] if p % 2 == 0 else [(p, "after"), (p, "before")]
    return seq


def ratio(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """after / before, paired over the pairs both ran in (log rates, t interval)."""
    def holds(which: str) -> list[HoldCount]:
        return [HoldCount(arm=int(which == "after"), cycle=r["pair"], window_s=r["span_s"], verified=r["verified"])
                for r in runs if r["which"] == which and "verified" in r]
    r, ci, n = paired_ratio(holds("before"), holds("after"))
    return {"ratio": r, "ci": ci, "pairs": n, "met": bool(ci and ci[0] >= LOW_END and n >= 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before-tree", type=Path, required=True)
    ap.add_argument("--after-tree", type=Path, default=ROOT)
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--sizes", default="22,24")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=20.0, help="each run's counted seconds")
    ap.add_argument("--warm-s", type=float, default=5.0, help="seconds after the first GPU section not counted")
    ap.add_argument("--workers", type=int, default=0, help="0: RESULTS' (2^22: 8, 2^24: 12)")
    ap.add_argument("--budget-s", type=float, default=560.0)
    ap.add_argument("--start-s", type=float, default=None, help="a run's start to its first GPU section (default: "
                    "2^22 25 s, 2^24 40 s)")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--cache-dir", type=Path, default=Path(".cache/keys_ba"))
    ap.add_argument("--before-abc", default="", choices=("", "host", "gpu"), help="--abc for the before runs ('': none)")
    ap.add_argument("--after-abc", default="", choices=("", "host", "gpu"), help="--abc for the after runs ('': auto)")
    a = ap.parse_args(argv)
    big = [x for x in a.sizes.split(",") if x.strip().isdigit() and int(x) >= MAX_CARD_LOG2]
    if big:
        ap.error(f"--sizes {','.join(big)}: the budget here is the whole card, which does not hold 2^{big[0]}'s "
                 f"plans beside its resident key; run gpu_host27.py for 2^27")
    deadline = time.time() + a.budget_s
    a.out_dir.mkdir(parents=True, exist_ok=True)
    a.cache_dir.mkdir(parents=True, exist_ok=True)
    trees = {"before": a.before_tree, "after": a.after_tree}
    doc: dict[str, Any] = {"what": "issue 41: before/after (a/b/c on the GPU), interleaved, native", "argv": sys.argv,
                           "abc": {"before": a.before_abc or "(not passed)", "after": a.after_abc or "auto"},
                           "machine": harness.machine(gpu=a.backend == "cuda"),
                           "trees": {k: {"path": str(v), "commit": _commit(v)} for k, v in trees.items()},
                           "sizes": {}, "skipped": []}
    path = a.out_dir / "before_after.json"
    for log2 in (int(s) for s in a.sizes.split(",")):
        runs: list[dict[str, Any]] = []
        for pair, which in order(a.pairs):
            need = _start(log2, a) + a.warm_s + a.seconds + DRAIN_S
            if time.time() + need > deadline:
                doc["skipped"].append(f"2^{log2} pair {pair} {which}: {deadline - time.time():.0f}s left < ~{need:.0f}s")
                continue
            row = run_one(trees[which], log2, a, a.out_dir / f"n{log2}_{which}_{pair}.jsonl", which)
            runs.append({"pair": pair, "which": which, **row})
            print(f"2^{log2} pair {pair} {which}: {row.get('per_min')}/min ({row.get('verified')} in "
                  f"{row.get('span_s')} s), rc {row['rc']}, proofs failed {row.get('proofs_failed')}, "
                  f"OOMs {row.get('ooms')}", flush=True)
            doc["sizes"][str(log2)] = {"runs": runs, **ratio(runs)}
            path.write_text(json.dumps(doc, indent=1, default=str))
    print("\n| size | pairs | after / before | 95% | low end >= 0.97 |\n| --- | --- | --- | --- | --- |")
    ok = bool(doc["sizes"])
    for log2, s in doc["sizes"].items():
        ok &= s["met"]
        ci = s["ci"]
        print(f"| 2^{log2} | {s['pairs']} | {s['ratio'] and round(s['ratio'], 3)} | "
              f"{ci and [round(x, 3) for x in ci]} | {'MET' if s['met'] else 'MISSED'} |")
    for line in doc["skipped"]:
        print("skipped:", line)
    path.write_text(json.dumps(doc, indent=1, default=str))
    return 0 if ok else (1 if doc["sizes"] else 2)


if __name__ == "__main__":
    sys.exit(main())
