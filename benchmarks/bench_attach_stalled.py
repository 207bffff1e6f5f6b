"""The prover's rate and the server's memory with attached clients that never read (issue 35).

    python3 benchmarks/bench_attach_stalled.py [--seconds 60] [--clients 8] [--out FILE]

One side with no client, one with N clients that say hello (half of them read-only) and then
never read a byte, in that order (then the reverse, with --pairs 2). Both sides: the real
Engine (sim backend, real Groth16 proofs at 2^10, 2 GPUs x 3 workers, time scale 0.5,
mem_sync stream), an AttachServer on a Unix socket. Measured: verified/min over the steady
window (from the first verified proof on: start-up is not measured), the process's peak RSS (sampled every 0.5 s), clients dropped and why, and the
bytes queued for clients at the end. Writes benchmarks/results/attach_stalled.json.
"""
from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path)

from prover.attach.server import AttachServer  # noqa: E402
from prover.attach.wire import PROTOCOL_VERSION  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def stalled_client(path: str, i: int) -> socket.socket:
    """Connects, says hello, and never reads: its receive buffer as small as the kernel allows."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(path)
    hello = {"kind": "hello", "protocol": PROTOCOL_VERSION, "client": f"stalled{i}", "readonly": i % 2 == 1}
    s.sendall(json.dumps(hello).encode() + b"\n")
    return s


FLOOD = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
s.sendall(json.dumps({"kind": "hello", "protocol": int(sys.argv[2]), "client": sys.argv[3],
                      "readonly": sys.argv[4] == "1"}).encode() + b"\n")
line = json.dumps({"kind": "control", "id": 1, "spec": "mem_sync=stream"}).encode() + b"\n"
try:
    while True:  # controls as fast as the socket takes them; never a byte read
        s.sendall(line * 200)
except OSError:
    pass
"""


def flood_client(path: str, i: int) -> subprocess.Popen:
    """A client process that sends controls without end and never reads a reply."""
    return subprocess.Popen([sys.executable, "-c", FLOOD, path, str(PROTOCOL_VERSION), f"flood{i}", str(i % 2)])


def run_once(seconds: float, clients: int, tmp: Path, ts: float, kind: str = "stalled") -> dict:
    cfg = load_config(backend="sim", gpus=2, workers_per_gpu=3, time_scale=ts, mem_sync="stream", seed=7)
    eng = Engine(cfg)
    done: list[float] = []
    eng.add_sink(lambda e: done.append(e.t) if e.kind == "partition_done" and e.ok else None)
    sock = tmp / f"stalled{clients}.sock"
    server = AttachServer(eng, str(sock)).start()
    eng.start()
    end = time.monotonic() + 600
    while not done and time.monotonic() < end:  # start-up (a numba compile) is not what is measured
        time.sleep(0.2)
    t0 = max(done) if done else 0.0
    socks = [stalled_client(str(sock), i) if kind == "stalled" else flood_client(str(sock), i) for i in range(clients)]
    peak, stop = [rss_mb()], threading.Event()

    def sample() -> None:
        while not stop.wait(0.5):
            peak.append(rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    time.sleep(seconds)
    stop.set()
    sampler.join()
    queued = sum(c["queued"] for c in server.client_info())
    warm = min(10.0, seconds / 4)
    row = {"clients": clients, "kind": kind, "per_min": round(60.0 * sum(1 for t in done if t0 + warm <= t <= t0 + seconds) / (seconds - warm), 1),
           "peak_rss_mb": round(max(peak), 1), "start_rss_mb": round(peak[0], 1),
           "attached_at_end": len(server.clients), "queued_bytes_at_end": queued,
           "dropped": [r for _, r in server.dropped][:clients], "events": server.total}
    eng.stop(timeout=30)
    server.close("bench over")
    for s in socks:
        if isinstance(s, socket.socket):
            s.close()
        else:
            s.kill()
            s.wait()
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--kind", nargs="+", default=["stalled", "flood"],
                    help="stalled: hello, then never a byte; flood: controls without end, never a reply read")
    ap.add_argument("--time-scale", type=float, default=0.5)
    ap.add_argument("--label", default="", help="what code this is (e.g. before / after)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "attach_stalled.json"))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for r in range(args.pairs):
            sides = [(0, "none")] + [(args.clients, k) for k in args.kind]
            for n, kind in (sides if r % 2 == 0 else sides[::-1]):
                rows.append(run_once(args.seconds, n, Path(d), args.time_scale, kind))
                print(rows[-1], flush=True)
    doc = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": harness.machine(),
           "label": args.label,
           "config": f"sim (modelled timings, real 2^10 proofs), 2 GPUs x 3 workers, time_scale {args.time_scale}, "
                     f"mem_sync stream; {args.seconds:.0f} s runs; AttachServer on a Unix socket with 0 or "
                     f"{args.clients} clients (every other one read-only) that say hello and then never read: "
                     f"stalled (send nothing more) or flood (controls without end, in a process each)",
           "runs": rows}
    Path(args.out).write_text(json.dumps(doc, indent=1))
    print(f"{'clients':>8} {'kind':>8} {'verified/min':>13} {'peak RSS MB':>12} {'attached at end':>16}")
    for r in rows:
        print(f"{r['clients']:>8} {r['kind']:>8} {r['per_min']:>13} {r['peak_rss_mb']:>12} {r['attached_at_end']:>16}")


if __name__ == "__main__":
    main()
