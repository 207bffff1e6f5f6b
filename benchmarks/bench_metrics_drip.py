"""The metrics endpoint against clients that drip their request (issue 44's adversarial finding):
N connections each send `GET /metrics HTTP/1.1` and then one header byte every D seconds, never
finishing; meanwhile a scraper asks /metrics once a second (3 s timeout each) for S seconds.
Counts the scrapes answered, and how long the drippers were kept.

    python benchmarks/bench_metrics_drip.py --drippers 40 --every 3 --seconds 30 --out benchmarks/results/issue44/metrics_drip.json

Native: a real MetricsExporter (prover/observe/metrics_http.py) on loopback; no prover runs.
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path

import harness  # noqa: F401  (the repository root on sys.path)

from prover.observe.metrics import MetricsExporter


def drip(port: int, every: float, stop: threading.Event, kept: list[float]) -> None:
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            while not stop.wait(every):
                s.sendall(b"X")
    except OSError:
        pass
    kept.append(time.monotonic() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drippers", type=int, default=40)
    ap.add_argument("--every", type=float, default=3.0)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    exp = MetricsExporter()
    port = exp.start(0, "127.0.0.1")
    stop, kept = threading.Event(), []
    threads = [threading.Thread(target=drip, args=(port, a.every, stop, kept), daemon=True) for _ in range(a.drippers)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    asked = answered = 0
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        asked += 1
        t1 = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=3) as r:
                answered += r.status == 200 and b"c2tui_" in r.read()
        except OSError:
            pass
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t1)))
    dropped_during = len(kept)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    exp.stop()
    doc = {"drippers": a.drippers, "every_s": a.every, "seconds": a.seconds, "scrapes_asked": asked,
           "scrapes_answered": answered, "drippers_dropped_by_the_server": dropped_during,
           "longest_kept_s_of_those_dropped": round(max(kept[:dropped_during]), 1) if dropped_during else None,
           "argv": sys.argv[1:]}
    print(json.dumps(doc))
    if a.out:
        Path(a.out).write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
