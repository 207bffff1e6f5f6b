"""`c2tui [options]` / `c2tui run [options] [--record FILE] [--listen PATH] [--theme NAME]`:
the dashboard over the embedded prover.

Backend auto: cuda if a GPU is visible, else the simulated device (labelled SIMULATED on
screen). The engine runs on its own threads; the app only reads snapshots and sends the
Controller what the keys ask for. `--record` keeps the session's recording (the writer
`c2tui record` uses, as one more sink); `--listen` serves it to `c2tui attach`. On exit one
line says how it went (ok / failed / abandoned, the recording's path); `--summary full`
prints the whole report (of the recording when there is one), `--summary-out FILE` writes it.
SIGTERM and SIGHUP (the terminal closed) end the session as Ctrl-C does: in-flight work
abandoned and recorded, exit 3. `--theme` unset: the theme last chosen with `t` (c2tui/dashboard/prefs.py), else dark.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from c2tui.cli import outpath
from c2tui.cli.cluster import cluster_option, make_engine
from c2tui.cli.exits import INVALID, OK, RUN, OutPath, fail
from c2tui.cli.listen import listen_options, start_listening
from c2tui.cli.grpc_options import grpc_options, start_grpc, stop_grpc
from c2tui.cli.options import check_screen, config_from_options, run_options
from c2tui.cli.metrics_options import metrics_options, start_metrics, stop_metrics


@click.command("run")
@run_options
@cluster_option
@click.option("--theme", default=None, help="dark | light | high-contrast  [default: the last one chosen with t, else dark]")
@click.option("--fps", type=float, default=10.0, show_default=True, help="screen refresh rate (Hz)")
@click.option("--record", "record", type=OutPath(dir_okay=False, path_type=Path), default=None,
              help="keep a recording of this session (JSON lines, as `c2tui record` writes)")
@click.option("--force", is_flag=True, help="replace --record (and --summary-out) if it exists")
@click.option("--summary", "summary", type=click.Choice(["line", "full"]), default="line", show_default=True,
              help="on quit: one line (ok / failed / abandoned, the recording's path), or the full report")
@click.option("--summary-out", "summary_out", type=OutPath(dir_okay=False, path_type=Path), default=None,
              help="on quit: write the full report to this file too")
@listen_options
@metrics_options
@grpc_options
def command(theme: str | None, fps: float, cluster: str | None, record: Path | None, force: bool, listen: str | None,
            token_file: str | None, metrics_port: int | None, metrics_addr: str, metrics_linger: float,
            summary: str, summary_out: Path | None, **kwargs: Any) -> None:
    """Watch and steer the embedded prover live."""
    from c2tui.dashboard import prefs

    saved = prefs.load()
    theme = theme or saved.theme
    check_screen(theme, fps)
    from prover import ConfigError

    if record is not None:
        outpath.check(record, "--record", force=force)
    if summary_out is not None:
        outpath.check(summary_out, "--summary-out", force=force)
    try:
        cfg = config_from_options(**kwargs)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.live import LiveSource
    from prover import RecordingError, RecordingHeader, RecordingWriter

    engine = make_engine(cfg, cluster)  # e.g. --backend cuda without a visible GPU: the run cannot start (exit 3)
    metrics = start_metrics(engine, metrics_port, metrics_addr)  # first: a busy port leaves nothing open
    header = RecordingHeader(argv=list(sys.argv), config=cfg.public_dict())
    server = start_listening(engine, listen, token_file, header.model_dump(), kwargs.pop("readonly_token_file", None))
    cuzk = start_grpc(engine, kwargs)  # Curio's cuzk wire (docs/cuzk.md); None without --grpc
    writer = None
    if record is not None:
        try:
            writer = RecordingWriter(record, header, force=force)
        except RecordingError as exc:
            if server is not None:
                server.close()
            stop_grpc(cuzk)
            stop_metrics(metrics, 0.0)
            fail(str(exc), RUN)
        engine.add_sink(writer.write)
    source = LiveSource(engine, label="LIVE")
    app = DashboardApp(source, theme=theme, fps=fps, prefs=saved)
    try:
        app.run()
    finally:  # the app stopped the engine on unmount (Ctrl-C included); close what we opened
        stop_metrics(metrics, metrics_linger)
        if not engine.finished:
            engine.stop(timeout=30, reason="interrupted")
        if server is not None:
            server.close("run ended")
        stop_grpc(cuzk)
        if writer is not None:
            writer.close()
    from c2tui.cli.stop_signals import printed

    sm = _summarize(source, writer)
    printed(lambda: _say(sm, app, writer, summary, summary_out, force), lambda: None)  # the terminal may be gone (SIGHUP)
    app.exit_code()  # a crashed dashboard says so in one line, and the run exits 3
    sys.exit(RUN if app.crashed else exit_status(sm, app.interrupted, writer.error if writer is not None else None))


def exit_status(sm: Any, interrupted: bool, write_error: str | None) -> int:
    """As `record`: 3 when the recording could not be written or the session was interrupted
    (Ctrl-C, quit now, a drain that timed out), 1 when a proof or partition failed, else 0
    (q with nothing in flight, or after a drain). Quitting before anything was proved is 0:
    in the dashboard that is the operator's choice, not a run that failed to finish."""
    if write_error:
        return RUN
    if sm.proofs_failed or sm.partitions_failed:
        return INVALID
    return RUN if interrupted else OK


def _summarize(source: Any, writer: Any) -> Any:
    """What the session did: the summary of the recording when there is one (what a later
    `c2tui summary FILE` prints), else of the live fold."""
    from prover import summarize

    if writer is not None:
        from prover import read_recording
        from prover import fold_events as fold

        return summarize(fold(read_recording(writer.path).events))
    source.drain()
    return summarize(source.state)


def _say(sm: Any, app: Any, writer: Any, summary: str, summary_out: Path | None, force: bool) -> None:
    """The full report where asked, the one line, then the report's file (a failure to write
    it is one more line and exit 3, after everything else was said)."""
    from c2tui.text.quit_report import quit_line, write_report

    if summary == "full":
        from c2tui.text.summary import print_summary

        print_summary(sm)
    click.echo(quit_line(sm, app.quit_how, app.interrupted, writer))
    if summary_out is not None:
        write_report(sm, summary_out, force)
