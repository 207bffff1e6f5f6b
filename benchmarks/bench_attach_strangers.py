"""Legitimate attaches while idle strangers hold the places before hello (issue 35).

    python3 benchmarks/bench_attach_strangers.py [--strangers 16] [--attaches 60] [--out FILE]

An AttachServer (sim engine, modelled phases only) on a Unix socket; `--strangers`
connections that never say hello are opened and, whenever one is closed, opened again (as a
stranger would); then `--attaches` clients, one after another, each connect, say hello and
count what comes back (welcome or refused). Prints and writes the counts.
"""
from __future__ import annotations

import argparse
import json
import socket
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import harness  # noqa: E402,F401  (the repository root on sys.path)

from fuzz_cases import first_line  # noqa: E402
from prover.attach import server as S  # noqa: E402
from prover.attach.wire import PROTOCOL_VERSION  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.pipeline.nullphases import NullPhases  # noqa: E402


def conn(path: str) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--strangers", type=int, default=16)
    ap.add_argument("--attaches", type=int, default=60)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    eng = Engine(load_config(None, backend="sim", profile="tiny", partitions=2), phases=NullPhases())
    with tempfile.TemporaryDirectory() as d:
        srv = S.AttachServer(eng, str(Path(d) / "a.sock")).start()
        strangers = [conn(str(srv.address.path)) for _ in range(args.strangers)]
        time.sleep(0.3)
        kinds: dict[str, int] = {}
        t0 = time.monotonic()
        for i in range(args.attaches):
            s = conn(str(srv.address.path))
            try:
                s.sendall(json.dumps({"kind": "hello", "protocol": PROTOCOL_VERSION, "client": f"ok{i}"}).encode() + b"\n")
            except OSError:  # refused and closed before the hello went out: its refusal is still there to read
                pass
            try:
                k = first_line(s)["kind"]
            except OSError:
                k = "reset"
            kinds[k] = kinds.get(k, 0) + 1
            s.close()
            strangers.append(conn(str(srv.address.path)))  # the strangers keep coming back
        wall = time.monotonic() - t0
        srv.close()
        for s in strangers:
            s.close()
    doc = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": harness.machine(),
           "label": args.label, "strangers": args.strangers, "attaches": args.attaches, "outcomes": kinds,
           "wall_s": round(wall, 2)}
    print(json.dumps(doc))
    if args.out:
        Path(args.out).write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
