"""`c2tui serve` against DNS rebinding and for offline use (issue 35): a request must name a
Host the server listens as, a websocket's Origin must be one of those names (or named with
--allow-origin), an empty bind address is refused, the page asks no other host for anything,
and Ctrl-C exits 3."""
from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from c2tui.commands import main
from c2tui.dashboard.webserve import GuardedServer

ROOT = Path(__file__).resolve().parents[2]


async def _client(server: GuardedServer) -> TestClient:
    client = TestClient(TestServer(await server._make_app()))
    await client.start_server()
    return client


def _statuses(host: str = "127.0.0.1", **kw) -> dict[str, int]:
    async def go() -> dict[str, int]:
        server = GuardedServer("true", host=host, port=0, title="c2tui", max_provers=1, **kw)
        server.active.add(object())  # type: ignore[arg-type]  # full: a websocket that passes the guards meets the cap (503)
        client = await _client(server)
        port = client.port
        try:
            out = {}
            for name, path, headers in [
                ("rebound page", "/", {"Host": f"evil.example:{port}"}),
                ("rebound static", "/static/css/xterm.css", {"Host": f"evil.example:{port}"}),
                ("rebound ws", "/ws", {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}),
                ("bad host", "/", {"Host": "[::1"}),
                ("localhost page", "/static/css/xterm.css", {"Host": f"localhost:{port}"}),
                ("localhost origin", "/ws", {"Host": f"127.0.0.1:{port}", "Origin": f"http://localhost:{port}"}),
                ("v6 origin", "/ws", {"Host": f"[::1]:{port}", "Origin": f"http://[::1]:{port}"}),
                ("evil origin", "/ws", {"Host": f"127.0.0.1:{port}", "Origin": f"http://evil.example:{port}"}),
                ("other port", "/ws", {"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port + 1}"}),
                ("named origin", "/ws", {"Host": "ops.example.com", "Origin": "https://ops.example.com"}),
                ("lan ip", "/static/css/xterm.css", {"Host": f"10.1.2.3:{port}"}),
            ]:
                r = await client.get(path, headers=headers)
                out[name] = r.status
            return out
        finally:
            await client.close()

    return asyncio.run(go())


def test_a_rebound_name_is_refused_and_the_names_served_are_taken() -> None:
    st = _statuses(allow_origins=("https://ops.example.com",))
    assert st["rebound page"] == st["rebound static"] == st["rebound ws"] == st["bad host"] == 403, st
    assert st["evil origin"] == st["other port"] == 403, st
    assert st["localhost page"] == 200 and st["localhost origin"] == st["v6 origin"] == 503, st
    assert st["named origin"] == 503, st  # --allow-origin's host is a name served (a proxy's)
    assert st["lan ip"] == 403, st  # not a name of a server bound to 127.0.0.1


def test_a_wildcard_bind_takes_ip_addresses_but_no_other_name() -> None:
    st = _statuses(host="0.0.0.0")
    assert st["lan ip"] == 200 and st["rebound page"] == 403, st


# every address a page or stylesheet loads something from: href=, src=, url(), @import
LOADS = re.compile(r"""(?:href|src)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)|url\(\s*["']?\s*((?:https?:)?//[^"')\s]+)"""
                   r"""|@import\s+(?:url\()?\s*["']?([^"')\s;]+)""", re.I)


def outside(text: str) -> list[str]:
    """The addresses in `text` that load from a host other than this server's own (127.0.0.1)."""
    urls = ["".join(m) for m in LOADS.findall(text)]
    return [u for u in urls if urlsplit(u if "//" in u else "//x").hostname not in ("127.0.0.1", None)]


def test_the_page_names_no_outside_host() -> None:
    """The served HTML and every stylesheet and script it loads ask nothing of another host
    (textual-serve's page loaded Google Fonts: broken offline, and a third party told)."""
    async def go() -> list[tuple[str, str]]:
        server = GuardedServer("true", host="127.0.0.1", port=0, title="c2tui", max_provers=1)
        client = await _client(server)
        try:
            page = await (await client.get("/")).text()
            docs = [("/", page)]
            for ref in re.findall(r"""(?:href|src)="[^"]*?(/static/[^"]+)\"""", page):
                r = await client.get(ref)
                assert r.status == 200, ref
                docs.append((ref, await r.text()))
            return docs
        finally:
            await client.close()

    docs = asyncio.run(go())
    assert len(docs) >= 3  # the page, its stylesheet, its script
    assert [(name, outside(text)) for name, text in docs if outside(text)] == []
    assert outside('<link rel="stylesheet" href="https://fonts.googleapis.com/css?x" />') != []  # the check sees one
    assert "fonts.googleapis" not in docs[0][1] and "RobotoMono" in docs[0][1]


@pytest.mark.parametrize("args", [["serve", "--host", "", "--port", "1"], ["serve", "--host", " ", "--port", "1"],
                                  ["record", "--metrics-port", "0", "--metrics-addr", "", "--out", "/tmp/x.jsonl"],
                                  ["run", "--metrics-port", "0", "--metrics-addr", ""]])
def test_an_empty_bind_address_is_refused(args: list[str]) -> None:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and "empty address" in r.output, r.output


@pytest.mark.timeout(60)
def test_ctrl_c_stops_serve_with_status_3() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "c2tui", "serve", "--backend", "sim", "--port", str(port)], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 40
        while time.monotonic() < end:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        assert p.wait(20) == 3
        assert "interrupted" in p.stderr.read().splitlines()[-1]
    finally:
        if p.poll() is None:
            p.kill()
