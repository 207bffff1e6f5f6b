"""`--metrics-port` / `--metrics-addr` / `--metrics-linger` on `run` and `record`.

    @metrics_options
    def command(metrics_port, metrics_addr, metrics_linger, **kw):
        exp = start_metrics(engine, metrics_port, metrics_addr)   # None when no port given
        ...
        stop_metrics(exp, metrics_linger)

The exporter itself is prover.observe.metrics (no Textual), fed by an engine sink.
"""
from __future__ import annotations

import time
from typing import Any, Callable, TypeVar

import click

from c2tui.cli.options import FiniteRange
from prover import EngineHandle

F = TypeVar("F", bound=Callable[..., Any])


def bind_address(ctx: Any, param: Any, value: str | None) -> str | None:
    """An address to listen on, named: an empty one would bind every interface without a word."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty address would listen on every interface: name one "
                                 "(127.0.0.1, or 0.0.0.0 for every interface, said so)")
    return value


def metrics_options(func: F) -> F:
    opts = [
        click.option("--metrics-port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
                     help="serve Prometheus metrics on this port (0: any free port, printed)"),
        click.option("--metrics-addr", default="127.0.0.1", show_default=True, metavar="ADDR", callback=bind_address,
                     help="address the metrics endpoint binds (0.0.0.0 for all interfaces)"),
        click.option("--metrics-linger", type=FiniteRange(0, 3600), default=0.0, show_default=True, metavar="S",
                     help="keep serving metrics this long after the run ends, so a last scrape sees the end"),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


def start_metrics(engine: EngineHandle, port: int | None, addr: str) -> Any:
    """Attach an exporter to the engine and serve it; None when no port was given."""
    if port is None:
        return None
    from prover import MetricsExporter

    exp = MetricsExporter()
    try:
        bound = exp.start(port, addr)
    except OSError as exc:
        from c2tui.cli.exits import USAGE, fail

        fail(f"--metrics-port: {exc}", USAGE)  # a busy or forbidden port is a bad option (2)
    engine.add_sink(exp.sink)
    host = f"[{addr}]" if ":" in addr else addr
    click.echo(f"metrics: http://{host}:{bound}/metrics", err=True)
    return exp


def stop_metrics(exp: Any, linger: float = 0.0) -> None:
    if exp is None:
        return
    if linger > 0:
        exp.drain()
        time.sleep(linger)
    exp.stop()
