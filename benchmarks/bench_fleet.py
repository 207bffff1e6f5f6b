"""Benchmarks of the fleet (issue 15). Writes benchmarks/results/fleet_bench.json.

    python benchmarks/bench_fleet.py [--quick] [--skip-overhead] [--out FILE]

1. scale: a synthetic stream of 100 hosts x 8 GPUs x 4 workers (tests/helpers/tui_synth.py's
   model, tagged the way a host actor tags its events: host, fleet-wide GPU and worker
   numbers), in the batches a 50 ms poll returns, round by round. Measured:
   - produced: events per second of (modelled, real-time) run the 100 hosts emit;
   - wire: pickling + unpickling each host's batch (what Ray moves), events/s of CPU time;
   - driver: the merge (sort of each round's batches) + the fold (prover/state.py), events/s
     of CPU time (process_time, robust to other load on the machine);
   - frame: the dashboard (c2tui.dashboard.app, headless run_test) drawing that 800-GPU state, our part
     (widgets drawing their lines) and a full repaint to ANSI, at 200x60.
2. overhead: the same 2 sim GPUs proved for real (Groth16 at 2^8, every proof verified), in
   one process (Engine) and as a fleet of one Ray node (FleetEngine, local:1), alternating
   A B B A; steady throughput (partitions/min between the first and the last finished) from
   each run's own fold. The fleet's cluster start-up is outside the steady window.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import pickle
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover import events as ev  # noqa: E402
from prover.fold.model import DashboardState  # noqa: E402
from tests.helpers.fleet_synth import GPUS, WORKERS, fleet_start, fleet_stream, host_events, tagged  # noqa: E402,F401


def base_rounds(seed: int, until: float, poll_s: float) -> list[list]:
    """One host's raw events, cut into the batches one poll every poll_s returns."""
    out: list[list] = [[] for _ in range(int(until / poll_s) + 1)]
    for e in host_events(seed, until):
        out[min(len(out) - 1, int(e.t / poll_s))].append(e)
    return out


def bench_scale(hosts: int, until: float, poll_s: float = 0.05, distinct: int = 4) -> tuple[dict, DashboardState]:
    """Round by round, as the driver sees it: every host's batch pickled and unpickled (Ray's
    transport), then the round merged in time order and folded. Host-side tagging is not timed
    (it runs on the hosts); `distinct` seeds of the model are shared out among the hosts."""
    bases = [base_rounds(s, until, poll_s) for s in range(distinct)]
    st = DashboardState()
    for e in fleet_start(hosts):
        st.apply(e)
    clock = time.process_time
    n, wire_s, fold_s, worst_round = 0, 0.0, 0.0, 0.0
    gc.collect()
    for k in range(len(bases[0])):
        batches = [tagged(bases[i % distinct][k], i) for i in range(hosts)]
        t0 = clock()
        batches = [pickle.loads(pickle.dumps(b, protocol=5)) for b in batches]
        t1 = clock()
        merged = [e for b in batches for e in b]
        merged.sort(key=lambda e: e.t)  # what FleetEngine._poll_round does with a round
        for e in merged:
            st.apply(e)
        t2 = clock()
        n += len(merged)
        wire_s += t1 - t0
        fold_s += t2 - t1
        worst_round = max(worst_round, t2 - t1)
    produced = n / until
    return {
        "hosts": hosts, "gpus": hosts * GPUS, "workers": hosts * GPUS * WORKERS, "events": n,
        "modelled_seconds": until, "poll_s": poll_s, "distinct_host_streams": distinct,
        "produced_events_per_s": round(produced), "wire_events_per_s": round(n / wire_s),
        "driver_fold_events_per_s": round(n / fold_s), "fold_us_per_event": round(1e6 * fold_s / n, 2),
        "fold_over_produced": round(n / fold_s / produced, 2),
        "worst_round_fold_ms": round(worst_round * 1e3, 1),
        "state": {"gpus": len(st.gpus), "hosts": len(st.hosts), "partitions_done": st.partitions_done},
    }, st


async def _frames(st: DashboardState, size: tuple[int, int], frames: int) -> dict:
    from bench_tui import build_and_repaint
    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.replay import ReplaySource
    from c2tui.widgets.common import StateView

    snap = st.view(partitions=96)
    app = DashboardApp(ReplaySource([], playing=False), fps=0.2)
    clock = time.process_time
    async with app.run_test(size=size) as pilot:
        t0 = clock()
        app.draw(snap)
        await pilot.pause()
        await pilot.pause()
        first = (clock() - t0) * 1e3
        views = [v for v in app.query(StateView) if v.region.height > 0]
        build, full = await build_and_repaint(app, pilot, views, [snap], frames, size)
    return {"size": f"{size[0]}x{size[1]}", "first_frame_ms": round(first, 1), "visible_widgets": len(views),
            "build_ms": {"median": round(statistics.median(build), 2), "max": round(max(build), 2)},
            "full_repaint_ms": {"median": round(statistics.median(full), 2), "max": round(max(full), 2)}}


NATIVE_EVENTS_PER_GPU_S = 460  # native 2^22, 8 workers, two-lock + stream: fleet_local2.jsonl.gz's steady stream


def live_stream(hosts: int, rate: float, seconds: float) -> list:
    """A fleet stream long enough to be fed at `rate` events/s for bench_tui._fps's 2 s of
    warm-up + `seconds` (it plays modelled time faster or slower to reach the rate)."""
    until, need = 20.0, rate * (seconds + 3.5)
    while True:
        evs = fleet_stream(hosts, until, progress_steps=16, sample_every=0.05)
        if len(evs) >= need:
            return evs
        until *= 1.2 * need / len(evs)


