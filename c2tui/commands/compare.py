"""`c2tui compare A B [C ...]`: recordings side by side, each aligned at its anchor (--align
start | first-gpu | steady; default first-gpu, so a run still building its keys is not
compared with one already proving). Piped, or with --text: the tables (c2tui.text.compare);
--json: the same as JSON; on a terminal, --tui: the dashboards side by side on one replay
clock. Exit 2 for a file that is not a recording, or one that never reaches the anchor; a
damaged recording (e.g. truncated) is compared by its valid prefix, named on stderr, and exits 2
after the output, as `summary` does."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from c2tui.cli.exits import OutPath
from c2tui.cli.options import FiniteRange
from prover import ANCHORS
from prover import RATE_WINDOW_S


@click.command("compare")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--align", "align", type=click.Choice(ANCHORS), default="first-gpu", show_default=True,
              help="the moment that is 0 s in every recording")
@click.option("--window", type=FiniteRange(min=0.1, max=3600.0), default=RATE_WINDOW_S, show_default=True,
              help="seconds of the windowed verified/min")
@click.option("--step", type=FiniteRange(min=0.1), default=None, help="seconds between aligned rows [default: ~8 rows]")
@click.option("--json", "as_json", is_flag=True, help="machine-readable JSON instead of tables")
@click.option("--tui/--text", "tui", default=None, help="the side-by-side replay, or the tables [default: tui on a terminal]")
@click.option("--theme", default="dark", show_default=True, help="dark | light | high-contrast (--tui)")
@click.option("--at", "at", type=FiniteRange(), default=0.0, show_default=True,
              help="the side-by-side view starts at this many seconds after the anchor (--tui, -o)")
@click.option("-o", "--out", "out", type=OutPath(dir_okay=False), default=None,
              help="write the side-by-side view at --at to this .svg or .png instead")
@click.option("--size", default="160x48", show_default=True, help="terminal size WxH for -o")
@click.option("--force", is_flag=True, help="replace -o if it exists")
def command(files: tuple[Path, ...], align: str, window: float, step: float | None, as_json: bool, tui: bool | None,
            theme: str, at: float, out: str | None, size: str, force: bool) -> None:
    """Compare recordings side by side, aligned at each one's first GPU section."""
    from c2tui.cli.exits import USAGE, fail
    from prover import compare_runs as compare
    from c2tui.sources.replay import load_recording
    from prover import RecordingError

    if len(files) < 2:
        raise click.UsageError("compare needs two recordings or more")
    runs, damaged = [], False
    for f in files:
        try:
            rec = load_recording(f)  # validated once; its lines kept compactly, parsed as each pass reads them
        except RecordingError as exc:
            fail(f"{f}: {exc}", USAGE)
        if not rec.events:
            fail(f"{f}: {rec.error or 'no events'}", USAGE)
        if rec.error:
            click.echo(f"c2tui: {f}: {rec.error}; comparing the {len(rec.events)} valid events before it", err=True)
            damaged = True
        runs.append((str(f), rec.events))
    try:
        cmp = compare(runs, align=align, window_s=window, step=step)
    except ValueError as exc:
        fail(str(exc), USAGE)
    _show(cmp, [str(f) for f in files], as_json, tui, theme, at, out, size, force)
    if damaged:
        sys.exit(USAGE)


def _show(cmp, files: list[str], as_json: bool, tui: bool | None, theme: str, at: float, out: str | None,  # type: ignore[no-untyped-def]
          size: str, force: bool) -> None:
    """The comparison as JSON, as an image (-o), on the screen (--tui) or as tables."""
    if as_json:
        click.echo(json.dumps(cmp.model_dump(mode="json"), indent=2))
        return
    offsets = [r.anchor_t for r in cmp.runs]
    if out is not None:  # the screen side's view, headless (c2tui/dashboard/compare_app.py)
        _write_view(files, offsets, at, size, theme, out, force)
        return
    if tui is None:
        tui = sys.stdout.isatty() and sys.stdin.isatty()
    if tui:  # the screen side's view (c2tui/dashboard/compare_app.py): one column per run, run i at t + its anchor
        from c2tui.dashboard.compare_app import compare_app

        app = compare_app(files, offsets, at=at, theme=theme)
        app.run()
        if app.exit_code():
            sys.exit(app.exit_code())
        return
    from c2tui.text.compare import CompareView
    from c2tui.text.fit_table import summary_console

    summary_console().print(CompareView(cmp))


def _write_view(files: list[str], offsets: list[float], at: float, size: str, theme: str, out: str,
                force: bool = False) -> None:
    """The side-by-side view at aligned time `at` to an SVG or PNG (as `screenshot` writes one)."""
    import asyncio

    import themes
    from c2tui.cli import outpath
    from c2tui.commands.screenshot import _png_renderer, parse_size, write_out
    from c2tui.dashboard.compare_app import compare_svg

    if theme not in themes.names():
        raise click.BadParameter(f"unknown theme {theme!r}; have {', '.join(themes.names())}", param_hint="--theme")
    suffix = Path(out).suffix.lower()
    if suffix not in (".svg", ".png"):
        raise click.BadParameter(f"{out!r}: the file name must end in .svg or .png", param_hint="-o")
    to_png = _png_renderer() if suffix == ".png" else None
    outpath.check(Path(out), "--out", force=force)  # the one output-path policy (c2tui/cli/outpath.py)
    svg = asyncio.run(compare_svg(files, offsets, at, parse_size(size), theme))
    write_out(out, to_png(svg) if to_png is not None else svg.encode("utf-8"), force)
