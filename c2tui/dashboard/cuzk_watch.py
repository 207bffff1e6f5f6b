"""`c2tui attach --cuzk ADDR`: open the dashboard on a cuzk daemon (c2tui/sources/cuzk.py)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click


def watch_cuzk(address: str, status_url: str | None, steer: bool, record: str | None, name: str | None,
               token_file: str | None, theme: str | None, fps: float) -> None:
    import grpc

    from c2tui.cli import outpath
    from c2tui.dashboard import prefs
    from c2tui.sources.cuzk import CuzkSource
    from c2tui.cli.options import check_screen
    from prover import AttachError, RecordingError, RecordingHeader, RecordingWriter
    from prover import read_token

    saved = prefs.load()
    theme = theme or saved.theme
    check_screen(theme, fps)
    try:
        token = read_token(token_file)
    except AttachError as exc:
        raise click.UsageError(str(exc)) from None
    writer: Any = None
    if record is not None:
        outpath.check(Path(record), "--record")
        try:
            writer = RecordingWriter(Path(record), RecordingHeader(argv=list(sys.argv), config={"source": "cuzk",
                                                                                               "address": address}))
        except RecordingError as exc:
            raise click.UsageError(str(exc)) from None
    source = CuzkSource(address, status_url, steer=steer, writer=writer, token=token, name=name or "c2tui")
    try:
        source.connect()
    except grpc.RpcError as exc:
        source.stop()
        click.echo(f"c2tui attach: no cuzk daemon at {address}: {exc.code().name}: {exc.details()}", err=True)
        sys.exit(2)
    from c2tui.dashboard.app import DashboardApp

    app = DashboardApp(source, theme=theme, fps=fps, prefs=saved)
    app.run()
    click.echo(f"c2tui: stopped watching the cuzk daemon at {address}" + (f"; recorded to {record}" if record else ""))
    sys.exit(app.exit_code())
