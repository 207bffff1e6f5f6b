"""textual-serve, guarded for `c2tui serve` (subclasses, not a fork):

- a websocket is taken only from the page's own origin (Origin's host:port = the request's
  Host), or from an origin named with --allow-origin: another site's page cannot drive the
  dashboard's keys;
- at most `max_provers` dashboards (each its own `c2tui run` and prover) at once; past that
  the page says so (HTTP 503) and a websocket is refused;
- terminal sizes are clamped (a 100000x400 resize grew one child to 2.1 GB);
- each prover runs in a process group of its own, and when its socket goes away, however
  abruptly, it is asked to quit, then after GRACE_S the whole group is killed (SIGKILL):
  no orphan keeps proving at 100% CPU, deaf to SIGTERM.
"""
from __future__ import annotations

import asyncio
import html
import logging
import os
import signal
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

log = logging.getLogger("c2tui-serve")

GRACE_S = 2.0  # after the quit message, before the process group is killed
COLS, ROWS = (20, 500), (10, 200)  # terminal sizes taken from a browser


def clamp_size(width: Any, height: Any) -> tuple[int, int]:
    def one(v: Any, lo: int, hi: int, default: int) -> int:
        n = v if type(v) is int else to_int(str(v), default)
        return max(lo, min(hi, n))
    return one(width, *COLS, 80), one(height, *ROWS, 24)


class GuardedAppService(AppService):
    """One browser tab's `c2tui run`: its own process group, sizes clamped, a bounded stop."""

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        width, height = clamp_size(width, height)
        self._process = process = await asyncio.create_subprocess_shell(
            self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width=width, height=height),
            start_new_session=True)  # its own process group: ended whole, shell and children alike
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(*clamp_size(width, height))

    async def stop(self) -> None:
        """Ask the app to quit; if it has not within GRACE_S (a full stdin pipe blocks even the
        asking), kill its process group. Never waits unbounded."""
        try:
            await asyncio.wait_for(super().stop(), GRACE_S)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - whatever happened, end the group below
            pass
        proc = self._process
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the group: also a child that left the shell behind
            except (ProcessLookupError, PermissionError):
                pass
            try:
                await asyncio.wait_for(proc.wait(), GRACE_S)
            except asyncio.TimeoutError:
                log.error("prover %s did not end after SIGKILL", proc.pid)
        if self._task is not None:
            self._task.cancel()
            self._task = None


def _full_page(limit: int) -> str:
    return ("<!doctype html><title>c2tui: busy</title><body style='font-family:monospace'>"
            f"<h2>c2tui serve: all {limit} dashboard(s) are in use</h2><p>Each browser tab runs its own "
            "prover, and this server allows {0} at once. Close another c2tui tab, or try again later."
            "</p></body>").replace("{0}", html.escape(str(limit)))


class GuardedServer(Server):
    def __init__(self, command: str, *, max_provers: int, allow_origins: tuple[str, ...] = (), **kw: Any) -> None:
        super().__init__(command, **kw)
        self.max_provers = max_provers
        self.allow_origins = frozenset(o.rstrip("/").lower() for o in allow_origins)
        self.active: set[GuardedAppService] = set()
        self.refused = {"origin": 0, "full": 0}

    def origin_ok(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:  # not a browser page (browsers always send it on a websocket)
            return True
        o = origin.rstrip("/").lower()
        if o in self.allow_origins:
            return True
        parts = urlsplit(o)
        return parts.scheme in ("http", "https") and parts.netloc == (request.host or "").lower()

    async def handle_index(self, request: web.Request) -> Any:
        if len(self.active) >= self.max_provers:
            return web.Response(status=503, text=_full_page(self.max_provers), content_type="text/html")
        return await super().handle_index(request)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        if not self.origin_ok(request):
            self.refused["origin"] += 1
            return web.Response(status=403, text="c2tui serve: a page from another origin may not drive this dashboard")
        if len(self.active) >= self.max_provers:
            self.refused["full"] += 1
            return web.Response(status=503, text=f"c2tui serve: all {self.max_provers} dashboard(s) are in use")
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 16)
        width, height = clamp_size(request.query.get("width", "80"), request.query.get("height", "24"))
        service = GuardedAppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                    close=websocket.close, download_manager=self.download_manager, debug=self.debug)
        self.active.add(service)
        try:
            await websocket.prepare(request)
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # noqa: BLE001 - one tab's trouble is logged, the server goes on
            log.warning("websocket: %s: %s", type(exc).__name__, exc)
        finally:
            await asyncio.shield(service.stop())
            self.active.discard(service)
        return websocket

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
        """The browser's messages, each checked: a malformed one is skipped, not a crash."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = message.json()
                kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            except (ValueError, TypeError, IndexError, KeyError):
                continue
            if kind == "stdin" and isinstance(data, str):
                await app_service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                await app_service.set_terminal_size(data.get("width", 80), data.get("height", 24))
            elif kind == "ping" and isinstance(data, (str, int, float)):
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await app_service.blur()
            elif kind == "focus":
                await app_service.focus()
