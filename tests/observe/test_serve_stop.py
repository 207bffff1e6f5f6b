"""Issue 44: `c2tui serve` on SIGINT, SIGTERM or SIGHUP with a tab open exits 3 within its
grace time, every tab's socket closed and its prover gone. Before, SIGHUP killed it (129) and
left each tab's prover running, and SIGINT/SIGTERM took 16 s (the websocket closed at its 15 s
heartbeat)."""
from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import ClientSession, WSMsgType, WSServerHandshakeError

from c2tui.dashboard.webserve import SHUTDOWN_S
from tests.observe.test_serve_guard import _children

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: signal.Signals(s).name)
def test_serve_stops_its_tabs_and_their_provers_on_a_stop_signal(sig: int) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = subprocess.Popen([sys.executable, "-m", "c2tui", "serve", "--backend", "sim", "--constraints-log2", "8",
                              "--time-scale", "0.05", "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)

    async def tab() -> tuple[set[int], float, int | None, str]:
        url = f"http://127.0.0.1:{port}"
        async with ClientSession() as session:
            for _ in range(150):  # the server starting
                try:
                    ws = await session.ws_connect(f"{url}/ws?width=80&height=24", headers={"Origin": url})
                    break
                except (OSError, WSServerHandshakeError):
                    await asyncio.sleep(0.2)
            got = 0
            while got < 2000:  # the dashboard drawing: the prover is up
                msg = await asyncio.wait_for(ws.receive(), 60)
                got += len(msg.data) if isinstance(msg.data, (bytes, str)) else 0
            provers = _children(serve.pid)
            t0 = time.monotonic()
            serve.send_signal(sig)
            while True:  # the tab sees its socket closed by the server
                msg = await asyncio.wait_for(ws.receive(), 30)
                if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING, WSMsgType.ERROR):
                    break
            rc = await asyncio.to_thread(serve.wait, 30)
            return provers, time.monotonic() - t0, rc, serve.stderr.read() if serve.stderr else ""

    try:
        provers, seconds, rc, err = asyncio.run(tab())
        assert provers, "no prover was started"
        assert rc == 3 and "interrupted" in err.splitlines()[-1], (rc, err[-500:])
        assert seconds < SHUTDOWN_S + 3, seconds  # its grace time, not the websocket's 15 s heartbeat
        assert not _children(serve.pid) & provers
        alive = [p for p in provers if Path(f"/proc/{p}").exists()
                 and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
        assert not alive, alive
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait(10)


def test_an_address_not_of_this_machine_is_one_line_before_any_banner() -> None:
    from click.testing import CliRunner

    from c2tui.commands import main

    r = CliRunner().invoke(main, ["serve", "--host", "192.0.2.1", "--port", "8123"])  # TEST-NET-1: never ours
    assert r.exit_code == 2, r.output
    assert "serving" not in r.output and "warning" not in r.output
    assert r.output.strip().splitlines() == ["error: cannot serve on 192.0.2.1:8123: Cannot assign requested address"]
