"""`c2tui export FILE --format perfetto|csv -o OUT`: a recording for other tools.

perfetto: Chrome trace event JSON (opens in ui.perfetto.dev and chrome://tracing; OUT ending
in .gz is gzipped, which both open). csv: per-partition phase times, one row a partition.
The conversions are prover.observe.trace and prover.observe.phase_table.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import click

from c2tui.cli import outpath
from c2tui.cli.exits import OutPath


@click.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["perfetto", "csv"]), default="perfetto", show_default=True,
              help="perfetto: Chrome trace event JSON; csv: per-partition phase times")
@click.option("--out", "-o", "out", required=True, type=OutPath(dir_okay=False, path_type=Path),
              help="file to write ('-' for stdout); .gz gzips a perfetto trace")
@click.option("--force", is_flag=True, help="replace --out if it exists")
def command(file: Path, fmt: str, out: Path, force: bool) -> None:
    """Export a recording as a Perfetto/Chrome trace or a CSV table."""
    from c2tui.cli.exits import USAGE, fail
    from c2tui.sources.event_store import EventStore
    from prover import RecordingError, read_recording

    stdout = str(out) == "-"
    if not stdout:
        outpath.check(out, "--out", force=force)
    store = EventStore()
    try:
        rec = read_recording(file, lines=store.add)  # validated once; lines kept, not models
    except RecordingError as exc:
        fail(str(exc), USAGE)
    rec.events = store.finish(in_time_order=False)  # type: ignore[assignment]  # one pass each below, in the file's order
    if rec.header is None:
        fail(f"{file}: {rec.error}", USAGE)
    if fmt == "csv":
        from prover import phase_csv

        data = phase_csv(rec.events).encode()
    else:
        from prover import to_trace

        data = json.dumps(to_trace(rec), separators=(",", ":")).encode()
        if out.suffix == ".gz":
            data = gzip.compress(data, mtime=0)
    if stdout:
        outpath.write_stdout(data)
    else:
        outpath.write_whole(out, data, force=force)
        click.echo(f"wrote {out} ({len(data):,} bytes)", err=True)
    if rec.error:  # as summary does: the valid prefix written, the bad line named, exit 2
        fail(f"{file}: {rec.error} (exported the {len(rec.events)} valid events before it)", USAGE)
