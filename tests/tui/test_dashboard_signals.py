"""Issue 44: every dashboard (`replay`, `attach`, `compare --tui`) on SIGINT, SIGTERM or SIGHUP
quits as Ctrl-C does: the terminal put back (the alternate screen left, mouse reporting off)
and exit 3. Before, SIGTERM and SIGHUP killed them in the alternate screen with the mouse
still reported, and an external SIGINT exited 0."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.helpers.listening import start_listening
from tests.helpers.pty_run import run_in_pty

ROOT = Path(__file__).resolve().parents[2]
REC = ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl"
ENV = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm-256color")
C2TUI = [sys.executable, "-m", "c2tui"]
LEAVE_ALT, MOUSE_OFF = b"\x1b[?1049l", b"\x1b[?1000l"
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _quits_as_ctrl_c(argv: list[str], sig: int, home: Path) -> None:
    screen = bytearray()

    def drawn() -> bool:  # the first frame is on screen (the footer's keys)
        return b"\x1b[?1049h" in screen and b"theme" in screen

    r = run_in_pty(argv, [(drawn, sig)], deadline=90, size=(120, 40), env={**ENV, "HOME": str(home)}, screen=screen)
    assert r.code == 3, (r.code, bytes(r.output[-600:]))
    tail = r.output[r.output.rindex(b"\x1b[?1049h"):]
    assert LEAVE_ALT in tail and MOUSE_OFF in tail, bytes(tail[-400:])
    assert b"Traceback" not in r.output


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("cmd", ["replay", "compare"])
def test_a_replay_dashboard_quits_on_a_stop_signal(tmp_path: Path, cmd: str, sig: int) -> None:
    argv = [*C2TUI, "replay", str(REC)] if cmd == "replay" else [*C2TUI, "compare", str(REC), str(REC), "--tui"]
    _quits_as_ctrl_c(argv, sig, tmp_path)


@pytest.fixture(scope="module")
def listening(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    d = tmp_path_factory.mktemp("sig")
    sock, proc = start_listening(d, 600)
    yield sock
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_an_attached_dashboard_quits_on_a_stop_signal(tmp_path: Path, listening: Path, sig: int) -> None:
    _quits_as_ctrl_c([*C2TUI, "attach", str(listening)], sig, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("sigs", [(signal.SIGTERM,), (signal.SIGHUP,), (signal.SIGTERM, signal.SIGHUP),
                                  (signal.SIGINT, signal.SIGINT)], ids=lambda s: "+".join(signal.Signals(x).name for x in s))
@pytest.mark.parametrize("cmd", ["attach --raw", "status --watch 0.5"])
def test_a_command_without_a_screen_exits_3_on_a_stop_signal(listening: Path, cmd: str, sigs: tuple[int, ...]) -> None:
    """What installs no handler of its own gets the CLI's: 3 and one line, not death by signal;
    a second signal 1 ms later is only noted (SIGTERM then SIGHUP once cut a lock's release in
    status --watch: a traceback, the fuzz's signals class found it)."""
    word, *opts = cmd.split()
    p = subprocess.Popen([*C2TUI, word, str(listening), *opts], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    assert p.stdout is not None
    p.stdout.readline()  # its first line: it runs
    for sig in sigs:
        p.send_signal(sig)
        time.sleep(0.001)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3, (p.returncode, err[-400:])
    assert b"Traceback" not in err


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_record_on_term_then_hup_1_ms_apart_ends_cleanly(tmp_path: Path) -> None:
    """The fuzz's signals class: record's second stop signal raised inside the first one's lock
    release ("RuntimeError: release unlocked lock", exit 1)."""
    from prover.record import read_recording

    out = tmp_path / "r.jsonl"
    p = subprocess.Popen([*C2TUI, "record", "--backend", "sim", "--constraints-log2", "8", "--duration", "120", "-q",
                          "-o", str(out)], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    end = time.monotonic() + 90
    while time.monotonic() < end and not (out.exists() and b'"lock_acquired"' in out.read_bytes()):
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    time.sleep(0.001)
    p.send_signal(signal.SIGHUP)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3 and b"Traceback" not in err, err[-500:]
    assert read_recording(out).events[-1].kind == "run_ended"
