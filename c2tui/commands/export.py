"""`c2tui export FILE --format perfetto|csv -o OUT`: a recording for other tools.

perfetto: Chrome trace event JSON (opens in ui.perfetto.dev and chrome://tracing; OUT ending
in .gz is gzipped, which both open). csv: per-partition phase times, one row a partition.
The conversions are prover.observe.trace and prover.observe.phase_table.
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import click


@click.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["perfetto", "csv"]), default="perfetto", show_default=True,
              help="perfetto: Chrome trace event JSON; csv: per-partition phase times")
@click.option("--out", "-o", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="file to write ('-' for stdout); .gz gzips a perfetto trace")
def command(file: Path, fmt: str, out: Path) -> None:
    """Export a recording as a Perfetto/Chrome trace or a CSV table."""
    from prover import RecordingError, read_recording

    try:
        rec = read_recording(file)
    except RecordingError as exc:
        raise click.ClickException(str(exc)) from None
    if rec.header is None:
        raise click.ClickException(f"{file}: {rec.error}")
    if rec.error:
        click.echo(f"warning: {file}: {rec.error}; exporting the {len(rec.events)} events before it", err=True)
    if fmt == "csv":
        from prover import phase_csv

        data = phase_csv(rec.events).encode()
    else:
        from prover import to_trace

        data = json.dumps(to_trace(rec), separators=(",", ":")).encode()
        if out.suffix == ".gz":
            data = gzip.compress(data, mtime=0)
    _write(out, data)


def _write(out: Path, data: bytes) -> None:
    """Write whole or not at all: a temporary beside OUT, renamed over it."""
    if str(out) == "-":
        click.get_binary_stream("stdout").write(data)
        return
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
    click.echo(f"wrote {out} ({len(data):,} bytes)", err=True)
