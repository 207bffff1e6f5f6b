"""What `c2tui run` says when it quits: one line by default (ok / failed / abandoned, how it
quit, the partitions, the recording's path), the whole report (the summary's tables) with
`--summary full`, or written to a file with `--summary-out FILE` (what `c2tui summary` prints)."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def outcome(sm: Any, interrupted: bool, write_error: str | None) -> str:
    """failed (a proof or partition failed, or the recording could not be written) > abandoned
    (Ctrl-C, quit now, a drain that timed out) > ok."""
    if sm.proofs_failed or sm.partitions_failed or write_error:
        return "failed"
    return "abandoned" if interrupted else "ok"


def quit_line(sm: Any, how: str, interrupted: bool, writer: Any = None) -> str:
    """The one line: `c2tui: ok (quit): 12 partitions ok, 0 failed; recording: PATH (N events)`."""
    err = getattr(writer, "error", None) if writer is not None else None
    word = outcome(sm, interrupted, err)
    parts = f"{sm.partitions_ok} partitions ok, {sm.partitions_failed} failed"
    if sm.proofs_failed:
        parts += f", {sm.proofs_failed} proof(s) FAILED verification"
    line = f"c2tui: {word} ({how}): {parts}"
    if writer is not None:
        line += f"; recording: {writer.path} ({writer.written} events" + (f"; {err}" if err else "") + ")"
    return line


def report_text(sm: Any) -> str:
    """The full report as plain text (140 columns), as `c2tui summary` prints it to a pipe."""
    import io

    from rich.console import Console

    from c2tui.text.summary import render

    buf = io.StringIO()
    Console(file=buf, width=140, color_system=None, force_terminal=False).print(render(sm))
    return buf.getvalue()


def write_report(sm: Any, path: Path, force: bool) -> None:
    """Written whole or not at all (c2tui/cli/outpath.py; a failure is one line, exit 3)."""
    from c2tui.cli import outpath

    outpath.write_whole(path, report_text(sm).encode("utf-8"), force=force)
