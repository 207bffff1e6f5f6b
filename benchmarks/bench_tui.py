"""Benchmarks of the dashboard (issue 4). Writes benchmarks/results/tui_bench.json.

    python benchmarks/bench_tui.py [--quick] [--out FILE]

1. frame: the cost of one frame of a big state - 8 GPUs x 4 workers, >= 64 partitions -
   in a headless app (Textual's run_test, no terminal I/O). Measured two ways:
   - build: our part alone - handing the snapshot to the widgets and drawing every
     widget's Rich Text at its real size (what `render()` does each frame);
   - full: draw + Textual's whole-screen composition to ANSI (compositor render_update(full=True)
     printed through a truecolor Console, as the driver would write it) - an upper bound.
   At 200x60 (what fits) and 240x160 (every GPU panel and all 64 partitions on screen).
2. fps under load: a synthetic prover (tests/helpers/tui_synth.py, 8 GPUs x 4 workers) fires
   >= 5k events/s into a LiveSource (the same sink the engine uses); the app runs headless at
   its default 10 Hz for a while; we count frames actually painted (header renders) and how
   far the fold thread fell behind.
3. prover throughput with the app attached vs headless record, side by side in one process:
   the real Engine (sim backend, real Groth16 proofs at 2^10) with a RecordingWriter sink,
   alternating runs (ABBA) without and with the app (LiveSource + DashboardApp painting at
   10 Hz); partitions finished per minute, and phases finished per minute (8 per partition:
   a finer count, less quantised), in the steady window of each run.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from rich.console import Console  # noqa: E402

from c2tui.dashboard.app import DashboardApp  # noqa: E402
from c2tui.sources.live import LiveSource  # noqa: E402
from c2tui.sources.replay import ReplaySource  # noqa: E402
from c2tui.widgets.common import StateView  # noqa: E402
from c2tui.widgets.header_bar import HeaderBar  # noqa: E402
from prover.fold.model import DashboardState  # noqa: E402
from tests.helpers.tui_synth import Synth  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def big_snapshots(n: int = 12, start: float = 40.0, step: float = 20.0 / 12) -> list[DashboardState]:
    """Snapshots of an 8 GPU x 4 worker run (tui_synth), `step` seconds apart from `start`."""
    evs = Synth(gpus=8, workers_per_gpu=4, sectors=40, partitions=10, seed=3, progress_steps=4).run(
        until=start + step * n + 1)
    return snapshots_at(evs, n, start, step)


def snapshots_at(evs: list, n: int, start: float, step: float) -> list[DashboardState]:
    """The UI's snapshots of the fold of `evs` (in time order), `step` seconds apart from `start`."""
    st = DashboardState()
    snaps = []
    marks = [start + step * i for i in range(n)]
    k = 0
    for e in evs:
        while k < len(marks) and e.t > marks[k]:
            snaps.append(st.view(partitions=96))
            k += 1
        st.apply(e)
    while len(snaps) < n:
        snaps.append(st.view(partitions=96))
    return snaps


# --- 1. one frame -------------------------------------------------------------------------

