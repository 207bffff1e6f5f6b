"""`c2tui replay FILE [--speed X]`: the dashboard over a recording (play/pause, speed, seek)."""
from __future__ import annotations

import sys

import click

from c2tui.cli.exits import USAGE, fail


@click.command("replay")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--speed", type=float, default=1.0, show_default=True, help="playback speed, 0.25 .. 16")
@click.option("--at", "at", default=None, metavar="[ANCHOR][+-]S",
              help="start at this run time: seconds, or after start | first-gpu | steady (first-gpu+10)")
@click.option("--paused", is_flag=True, help="start paused")
@click.option("--theme", default=None, help="dark | light | high-contrast  [default: the last one chosen with t, else dark]")
@click.option("--fps", type=float, default=10.0, show_default=True, help="screen refresh rate")
@click.option("--allow-damaged", is_flag=True,
              help="replay the valid events before a damaged line (said on stderr); without it a damaged file exits 2")
def command(file: str, speed: float, at: str | None, paused: bool, theme: str | None, fps: float, allow_damaged: bool) -> None:
    """Replay a recording on the dashboard."""
    from c2tui.dashboard import prefs
    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.replay import SPEEDS, ReplaySource, check_at, load_recording

    if not SPEEDS[0] <= speed <= SPEEDS[-1]:  # also refuses nan
        raise click.BadParameter(f"speed must be within {SPEEDS[0]}..{SPEEDS[-1]}", param_hint="--speed")
    if not 0.5 <= fps <= 60:
        raise click.BadParameter("fps must be within 0.5..60", param_hint="--fps")
    saved = prefs.load()
    theme = theme or saved.theme
    _check_theme(theme)
    from prover import RecordingError

    try:
        rec = load_recording(file)
    except RecordingError as exc:
        fail(f"{file}: {exc}", USAGE)
    if not rec.events:
        fail(f"{file}: no events" + (f" ({rec.error})" if rec.error else ""), USAGE)
    if rec.error and not allow_damaged:  # as summary, export and screenshot: a damaged input is 2
        fail(f"{file}: {rec.error} (--allow-damaged replays the {len(rec.events)} valid events before it)", USAGE)
    from prover import resolve_at

    try:
        t = None if at is None else resolve_at(at, rec.events)
        check_at(t, rec.events)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--at") from None
    if rec.error:  # --allow-damaged: said, then replayed
        click.echo(f"c2tui: {file} is damaged: {rec.error}; replaying the {len(rec.events)} valid events before it "
                   "(--allow-damaged)", err=True)
    src = ReplaySource(rec.events, header=rec.header, at=t, speed=speed, playing=not paused)
    app = DashboardApp(src, theme=theme, fps=fps, prefs=saved)
    app.run()
    sys.exit(app.exit_code())  # Ctrl-C or a crash: 3, as for any command


def _check_theme(theme: str) -> None:
    import themes

    if theme not in themes.names():
        raise click.BadParameter(f"unknown theme {theme!r}; have {', '.join(themes.names())}", param_hint="--theme")
