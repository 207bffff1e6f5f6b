"""`record --cluster` on SIGINT, SIGTERM and SIGHUP: exit 3 with the recording closed whole
(`run_ended`, reason interrupted), as every command (docs/exit-codes.md). Ray's head node and
ray.init set their own SIGTERM handler in the driver (kill Ray's processes, sys.exit(1)): a
SIGTERM while the cluster started, or after it, ended the command with 1 and a Ray log line.
Each test waits for what it needs (a Ray process of the run, a finished partition), never a
fixed delay. The child runs in its own session, so whatever Ray leaves is ours to end."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from prover.record import read_recording  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
FLEET = ["--cluster", "local:2", "--backend", "sim", "--gpus", "1", "--constraints-log2", "8", "--time-scale", "0.2",
         "--duration", "300", "-q"]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def _children(pid: int) -> list[str]:
    """The names of `pid`'s child processes (from /proc)."""
    names = []
    for d in Path("/proc").iterdir():
        try:
            stat = (d / "stat").read_text()
        except (OSError, ValueError):
            continue
        comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if d.name.isdigit() and int(rest[1]) == pid:
            names.append(comm)
    return names


def _until(ready, proc: subprocess.Popen, what: str, seconds: float = 150) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"record ended before {what}"
        if ready():
            return
        time.sleep(0.05)
    raise AssertionError(f"no {what} in {seconds} s")


def _record(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "c2tui", "record", *FLEET, "--out", str(out)], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True)


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # its session's stragglers (Ray's), none of anyone else's
    except ProcessLookupError:
        pass


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_mid_run_exits_3_with_the_recording_whole(tmp_path, sig):
    out = tmp_path / "fleet.jsonl"
    proc = _record(out)
    try:
        _until(lambda: out.exists() and '"partition_done"' in out.read_text(errors="replace"), proc, "finished partition")
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=120)
    finally:
        _end(proc)
    assert proc.returncode == 3, stderr[-2000:]
    assert "Traceback" not in stderr and "SIGTERM" not in stderr, stderr[-2000:]
    rec = read_recording(out)
    assert rec.error is None and rec.events[-1].kind == "run_ended" and rec.events[-1].reason == "interrupted"


def test_sigterm_while_the_cluster_starts_exits_3_and_takes_it_down(tmp_path):
    """Ray's gcs_server up (the head node's SIGTERM handler was set by then): 3, no Ray log
    line, no recording begun (the file opens once the cluster is up), and the cluster's server
    and raylets gone with the command."""
    out = tmp_path / "fleet.jsonl"
    proc = _record(out)
    try:
        _until(lambda: "gcs_server" in _children(proc.pid), proc, "Ray gcs_server")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
        left = [p for p in _session(proc.pid) if p in ("gcs_server", "raylet")]
    finally:
        _end(proc)
    assert proc.returncode == 3, stderr[-2000:]
    assert "interrupted" in stderr and "SIGTERM" not in stderr and "Traceback" not in stderr, stderr[-2000:]
    assert not out.exists() or read_recording(out).events[-1].kind == "run_ended"
    assert left == []


def _session(sid: int) -> list[str]:
    """The names of the processes still in session `sid` (the child's own)."""
    names = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if os.getsid(int(d.name)) == sid:
                names.append((d / "comm").read_text().strip())
        except (OSError, ProcessLookupError):
            continue
    return names
