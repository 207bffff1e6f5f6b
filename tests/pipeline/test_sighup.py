"""SIGHUP (the terminal closed, or `kill -HUP`) ends `record` and `run` as SIGTERM and Ctrl-C do
(issue 33): the summary printed, `run_ended` recorded, exit 3. Before, `record` died at once with
no summary and no `run_ended`. Each test waits for the event it needs (a finished partition in
the recording), never a fixed delay."""
from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm-256color", COLUMNS="160", LINES="48")
FAST = ["--backend", "sim", "--profile", "tiny", "--constraints-log2", "8", "--time-scale", "1"]


def _until_a_partition_is_done(out: Path, proc: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it was signalled"
        if out.exists() and '"partition_done"' in out.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError("no partition finished")


def _ended_cleanly(out: Path, reason: str = "interrupted") -> None:
    rec = read_recording(out)
    assert rec.error is None
    assert rec.events[-1].kind == "run_ended" and rec.events[-1].reason == reason


class _Pty:
    """A terminal for a child: its output drained (as a terminal would) until closed."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        self.out = bytearray()
        self._t = threading.Thread(target=self._drain, daemon=True)
        self._t.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.out += chunk

    def hang_up(self) -> None:
        os.close(self.master)  # the terminal window closed: the child's writes fail from now on


@pytest.mark.timeout(120)
def test_sighup_ends_record_with_its_summary_and_run_ended(tmp_path):
    out = tmp_path / "r.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--out", str(out), *FAST], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        _until_a_partition_is_done(out, proc)
        proc.send_signal(signal.SIGHUP)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, stderr.decode()
    assert b"interrupted" in stderr and f"recording: {out}".encode() in stdout  # the summary, then where it is
    _ended_cleanly(out)


@pytest.mark.timeout(120)
def test_record_whose_terminal_closed_still_ends_cleanly(tmp_path):
    """The real hangup: the terminal is gone, so the summary has nowhere to go; the run still
    stops cleanly, records run_ended and exits 3, with no traceback."""
    out, term = tmp_path / "r.jsonl", _Pty()
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--out", str(out), *FAST], cwd=ROOT, env=ENV,
                            stdin=term.slave, stdout=term.slave, stderr=term.slave, start_new_session=True)
    os.close(term.slave)
    try:
        _until_a_partition_is_done(out, proc)
        term.hang_up()
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(timeout=60) == 3
    finally:
        if proc.poll() is None:
            proc.kill()
    _ended_cleanly(out)


@pytest.mark.timeout(150)
def test_sighup_ends_the_dashboard_session_with_its_summary_and_run_ended(tmp_path):
    out, term = tmp_path / "s.jsonl", _Pty()
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "run", "--record", str(out), *FAST], cwd=ROOT, env=ENV,
                            stdin=term.slave, stdout=term.slave, stderr=term.slave, start_new_session=True)
    os.close(term.slave)
    try:
        _until_a_partition_is_done(out, proc)
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(timeout=60) == 3, term.out[-2000:].decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 5
    while f"recording: {out}".encode() not in term.out and time.monotonic() < deadline:
        time.sleep(0.05)  # the last output still on its way through the terminal
    assert f"recording: {out}".encode() in term.out  # the summary was printed after the dashboard closed
    _ended_cleanly(out, "stopped")  # the dashboard's quit now (as its Ctrl-C): in-flight work abandoned


def test_an_interrupt_whose_terminal_is_gone_still_stops_the_run_as_interrupted(monkeypatch):
    """The race the pty test above can lose: the progress line's last redraw hits the closed
    terminal (EIO) before the engine is told why it stops."""
    from c2tui.commands import record

    class Live:
        def stop(self) -> None:
            raise OSError(5, "Input/output error")

    class Engine:
        reason = None

        def stop(self, timeout: float, reason: str) -> bool:
            self.reason = reason
            return True

    dropped: list[bool] = []
    monkeypatch.setattr(record, "drop_output", lambda: dropped.append(True))
    eng = Engine()
    record._stopping(Live(), eng)
    assert eng.reason == "interrupted" and dropped == [True]
