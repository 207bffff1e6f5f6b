"""`c2tui` / `c2tui run [options] [--theme NAME]`: the dashboard over the embedded prover.

Backend auto: cuda if a GPU is visible, else the simulated device (labelled SIMULATED on
screen). The engine runs on its own threads; the app only reads snapshots and sends the
Controller what the keys ask for.
"""
from __future__ import annotations

from typing import Any

import click

from c2tui.cluster import cluster_option, make_engine

try:  # the shared run/record options (c2tui/options.py)
    from c2tui.options import config_from_options, run_options
except ImportError:  # pragma: no cover - only while options.py has not landed
    run_options = None
    config_from_options = None


def _fallback_options(func):
    opts = [
        click.option("--backend", type=click.Choice(["auto", "sim", "cuda"]), default=None),
        click.option("--gpus", type=int, default=None),
        click.option("--workers-per-gpu", type=int, default=None),
        click.option("--lock-mode", type=click.Choice(["single", "two-lock"]), default=None),
        click.option("--mem-sync", type=click.Choice(["device", "stream"]), default=None),
        click.option("--vram-budget", default=None),
        click.option("--constraints-log2", type=int, default=None),
        click.option("--partitions", type=int, default=None),
        click.option("--profile", default=None),
        click.option("--config", "config", type=click.Path(exists=True, dir_okay=False), default=None),
        click.option("--seed", type=int, default=None),
        click.option("--time-scale", type=float, default=None),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


def _fallback_config(**kw: Any):
    from prover.config import load_config

    path = kw.pop("config", None)
    return load_config(path, **kw)


_options = run_options or _fallback_options
_config = config_from_options or _fallback_config


@click.command("run")
@_options
@cluster_option
@click.option("--theme", default="dark", show_default=True, help="dark | light | high-contrast")
@click.option("--fps", type=float, default=10.0, show_default=True, help="screen refresh rate (Hz)")
def command(theme: str, fps: float, cluster: str | None, **kwargs: Any) -> None:
    """Watch and steer the embedded prover live."""
    import themes

    if theme not in themes.names():
        raise click.BadParameter(f"unknown theme {theme!r}; have {', '.join(themes.names())}", param_hint="--theme")
    if not 0.5 <= fps <= 60:
        raise click.BadParameter("fps must be within 0.5..60", param_hint="--fps")
    from prover.config import ConfigError

    try:
        cfg = _config(**kwargs)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    from c2tui.app import DashboardApp
    from c2tui.sources import LiveSource
    engine = make_engine(cfg, cluster)  # e.g. --backend cuda without a visible GPU: a clean error
    source = LiveSource(engine, label="LIVE")
    DashboardApp(source, theme=theme, fps=fps).run()
    # the app stopped the engine on unmount; say how the run ended
    _, st = source.snapshot()
    click.echo(f"c2tui: {st.partitions_ok} partitions ok, {st.partitions_failed} failed, "
               f"{st.proofs_ok} proofs verified, {st.fallbacks} fallbacks in {st.t:.1f}s")
