"""RESULTS' discipline table and decomposition as experiments, natively, and `tune`, at 2^22 and
2^24, in ONE device call (issue 34). Per size, one engine (profile native, real kernels, one
random setup), kept running while:

  1. an experiment interleaves the arms on it, 4 cycles (randomised blocks): single, narrow,
     two-lock + device, two-lock + stream, reserved (each with the size's workers), and
     two-lock + stream with fewer and more workers; every ratio paired over cycles, 95%
     (2^24: no single, it needs ~20 s holds there; 12 workers, and two-lock + stream at 8);
  2. the decomposition's steps from the same holds (narrow/single, two-lock + stream/narrow,
     reserved/two-lock + stream, device/stream, each worker count against the size's);
  3. tune from the benchmark's setting (two-lock + stream, 8 / 12 workers): lock_mode over
     narrow, two-lock, reserved (2^24: two-lock, reserved) and workers per GPU over a range
     (2^24: 8, 10, 12), then the confirmation; short of time, the range's ends, then workers alone.

    python3 benchmarks/experiment_native.py --out-dir /tmp/w --pack "$OUT/experiment_native.tar" [--sizes 22,24] [--budget-s 510]
    python3 benchmarks/experiment_native.py --stages exp:24,tune:24 --cache-dir none --budget-s 200 \
        --out-dir /tmp/w --pack "$OUT/experiment_native.tar"          # 2^24 alone, in a ~260 s call
    python3 benchmarks/experiment_native.py --backend sim --stages exp:24,tune:24 --cache-dir none --budget-s 200 \
        --out-dir /tmp/x                                               # a dry run of that, no GPU (2^10 proved)

Stages (`--stages`, default exp:S,tune:S for each of --sizes): consecutive stages of one size
share one engine; a line is printed before each. Deadline-aware: each stage is planned from the
time left (--budget-s from the script's start); one that cannot fit is cut shorter (shorter
holds, fewer tune values) or skipped, and said so; an experiment still running when the budget
is nearly spent is stopped and what it counted kept. Memory-safe: no arm or tune value runs
more workers than the size's MAX_WORKERS (2^24: 12, the most seen to run there; session 12's
2^24 stage, warmed up at 16 with a 16-worker arm, ended without a word), and a watchdog stops the running
experiment, keeping what it counted, if the host's MemAvailable falls under --mem-floor-gib.
Written as made: <out-dir>/experiment_<log2>.json (and .partial.json after every complete hold
while it runs), tune_<log2>.json, n<log2>_experiment.jsonl(.gz once the size is done: the
recording, `c2tui summary` reads it), summary.json (every stage), all packed into --pack after
each of them; a table printed last.
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
from stage_guard import Clock, Guard, mem_available  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.experiment.design import Design, parse_arm  # noqa: E402
from prover.experiment.link import EmbeddedLink  # noqa: E402
from prover.experiment.runner import ExperimentError, Runner, wait_ready  # noqa: E402
from prover.stats.experiment import analyse, paired_ratio  # noqa: E402
from prover.experiment.tune import MIN_ROUNDS, Space, Tuner, TunePlan  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402

# per size: workers (the benchmark's), the experiment's disciplines, hold/settle and worker
# variants, the tune's hold/settle and values. Measured in the committed 2^22 / 2^24 recordings,
# a partition's GPU section start -> done (its lag): 2^22 0.2 s (single 0.7 s), 2^24 1.25 s
# (single 5.1 s: with 12 workers it queues ~4 s for the one lock). Written for the old count
# (sections begun after the settle AND finished inside the hold); since issue 42 a hold counts
# the sections begun in it whenever they finish, and a settle shorter than the lag of the arm
# before gives no verdict: these holds are too short at 2^24 (benchmarks/experiment_auto_native.py
# sizes them from the run).
PLAN: dict[int, dict[str, Any]] = {
    22: {"workers": 8, "disciplines": ("single", "narrow", "two-lock + device", "two-lock + stream", "reserved"),
         "hold": 3.0, "settle": 1.0, "variants": (6, 12), "startup_s": 45.0, "warm_s": 3.0,
         "tune_hold": 2.5, "tune_settle": 0.75, "tune_locks": ["narrow", "two-lock", "reserved"], "tune_workers": [6, 8, 12]},
    # 16 workers left out at 2^24: session 12's 2^24 stage (12 workers, warm-up and an arm at
    # 16) ended ~130 s into its experiment with no output. At 2^22 the host's MemAvailable fell
    # ~20 GiB once 12 workers had run (~1.7 GiB a worker, the recording's host_health); a
    # worker's host arrays are 4x that at 2^24, so 16 would want ~110 GiB beside the 8.6 GiB
    # key on a 125 GiB host. 12 ran there in session 7 and session 12.
    24: {"workers": 12, "disciplines": ("narrow", "two-lock + device", "two-lock + stream", "reserved"),
         "hold": 5.0, "settle": 1.5, "variants": (8,), "startup_s": 60.0, "warm_s": 0.0,
         "tune_hold": 3.0, "tune_settle": 1.0, "tune_locks": ["two-lock", "reserved"], "tune_workers": [8, 10, 12]},
}
MAX_WORKERS = {22: 12, 24: 12}  # the most workers any arm or tune value may run (see PLAN[24]'s comment)
DISCIPLINES = {"single": "lock_mode=single,mem_sync=stream", "narrow": "lock_mode=narrow,mem_sync=stream",
               "two-lock + device": "lock_mode=two-lock,mem_sync=device",
               "two-lock + stream": "lock_mode=two-lock,mem_sync=stream", "reserved": "lock_mode=reserved,mem_sync=stream"}
STEPS = (("narrowing the lock (narrow / single)", "narrow", "single"),
         ("the second lock (two-lock + stream / narrow)", "two-lock + stream", "narrow"),
         ("reserved slots (reserved / two-lock + stream)", "reserved", "two-lock + stream"),
         ("device sync (two-lock + device / two-lock + stream)", "two-lock + device", "two-lock + stream"))
CYCLES = 4


def plan_of(log2: int) -> dict[str, Any]:
    p = dict(PLAN.get(log2, PLAN[22]))
    most = MAX_WORKERS.get(log2, 12 if log2 < 24 else max(1, 12 >> (log2 - 24)))
    p["workers"] = min(p["workers"], most)
    p["variants"] = tuple(w for w in p["variants"] if w <= most and w != p["workers"])
    p["tune_workers"] = [w for w in p["tune_workers"] if w <= most] or [p["workers"]]
    return p


def experiment_s(log2: int, scale: float = 1.0) -> float:
    p = plan_of(log2)
    return p["warm_s"] * scale + (len(p["disciplines"]) + len(p["variants"])) * CYCLES * p["hold"] * scale


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
                      constraints_log2=log2 if a.backend == "cuda" else a.sim_log2,
                      modelled_log2=log2 if a.backend == "cuda" else None,
                      workers_per_gpu=a.workers or p["workers"], lock_mode="two-lock", mem_sync="stream", b_g2="auto",
                      vram_budget=device_total(a.backend) if a.backend == "cuda" else "card", seed=1,
                      verify_share=1.0, time_scale=1.0 if a.backend == "cuda" else a.scale,
                      cache_dir=a.cache_dir)
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


def _steps(log2: int, names: list[str], counts: list[Any]) -> list[dict[str, Any]]:
    """The decomposition's steps, paired over the cycles both arms held in."""
    p = plan_of(log2)
    by = {i: [h for h in counts if h.arm == i] for i in range(len(names))}
    idx = {n: i for i, n in enumerate(names)}
    steps = []
    for label, num, den in STEPS:
        if num not in idx or den not in idx:
            continue
        ratio, ci, n = paired_ratio(by[idx[den]], by[idx[num]])
        steps.append({"step": label, "ratio": ratio, "ratio_ci": ci, "cycles": n})
    base = idx.get("two-lock + stream")
    for w in p["variants"]:
        name = f"two-lock + stream, {w} workers"
        if base is None or name not in idx:
            continue
        ratio, ci, n = paired_ratio(by[base], by[idx[name]])
        steps.append({"step": f"{w} workers / {p['workers']} (two-lock + stream)", "ratio": ratio, "ratio_ci": ci,
                      "cycles": n})
    return steps


