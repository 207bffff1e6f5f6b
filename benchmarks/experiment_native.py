"""RESULTS' discipline table and decomposition as experiments, natively, and `tune`, at 2^22 and
2^24, in ONE device call (issue 34). Per size, one engine (profile native, real kernels, one
random setup), kept running while:

  1. an experiment interleaves the arms on it, 4 cycles (randomised blocks): single, narrow,
     two-lock + device, two-lock + stream, reserved (each with the size's workers), and
     two-lock + stream with fewer and more workers; every ratio paired over cycles, 95%;
  2. the decomposition's steps from the same holds (narrow/single, two-lock + stream/narrow,
     reserved/two-lock + stream, device/stream, each worker count against the size's);
  3. tune from the benchmark's setting (two-lock + stream, 8 / 12 workers): lock_mode over
     narrow, two-lock, reserved and workers per GPU over a range, then the confirmation.

    python3 benchmarks/experiment_native.py --out-dir /tmp/w --pack "$OUT/experiment_native.tar" [--sizes 22,24] [--budget-s 510]
    python3 benchmarks/experiment_native.py --backend sim --sizes 10 --budget-s 200 --out-dir /tmp/x  # a dry run, no GPU

Deadline-aware: each stage is planned from the time left (--budget-s from the script's start);
one that cannot fit is cut shorter (fewer tune values, then skipped) and said so. Written as made:
<out-dir>/experiment_<log2>.json, tune_<log2>.json, n<log2>_experiment.jsonl.gz (the recording:
`c2tui summary` reads it), summary.json (every stage), and a table printed last.
"""
from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path)

from bench_native import device_total, free_cached_blocks  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.experiment.design import Design, parse_arm  # noqa: E402
from prover.experiment.link import EmbeddedLink  # noqa: E402
from prover.experiment.runner import ExperimentError, Runner, wait_ready  # noqa: E402
from prover.experiment.stats import paired_ratio  # noqa: E402
from prover.experiment.tune import MIN_ROUNDS, Space, Tuner, TunePlan  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402

# per size: workers (the benchmark's), the experiment's disciplines, hold/settle and worker
# variants, the tune's hold/settle and values. Measured in the committed 2^22 / 2^24 recordings,
# a partition's GPU section start -> done (its lag): 2^22 0.2 s (single 0.7 s), 2^24 1.25 s
# (single 5.1 s: with 12 workers it queues ~4 s for the one lock). A hold counts only sections
# begun after its settle and finished inside it, so it must last several lags: single at 2^24
# would need 20 s holds and is left out there (its step, 2.19x, is far outside the noise).
PLAN: dict[int, dict[str, Any]] = {
    22: {"workers": 8, "disciplines": ("single", "narrow", "two-lock + device", "two-lock + stream", "reserved"),
         "hold": 3.0, "settle": 1.0, "variants": (6, 12), "startup_s": 45.0, "warm_s": 3.0,
         "tune_hold": 2.5, "tune_settle": 0.75, "tune_locks": ["narrow", "two-lock", "reserved"], "tune_workers": [6, 8, 12]},
    24: {"workers": 12, "disciplines": ("narrow", "two-lock + device", "two-lock + stream", "reserved"),
         "hold": 5.0, "settle": 1.5, "variants": (8, 16), "startup_s": 115.0, "warm_s": 8.0,
         "tune_hold": 4.0, "tune_settle": 1.25, "tune_locks": ["two-lock", "reserved"], "tune_workers": [8, 16]},
}
DISCIPLINES = {"single": "lock_mode=single,mem_sync=stream", "narrow": "lock_mode=narrow,mem_sync=stream",
               "two-lock + device": "lock_mode=two-lock,mem_sync=device",
               "two-lock + stream": "lock_mode=two-lock,mem_sync=stream", "reserved": "lock_mode=reserved,mem_sync=stream"}
STEPS = (("narrowing the lock (narrow / single)", "narrow", "single"),
         ("the second lock (two-lock + stream / narrow)", "two-lock + stream", "narrow"),
         ("reserved slots (reserved / two-lock + stream)", "reserved", "two-lock + stream"),
         ("device sync (two-lock + device / two-lock + stream)", "two-lock + device", "two-lock + stream"))
CYCLES = 4


