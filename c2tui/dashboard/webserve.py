"""textual-serve, guarded for `c2tui serve` (subclasses, not a fork):

- every request must name, in its Host header, a name this server listens as: a loopback
  name (localhost, 127.0.0.1, ::1), the --host address given, an IP address when --host is
  a wildcard, or the host of an --allow-origin. A page whose own name an attacker rebinds to
  127.0.0.1 (DNS rebinding) sends its own name as Host and is refused (403);
- a websocket is taken only from such an origin (Origin's host one of those names, its port
  the request's), or from an origin named with --allow-origin: another site's page cannot
  drive the dashboard's keys;
- the page asks nothing of another host: textual-serve's template loads Roboto Mono from
  Google Fonts, here it comes from the font textual-serve ships (works offline, tells no
  third party who is watching);
- at most `max_provers` dashboards (each its own `c2tui run` and prover) at once; past that
  the page says so (HTTP 503) and a websocket is refused;
- terminal sizes are clamped (a 100000x400 resize grew one child to 2.1 GB);
- each prover runs in a process group of its own, and when its socket goes away, however
  abruptly, it is asked to quit, then after GRACE_S the whole group is killed (SIGKILL):
  no orphan keeps proving at 100% CPU, deaf to SIGTERM;
- SIGINT, SIGTERM and SIGHUP stop the server: every tab's socket is closed and its prover
  stopped as above, within SHUTDOWN_S (the sockets once waited for their 15 s heartbeat, and
  SIGHUP killed the server with every tab's prover left running).
"""
from __future__ import annotations

import asyncio
import html
import ipaddress
import logging
import os
import re
import signal
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

log = logging.getLogger("c2tui-serve")

GRACE_S = 2.0  # after the quit message, before the process group is killed
SHUTDOWN_S = 3 * GRACE_S  # the server's stop: sockets closed, provers asked then killed, handlers done
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


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
# textual-serve's <link> to Google Fonts, and what takes its place: the same font, from its own static files
_FONT_LINK = re.compile(r'<link\s+rel="stylesheet"\s+href="https://fonts\.googleapis\.com/[^"]*"\s*/?>', re.S)
_LOCAL_FONT = ('<style>@font-face { font-family: "Roboto Mono"; font-style: normal; '
               'src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); } '
               '@font-face { font-family: "Roboto Mono"; font-style: italic; '
               'src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype"); }</style>')


def _hostname(netloc: str) -> tuple[str, int | None] | None:
    """(host, port) of a Host header or an origin's netloc, lower case, [::1] as ::1; None if malformed."""
    try:
        parts = urlsplit("//" + netloc)
        return (parts.hostname or "").lower(), parts.port
    except ValueError:  # a port that is not a number
        return None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def offline_template(templates_path: Any) -> str:
    """textual-serve's page with its one outside request (the font) served from here."""
    return _FONT_LINK.sub(_LOCAL_FONT, (templates_path / "app_index.html").read_text(encoding="utf-8"))


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
        self.tabs: dict[web.WebSocketResponse, GuardedAppService] = {}  # open sockets, closed on the server's stop
        self.refused = {"origin": 0, "full": 0, "host": 0}
        named = (_hostname(urlsplit(o).netloc) for o in self.allow_origins)
        self.names = LOOPBACK_NAMES | {self.host.lower().strip("[]")} | {n[0] for n in named if n}

    def serve(self, debug: bool = False, sock: Any = None) -> None:  # type: ignore[override]
        """As textual-serve's, on `sock` if given (bound beforehand: a bind error is said before
        anything else), stopped by SIGHUP too, and within SHUTDOWN_S."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.get_event_loop()
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(s, self.request_exit)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                break
        where: dict[str, Any] = {"sock": sock} if sock is not None else {"host": self.host, "port": self.port}
        web.run_app(self._make_app(), handle_signals=False, loop=loop, print=lambda *a: None,
                    shutdown_timeout=SHUTDOWN_S, **where)

    async def close_tabs(self, app: web.Application) -> None:
        """On the server's stop: every tab's socket closed and its prover stopped, together."""
        tabs = list(self.tabs.items())

        async def one(ws: web.WebSocketResponse, service: "GuardedAppService") -> None:
            try:
                await asyncio.wait_for(ws.close(code=WSCloseCode.GOING_AWAY, message=b"c2tui serve stopping"), GRACE_S)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - the prover is stopped below all the same
                pass
            await service.stop()
        await asyncio.gather(*(one(ws, svc) for ws, svc in tabs))

    def name_ok(self, name: str) -> bool:
        """A name this server listens as (an IP address too when it listens on every one)."""
        return name in self.names or (self.host.strip("[]") in WILDCARDS and _is_ip(name))

    def host_ok(self, request: web.Request) -> bool:
        hp = _hostname(request.host or "")
        return hp is not None and self.name_ok(hp[0])

    def origin_ok(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:  # not a browser page (browsers always send it on a websocket)
            return True
        o = origin.rstrip("/").lower()
        if o in self.allow_origins:
            return True
        parts = urlsplit(o)
        mine, theirs = _hostname(request.host or ""), _hostname(parts.netloc)
        if parts.scheme not in ("http", "https") or mine is None or theirs is None or not self.name_ok(theirs[0]):
            return False
        default = 443 if parts.scheme == "https" else 80
        return (theirs[1] or default) == (mine[1] or default)

    @web.middleware
    async def host_guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if not self.host_ok(request):
            self.refused["host"] += 1
            return web.Response(status=403, text="c2tui serve: this server does not answer to that Host name "
                                                 "(only to the names it listens as)")
        return await handler(request)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.host_guard)
        app.on_shutdown.append(self.close_tabs)
        aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({"app_index.html": offline_template(self.templates_path)}))
        return app

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
        async def close() -> None:  # the service awaits a close that returns nothing (aiohttp's says if it closed)
            await websocket.close()

        service = GuardedAppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                    close=close, download_manager=self.download_manager, debug=self.debug)
        self.active.add(service)
        self.tabs[websocket] = service
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
            self.tabs.pop(websocket, None)
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
