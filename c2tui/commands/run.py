"""`c2tui` / `c2tui run [options] [--theme NAME]`: the dashboard over the embedded prover.

Backend auto: cuda if a GPU is visible, else the simulated device (labelled SIMULATED on
screen). The engine runs on its own threads; the app only reads snapshots and sends the
Controller what the keys ask for.
"""
from __future__ import annotations

from typing import Any

import click

from c2tui.cluster import cluster_option, make_engine
from c2tui.options import config_from_options, run_options


@click.command("run")
@run_options
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
        cfg = config_from_options(**kwargs)
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