def plan_of(log2: int) -> dict[str, Any]:
    return PLAN.get(log2, PLAN[22])


def experiment_s(log2: int, scale: float = 1.0) -> float:
    p = plan_of(log2)
    return p["warm_s"] * scale + (len(p["disciplines"]) + len(p["variants"])) * CYCLES * p["hold"] * scale


class Clock:
    def __init__(self, budget_s: float) -> None:
        self.t0, self.budget = time.monotonic(), budget_s

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.t0)

    def at(self) -> str:
        return f"+{time.monotonic() - self.t0:5.0f}s"


def arms_of(log2: int) -> tuple[list[str], list[Any]]:
    p = plan_of(log2)
    names = list(p["disciplines"])
    specs = [DISCIPLINES[n] for n in names]
    for w in p["variants"]:
        names.append(f"two-lock + stream, {w} workers")
        specs.append(f"lock_mode=two-lock,mem_sync=stream,workers_per_gpu={w}")
    arms = [parse_arm(s) for s in specs]
    return names, [a.model_copy(update={"label": n}) for n, a in zip(names, arms)]


def start_engine(log2: int, a: argparse.Namespace, out: Path) -> tuple[Engine, EmbeddedLink, RecordingWriter]:
    p = plan_of(log2)
    # sim (a dry run here): the tiny profile, whose phases are short enough to count many a hold
    cfg = load_config(None, backend=a.backend, profile="native" if a.backend == "cuda" else "tiny",
                      constraints_log2=log2, modelled_log2=log2 if a.backend == "cuda" else None,
                      workers_per_gpu=a.workers or p["workers"], lock_mode="two-lock", mem_sync="stream", b_g2="auto",
                      vram_budget=device_total(a.backend) if a.backend == "cuda" else "card", seed=1,
                      verify_share=1.0, time_scale=1.0 if a.backend == "cuda" else a.scale,
                      cache_dir=str(ROOT / ".cache" / "keys"))
    eng = Engine(cfg)
    writer = RecordingWriter(out / f"n{log2}_experiment.jsonl",
                             RecordingHeader(argv=sys.argv, config=cfg.public_dict(), note="experiment_native"))
    eng.add_sink(writer.write)
    link = EmbeddedLink(eng)
    eng.start()
    return eng, link, writer


def warm_up(log2: int, link: EmbeddedLink, clock: Clock, scale: float) -> None:
    """The most workers any arm or tune value runs, for a few seconds before the first hold:
    a new worker's page-locked a, b, c are pinned once (~20 s for 18 GiB at 2^24) and then kept
    in CuPy's pinned pool, so no hold pays for it."""
    p = plan_of(log2)
    most = max([*p["variants"], *p["tune_workers"]])
    start = int(link.knobs()["workers_per_gpu"])
    if most <= start:
        return
    secs = p["warm_s"] * scale
    print(f"{clock.at()} 2^{log2} warm-up: {most} workers for {secs:g} s", flush=True)
    link.set("workers_per_gpu", most)
    t_end = link.now() + secs
    while link.now() < t_end and link.ended() is None:
        time.sleep(0.1)
    link.set("workers_per_gpu", start)