def bench_dashboard(hosts: int, quick: bool) -> dict:
    """`hosts` x 8 GPUs x 4 workers through the dashboard, as bench_tui measures one host: one
    frame of that state (our draw, full repaint, the typical 10 Hz frame) at 200x60 and 240x160;
    frames painted while the stream is fed live (LiveSource's fold thread + the app at 10 Hz) at
    bench_tui's 6k events/s and at the rate a native 2^22 fleet of this size emits; the driver's
    merge + fold per event (bench_scale)."""
    from bench_tui import _fps, _frame, snapshots_at

    frames = 20 if quick else 60
    evs = fleet_stream(hosts, 62.0)
    far, near = snapshots_at(evs, 12, 40.0, 20.0 / 12), snapshots_at(evs, frames, 44.0, 0.1)
    del evs
    out: dict = {"shape": f"{hosts} hosts x {GPUS} GPUs x {WORKERS} workers (tui_synth, tagged as host actors do)"}
    out["frame"] = [asyncio.run(_frame(size, frames, far, near)) for size in ((200, 60), (240, 160))]
    del far, near
    gc.collect()
    # today's figures beside them, same run and load: bench_tui's one host of 8 GPUs
    out["frame_one_host"] = [asyncio.run(_frame(size, frames)) for size in ((200, 60), (240, 160))]
    print(json.dumps([*out["frame"], *out["frame_one_host"]], indent=1), flush=True)
    gc.collect()
    out["fold"], _ = bench_scale(hosts, 12.0 if quick else 30.0)
    print(json.dumps(out["fold"], indent=1), flush=True)
    seconds = 5.0 if quick else 10.0
    native = NATIVE_EVENTS_PER_GPU_S * hosts * GPUS
    out["fps"] = []
    for rate in (6000.0, float(native)):
        live = live_stream(hosts, rate, seconds)
        out["fps"].append({"rate_target": rate, **asyncio.run(_fps(seconds, rate, evs=live))})
        del live
        gc.collect()
        print(json.dumps(out["fps"][-1], indent=1), flush=True)
    out["native_rate_note"] = (f"{NATIVE_EVENTS_PER_GPU_S} events/s a GPU: the steady stream of native 2^22 "
                               f"(8 workers, two-lock + stream) in recordings/h200/fleet/fleet_local2.jsonl.gz")
    return out


def _one(fleet: bool, cfg) -> dict:
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold
    from prover.fold.summary import summarize

    evs: list = []
    t0 = time.perf_counter()
    if fleet:
        from prover.fleet.driver import FleetEngine

        eng = FleetEngine(cfg, "local:1", sinks=[evs.append])
    else:
        eng = Engine(cfg, sinks=[evs.append])
    eng.start()
    eng.wait(900)
    wall = time.perf_counter() - t0
    sm = summarize(fold(evs))
    return {"mode": "fleet local:1" if fleet else "one process", "wall_s": round(wall, 1),
            "partitions_ok": sm.partitions_ok, "proofs_ok": sm.proofs_ok, "all_verified": sm.all_proofs_verified,
            "steady_per_min": round(sm.steady_throughput_per_min, 2), "events": len(evs)}


def bench_overhead(quick: bool) -> dict:
    from prover.config import RunConfig

    cfg = RunConfig(backend="sim", gpus=2, workers_per_gpu=3, constraints_log2=8, partitions=8,
                    sectors=2 if quick else 4, time_scale=0.1, cache_dir=str(ROOT / ".cache" / "bench_fleet"))
    runs = [_one(f, cfg) for f in (False, True, True, False)]  # A B B A
    one = statistics.mean(r["steady_per_min"] for r in runs if r["mode"] == "one process")
    fl = statistics.mean(r["steady_per_min"] for r in runs if r["mode"] != "one process")
    return {"config": {k: cfg.public_dict()[k] for k in ("backend", "gpus", "workers_per_gpu", "constraints_log2",
                                                         "partitions", "sectors", "time_scale", "profile")},
            "runs": runs, "one_process_per_min": round(one, 2), "fleet_per_min": round(fl, 2),
            "fleet_cost_pct": round(100.0 * (one - fl) / one, 1) if one else None,
            "note": "simulated device (sim backend), modelled 2^27 times x time_scale, real Groth16 at 2^8"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--dashboard", action="store_true",
                    help="only the dashboard at --hosts x 8 GPUs (frames, fps live, fold): issue 27's 8x8")
    ap.add_argument("--out", default=None, help="default results/fleet_bench.json (--dashboard: "
                                                "results/fleet_dashboard_<H>x8.json)")
    a = ap.parse_args()
    res: dict = {"machine": {**harness.machine(), "load_avg_at_start": [round(x, 2) for x in os.getloadavg()]},
                 "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "argv": sys.argv}
    if a.dashboard:
        res["dashboard"] = bench_dashboard(a.hosts, a.quick)
        res["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
        out = Path(a.out or ROOT / "benchmarks" / "results" / f"fleet_dashboard_{a.hosts}x{GPUS}.json")
        out.write_text(json.dumps(res, indent=1) + "\n")
        print(f"wrote {out}")
        return
    a.out = a.out or str(ROOT / "benchmarks" / "results" / "fleet_bench.json")
    scale, st = bench_scale(a.hosts, 4.0 if a.quick else 12.0)
    res["scale"] = scale
    print(json.dumps(scale, indent=1), flush=True)
    res["frame"] = asyncio.run(_frames(st, (200, 60), 5 if a.quick else 20))
    print(json.dumps(res["frame"], indent=1), flush=True)
    if not a.skip_overhead:
        res["overhead"] = bench_overhead(a.quick)
        print(json.dumps(res["overhead"], indent=1), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
