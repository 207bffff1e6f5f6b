"""`c2tui serve [run options] --port PORT [--host 127.0.0.1]`: the dashboard in a browser.

textual-serve serves a page whose terminal (xterm.js) talks over a websocket to `c2tui run`
started for that page with the same run options: each browser tab gets its own dashboard
over its own embedded prover, stopped when the tab closes (its process group killed after a
grace period, however the tab went away). Only the page's own origin (or --allow-origin) may
open the websocket; at most --max-provers at once (a clear page past that); terminal sizes
clamped (c2tui/dashboard/webserve.py). Loopback by default: whoever can reach the page can steer the
prover, so another address is the operator's explicit choice.
"""
from __future__ import annotations

import ipaddress
import re
import shlex
import sys
from typing import Any

import click

from c2tui.cli.exits import RUN, USAGE, fail
from c2tui.cli.metrics_options import bind_address
from c2tui.cli.options import check_screen, config_from_options, run_option_names, run_options

MAX_PROVERS = 8  # --max-provers' top: each is a whole prover (~200 MB and a core)

_FLAG_OPTIONS = {"prestage": ("--prestage", "--no-prestage")}


def run_argv(theme: str, fps: float, **kwargs: Any) -> list[str]:
    """`c2tui run` with the options given to serve (only those given; the rest default there)."""
    argv = [sys.executable, "-m", "c2tui", "run"]
    for name in sorted(run_option_names()):
        v = kwargs.get(name)
        if v is None:
            continue
        if name in _FLAG_OPTIONS:
            argv.append(_FLAG_OPTIONS[name][0 if v else 1])
        else:
            argv += ["--" + name.replace("_", "-"), str(v)]
    return argv + ["--theme", theme, "--fps", f"{fps:g}"]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@run_options
@click.option("--theme", default="dark", show_default=True, help="dark | light | high-contrast")
@click.option("--fps", type=float, default=10.0, show_default=True, help="screen refresh rate (Hz, 0.5..60)")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="HTTP port")
@click.option("--host", default="127.0.0.1", show_default=True, callback=bind_address,
              help="address to bind (loopback by default: whoever reaches the page controls the prover)")
@click.option("--max-provers", type=click.IntRange(1, MAX_PROVERS), default=2, show_default=True,
              help="dashboards (each its own prover) at once; past that the page says it is full")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="another origin whose pages may open the dashboard, e.g. https://ops.example.com (repeatable; "
                   "by default only the page this server serves)")
def command(theme: str, fps: float, port: int, host: str, max_provers: int, allow_origins: tuple[str, ...],
            **kwargs: Any) -> None:
    """Serve the live dashboard to a web browser (textual-serve)."""
    from prover import ConfigError

    check_screen(theme, fps)  # as run checks them: --fps 0, nan or -1 refused here, not in every tab
    for origin in allow_origins:
        if not re.fullmatch(r"https?://[^/\s]+", origin.rstrip("/")):
            raise click.BadParameter(f"{origin!r}: an origin is scheme://host[:port], e.g. https://ops.example.com",
                                     param_hint="--allow-origin")
    try:
        config_from_options(**kwargs)  # bad options fail here, not later in every browser tab
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        from c2tui.dashboard.webserve import GuardedServer
    except ImportError:
        fail("c2tui serve needs textual-serve: pip install 'c2tui[serve]'", USAGE)
    sock = _bind(host, port)  # before the banner: `--host 8.8.8.8` is one line, no "serving" said first
    if not _loopback(host):
        click.echo(f"warning: serving on {host}: anyone who can reach it can steer the prover", err=True)
    url_host = f"[{host}]" if ":" in host else host
    click.echo(f"c2tui: serving the dashboard on http://{url_host}:{port} (a prover per browser tab, at most "
               f"{max_provers}; Ctrl-C stops)", err=True)
    server = GuardedServer(shlex.join(run_argv(theme, fps, **kwargs)), host=host, port=port, title="c2tui",
                           max_provers=max_provers, allow_origins=allow_origins)
    import asyncio

    # textual-serve runs on asyncio.get_event_loop(), which aiohttp closes at the end: a second
    # serve in one process (the fuzz's in-process cases) got that closed loop and a traceback
    asyncio.set_event_loop(asyncio.new_event_loop())
    server.serve(sock=sock)  # returns on SIGINT, SIGTERM or SIGHUP only, every tab's prover stopped
    fail("interrupted: the dashboards and their provers were stopped", RUN)  # Ctrl-C: 3, as everywhere


def _bind(host: str, port: int) -> Any:
    """The listening socket, or one line and 2 (busy port, an address not this machine's)."""
    import socket

    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, addr = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}", USAGE)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}", USAGE)
    sock.set_inheritable(False)
    return sock
