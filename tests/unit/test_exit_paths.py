"""Every way out is one line and a documented status (docs/exit-codes.md), the output
stream included: stdout full, closed or a pipe nobody reads is 3 with one line, not a
traceback at exit nor click's / rich's silent 1 (the code for "a proof failed")."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REC = str(ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl")
C2TUI = [sys.executable, "-m", "c2tui"]


def _one_line(err: bytes, needle: str) -> None:
    text = err.decode()
    assert "Traceback" not in text and needle in text, text
    assert len([ln for ln in text.splitlines() if ln.startswith("error:")]) == 1, text


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("args", [["summary", REC], ["summary", "--json", REC], ["config", "--show"]])
def test_full_stdout(args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        p = subprocess.run([*C2TUI, *args], stdout=full, stderr=subprocess.PIPE, cwd=ROOT, timeout=60)
    assert p.returncode == 3
    _one_line(p.stderr, "No space left on device")


def test_closed_stdout_and_a_pipe_nobody_reads() -> None:
    p = subprocess.run(["sh", "-c", f"exec {sys.executable} -m c2tui config --show >&-"], stderr=subprocess.PIPE,
                       cwd=ROOT, timeout=60)
    assert p.returncode == 3
    _one_line(p.stderr, "stdout is closed")
    proc = subprocess.Popen([*C2TUI, "summary", REC], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()  # `| head -0`: the reader is gone before the first write
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3
    _one_line(err, "Broken pipe")


def test_a_busy_metrics_port_is_a_bad_option(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from c2tui.commands import main

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        r = CliRunner().invoke(main, ["record", "--out", str(tmp_path / "r.jsonl"), "--backend", "sim", "--sectors", "1",
                                      "--metrics-port", str(busy.getsockname()[1])])
    finally:
        busy.close()
    assert r.exit_code == 2 and "--metrics-port" in r.output and not (tmp_path / "r.jsonl").exists(), r.output
