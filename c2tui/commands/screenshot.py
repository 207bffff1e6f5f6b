"""`c2tui screenshot FILE --at T [--size WxH] [--theme NAME] -o OUT.svg|OUT.png`: the dashboard
at run time T of a recording, rendered headlessly (Textual's run_test) and saved as SVG, or as
PNG rasterised by resvg (the optional `png` extra: resvg-py, a self-contained wheel)."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import click

from c2tui.cli import outpath
from c2tui.cli.exits import OutPath


def parse_size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not m:
        raise click.BadParameter(f"size must be WxH, e.g. 120x40, got {text!r}", param_hint="--size")
    w, h = int(m.group(1)), int(m.group(2))
    if not (20 <= w <= 1000 and 10 <= h <= 500):
        raise click.BadParameter("size out of range (20..1000 x 10..500)", param_hint="--size")
    return w, h


async def render_svg(file: str, at: float, size: tuple[int, int], theme: str, help_screen: bool = False,
                     label: str | None = None, rec: Any = None) -> str:
    """The dashboard at `at` as SVG; `rec`: the file already read (load_recording), not read again."""
    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.replay import ReplaySource

    if rec is None:
        src = ReplaySource.from_file(file, at=at, playing=False)
    else:
        src = ReplaySource(rec.events, header=rec.header, at=at, playing=False)
    app = DashboardApp(src, theme=theme)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        if help_screen:
            await pilot.press("question_mark")
        await pilot.pause()
        return app.export_screenshot(title=f"c2tui · {Path(file).name} @ {label or f'{at:g}s'}")


@click.command("screenshot")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--at", "at", required=True, metavar="[ANCHOR][+-]S",
              help="run time in seconds (25), or after an anchor: start | first-gpu | steady (first-gpu+10)")
@click.option("--size", default="120x40", show_default=True, help="terminal size WxH")
@click.option("--theme", default="dark", show_default=True, help="dark | light | high-contrast")
@click.option("--help-screen", is_flag=True, help="show the help screen over the dashboard")
@click.option("-o", "--out", "out", type=OutPath(dir_okay=False), required=True, help="output .svg or .png ('-': SVG on stdout)")
@click.option("--force", is_flag=True, help="replace --out if it exists")
def command(file: str, at: str, size: str, theme: str, help_screen: bool, out: str, force: bool) -> None:
    """Render the dashboard at time T of a recording to an SVG or PNG file."""
    import themes

    if theme not in themes.names():
        raise click.BadParameter(f"unknown theme {theme!r}; have {', '.join(themes.names())}", param_hint="--theme")
    suffix = Path(out).suffix.lower()
    stdout = out == "-"
    if not stdout:
        outpath.check(Path(out), "--out", force=force)
    if suffix not in (".svg", ".png") and not stdout:
        raise click.BadParameter(f"{out!r}: the file name must end in .svg or .png (or '-' for stdout)", param_hint="-o")
    to_png = _png_renderer() if suffix == ".png" else None
    from c2tui.cli.exits import USAGE, fail
    from c2tui.sources.replay import check_at, load_recording
    from prover import parse_at, resolve_at
    from prover import RecordingError

    dims = parse_size(size)
    try:
        rec = load_recording(file)
        if not rec.events:  # nothing valid to draw: say why rather than "--at outside 0..0"
            fail(f"{file}: no events" + (f" ({rec.error})" if rec.error else ""), USAGE)
        t = resolve_at(at, rec.events)
        check_at(t, rec.events)
        label = None if parse_at(at)[0] is None else f"{at} ({t:.1f}s)"
        svg = asyncio.run(render_svg(file, t, dims, theme, help_screen, label, rec))  # read once
    except RecordingError as exc:
        fail(f"{file}: {exc}", USAGE)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--at") from None
    write_out(out, to_png(svg) if to_png is not None else svg.encode("utf-8"), force)
    if rec.error:  # as summary does: the valid prefix drawn, the bad line named, exit 2
        fail(f"{file}: {rec.error} (drew the {len(rec.events)} valid events before it)", USAGE)


def _png_renderer():
    """svg text -> PNG bytes (resvg), or a clear error naming what to install."""
    try:
        import resvg_py
    except ImportError:
        raise click.UsageError("-o *.png needs resvg-py (pip install 'c2tui[png]'); or write .svg") from None

    def to_png(svg: str) -> bytes:
        # Textual's SVG asks for Fira Code from the web; resvg uses a local monospace face instead
        return bytes(resvg_py.svg_to_bytes(svg_string=svg, font_family="DejaVu Sans Mono",
                                           monospace_family="DejaVu Sans Mono"))

    return to_png



def write_out(out: str, data: bytes, force: bool) -> None:
    """The picture to stdout ('-') or, by the output-path policy, to the file (its name echoed)."""
    if out == "-":
        outpath.write_stdout(data)
        return
    outpath.write_whole(Path(out), data, force=force)
    click.echo(out)
