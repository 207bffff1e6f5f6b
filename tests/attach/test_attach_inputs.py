"""Attach's inputs from the command line (issue 35's fuzz): each bad one is one line and exit
2, never a traceback; Ctrl-C of `attach --raw` exits 3."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover.attach.address import AttachError, parse_address, read_token

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict | None = None):  # type: ignore[no-untyped-def]
    r = CliRunner().invoke(main, list(args), env=env)
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), r.exc_info
    return r


@pytest.mark.parametrize("args", [
    ["status", ""], ["status", "unix:"], ["status", "tcp://evil.example:1"], ["status", "ftp://x"],
    ["attach", "unix:", "--raw"], ["attach", "x.sock", "--raw", "--name", "n" * 65],
    ["attach", "x.sock", "--send", "mem_sync=stream", "--name", ""],
    ["attach", "x.sock", "--name", "bell\x07"], ["attach", "x.sock", "--fps", "0"], ["attach", "x.sock", "--fps", "nan"],
    ["record", "--listen", "unix:", "--out", "/tmp/never-written.jsonl"],
])
def test_a_bad_address_or_name_is_one_line_and_2(args: list[str]) -> None:
    r = _cli(*args)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "Traceback" not in r.output and r.output.strip()


def test_attach_send_empty_is_refused_not_the_dashboard() -> None:
    r = _cli("attach", "x.sock", "--send", "")
    assert r.exit_code == 2 and "--send" in r.output and "empty control" in r.output, r.output


def test_unix_colon_alone_names_no_socket() -> None:
    with pytest.raises(AttachError, match="names no socket path"):
        parse_address("unix:")


@pytest.mark.parametrize("token", ["x", "short-token", "has space in it!!", "a" * 300])
def test_a_token_too_short_or_too_long_is_refused(tmp_path: Path, token: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("C2TUI_ATTACH_TOKEN", raising=False)
    f = tmp_path / "tok"
    f.write_text(token + "\n")
    with pytest.raises(AttachError, match="token"):
        read_token(f)
    monkeypatch.setenv("C2TUI_ATTACH_TOKEN", token)
    with pytest.raises(AttachError, match="token"):
        read_token(None)
    r = _cli("attach", "tcp://127.0.0.1:1", "--raw", "--token-file", str(f), env={"C2TUI_ATTACH_TOKEN": ""})
    assert r.exit_code == 2 and "token" in r.output, r.output


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "zero", "dir"])
def test_a_token_file_that_is_not_a_file_is_refused_at_once(tmp_path: Path, kind: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`--token-file /dev/zero` read until memory ran out; a FIFO blocked forever."""
    monkeypatch.delenv("C2TUI_ATTACH_TOKEN", raising=False)
    path = {"zero": Path("/dev/zero"), "dir": tmp_path}.get(kind, tmp_path / "fifo")
    if kind == "fifo":
        os.mkfifo(path)
    t0 = time.monotonic()
    with pytest.raises(AttachError, match="not a regular file"):
        read_token(path)
    r = _cli("record", "--listen", "tcp://127.0.0.1:1", "--token-file", str(path), "--out", str(tmp_path / "r.jsonl"),
             "--backend", "sim", "--duration", "1")
    assert r.exit_code == 2 and "not a regular file" in r.output, r.output
    assert time.monotonic() - t0 < 10
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.timeout(120)
def test_ctrl_c_of_attach_raw_exits_3(tmp_path: Path) -> None:
    sock = tmp_path / "r.sock"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rec = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "-q", "--out", str(tmp_path / "r.jsonl"),
                            "--listen", str(sock), "--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.1",
                            "--duration", "60"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    raw = None
    try:
        end = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < end:
            time.sleep(0.05)
        raw = subprocess.Popen([sys.executable, "-m", "c2tui", "attach", str(sock), "--raw"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert raw.stdout is not None and raw.stdout.readline()  # attached: the stream flows
        raw.send_signal(signal.SIGINT)
        assert raw.wait(20) == 3
        assert b"interrupted" in raw.stderr.read()
    finally:
        for p in (raw, rec):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.parametrize("fps", ["0", "nan", "-1", "1e9"])
def test_attach_checks_fps_as_run_does(fps: str) -> None:
    """--fps 0 reached the attached dashboard, whose timer divided by it."""
    r = _cli("attach", "x.sock", "--fps", fps)
    assert r.exit_code == 2 and "--fps" in r.output, r.output