class PartialSaver:
    """The runner's progress hook: after every hold that ends complete, the figures so far go
    to experiment_<log2>.partial.json and the pack (a stage cut off by the call's limit or an
    OOM kill still leaves its complete holds)."""

    def __init__(self, log2: int, names: list[str], design: Any, out: Path) -> None:
        self.log2, self.names, self.design, self.out = log2, names, design, out
        self.saved = 0
        self.experiment = 0

    def __call__(self, what: str, tally: Any) -> None:
        holds = tally.holds_of(self.experiment)
        if len(holds) == self.saved:
            return
        self.saved = len(holds)
        info = tally.experiments.get(self.experiment)
        counts = [h.count() for h in holds]
        res = analyse(counts, self.names, info.knobs if info is not None else None)
        _save(self.out / f"experiment_{self.log2}.partial.json",
              {"log2": self.log2, "arms": self.names, "partial": f"{len(holds)} complete holds",
               "design": self.design.model_dump(mode="json"), "result": res.model_dump(mode="json"),
               "decomposition": _steps(self.log2, self.names, counts)})


def experiment(log2: int, link: EmbeddedLink, clock: Clock, scale: float, reserve_s: float, guard: Guard,
               out: Path) -> dict[str, Any]:
    p = plan_of(log2)
    names, arms = arms_of(log2)
    hold, settle = p["hold"] * scale, p["settle"] * scale
    fit = (clock.left() - reserve_s - guard.margin - 10) / (len(arms) * CYCLES)
    if fit < hold:  # late (a slow start-up): shorter holds, said, rather than none
        if fit < 2 * settle:
            print(f"{clock.at()} 2^{log2} experiment: skipped, {clock.left():.0f} s left", flush=True)
            return {"log2": log2, "arms": names, "skipped": f"{clock.left():.0f} s left"}
        print(f"{clock.at()} 2^{log2} experiment: holds cut from {hold:g} to {fit:.1f} s to fit", flush=True)
        hold = fit
    d = Design(arms=arms, cycles=CYCLES, hold_s=hold, settle_s=settle, order="blocks", seed=log2)
    print(f"{clock.at()} 2^{log2} experiment: {len(arms)} arms x {CYCLES} cycles x {hold:g} s (settle {settle:g}) "
          f"= {d.seconds:.0f} s; arms: {', '.join(names)}", flush=True)
    r = Runner(link, d, name=f"disciplines 2^{log2}", stop=guard.arm(), progress=PartialSaver(log2, names, d, out))
    try:
        res = r.run()
        error = None
    except ExperimentError as exc:
        res, error = exc.result, str(exc) + (f" ({guard.why})" if guard.why else "")
        print(f"{clock.at()} 2^{log2} experiment: {error}", flush=True)
    counts = r.tally.counts(r.experiment)
    return {"log2": log2, "arms": names, "design": d.model_dump(mode="json"), "error": error,
            "result": res.model_dump(mode="json") if res is not None else None,
            "decomposition": _steps(log2, names, counts)}


