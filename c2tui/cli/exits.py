"""Exit statuses shared by every subcommand (documented in README.md and docs/exit-codes.md).

    0  OK        the command did what it was asked (every proof it made or checked verified)
    1  INVALID   a proof did not verify (verify), or a run's proof or partition failed (record)
    2  USAGE     bad options, or an input file that is unreadable or malformed
    3  RUN       a run could not finish as asked: interrupted (SIGINT/SIGTERM/SIGHUP), the recording
                 could not be written (no space, I/O error, directory removed), or it proved nothing
    4  STARTING  `status` only: the run is still starting (a start-up step runs, no partition yet)
    5  GONE      `status --watch` only: the prover went away without ending its run (killed, crashed)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

OK, INVALID, USAGE, RUN = 0, 1, 2, 3
STARTING = 4  # `c2tui status` of a run still in start-up: neither healthy nor failed yet
GONE = 5  # `c2tui status --watch`: the stream stopped without the run's end (the prover killed or crashed)


def fail(message: str, code: int) -> NoReturn:
    """One line on stderr, then exit with `code` (no traceback)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def writable_dir(path: Path, what: str) -> Path:
    """`path` as a directory we can write in (created if missing); a usage error otherwise."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise click.BadParameter(f"{path}: exists and is not a directory", param_hint=what) from None
    except OSError as exc:
        raise click.BadParameter(f"{path}: cannot create ({exc.strerror or exc})", param_hint=what) from None
    if not path.is_dir():
        raise click.BadParameter(f"{path}: not a directory", param_hint=what)
    if not os.access(path, os.W_OK | os.X_OK):
        raise click.BadParameter(f"{path}: not writable", param_hint=what)
    return path


class OutPath(click.Path):
    """click.Path for something we write: an empty value is an error (it would mean the
    current directory, silently), and so is a file's path ending in '/' (`-o dir/` once wrote
    a file named `dir`)."""

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path: name a file or directory", param, ctx)
        if isinstance(value, str) and not self.dir_okay and value.endswith(("/", os.sep)):
            self.fail(f"{value!r} ends in '/', which names a directory: give a file's name", param, ctx)
        return super().convert(value, param, ctx)