def experiment(log2: int, link: EmbeddedLink, clock: Clock, scale: float, reserve_s: float) -> dict[str, Any]:
    p = plan_of(log2)
    names, arms = arms_of(log2)
    hold, settle = p["hold"] * scale, p["settle"] * scale
    fit = (clock.left() - reserve_s - 15) / (len(arms) * CYCLES)
    if fit < hold:  # late (a slow start-up): shorter holds, said, rather than none
        if fit < 2 * settle:
            print(f"{clock.at()} 2^{log2} experiment: skipped, {clock.left():.0f} s left", flush=True)
            return {"log2": log2, "arms": names, "skipped": f"{clock.left():.0f} s left"}
        print(f"{clock.at()} 2^{log2} experiment: holds cut from {hold:g} to {fit:.1f} s to fit", flush=True)
        hold = fit
    d = Design(arms=arms, cycles=CYCLES, hold_s=hold, settle_s=settle, order="blocks", seed=log2)
    print(f"{clock.at()} 2^{log2} experiment: {len(arms)} arms x {CYCLES} cycles x {hold:g} s (settle {settle:g}) "
          f"= {d.seconds:.0f} s", flush=True)
    r = Runner(link, d, name=f"disciplines 2^{log2}")
    try:
        res = r.run()
        error = None
    except ExperimentError as exc:
        res, error = exc.result, str(exc)
    counts = r.tally.counts(r.experiment)
    by = {i: [h for h in counts if h.arm == i] for i in range(len(arms))}
    idx = {n: i for i, n in enumerate(names)}
    steps = []
    for label, num, den in STEPS:
        if num not in idx or den not in idx:
            continue
        ratio, ci, n = paired_ratio(by[idx[den]], by[idx[num]])
        steps.append({"step": label, "ratio": ratio, "ratio_ci": ci, "cycles": n})
    base = idx["two-lock + stream"]
    for w in p["variants"]:
        name = f"two-lock + stream, {w} workers"
        ratio, ci, n = paired_ratio(by[base], by[idx[name]])
        steps.append({"step": f"{w} workers / {p['workers']} (two-lock + stream)", "ratio": ratio, "ratio_ci": ci,
                      "cycles": n})
    return {"log2": log2, "arms": names, "design": d.model_dump(mode="json"), "error": error,
            "result": res.model_dump(mode="json") if res is not None else None, "decomposition": steps}


def tune(log2: int, link: EmbeddedLink, clock: Clock, scale: float, reserve_s: float) -> dict[str, Any]:
    """lock_mode x workers from the benchmark's setting; fewer worker values when time is short."""
    p = plan_of(log2)
    plan = TunePlan(time_s=1.0, hold_s=p["tune_hold"] * scale, settle_s=p["tune_settle"] * scale, confirm_cycles=2,
                    seed=log2)
    locks, workers = list(p["tune_locks"]), list(p["tune_workers"])
    space = Space(knobs={"lock_mode": locks, "workers_per_gpu": workers})
    while plan.least_time(space) > clock.left() - reserve_s and len(workers) > 2:
        workers = [workers[0], workers[-1]]
        space = Space(knobs={"lock_mode": locks, "workers_per_gpu": workers})
    need, left = plan.least_time(space), clock.left() - reserve_s
    if need > left:
        print(f"{clock.at()} 2^{log2} tune: skipped, {left:.0f} s left < the {need:.0f} s it needs", flush=True)
        return {"log2": log2, "skipped": f"{left:.0f} s left, needs {need:.0f} s"}
    plan = plan.model_copy(update={"time_s": min(left, need * 1.15)})
    print(f"{clock.at()} 2^{log2} tune: lock_mode {locks}, workers {workers}, {plan.time_s:.0f} s "
          f"(hold {plan.hold_s:g}, settle {plan.settle_s:g}, {MIN_ROUNDS} rounds a knob at least)", flush=True)
    t = Tuner(link, plan, space=space, say=lambda line: print(f"{clock.at()}   {line}", flush=True))
    try:
        res = t.run(apply=False)
    except ExperimentError as exc:
        return {"log2": log2, "error": str(exc)}
    return {"log2": log2, "space": space.model_dump(mode="json"), "plan": plan.model_dump(mode="json"),
            "result": res.model_dump(mode="json")}


def one_size(log2: int, a: argparse.Namespace, clock: Clock, sizes_after: list[int], rows: dict[str, Any]) -> None:
    out = a.out_dir
    # the next sizes' start-up and experiment come before this size's tune
    reserve = sum(plan_of(s)["startup_s"] + experiment_s(s, a.scale) + 20 for s in sizes_after)
    eng, link, writer = start_engine(log2, a, out)
    try:
        wait_ready(link, threading.Event(), timeout_s=max(60.0, clock.left() - 30))
        startup = clock.at()
        print(f"{startup} 2^{log2}: first GPU section (start-up done)", flush=True)
        warm_up(log2, link, clock, a.scale)
        exp = experiment(log2, link, clock, a.scale, reserve)
        exp["startup_at"] = startup
        rows[f"experiment_{log2}"] = exp
        if exp.get("skipped"):
            return
        _save(out / f"experiment_{log2}.json", exp)
        _save(out / "summary.json", rows)
        tun = tune(log2, link, clock, a.scale, reserve)
        rows[f"tune_{log2}"] = tun
        _save(out / f"tune_{log2}.json", tun)
        _save(out / "summary.json", rows)
    finally:
        eng.stop(timeout=60)
        writer.close()
        _gzip(out / f"n{log2}_experiment.jsonl")
        _pack(out)
        del eng, link
        gc.collect()
        free_cached_blocks(a.backend)


