"""Issue 42's native check, written before it is run (no device in the session that wrote it):
ONE device call, 2^24, profile native (proved = modelled = 2^24, real kernels), 8 workers,
`--hold auto`, on one live prover:

  1. an A/A experiment: two identical arms (two-lock + stream, twice). Expected: "no difference
     detected" (the method's own check on hardware: a 95% interval holds 1 in 95% of these);
  2. narrow against two-lock + stream. Expected: both arms' 95% intervals within +-15% of their
     rate (the H100's 30 s holds gave 197.9 [159, 247] and 213.7 [188, 241]: -20%/+25%).

Each experiment: a pilot of each arm (20 sections, <= 60 s), then holds planned for a ratio
within --precision (default 0.15) at 95% (prover/stats/plan.py), the plan printed before the
first hold; if the time left cannot hold that plan, the plan takes the precision it affords and
says so. The same Runner as `c2tui experiment --hold auto` (prover/experiment/runner.py).

    python3 benchmarks/experiment_auto_native.py --out-dir /tmp/w --pack "$OUT/experiment_auto_native.tar"
    python3 benchmarks/experiment_auto_native.py --backend sim --out-dir /tmp/x --budget-s 240   # dry run, no GPU

As one device call (after installing the wheels as gpu-wheels says, from the repository root):
    python3 -m pip install --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD &&
    timeout 590 python3 benchmarks/experiment_auto_native.py --out-dir /tmp/w --pack "$OUT/experiment_auto_native.tar"

Budget (--budget-s, default 560 s from the script's start): start-up at 2^24 with no key cache
took 56 s to the first GPU section on the H100 (2026-12-07, 12 workers); each experiment is
given half of what is left then (less a margin for the second's pilot and the stop), and its
plan fits in it. A watchdog stops the running experiment, keeping what it counted, when the
host's MemAvailable falls under --mem-floor-gib (the H100's 2^24 call reached 5.4 GiB at 12
workers; 8 here).

Writes, in --out-dir, packed into --pack after every step (the device call brings back few files):
  experiment_auto_24.json   {machine, argv, config, experiments: [{name, arms, plan, design, result,
                             checks: {expected, met}}], error}
  n24_auto.jsonl.gz         the recording (pilots, plans as Notes, holds, every partition):
                             `c2tui summary` and `benchmarks/experiment_rederive.py` read it
and prints one line per check: "A/A: no difference detected (expected): met", "narrow: 201.3
[178.1, 226.8] (-11.5%, +12.7%) within +-15%: met", ...
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import harness  # noqa: F401  (the repository root on sys.path)

from bench_native import device_total, free_cached_blocks
from stage_guard import Clock, Guard, mem_available
from prover.config import load_config
from prover.experiment.design import Design, parse_arm
from prover.experiment.link import EmbeddedLink
from prover.experiment.runner import ExperimentError, Runner, wait_ready
from prover.pipeline.engine import Engine
from prover.record import RecordingHeader, RecordingWriter

LOG2, WORKERS, CYCLES, WITHIN = 24, 8, 4, 0.15
TWO_LOCK = "lock_mode=two-lock,mem_sync=stream"
EXPERIMENTS = (  # (name, [(label, arm)], what is expected)
    ("A/A 2^24", [("two-lock + stream (a)", TWO_LOCK), ("two-lock + stream (b)", TWO_LOCK)], "aa"),
    ("narrow vs two-lock + stream 2^24", [("narrow", "lock_mode=narrow,mem_sync=stream"),
                                          ("two-lock + stream", TWO_LOCK)], "within"),
)


def start_engine(a: argparse.Namespace, out: Path) -> tuple[Engine, EmbeddedLink, RecordingWriter]:
    cuda = a.backend == "cuda"
    cfg = load_config(None, backend=a.backend, profile="native" if cuda else "tiny",
                      constraints_log2=LOG2 if cuda else a.sim_log2, modelled_log2=LOG2 if cuda else None,
                      workers_per_gpu=WORKERS, lock_mode="two-lock", mem_sync="stream", b_g2="auto",
                      vram_budget=device_total(a.backend) if cuda else "card", seed=1, verify_share=1.0,
                      time_scale=1.0 if cuda else a.scale, cache_dir=a.cache_dir)
    eng = Engine(cfg)
    writer = RecordingWriter(out / f"n{LOG2}_auto.jsonl",
                             RecordingHeader(argv=sys.argv, config=cfg.public_dict(), note="experiment_auto_native"))
    eng.add_sink(writer.write)
    link = EmbeddedLink(eng)
    eng.start()
    return eng, link, writer


def checks(kind: str, result: Any) -> dict[str, Any]:
    """What issue 42 expects of the experiment, and whether it was met (as measured)."""
    arms = result["arms"] if result else []
    if kind == "aa":
        v = arms[1]["verdict"] if len(arms) > 1 else None
        return {"expected": "no difference detected", "got": v, "met": v == "no difference detected"}
    rows = []
    for arm in arms:
        lo, hi = arm["per_min_ci"] or (0.0, float("inf"))
        rate = arm["per_min"] or 1e-9
        rows.append({"arm": arm["label"], "per_min": rate, "ci": [lo, hi], "below": 1 - lo / rate,
                     "above": hi / rate - 1, "met": 1 - lo / rate <= WITHIN and hi / rate - 1 <= WITHIN})
    return {"expected": f"both arms' 95% intervals within +-{WITHIN:.0%}", "arms": rows,
            "met": bool(rows) and all(r["met"] for r in rows)}


def run_one(name: str, arms: list[tuple[str, str]], kind: str, link: EmbeddedLink, a: argparse.Namespace,
            clock: Clock, guard: Guard, share_s: float, n: int) -> dict[str, Any]:
    parsed = [parse_arm(spec).model_copy(update={"label": label}) for label, spec in arms]
    design = Design(arms=parsed, cycles=CYCLES, precision=a.precision, max_s=max(30.0, share_s), seed=LOG2 + n)
    print(f"{clock.at()} {name}: --hold auto, precision +-{a.precision:.0%}, at most {share_s:.0f} s of holds", flush=True)
    r = Runner(link, design, experiment=2 * n, name=name, stop=guard.arm(),
               say=lambda line: print(f"{clock.at()}   {line}", flush=True))
    try:
        res, error = r.run(), None
    except ExperimentError as exc:
        res, error = exc.result, str(exc) + (f" ({guard.why})" if guard.why else "")
        print(f"{clock.at()} {name}: {error}", flush=True)
    result = res.model_dump(mode="json") if res is not None else None
    doc = {"name": name, "arms": [label for label, _ in arms], "error": error,
           "plan": r.plan.model_dump(mode="json") if r.plan else None, "design": r.design.model_dump(mode="json"),
           "result": result, "checks": checks(kind, result)}
    for arm in (result or {}).get("arms", []):
        ci = arm["per_min_ci"] or [0, 0]
        ratio = "" if arm["ratio"] is None else f"  x{arm['ratio']:.3f} [{arm['ratio_ci'][0]:.3f}, {arm['ratio_ci'][1]:.3f}]"
        print(f"{clock.at()}   {arm['label']:<24} {arm['per_min']:7.1f}/min [{ci[0]:.1f}, {ci[1]:.1f}]{ratio} "
              f"{arm['verdict']}{' (' + arm['why'] + ')' if arm['why'] else ''}  ({arm['holds']} holds, "
              f"{arm['verified']} counted)", flush=True)
    print(f"{clock.at()} {name}: expected {doc['checks']['expected']}: {'met' if doc['checks']['met'] else 'NOT met'}",
          flush=True)
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget-s", type=float, default=560.0, help="seconds for the whole script (the device call)")
    ap.add_argument("--precision", type=float, default=WITHIN)
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--scale", type=float, default=0.25, help="sim only: its time scale")
    ap.add_argument("--sim-log2", type=int, default=8, help="sim only: the size really proved")
    ap.add_argument("--cache-dir", default="none", help="proving-key cache ('none': kept in memory, no 8.6 GiB write)")
    ap.add_argument("--mem-floor-gib", type=float, default=6.0)
    ap.add_argument("--pack", type=Path, default=None)
    ap.add_argument("--out-dir", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args(argv)
    a.cache_dir = None if a.cache_dir.lower() == "none" else a.cache_dir
    a.out_dir.mkdir(parents=True, exist_ok=True)
    clock = Clock(a.budget_s)
    guard = Guard(clock, int(a.mem_floor_gib * 2**30), margin_s=15.0)
    doc: dict[str, Any] = {"machine": harness.machine(gpu=a.backend == "cuda"), "argv": sys.argv,
                           "log2": LOG2, "workers": WORKERS, "precision": a.precision, "experiments": [], "error": None}
    path = a.out_dir / f"experiment_auto_{LOG2}.json"
    print(f"experiment_auto_native: 2^{LOG2}, {WORKERS} workers, backend {a.backend}, budget {a.budget_s:g} s, "
          f"MemAvailable {(mem_available() or 0) / 2**30:.1f} GiB", flush=True)
    eng, link, writer = start_engine(a, a.out_dir)
    doc["config"] = eng.config.public_dict()
    try:
        wait_ready(link, guard.arm(), timeout_s=max(60.0, clock.left() - 200))
        doc["startup_at"] = clock.at()
        print(f"{clock.at()} first GPU section", flush=True)
        for n, (name, arms, kind) in enumerate(EXPERIMENTS):
            left = clock.left() - guard.margin - 40.0  # the stop, the gzip, the pack
            share = left / (len(EXPERIMENTS) - n) - 2 * 25.0  # this one's pilots (2 arms) and drain
            doc["experiments"].append(run_one(name, arms, kind, link, a, clock, guard, share, n))
            _save(path, doc, a.pack)
    except Exception as exc:  # noqa: BLE001 - said in the JSON, what was counted kept
        doc["error"] = f"{type(exc).__name__}: {exc}"
        print(f"{clock.at()} error: {doc['error']}", flush=True)
    finally:
        eng.stop(timeout=30)
        writer.close()
        guard.close()
        _gzip(a.out_dir / f"n{LOG2}_auto.jsonl")
        doc["finished_at"] = clock.at()
        _save(path, doc, a.pack)
        free_cached_blocks(a.backend)
    met = [x["checks"]["met"] for x in doc["experiments"]]
    print(f"{clock.at()} done: {sum(met)} of {len(EXPERIMENTS)} expectations met", flush=True)
    return 0 if len(met) == len(EXPERIMENTS) and all(met) else 1


def _save(path: Path, doc: Any, pack: Path | None) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)
    if pack is not None:
        t = pack.with_name(pack.name + ".tmp")
        with tarfile.open(t, "w") as tar:
            tar.add(path.parent, arcname=path.parent.name)
        t.replace(pack)


def _gzip(path: Path) -> None:
    if path.exists():
        with open(path, "rb") as src, gzip.open(str(path) + ".gz", "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        path.unlink()


if __name__ == "__main__":
    t0 = time.monotonic()
    code = main()
    print(f"experiment_auto_native: {time.monotonic() - t0:.0f} s", flush=True)
    raise SystemExit(code)