def tune(log2: int, link: EmbeddedLink, clock: Clock, scale: float, reserve_s: float, guard: Guard) -> dict[str, Any]:
    """lock_mode x workers from the benchmark's setting; fewer worker values when time is short."""
    p = plan_of(log2)
    plan = TunePlan(time_s=1.0, hold_s=p["tune_hold"] * scale, settle_s=p["tune_settle"] * scale, confirm_cycles=3,
                    seed=log2)
    locks, workers = list(p["tune_locks"]), list(p["tune_workers"])
    knobs = {"lock_mode": locks, "workers_per_gpu": workers} if len(workers) > 1 else {"lock_mode": locks}
    space = Space(knobs=knobs)
    # short of time: the worker range's ends only, then the worker count alone (the figure the
    # issue asks first: the best count on this box)
    if plan.least_time(space) > clock.left() - reserve_s - guard.margin and len(workers) > 2:
        workers = [workers[0], workers[-1]]
        space = Space(knobs={"lock_mode": locks, "workers_per_gpu": workers})
    if plan.least_time(space) > clock.left() - reserve_s - guard.margin and len(workers) > 1:
        locks = []
        space = Space(knobs={"workers_per_gpu": workers})
    need, left = plan.least_time(space), clock.left() - reserve_s - guard.margin
    if need > left:
        print(f"{clock.at()} 2^{log2} tune: skipped, {left:.0f} s left < the {need:.0f} s it needs", flush=True)
        return {"log2": log2, "skipped": f"{left:.0f} s left, needs {need:.0f} s"}
    plan = plan.model_copy(update={"time_s": min(left, need * 1.15)})
    print(f"{clock.at()} 2^{log2} tune: lock_mode {locks or '(not searched)'}, workers {workers}, {plan.time_s:.0f} s "
          f"(hold {plan.hold_s:g}, settle {plan.settle_s:g}, {MIN_ROUNDS} rounds a knob at least)", flush=True)
    t = Tuner(link, plan, space=space, say=lambda line: print(f"{clock.at()}   {line}", flush=True), stop=guard.arm())
    try:
        res = t.run(apply=False)
    except ExperimentError as exc:
        return {"log2": log2, "error": str(exc) + (f" ({guard.why})" if guard.why else "")}
    return {"log2": log2, "space": space.model_dump(mode="json"), "plan": plan.model_dump(mode="json"),
            "result": res.model_dump(mode="json")}