PACK: Path | None = None  # --pack: a tarball of the out dir, rewritten after every stage


def _save(path: Path, doc: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)
    _pack(path.parent)


def _pack(out_dir: Path) -> None:
    """The device call brings back at most 8 files: everything in one tarball, whole after each stage."""
    if PACK is None:
        return
    import tarfile

    tmp = PACK.with_name(PACK.name + ".tmp")
    with tarfile.open(tmp, "w") as tar:
        tar.add(out_dir, arcname=out_dir.name)
    tmp.replace(PACK)


def _gzip(path: Path) -> None:
    if path.exists():
        with open(path, "rb") as src, gzip.open(str(path) + ".gz", "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        path.unlink()


def _ci(ci: Any, fmt: str = ".3f") -> str:
    return "-" if not ci else f"[{format(ci[0], fmt)}, {format(ci[1], fmt)}]"


def table(rows: dict[str, Any]) -> str:
    lines = []
    for key, doc in rows.items():
        if key.startswith("experiment_") and doc.get("result"):
            lines.append(f"\n2^{doc['log2']} (verified/min, 95% interval; ratio to {doc['arms'][0]}, paired over cycles)")
            for a in doc["result"]["arms"]:
                lines.append(f"  {a['label']:<34} {a['per_min']:8.1f} {_ci(a['per_min_ci'], '.1f'):>18}  "
                             f"{'' if a['ratio'] is None else format(a['ratio'], '.3f')}x {_ci(a['ratio_ci'])} "
                             f"{a['verdict']}  ({a['holds']} holds, {a['verified']} counted)")
            for s in doc["decomposition"]:
                r = "-" if s["ratio"] is None else f"{s['ratio']:.3f}x"
                lines.append(f"  step: {s['step']:<52} {r} {_ci(s['ratio_ci'])}")
        elif key.startswith("tune_"):
            res = doc.get("result")
            if res is None:
                lines.append(f"\n2^{doc['log2']} tune: {doc.get('skipped') or doc.get('error')}")
                continue
            lines.append(f"\n2^{doc['log2']} tune ({res['seconds']:.0f} s): start {res['start']} -> found "
                         f"{res['found']}, kept {res['best']}; best/start "
                         f"{'-' if res['ratio'] is None else format(res['ratio'], '.3f')}x {_ci(res['ratio_ci'])} "
                         f"{res['verdict']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="22,24")
    ap.add_argument("--budget-s", type=float, default=510.0, help="seconds for the whole script (the device call)")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--scale", type=float, default=1.0, help="holds and settles x this (and the sim's time scale)")
    ap.add_argument("--pack", type=Path, default=None, help="also keep a tarball of --out-dir here, whole after each stage")
    ap.add_argument("--workers", type=int, default=None, help="workers per GPU at start (default: the plan's, 8 / 12)")
    ap.add_argument("--out-dir", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args(argv)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    global PACK
    PACK = a.pack
    clock = Clock(a.budget_s)
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    rows: dict[str, Any] = {"machine": harness.machine(gpu=a.backend == "cuda"), "argv": sys.argv, "plan": PLAN}
    print(f"experiment_native: sizes {sizes}, backend {a.backend}, {os.cpu_count()} CPUs, budget {a.budget_s:g} s",
          flush=True)
    for i, log2 in enumerate(sizes):
        if clock.left() < plan_of(log2)["startup_s"] + 60:
            print(f"{clock.at()} 2^{log2}: skipped, {clock.left():.0f} s left", flush=True)
            continue
        try:
            one_size(log2, a, clock, sizes[i + 1:], rows)
        except Exception as exc:  # one size's failure must not lose the other's figures
            print(f"{clock.at()} 2^{log2} failed: {type(exc).__name__}: {exc}", flush=True)
            rows[f"error_{log2}"] = f"{type(exc).__name__}: {exc}"
            _save(a.out_dir / "summary.json", rows)
    _save(a.out_dir / "summary.json", rows)
    print(table(rows), flush=True)
    print(f"{clock.at()} done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
