"""A real sim prover listening on a Unix socket (`c2tui record --listen`), for tests that attach
to one: started, and waited for until its socket exists (or it exits, or 120 s pass)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start_listening(d: Path, duration_s: int) -> tuple[Path, subprocess.Popen]:
    """A sim 2^8 prover recording into `d` and listening on `d`/p.sock for `duration_s`; its
    socket and process (the caller ends it). Asserts it is still running once the socket is there."""
    sock = d / "p.sock"
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--constraints-log2", "8",
                             "--duration", str(duration_s), "-q", "-o", str(d / "r.jsonl"), "--listen", str(sock)],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 120
    while not sock.exists() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert proc.poll() is None
    return sock, proc