def need_s(stage: tuple[str, int], scale: float) -> float:
    """What a stage needs at least (start-up counted by one_size, once a size)."""
    kind, log2 = stage
    if kind == "exp":
        return experiment_s(log2, scale) + 10
    p = plan_of(log2)
    plan = TunePlan(time_s=1.0, hold_s=p["tune_hold"] * scale, settle_s=p["tune_settle"] * scale, confirm_cycles=3)
    least = [Space(knobs={"lock_mode": list(p["tune_locks"])})]
    if len(p["tune_workers"]) > 1:
        least.append(Space(knobs={"workers_per_gpu": [p["tune_workers"][0], p["tune_workers"][-1]]}))
    return min(plan.least_time(sp) for sp in least)


def one_size(log2: int, kinds: list[str], a: argparse.Namespace, clock: Clock, later: list[tuple[str, int]],
             rows: dict[str, Any], guard: Guard) -> None:
    """One engine at 2^log2 for its stages in order (exp, tune); `later`: the stages after
    these. Only later experiments are reserved for: a tune is done if it fits."""
    out = a.out_dir
    sizes_after = {s for k, s in later if k == "exp"}
    reserve = sum(need_s(st, a.scale) for st in later if st[0] == "exp") + sum(
        plan_of(s)["startup_s"] + 20 for s in sizes_after)
    print(f"{clock.at()} 2^{log2}: starting the engine ({plan_of(log2)['workers']} workers; stages "
          f"{', '.join(kinds)}; {clock.left():.0f} s left, {reserve:.0f} s kept for later stages; host "
          f"MemAvailable {(mem_available() or 0) / 2**30:.1f} GiB)", flush=True)
    eng, link, writer = start_engine(log2, a, out)
    try:
        wait_ready(link, guard.arm(), timeout_s=max(60.0, clock.left() - reserve - 30))
        startup = clock.at()
        print(f"{startup} 2^{log2}: first GPU section (start-up done; MemAvailable "
              f"{(mem_available() or 0) / 2**30:.1f} GiB)", flush=True)
        warm_up(log2, link, clock, a.scale)
        for kind in kinds:
            if kind == "exp":
                print(f"{clock.at()} stage exp:{log2}", flush=True)
                exp = experiment(log2, link, clock, a.scale, reserve, guard, out)
                exp["startup_at"] = startup
                exp["mem_available_least_gib"] = None if guard.low is None else guard.low / 2**30
                rows[f"experiment_{log2}"] = exp
                _save(out / f"experiment_{log2}.json", exp)
                _save(out / "summary.json", rows)
            else:
                print(f"{clock.at()} stage tune:{log2}", flush=True)
                tun = tune(log2, link, clock, a.scale, reserve, guard)
                rows[f"tune_{log2}"] = tun
                _save(out / f"tune_{log2}.json", tun)
                _save(out / "summary.json", rows)
    finally:
        _pack(out)  # before the engine stops: the recording so far, whatever follows
        eng.stop(timeout=30)
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