async def build_and_repaint(app, pilot, views, states, frames: int, size: tuple[int, int]) -> tuple[list, list]:
    """CPU ms per frame, cycling through `states`: our part (widgets draw their lines from the
    snapshot) and a full repaint (every line rendered, composed and turned to ANSI)."""
    clock = time.process_time
    build, full = [], []
    console = Console(width=size[0], height=size[1], file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", legacy_windows=False, safe_box=False)
    for i in range(frames):
        st = states[i % len(states)]
        t0 = clock()
        for v in views:
            if v.region.height > 0:
                v.draw(st, v.content_size.width, v.content_size.height)
        build.append((clock() - t0) * 1e3)
        t0 = clock()
        app.draw(st)
        for v in views:
            v.refresh()
        update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
        console.file = io.StringIO()
        console.print(update)
        full.append((clock() - t0) * 1e3)
        await pilot.pause()
    return build, full


async def _frame(size: tuple[int, int], frames: int, far: list | None = None, near: list | None = None) -> dict:
    """One frame's cost; `far` (snapshots far apart) and `near` (0.1 s apart, at least `frames`
    of them) default to the 8-GPU synthetic run's."""
    far = far or big_snapshots(12)                        # 1.7 s apart: nearly every line changes
    near = near or big_snapshots(frames, 44.0, 0.1)       # 0.1 s apart: what a 10 Hz screen sees
    src = ReplaySource([], playing=False)
    app = DashboardApp(src, fps=0.2)  # its own timer stays out of the way
    out: dict = {"size": f"{size[0]}x{size[1]}"}
    clock = time.process_time  # CPU time of this process: robust to other load on the machine
    async with app.run_test(size=size) as pilot:
        app.draw(far[0])
        await pilot.pause()
        await pilot.pause()
        views = list(app.query(StateView))
        s0 = far[0]
        out["gpus"], out["partitions_in_state"] = len(s0.gpus), len(s0.partitions)
        out["workers"] = sum(len(g.workers) for g in s0.gpus.values())
        out["gpu_panels_on_screen"] = sum(1 for v in views if type(v).__name__ == "GpuPanel"
                                          and v.region.height > 0 and v.region.y < size[1])
        build, full = await build_and_repaint(app, pilot, views, far, frames, size)
        typical, idle = [], []
        for i in range(frames):
            # a typical 10 Hz frame through the app's own path (partial refresh of changed lines),
            # minus the cost of the same event-loop turn with nothing to draw
            t0 = clock()
            app.draw(near[i])
            await pilot.pause()
            typical.append((clock() - t0) * 1e3)
            t0 = clock()
            await pilot.pause()
            idle.append((clock() - t0) * 1e3)
        out["visible_partition_rows"] = app.query_one("#partitions").content_size.height - 1
    base = statistics.median(idle)
    out["build_ms"] = {"median": round(statistics.median(build), 2), "p95": round(pct(build, 0.95), 2)}
    out["full_repaint_ms"] = {"median": round(statistics.median(full), 2), "p95": round(pct(full, 0.95), 2)}
    out["typical_frame_ms"] = {"median": round(statistics.median(typical) - base, 2),
                               "p95": round(pct(typical, 0.95) - base, 2), "idle_turn_ms": round(base, 2)}
    return out


# --- 2. fps under an event firehose -------------------------------------------------------

def _firehose(src: LiveSource, evs: list, speed: float, stop: threading.Event, sent: list) -> None:
    start = time.perf_counter()
    i, n = 0, len(evs)
    sink = src.sink
    while not stop.is_set() and i < n:
        now_t = (time.perf_counter() - start) * speed
        j = i
        while j < n and evs[j].t <= now_t:
            j += 1
        for e in evs[i:j]:
            sink(e)
        sent[0] += j - i
        i = j
        time.sleep(0.002)


async def _fps(seconds: float, rate_target: float, app_fps: float = 10.0, evs: list | None = None) -> dict:
    """Frames painted while `evs` (default: an 8-GPU synthetic run) are fed at `rate_target`/s."""
    evs = evs or Synth(gpus=8, workers_per_gpu=4, sectors=150, partitions=10, seed=5, progress_steps=16,
                       sample_every=0.05).run(until=150.0)
    # the harness holds ~10^6 pre-made events; a real prover does not: keep them out of the
    # cyclic GC's full collections, which would otherwise stall every thread for ~0.2 s
    gc.collect()
    gc.freeze()
    per_s = len(evs) / max(1e-9, evs[-1].t)
    speed = rate_target / per_s
    src = LiveSource(None, snapshot_hz=max(20.0, 2 * app_fps))
    app = DashboardApp(src, fps=app_fps)  # the default is 10 Hz
    painted = [0]
    orig = HeaderBar.draw

    def counting(self, *a):
        painted[0] += 1
        return orig(self, *a)

    HeaderBar.draw = counting  # type: ignore[method-assign]
    stop = threading.Event()
    sent = [0]
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            await pilot.pause()
            th = threading.Thread(target=_firehose, args=(src, evs, speed, stop, sent), daemon=True)
            th.start()
            await asyncio.sleep(2.0)  # steady state: the stream is flowing, the screen laid out
            p0, f0, t0, c0 = painted[0], src.folded, time.perf_counter(), time.process_time()
            s0 = sent[0]
            backlog = []
            while time.perf_counter() - t0 < seconds:
                await asyncio.sleep(0.25)
                backlog.append(len(src._q))
            dt = time.perf_counter() - t0
            cpu = time.process_time() - c0
            p1, f1 = painted[0], src.folded
            assert th.is_alive(), "the synthetic stream ran out before the measurement ended"
            stop.set()
            th.join()
    finally:
        HeaderBar.draw = orig  # type: ignore[method-assign]
        gc.unfreeze()
    return {"app_fps_setting": app_fps, "seconds": round(dt, 1), "events_per_s_sent": round((sent[0] - s0) / dt), "events_per_s_folded": round((f1 - f0) / dt),
            "fps_painted": round((p1 - p0) / dt, 1), "fold_backlog_max": max(backlog), "fold_backlog_end": backlog[-1],
            "process_cpu_share": round(cpu / dt, 2)}


# --- 3. prover throughput with and without the app ----------------------------------------

def _engine(time_scale: float):
    from prover.config import load_config
    from prover.pipeline.engine import Engine

    cfg = load_config(backend="sim", gpus=2, workers_per_gpu=3, time_scale=time_scale, mem_sync="stream", seed=7,
                      vram_budget="two-prestage")
    return Engine(cfg)


def _count_sink(done_t: list, phases_t: list | None = None):
    def sink(e) -> None:
        if e.kind == "partition_done" and e.ok:
            done_t.append(e.t)
        elif phases_t is not None and e.kind == "phase_end" and e.ok:
            phases_t.append(e.t)
    return sink


def _rate(done_t: list, warm: float, end: float) -> float:
    n = sum(1 for t in done_t if warm <= t <= end)
    return 60.0 * n / (end - warm)


def _run_headless(seconds: float, ts: float, warm: float, tmp: Path) -> dict:
    from prover.record import RecordingHeader, RecordingWriter

    eng = _engine(ts)
    done: list = []
    ph: list = []
    w = RecordingWriter(tmp / "headless.jsonl", RecordingHeader(), force=True)
    eng.add_sink(w.write)
    eng.add_sink(_count_sink(done, ph))
    c0 = time.process_time()
    eng.start()
    time.sleep(seconds)
    eng.stop(timeout=30)
    w.close()
    return {"per_min": _rate(done, warm, seconds), "phases_per_min": _rate(ph, warm, seconds), "done": len(done),
            "cpu_s": time.process_time() - c0}


async def _run_with_app(seconds: float, ts: float, warm: float, tmp: Path) -> dict:
    from prover.record import RecordingHeader, RecordingWriter

    eng = _engine(ts)
    done: list = []
    ph: list = []
    w = RecordingWriter(tmp / "app.jsonl", RecordingHeader(), force=True)
    eng.add_sink(w.write)
    eng.add_sink(_count_sink(done, ph))
    src = LiveSource(eng)
    app = DashboardApp(src)
    c0 = time.process_time()
    async with app.run_test(size=(200, 60)) as pilot:  # app.on_mount starts the engine
        await asyncio.sleep(seconds)
        frames = app.frames
        await pilot.press("q")
    w.close()
    return {"per_min": _rate(done, warm, seconds), "phases_per_min": _rate(ph, warm, seconds), "done": len(done),
            "frames": frames, "cpu_s": time.process_time() - c0}


def _throughput(seconds: float, reps: int, ts: float) -> dict:
    warm = min(5.0, seconds / 4)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for r in range(reps):
            # ABBA order, so a drift in the machine's load does not favour one side
            if r % 2 == 0:
                a = _run_headless(seconds, ts, warm, tmp)
                b = asyncio.run(_run_with_app(seconds, ts, warm, tmp))
            else:
                b = asyncio.run(_run_with_app(seconds, ts, warm, tmp))
                a = _run_headless(seconds, ts, warm, tmp)
            rows.append({"rep": r, "headless_per_min": round(a["per_min"], 2), "app_per_min": round(b["per_min"], 2),
                         "headless_phases_per_min": round(a["phases_per_min"], 1),
                         "app_phases_per_min": round(b["phases_per_min"], 1),
                         "headless_cpu_s": round(a["cpu_s"], 1), "app_cpu_s": round(b["cpu_s"], 1),
                         "app_frames": b["frames"], "load_avg_1m": round(os.getloadavg()[0], 2)})
            print(rows[-1], flush=True)
    h = statistics.mean(r["headless_per_min"] for r in rows)
    a = statistics.mean(r["app_per_min"] for r in rows)
    ratios = [r["app_per_min"] / r["headless_per_min"] for r in rows if r["headless_per_min"]]
    hp = statistics.mean(r["headless_phases_per_min"] for r in rows)
    ap = statistics.mean(r["app_phases_per_min"] for r in rows)
    return {"config": f"sim, 2 GPUs x 3 workers, time_scale {ts}, mem_sync stream; {seconds:.0f} s runs, "
                      f"steady window [{warm:.0f} s, {seconds:.0f} s], {reps} pairs in ABBA order; the app "
                      f"headless (run_test 200x60) painting at 10 Hz, both with a RecordingWriter sink",
            "runs": rows, "headless_per_min": round(h, 2), "app_per_min": round(a, 2),
            "app_vs_headless": round(a / h, 4) if h else None,
            "headless_phases_per_min": round(hp, 1), "app_phases_per_min": round(ap, 1),
            "phases_app_vs_headless": round(ap / hp, 4) if hp else None,
            "ratio_per_pair": {"mean": round(statistics.mean(ratios), 4),
                               "stdev": round(statistics.stdev(ratios), 4) if len(ratios) > 1 else None}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer frames, shorter runs")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "tui_bench.json"))
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--only-throughput", action="store_true", help="keep the other parts of --out as they are")
    ap.add_argument("--only-fps", action="store_true", help="rerun the fps part only; keep the rest of --out")
    args = ap.parse_args()
    frames = 20 if args.quick else 60
    res: dict = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
                 "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                 "textual": __import__("textual").__version__}
    if args.only_fps and Path(args.out).exists():
        res = json.loads(Path(args.out).read_text())
        res["fps_when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        res["fps_load_avg"] = [round(x, 2) for x in os.getloadavg()]
        res["fps_under_load"] = asyncio.run(_fps(10.0, 6000.0))
        res["fps_under_load_max"] = asyncio.run(_fps(10.0, 6000.0, app_fps=30.0))
        print(json.dumps([res["fps_under_load"], res["fps_under_load_max"]], indent=1))
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
        return
    if args.only_throughput and Path(args.out).exists():
        old = json.loads(Path(args.out).read_text())
        res["frame"], res["fps_under_load"] = old["frame"], old["fps_under_load"]
        res["fps_under_load_max"] = old.get("fps_under_load_max")
        res["frame_fps_when"] = old.get("frame_fps_when", old.get("when"))
    else:
        res["frame"] = [asyncio.run(_frame((200, 60), frames)), asyncio.run(_frame((240, 160), frames))]
        print(json.dumps(res["frame"], indent=1), flush=True)
        gc.collect()  # the frame part's big snapshots must not weigh on the next part's GC
        res["fps_under_load"] = asyncio.run(_fps(5.0 if args.quick else 10.0, 6000.0))
        res["fps_under_load_max"] = asyncio.run(_fps(5.0 if args.quick else 10.0, 6000.0, app_fps=30.0))
        print(json.dumps([res["fps_under_load"], res["fps_under_load_max"]], indent=1), flush=True)
    if not args.skip_throughput:
        res["throughput"] = _throughput(12.0 if args.quick else 30.0, 1 if args.quick else 4, 0.5)
        print(json.dumps(res["throughput"], indent=1), flush=True)
    res["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
