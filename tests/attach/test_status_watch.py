"""Issue 44: `status --watch` says when the prover is gone (a killed prover ended the watch with
0 and nothing said) and when its snapshot is stale (a SIGSTOPped prover was shown healthy for
ever, the same snapshot 60 times). Real sim provers (slow)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from c2tui.commands.status import STALE_MIN_S
from c2tui.cli.exits import GONE
from tests.helpers.listening import start_listening

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
C2TUI = [sys.executable, "-m", "c2tui"]


@pytest.fixture
def prover(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen]]:
    sock, proc = start_listening(tmp_path, 300)
    yield sock, proc
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait(30)


class Lines:
    """A process's stdout, line by line, as it comes."""

    def __init__(self, p: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._t = threading.Thread(target=self._read, args=(p,), daemon=True)
        self._t.start()

    def _read(self, p: subprocess.Popen) -> None:
        assert p.stdout is not None
        for line in p.stdout:
            self.lines.append(line)

    def wait_for(self, word: str, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(word in x for x in self.lines):
                return True
            time.sleep(0.05)
        return False


def _watch(sock: Path) -> tuple[subprocess.Popen, Lines]:
    p = subprocess.Popen([*C2TUI, "status", str(sock), "--watch", "0.5"], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return p, Lines(p)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_killed_prover_ends_the_watch_with_its_own_status_and_a_line(prover: tuple[Path, subprocess.Popen]) -> None:
    sock, proc = prover
    p, out = _watch(sock)
    assert out.wait_for("knobs:", 60)
    proc.kill()
    proc.wait(30)
    assert p.wait(30) == GONE
    err = p.stderr.read() if p.stderr else ""
    assert "the prover is gone" in err and "Traceback" not in err, err


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_stopped_prover_is_said_stale_and_a_run_that_ends_is_not_gone(prover: tuple[Path, subprocess.Popen]) -> None:
    sock, proc = prover
    p, out = _watch(sock)
    assert out.wait_for("knobs:", 60)
    assert not any("STALE" in x for x in out.lines)
    os.kill(proc.pid, signal.SIGSTOP)
    assert out.wait_for("STALE: no event from the prover", STALE_MIN_S + 20)
    os.kill(proc.pid, signal.SIGCONT)
    proc.send_signal(signal.SIGTERM)  # the run ends: RunEnded, then the stream closes
    assert proc.wait(60) == 3
    assert p.wait(30) == 0, p.stderr.read() if p.stderr else ""
