"""`serve` twice in one process (the fuzz's in-process cases): textual-serve runs on
asyncio.get_event_loop(), which aiohttp closes when it stops, so the second serve got a closed
loop and a traceback ("Event loop is closed", exit 1). Each serve now starts on a loop of its own."""
from __future__ import annotations

import asyncio
import socket

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from c2tui.dashboard.webserve import GuardedServer


def test_serve_starts_on_an_open_loop_after_one_was_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def serve(self: GuardedServer, debug: bool = False, sock: socket.socket | None = None) -> None:  # the server's run
        if sock is not None:  # serve binds before it says anything (issue 44)
            sock.close()
        loop = asyncio.get_event_loop()
        seen.append(loop.is_closed())
        loop.close()  # as aiohttp's run_app does when it stops

    monkeypatch.setattr(GuardedServer, "serve", serve)
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        r = CliRunner().invoke(main, ["serve", "--backend", "sim", "--port", str(port)])
        assert r.exit_code == 3 and "Traceback" not in r.output, r.output
    assert seen == [False, False]
    asyncio.set_event_loop(None)