def stages_of(a: argparse.Namespace) -> list[tuple[str, int]]:
    """`--stages exp:24,tune:24` (or exp:S,tune:S for each of --sizes)."""
    if not a.stages:
        return [(k, int(x)) for x in a.sizes.split(",") if x.strip() for k in ("exp", "tune")]
    out = []
    for item in a.stages.split(","):
        kind, _, log2 = item.strip().partition(":")
        if kind not in ("exp", "tune") or not log2.isdigit():
            raise SystemExit(f"--stages: {item!r} is not exp:LOG2 or tune:LOG2")
        out.append((kind, int(log2)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="22,24")
    ap.add_argument("--stages", default=None, help="exp:LOG2 / tune:LOG2, in order (default: both, each of --sizes)")
    ap.add_argument("--budget-s", type=float, default=510.0, help="seconds for the whole script (the device call)")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--scale", type=float, default=1.0, help="holds and settles x this (and the sim's time scale)")
    ap.add_argument("--pack", type=Path, default=None, help="also keep a tarball of --out-dir here, whole after each stage")
    ap.add_argument("--workers", type=int, default=None, help="workers per GPU at start (default: the plan's, 8 / 12)")
    ap.add_argument("--cache-dir", default=str(ROOT / ".cache" / "keys"),
                    help="proving-key cache; 'none': set the key up and keep it in memory only (a fresh "
                         "machine has no cache, and writing 8.6 GiB at 2^24 costs ~30 s)")
    ap.add_argument("--mem-floor-gib", type=float, default=6.0,
                    help="stop the running stage, keeping what it counted, when MemAvailable falls under this")
    ap.add_argument("--sim-log2", type=int, default=10,
                    help="sim: the size really proved (the stages' sizes pick the plan: a dry run of exp:24 is quick)")
    ap.add_argument("--out-dir", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args(argv)
    a.cache_dir = None if a.cache_dir.lower() == "none" else a.cache_dir
    a.out_dir.mkdir(parents=True, exist_ok=True)
    global PACK
    PACK = a.pack
    clock = Clock(a.budget_s)
    stages = stages_of(a)
    guard = Guard(clock, int(a.mem_floor_gib * 2**30), margin_s=12.0)
    rows: dict[str, Any] = {"machine": harness.machine(gpu=a.backend == "cuda"), "argv": sys.argv,
                            "plan": {s: plan_of(s) for s in sorted({x for _, x in stages})}, "stages": stages}
    print(f"experiment_native: stages {', '.join(f'{k}:{x}' for k, x in stages)}, backend {a.backend}, "
          f"{os.cpu_count()} CPUs, budget {a.budget_s:g} s, host MemAvailable {(mem_available() or 0) / 2**30:.1f} GiB",
          flush=True)
    _save(a.out_dir / "summary.json", rows)
    i = 0
    while i < len(stages):
        log2 = stages[i][1]
        j = i
        while j < len(stages) and stages[j][1] == log2:
            j += 1
        kinds = [k for k, _ in stages[i:j]]
        if clock.left() < plan_of(log2)["startup_s"] + min(need_s(st, a.scale) for st in stages[i:j]):
            print(f"{clock.at()} 2^{log2}: skipped ({', '.join(kinds)}), {clock.left():.0f} s left", flush=True)
            rows[f"skipped_{log2}"] = f"{clock.left():.0f} s left"
        else:
            try:
                one_size(log2, kinds, a, clock, stages[j:], rows, guard)
            except Exception as exc:  # one size's failure must not lose the other's figures
                print(f"{clock.at()} 2^{log2} failed: {type(exc).__name__}: {exc}", flush=True)
                rows[f"error_{log2}"] = f"{type(exc).__name__}: {exc}"
        _save(a.out_dir / "summary.json", rows)
        i = j
    guard.close()
    rows["mem_available_least_gib"] = None if guard.low is None else guard.low / 2**30
    _save(a.out_dir / "summary.json", rows)
    print(table(rows), flush=True)
    print(f"{clock.at()} done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
