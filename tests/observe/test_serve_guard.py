"""`c2tui serve` guarded (c2tui/dashboard/webserve.py): another origin's page is refused, the prover cap
gives a clear page, sizes are clamped, options are checked as run's, and a tab closed
abruptly leaves no prover behind."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import ClientSession, WSServerHandshakeError
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from c2tui.commands import main
from c2tui.dashboard.webserve import GuardedServer, clamp_size

ROOT = Path(__file__).resolve().parents[2]


def _serve(**kw) -> GuardedServer:  # type: ignore[no-untyped-def]
    return GuardedServer("true", host="127.0.0.1", port=0, title="c2tui", **kw)


async def _client(server: GuardedServer) -> TestClient:
    client = TestClient(TestServer(await server._make_app()))
    await client.start_server()
    return client


def test_another_origin_is_refused_and_a_named_one_taken() -> None:
    async def go() -> tuple[int, int, int]:
        server = _serve(max_provers=1, allow_origins=("https://ops.example.com",))
        client = await _client(server)
        try:
            evil = await client.get("/ws", headers={"Origin": "http://evil.example"})
            host = f"http://{client.host}:{client.port}"
            server.active.add(object())  # type: ignore[arg-type]  # full: a taken origin then meets the cap
            named = await client.get("/ws", headers={"Origin": "https://ops.example.com"})
            same = await client.get("/ws", headers={"Origin": host})
            return evil.status, named.status, same.status
        finally:
            await client.close()

    evil, named, same = asyncio.run(go())
    assert evil == 403 and named == 503 and same == 503


def test_full_server_says_so_on_the_page() -> None:
    async def go() -> tuple[int, str]:
        server = _serve(max_provers=2)
        server.active.update({object(), object()})  # type: ignore[arg-type]
        client = await _client(server)
        try:
            r = await client.get("/")
            return r.status, await r.text()
        finally:
            await client.close()

    status, text = asyncio.run(go())
    assert status == 503 and "all 2 dashboard(s) are in use" in text


def test_sizes_clamped_and_options_checked_as_run_does() -> None:
    assert clamp_size(100000, 400) == (500, 200) and clamp_size("x", -5) == (80, 10) and clamp_size(True, 24) == (80, 24)
    for fps in ("0", "nan", "-1", "inf"):
        r = CliRunner().invoke(main, ["serve", "--fps", fps, "--port", "1"])
        assert r.exit_code == 2 and "--fps" in r.output, r.output
    r = CliRunner().invoke(main, ["serve", "--allow-origin", "evil", "--port", "1"])
    assert r.exit_code == 2 and "--allow-origin" in r.output


def _children(pid: int) -> set[int]:
    """Every live descendant of pid (from /proc; zombies count as gone)."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parent[int(d)] = int(fields[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.update(kids)
        todo += kids
    return out


@pytest.mark.timeout(90)
def test_abruptly_closed_tab_leaves_no_prover() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = subprocess.Popen([sys.executable, "-m", "c2tui", "serve", "--backend", "sim", "--constraints-log2", "8",
                              "--time-scale", "0.05", "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)

    async def tab() -> set[int]:
        url = f"http://127.0.0.1:{port}"
        async with ClientSession() as session:
            for _ in range(100):  # the server starting
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
            ws._response.connection.transport.abort()  # type: ignore[union-attr]  # no close frame: a killed tab
            return provers

    try:
        provers = asyncio.run(tab())
        assert provers, "no prover was started"
        end = time.monotonic() + 15
        while time.monotonic() < end and _children(serve.pid) & provers:
            time.sleep(0.2)
        assert not _children(serve.pid) & provers
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(20)


DEAF = ("import os, signal, subprocess, sys, time\n"
        "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP): signal.signal(s, signal.SIG_IGN)\n"
        "kid = subprocess.Popen(['sleep', '600'])\n"
        "sys.stdout.buffer.write(b'__GANGLION__\\n' + b'D' + (5).to_bytes(4, 'big') + str(kid.pid).zfill(5).encode())\n"
        "sys.stdout.flush()\n"
        "while True: time.sleep(0.1)  # never reads stdin, never quits\n")


@pytest.mark.timeout(60)
def test_a_deaf_prover_and_its_children_are_killed_when_the_tab_vanishes(tmp_path: Path) -> None:
    script = tmp_path / "deaf.py"
    script.write_text(DEAF)

    async def go() -> tuple[int, int]:
        server = GuardedServer(f"{sys.executable} {script}", host="127.0.0.1", port=0, title="t", max_provers=2)
        client = await _client(server)
        try:
            ws = await client.ws_connect("/ws")
            msg = await asyncio.wait_for(ws.receive(), 20)
            kid = int(msg.data)
            (service,) = server.active
            shell = service._process.pid  # type: ignore[union-attr]
            ws._response.connection.transport.abort()  # type: ignore[union-attr]
            for _ in range(100):
                await asyncio.sleep(0.1)
                if not server.active:
                    break
            return shell, kid
        finally:
            await client.close()

    shell, kid = asyncio.run(go())

    def alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    end = time.monotonic() + 5
    while time.monotonic() < end and (alive(shell) or alive(kid)):
        time.sleep(0.1)
    assert not alive(shell) and not alive(kid)
