"""How long `c2tui serve` takes to stop with a tab open, per stop signal, and whether the tab's
prover is gone after (issue 44: the socket waited for its 15 s heartbeat; SIGHUP left it running).

    python benchmarks/bench_serve_stop.py --out benchmarks/results/issue44/serve_stop_after.json

Native, on loopback: a real `serve --backend sim`, one websocket tab read until the dashboard
draws (its prover is up), then the signal; seconds from the signal to serve's exit.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (the repository root on sys.path)
from aiohttp import ClientSession, WSServerHandshakeError

ROOT = Path(__file__).resolve().parents[1]


def descendants(pid: int) -> set[int]:
    """Live descendants of pid, from /proc (zombies count as gone)."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parent[int(d)] = int(fields[1])
    out, todo = set(), [pid]
    while todo:
        me = todo.pop()
        kids = [c for c, p in parent.items() if p == me]
        out.update(kids)
        todo += kids
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def one(sig: int) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = subprocess.Popen([sys.executable, "-m", "c2tui", "serve", "--backend", "sim", "--constraints-log2", "8",
                              "--time-scale", "0.05", "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)

    async def tab() -> dict:
        url = f"http://127.0.0.1:{port}"
        async with ClientSession() as session:
            for _ in range(150):
                try:
                    ws = await session.ws_connect(f"{url}/ws?width=80&height=24", headers={"Origin": url})
                    break
                except (OSError, WSServerHandshakeError):
                    await asyncio.sleep(0.2)
            got = 0
            while got < 2000:
                msg = await asyncio.wait_for(ws.receive(), 60)
                got += len(msg.data) if isinstance(msg.data, (bytes, str)) else 0
            provers = descendants(serve.pid)
            t0 = time.monotonic()
            serve.send_signal(sig)
            try:
                rc = await asyncio.to_thread(serve.wait, 60)
            except subprocess.TimeoutExpired:
                rc = None
            secs = time.monotonic() - t0
            await asyncio.sleep(1.0)
            return {"seconds_to_exit": round(secs, 2), "rc": rc, "provers": len(provers),
                    "provers_alive_1s_after": sum(alive(p) for p in provers)}

    try:
        return asyncio.run(tab())
    finally:
        if serve.poll() is None:
            serve.kill()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    a = ap.parse_args()
    doc = {signal.Signals(s).name: one(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    print(json.dumps(doc))
    if a.out:
        Path(a.out).write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
