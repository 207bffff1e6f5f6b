"""`c2tui compare A B [C ...]`: recordings side by side, each aligned at its anchor (--align
start | first-gpu | steady; default first-gpu, so a run still building its keys is not
compared with one already proving). Piped, or with --text: the tables (c2tui.compare_view);
--json: the same as JSON; on a terminal, --tui: the dashboards side by side on one replay
clock. Exit 2 for a file that is not a recording, or one that never reaches the anchor."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from prover.align import ANCHORS
from prover.state_rates import RATE_WINDOW_S


@click.command("compare")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--align", "align", type=click.Choice(ANCHORS), default="first-gpu", show_default=True,
              help="the moment that is 0 s in every recording")
@click.option("--window", type=click.FloatRange(min=0.1, max=3600.0), default=RATE_WINDOW_S, show_default=True,
              help="seconds of the windowed verified/min")
@click.option("--step", type=click.FloatRange(min=0.1), default=None, help="seconds between aligned rows [default: ~8 rows]")
@click.option("--json", "as_json", is_flag=True, help="machine-readable JSON instead of tables")
@click.option("--tui/--text", "tui", default=None, help="the side-by-side replay, or the tables [default: tui on a terminal]")
@click.option("--theme", default="dark", show_default=True, help="dark | light | high-contrast (--tui)")
def command(files: tuple[Path, ...], align: str, window: float, step: float | None, as_json: bool, tui: bool | None,
            theme: str) -> None:
    """Compare recordings side by side, aligned at each one's first GPU section."""
    from c2tui.exits import USAGE, fail
    from prover.compare import compare
    from prover.record import RecordingError, read_recording

    if len(files) < 2:
        raise click.UsageError("compare needs two recordings or more")
    runs = []
    for f in files:
        try:
            rec = read_recording(f)
        except RecordingError as exc:
            fail(f"{f}: {exc}", USAGE)
        if rec.header is None or not rec.events:
            fail(f"{f}: {rec.error or 'no events'}", USAGE)
        if rec.error:
            click.echo(f"c2tui: {f}: {rec.error}; comparing the {len(rec.events)} valid events before it", err=True)
        runs.append((str(f), rec.events))
    try:
        cmp = compare(runs, align=align, window_s=window, step=step)
    except ValueError as exc:
        fail(str(exc), USAGE)
    if as_json:
        click.echo(json.dumps(cmp.model_dump(mode="json"), indent=2))
        return
    if tui is None:
        tui = sys.stdout.isatty() and sys.stdin.isatty()
    if tui:  # the screen side's view (c2tui/compare_app.py): one column per run, run i at t + its anchor
        try:
            from c2tui.compare_app import compare_app
        except ImportError as exc:  # a build without the view: the tables, and why
            click.echo(f"c2tui compare: no side-by-side view in this build ({exc}); the tables instead", err=True)
        else:
            compare_app([str(f) for f in files], [r.anchor_t for r in cmp.runs], theme=theme).run()
            return
    from c2tui.compare_view import CompareView
    from c2tui.summary_view import summary_console

    summary_console().print(CompareView(cmp))
