"""Issue 16: work is queued lazily (any --sectors starts at once, the file stays small), and
SIGTERM / SIGINT stop a run within STOP_BOUND_S of the current phase, exiting non-zero (3)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prover.record import read_recording
from prover.fold.apply import fold

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05"]
STOP_BOUND_S = 2.0  # after the phase in flight ends (sim phases here: ~0.1 s at this time scale)
SLACK_S = 3.0  # interpreter exit, writer close and the summary read-back on a loaded 2-core machine


def _start(out: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--out", str(out), *FAST, "-q", *args],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def _wait_for(out: Path, needle: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if out.exists() and needle in out.read_text(errors="replace"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_huge_sector_count_starts_at_once_and_stops_on_a_signal(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "huge.jsonl"
    proc = _start(out, "--sectors", "100000000")
    try:
        assert _wait_for(out, '"partition_done"', 30), "no partition finished: the queue is not lazy"
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3 and b"interrupted" in err, err.decode()
    assert took < STOP_BOUND_S + SLACK_S, f"stopping took {took:.1f}s"
    rec = read_recording(out)
    assert rec.error is None
    st = fold(rec.events)
    assert st.ended and st.end_reason == "interrupted"
    queued = sum(1 for e in rec.events if e.kind == "partition_queued")
    assert queued <= 10 * (st.partitions_done + 3 * 10), queued  # a bounded look-ahead, not 10^9 partitions
