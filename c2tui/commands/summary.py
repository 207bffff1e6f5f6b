"""`c2tui summary FILE [--json]`: fold a recording into its summary (per GPU and overall).

A damaged recording (truncated, corrupt line, unknown schema version, not a recording) prints
what it can of the valid prefix, names the bad line on stderr and exits 1.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command("summary")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="machine-readable JSON instead of tables")
def command(file: Path, as_json: bool) -> None:
    """Throughput, per-phase times, lock waits and holds, fallbacks, OOMs, proofs."""
    from prover.record import RecordingError, read_recording
    from prover.state import fold
    from c2tui.summary_view import render
    from prover.summary import summarize

    try:
        rec = read_recording(file)
    except RecordingError as exc:
        raise click.ClickException(str(exc)) from None
    if rec.header is None:
        click.echo(f"{file}: {rec.error}", err=True)
        sys.exit(1)
    sm = summarize(fold(rec.events))
    if as_json:
        doc = sm.model_dump(mode="json")
        doc["recording"] = {"file": str(file), "events": len(rec.events), "error": rec.error, "bad_line": rec.bad_line}
        click.echo(json.dumps(doc, indent=2))
    else:
        from rich.console import Console

        Console(width=None if sys.stdout.isatty() else 140).print(render(sm))
    if rec.error:
        click.echo(f"{file}: {rec.error} (summary of the {len(rec.events)} valid events before it)", err=True)
        sys.exit(1)
