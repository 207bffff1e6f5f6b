"""`c2tui summary FILE [--json]`: fold a recording into its summary (per GPU and overall).

A damaged recording (truncated, corrupt or reordered line, implausible claims, unknown
schema version) prints what it can of the valid prefix, names the bad line on stderr and
exits 2; so does a file that is not a recording (nothing printed but the error). Exit 1: the
recorded run had a failed proof or partition; 0 otherwise (c2tui/cli/exits.py).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from c2tui.cli.options import FiniteRange
from prover import RATE_WINDOW_S


@click.command("summary")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="machine-readable JSON instead of tables")
@click.option("--window", type=FiniteRange(min=0.1, max=3600.0), default=RATE_WINDOW_S, show_default=True,
              help="seconds of the windowed verified/min")
def command(file: Path, as_json: bool, window: float) -> None:
    """Throughput, per-phase times, lock waits and holds, fallbacks, OOMs, proofs."""
    from prover import RecordingError, read_recording
    from prover import DashboardState
    from c2tui.text.summary import print_summary
    from prover import summarize

    from c2tui.cli.exits import INVALID, USAGE, fail

    from prover import ArmPace

    try:
        state = DashboardState(rate_window_s=window)
        arms = ArmPace(state)  # an experiment's arms' paces, read from the fold as it goes

        def sink(e: Any) -> None:
            state.apply(e)
            arms(e)

        rec = read_recording(file, sink=sink)  # folded as read: no event kept (1M events in < 1 GB)
    except RecordingError as exc:
        fail(str(exc), USAGE)
    if rec.header is None:
        fail(f"{file}: {rec.error}", USAGE)
    sm = summarize(state)
    sm.arm_pace = arms.rows()
    if as_json:
        doc = sm.model_dump(mode="json")
        doc["recording"] = {"file": str(file), "events": rec.count, "error": rec.error, "bad_line": rec.bad_line}
        click.echo(json.dumps(doc, indent=2))
    else:
        print_summary(sm)
    if rec.error:
        click.echo(f"{file}: {rec.error} (summary of the {rec.count} valid events before it)", err=True)
        sys.exit(USAGE)
    if sm.proofs_failed or sm.partitions_failed:
        sys.exit(INVALID)
