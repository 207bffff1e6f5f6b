"""Prover throughput with two attached clients vs none, side by side (issue 13; aim: within 3%).

    python3 benchmarks/bench_attach.py [--seconds 30] [--pairs 4] [--quick]

Both sides: the real Engine (sim backend, real Groth16 proofs at 2^10, 2 GPUs x 3 workers,
time scale 0.5, mem_sync stream) with a RecordingWriter sink, as `c2tui record` runs it.
Attached side: an AttachServer on a Unix socket and two `c2tui attach --raw` client
processes reading every event (history, then live). Runs alternate in ABBA order so a drift
in the machine's load favours neither side; throughput is counted in the steady window.
Writes benchmarks/results/attach_bench.json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path: benchmarks/harness.py)

from prover.attach.server import AttachServer  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter  # noqa: E402

CLIENTS = 2


def _engine(ts: float, null: bool = False) -> Engine:
    cfg = load_config(backend="sim", gpus=2, workers_per_gpu=3, time_scale=ts, mem_sync="stream", seed=7)
    if null:  # modelled phase times only: throughput set by the engine's timing, not by CPU left for proofs
        from prover.pipeline.nullphases import NullPhases

        return Engine(cfg, phases=NullPhases())
    return Engine(cfg)


def _counter(done: list, phases: list):
    def sink(e) -> None:
        if e.kind == "partition_done" and e.ok:
            done.append(e.t)
        elif e.kind == "phase_end" and e.ok:
            phases.append(e.t)
    return sink


def _rate(ts: list, warm: float, end: float) -> float:
    return 60.0 * sum(1 for t in ts if warm <= t <= end) / (end - warm)


def _clients(sock: Path, tmp: Path) -> list:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = []
    for i in range(CLIENTS):
        out = open(tmp / f"client{i}.jsonl", "wb")
        procs.append((subprocess.Popen([sys.executable, "-m", "c2tui", "attach", str(sock), "--raw", "--name", f"bench{i}"],
                                       cwd=ROOT, env=env, stdout=out), out))
    return procs


def run_once(seconds: float, ts: float, warm: float, tmp: Path, attached: bool, null: bool = False) -> dict:
    eng = _engine(ts, null)
    done: list = []
    phases: list = []
    w = RecordingWriter(tmp / "run.jsonl", RecordingHeader(), force=True)  # one file reused run after run
    eng.add_sink(w.write)
    eng.add_sink(_counter(done, phases))
    server, procs, lines = None, [], []
    if attached:
        sock = tmp / "bench.sock"
        server = AttachServer(eng, str(sock)).start()
        procs = _clients(sock, tmp)
        end = time.monotonic() + 20
        while len(server.clients) < CLIENTS and time.monotonic() < end:
            time.sleep(0.05)
        assert len(server.clients) == CLIENTS, "clients did not attach"
    c0 = time.process_time()
    eng.start()
    time.sleep(seconds)
    cpu = time.process_time() - c0
    row = {"per_min": _rate(done, warm, seconds), "phases_per_min": _rate(phases, warm, seconds), "cpu_s": cpu}
    if server is not None:
        row["clients_at_end"] = len(server.clients)
        row["events_served"] = server.total
        row["dropped"] = server.dropped[:]
    eng.stop(timeout=30)
    w.close()
    if server is not None:
        server.close("bench over")
        for p, out in procs:
            p.wait(timeout=20)
            out.close()
        for i in range(CLIENTS):
            lines.append(sum(1 for _ in open(tmp / f"client{i}.jsonl", "rb")))
        row["client_lines"] = lines
        row["recorded_events"] = w.written
    return row


class _Bus:
    """What AttachServer needs of an engine: sinks and a controller (unused here)."""

    controller = None

    def __init__(self) -> None:
        self.sinks: list = []

    def add_sink(self, fn) -> None:
        self.sinks.append(fn)

    def remove_sink(self, fn) -> None:
        self.sinks.remove(fn)


def cpu_per_event(n: int, tmp: Path) -> dict:
    """The attach server's CPU cost in the prover's process, per event, with two clients
    reading: sink + serialise + fan-out + send (load-independent, unlike throughput)."""
    from benchmarks.bench_engine import mixed_events

    evs = mixed_events(n)
    bus = _Bus()
    sock = tmp / "cpu.sock"
    server = AttachServer(bus, str(sock)).start()
    procs = _clients(sock, tmp)
    end = time.monotonic() + 20
    while len(server.clients) < CLIENTS and time.monotonic() < end:
        time.sleep(0.05)
    sink = bus.sinks[0]
    t0, c0 = time.perf_counter(), time.process_time()
    for e in evs:
        sink(e)
    s_sink = time.perf_counter() - t0
    def lines(i: int) -> int:
        with open(tmp / f"client{i}.jsonl", "rb") as f:
            return f.read().count(b"\n")

    deadline = time.monotonic() + 120
    while min(lines(i) for i in range(CLIENTS)) < n and time.monotonic() < deadline:
        time.sleep(0.2)  # every line sent and read by both clients
    c1, t1 = time.process_time(), time.perf_counter()
    server.close("done")
    for p, out in procs:
        p.wait(timeout=60)
        out.close()
    got = [lines(i) for i in range(CLIENTS)]
    return {"events": n, "sink_call_us": round(1e6 * s_sink / n, 3),
            "server_cpu_us_per_event": round(1e6 * (c1 - c0) / n, 2), "wall_s": round(t1 - t0, 2),
            "client_lines": got, "dropped": server.dropped}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--time-scale", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true", help="one pair of 12 s runs")
    ap.add_argument("--null-phases", action="store_true", help="modelled phases only (no proof CPU): timing, not CPU, sets throughput")
    ap.add_argument("--cpu-events", type=int, default=50_000, help="events for the CPU-per-event part (0: skip)")
    ap.add_argument("--only-cpu", action="store_true", help="just the CPU-per-event part, merged into --out")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "attach_bench.json"))
    args = ap.parse_args()
    if args.only_cpu:
        with tempfile.TemporaryDirectory() as d:
            cpu = cpu_per_event(args.cpu_events, Path(d))
        doc = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
        doc["cpu_per_event"] = cpu
        Path(args.out).write_text(json.dumps(doc, indent=1))
        print(cpu)
        return
    seconds, pairs = (12.0, 1) if args.quick else (args.seconds, args.pairs)
    warm = min(5.0, seconds / 4)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for r in range(pairs):
            order = (False, True) if r % 2 == 0 else (True, False)
            res = {a: run_once(seconds, args.time_scale, warm, tmp, a, args.null_phases) for a in order}
            none, two = res[False], res[True]
            rows.append({"pair": r, "none_per_min": round(none["per_min"], 2), "two_per_min": round(two["per_min"], 2),
                         "none_phases_per_min": round(none["phases_per_min"], 1),
                         "two_phases_per_min": round(two["phases_per_min"], 1),
                         "none_cpu_s": round(none["cpu_s"], 1), "two_cpu_s": round(two["cpu_s"], 1),
                         "events_served": two["events_served"], "client_lines": two["client_lines"],
                         "recorded_events": two["recorded_events"], "clients_at_end": two["clients_at_end"],
                         "dropped": two["dropped"], "load_avg_1m": round(os.getloadavg()[0], 2)})
            print(rows[-1], flush=True)
        cpu = cpu_per_event(args.cpu_events, tmp) if args.cpu_events else None
        print(cpu, flush=True)
    n = statistics.mean(r["none_per_min"] for r in rows)
    t = statistics.mean(r["two_per_min"] for r in rows)
    npm = statistics.mean(r["none_phases_per_min"] for r in rows)
    tpm = statistics.mean(r["two_phases_per_min"] for r in rows)
    doc = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": harness.machine(),
           "config": f"sim (modelled timings, {'no proofs (NullPhases)' if args.null_phases else 'real 2^10 proofs'}), 2 GPUs x 3 workers, time_scale {args.time_scale}, "
                     f"mem_sync stream, RecordingWriter on both sides; {seconds:.0f} s runs, steady window "
                     f"[{warm:.0f} s, {seconds:.0f} s], {pairs} pair(s) in ABBA order; attached = AttachServer on a "
                     f"Unix socket + {CLIENTS} `c2tui attach --raw` client processes",
           "runs": rows, "none_per_min": round(n, 2), "two_per_min": round(t, 2),
           "two_vs_none": round(t / n, 4) if n else None,
           "none_phases_per_min": round(npm, 1), "two_phases_per_min": round(tpm, 1),
           "phases_two_vs_none": round(tpm / npm, 4) if npm else None,
           "ratio_per_pair": [round(r["two_per_min"] / r["none_per_min"], 4) for r in rows if r["none_per_min"]],
           "cpu_per_event": cpu}
    Path(args.out).write_text(json.dumps(doc, indent=1))
    print(json.dumps({k: v for k, v in doc.items() if k != "runs"}, indent=1))


if __name__ == "__main__":
    main()
