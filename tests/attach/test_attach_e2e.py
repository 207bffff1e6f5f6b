"""End to end: a headless `c2tui record --listen` (a subprocess, sim backend), two clients -
the real Textual app under pilot and a `c2tui attach --raw` subprocess. A key in the app
switches mem_sync; the other client and the recording see it, made by attach:<app's name>.
The subprocess client is SIGKILLed mid-stream and the prover goes on."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.live import AttachSource
from c2tui.widgets.header_bar import HeaderBar
from prover import events as ev
from prover.attach.client import AttachClient
from prover.record import read_recording

from tests.helpers.pilot_wait import until as _until


async def until(pilot, cond, timeout: float = 20.0) -> None:
    await _until(pilot, cond, timeout)


ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
pytestmark = pytest.mark.timeout(180)


def c2tui(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "c2tui", *args], cwd=ROOT, env=ENV, **kw)


def wait_for(pred, timeout=30.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


class RawClient:
    """`c2tui attach --raw` in a subprocess; its lines are read on a thread."""

    def __init__(self, sock: Path, name: str) -> None:
        self.proc = c2tui("attach", str(sock), "--raw", "--name", name, stdout=subprocess.PIPE, text=True)
        self.lines: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def knob(self, name: str) -> dict | None:
        ch = [x for x in self.lines if x.get("kind") == "mode_change" and x["knob"] == name]
        return ch[-1] if ch else None


@pytest.fixture
def headless(tmp_path):
    sock, rec = tmp_path / "prover.sock", tmp_path / "run.jsonl"
    proc = c2tui("record", "--backend", "sim", "--profile", "tiny", "--time-scale", "0.3", "--duration", "120",
                 "-o", str(rec), "--listen", str(sock), "-q", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: sock.exists() or proc.poll() is not None)
    assert proc.poll() is None, proc.communicate()
    yield proc, sock, rec
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


@pytest.mark.slow
def test_two_clients_switch_mem_sync_and_sigkill(headless):
    proc, sock, rec = headless
    raw = RawClient(sock, "watcher")
    wait_for(lambda: any(x.get("kind") == "run_started" for x in raw.lines))

    async def drive() -> None:
        source = AttachSource(str(sock), name="pilot")
        app = DashboardApp(source)
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.state is not None and app.state.knobs.get("mem_sync") == "device")
            assert "ATTACHED" in app.query_one(HeaderBar).render().plain
            await pilot.press("m")  # the app's own key, through the remote controller
            await until(pilot, lambda: app.state.knobs.get("mem_sync") == "stream")
            await until(pilot, lambda: "stream" in app.query_one(HeaderBar).render().plain)
            # the other client saw the same change, made by this app's client
            await until(pilot, lambda: raw.knob("mem_sync") is not None)
            assert raw.knob("mem_sync")["source"] == "attach:pilot"
            assert raw.knob("mem_sync")["new"] == "stream"
            # and a change from elsewhere shows here
            r = subprocess.run([sys.executable, "-m", "c2tui", "attach", str(sock), "--send", "single", "--name", "cli"],
                               cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, r.stderr
            await until(pilot, lambda: app.state.knobs.get("lock_mode") == "single")
            # SIGKILL the subprocess client mid-stream: the prover and this client go on
            n = len(raw.lines)
            raw.proc.send_signal(signal.SIGKILL)
            raw.proc.wait(timeout=10)
            assert raw.proc.returncode == -signal.SIGKILL and n > 0
            done = app.state.partitions_ok
            await until(pilot, lambda: app.state.partitions_ok >= done + 2, timeout=60)
            # the footer says what q does here: detach, not quit (issue 22)
            from textual.widgets._footer import FooterKey
            keys = {k.action: k.description for k in app.screen.query(FooterKey)}
            assert keys.get("detach") == "detach" and "quit" not in keys
            await pilot.press("q")  # detaches; the prover goes on
        assert proc.poll() is None

    asyncio.run(drive())
    # a fresh client still gets the whole run (history) and live events
    c = AttachClient(str(sock), name="late")
    w = c.connect()
    assert w.history > 0
    c.close()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err  # stopped by SIGTERM: "interrupted" (c2tui/cli/exits.py)
    assert not sock.exists()  # removed on exit
    r = read_recording(rec)
    assert r.error is None
    changes = [(e.knob, e.new, e.source) for e in r.events if isinstance(e, ev.ModeChange)]
    assert ("mem_sync", "stream", "attach:pilot") in changes
    assert ("lock_mode", "single", "attach:cli") in changes
    assert isinstance(r.events[-1], ev.RunEnded)


def test_stale_socket_does_not_stop_a_new_run(tmp_path):
    sock = tmp_path / "p.sock"
    # a run killed with SIGKILL leaves its socket file behind
    p = c2tui("record", "--backend", "sim", "--profile", "tiny", "--time-scale", "0.3", "--duration", "60",
              "-o", str(tmp_path / "a.jsonl"), "--listen", str(sock), "-q")
    wait_for(sock.exists)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    assert sock.exists()
    # a live server at a path is refused; the stale one is reused
    r = subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--profile", "tiny",
                        "--time-scale", "0.3", "--sectors", "1", "--partitions", "2", "-o", str(tmp_path / "b.jsonl"),
                        "--listen", str(sock), "-q"], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    assert not sock.exists()


def test_live_socket_refused_and_other_protocol_exits_2(headless):
    proc, sock, _ = headless
    r = subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "-o", str(sock.parent / "x.jsonl"),
                        "--listen", str(sock)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "already serving" in r.stderr
    assert not (sock.parent / "x.jsonl").exists()
    r = subprocess.run([sys.executable, "-c", (
        "import sys; from prover.attach.client import AttachClient, AttachRefused\n"
        f"try: AttachClient({str(sock)!r}, protocol=99).connect()\n"
        "except AttachRefused as e: print(e); sys.exit(2)")], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "protocol version 99 is not spoken here" in r.stdout
    r = subprocess.run([sys.executable, "-m", "c2tui", "attach", str(sock.parent / "nothing.sock")],
                       cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "cannot attach" in r.stderr



def test_tcp_listen_on_loopback_with_a_token_file(tmp_path):
    import socket as _s

    with _s.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    addr, tok = f"tcp://127.0.0.1:{port}", tmp_path / "token"
    env = {k: v for k, v in ENV.items() if k != "C2TUI_ATTACH_TOKEN"}
    r = subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "-o", str(tmp_path / "x.jsonl"),
                        "--listen", "tcp://0.0.0.0:7799"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "loopback only" in r.stderr
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--profile", "tiny",
                             "--time-scale", "0.3", "--duration", "60", "-o", str(tmp_path / "t.jsonl"), "--listen", addr,
                             "--token-file", str(tok), "-q"], cwd=ROOT, env=env)
    try:
        wait_for(tok.exists)
        assert oct(tok.stat().st_mode & 0o777) == "0o600"  # created owner-only with a random token
        def attach(*extra):
            return subprocess.run([sys.executable, "-m", "c2tui", "attach", addr, "--send", "pause", *extra],
                                  cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
        wait_for(lambda: attach("--token-file", str(tok)).returncode == 0)
        r = attach()
        assert r.returncode == 2 and "bad or missing token" in r.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
