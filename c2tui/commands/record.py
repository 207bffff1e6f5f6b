"""`c2tui record --out FILE [options] [--duration S | --sectors N] [--switch AT:MODE ...]`

Headless: runs the embedded prover, writes the event stream as JSON lines (flushed as it
goes), shows a one-line progress on a TTY, and prints the run summary (read back from the
file just written) at the end. Ctrl-C (or SIGTERM) stops cleanly: locks released, RunEnded
written, the file closed and readable.

Exit status: 0 all partitions' proofs verified; 1 a proof or partition failed, or the
recording could not be written; 2 bad options.
"""
from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.live import Live
from rich.text import Text

from c2tui.cluster import cluster_option, make_engine
from c2tui.options import config_from_options, run_options


def _parse_switches(specs: tuple[str, ...]) -> list[tuple[float, str]]:
    from prover.knobs import parse_switch

    out = []
    for spec in specs:
        at, sep, mode = spec.partition(":")
        if not sep:
            raise click.BadParameter(f"{spec!r}: use AT:MODE, e.g. 10:two-lock or 20:mem_sync=stream", param_hint="--switch")
        try:
            t = float(at)
        except ValueError:
            raise click.BadParameter(f"{spec!r}: AT must be seconds, e.g. 10 or 2.5", param_hint="--switch") from None
        if t < 0:
            raise click.BadParameter(f"{spec!r}: AT must be >= 0", param_hint="--switch")
        try:
            parse_switch(mode)
        except ValueError as exc:
            raise click.BadParameter(f"{spec!r}: {exc}", param_hint="--switch") from None
        out.append((t, mode))
    return sorted(out, key=lambda x: x[0])


@click.command("record")
@click.option("--out", "-o", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="recording to write (JSON lines)")
@run_options
@cluster_option
@click.option("--duration", type=float, default=None, help="run this many seconds, then let in-flight partitions finish")
@click.option("--sectors", type=int, default=None, help="prove this many sectors, then stop")
@click.option("--switch", "switches", multiple=True, metavar="AT:MODE",
              help="at AT seconds apply MODE: single | two-lock | stream | device | pause | resume | KNOB=VALUE (repeatable)")
@click.option("--drain-timeout", type=float, default=120.0, show_default=True,
              help="after --duration, how long in-flight partitions may take to finish")
@click.option("--quiet", "-q", is_flag=True, help="no progress line, no summary")
def command(out: Path, duration: float | None, sectors: int | None, switches: tuple[str, ...], drain_timeout: float,
            quiet: bool, cluster: str | None, **kwargs: Any) -> None:
    """Run the prover headless and record every event."""
    from prover.config import ConfigError
    from prover.record import RecordingError, RecordingHeader, RecordingWriter, read_recording
    from prover.state import DashboardState
    from c2tui.summary_view import render
    from prover.summary import summarize

    if duration is not None and sectors is not None:
        raise click.UsageError("give --duration or --sectors, not both")
    if duration is not None and duration <= 0:
        raise click.BadParameter("must be > 0 seconds", param_hint="--duration")
    plan = _parse_switches(switches)
    try:
        cfg = config_from_options(sectors=sectors, **kwargs)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    engine = make_engine(cfg, cluster)
    header = RecordingHeader(argv=list(sys.argv), config=cfg.public_dict())
    try:
        writer = RecordingWriter(out, header)
    except RecordingError as exc:
        raise click.ClickException(str(exc)) from None

    state = DashboardState()
    slock = threading.Lock()

    def fold_sink(e: Any) -> None:
        with slock:
            state.apply(e)

    engine.add_sink(writer.write)
    engine.add_sink(fold_sink)
    tty = sys.stdout.isatty() and not quiet

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt()

    old_term = signal.signal(signal.SIGTERM, on_term) if threading.current_thread() is threading.main_thread() else None
    failure: str | None = None
    live = _progress_line() if tty else None
    t_start = time.monotonic()
    engine.start()
    try:
        pending = list(plan)
        draining = False
        last_line = 0.0
        while not engine.wait(0.05):
            el = time.monotonic() - t_start
            while pending and pending[0][0] <= el:
                _, mode = pending.pop(0)
                engine.controller.apply(mode, source="switch")
            if writer.error is not None:
                failure = writer.error
                engine.stop(timeout=30, reason=f"error: {writer.error}")
                break
            if duration is not None and el >= duration and not draining:
                draining = True
                if live is not None:
                    live.update(Text(f"{el:6.1f}s  duration reached: letting in-flight partitions finish...", style="yellow"))
                threading.Thread(target=engine.drain, kwargs={"timeout": drain_timeout}, daemon=True).start()
            if live is not None and el - last_line >= 0.25:
                last_line = el
                with slock:
                    line = _progress(state, el)
                live.update(Text.assemble(("draining  ", "yellow"), line) if draining else line)
    except KeyboardInterrupt:
        if live is not None:
            live.stop()
        click.echo("interrupted: stopping cleanly...", err=True)
        try:
            engine.stop(timeout=30, reason="interrupted")
        except KeyboardInterrupt:  # a second Ctrl-C: still close the file
            pass
    finally:
        if live is not None:
            live.stop()
        if not engine.finished:
            engine.stop(timeout=30)
        writer.close()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    failure = failure or writer.error or getattr(engine, "error", None)
    rec = read_recording(out)
    from prover.state import fold

    sm = summarize(fold(rec.events))
    if not quiet:
        from rich.console import Console

        Console(width=None if sys.stdout.isatty() else 140).print(render(sm))
        click.echo(f"recording: {out} ({len(rec.events)} events)")
    if rec.error:
        click.echo(f"recording is damaged: {rec.error}", err=True)
        sys.exit(1)
    if failure:
        click.echo(f"error: {failure}", err=True)
        sys.exit(1)
    if sm.proofs_failed or sm.partitions_failed:
        click.echo(f"FAILED: {sm.proofs_failed} proof(s) failed verification, {sm.partitions_failed} partition(s) failed",
                   err=True)
        sys.exit(1)


def _progress_line() -> Live:
    """One rich line, redrawn in place on a TTY (rich handles width and cursor moves)."""
    live = Live(Text(""), console=Console(), refresh_per_second=4, transient=False)
    live.start()
    return live


def _progress(s: Any, el: float) -> Text:
    k = s.knobs
    return Text.assemble(
        f"{el:6.1f}s ", ("SIMULATED " if s.simulated else "", "bold yellow"),
        (f"{k.get('lock_mode', '?')}/{k.get('mem_sync', '?')}", "cyan"),
        "  done ", (str(s.partitions_ok), "green"), *((" + ", (f"{s.partitions_failed} failed", "bold red"))
                                                       if s.partitions_failed else ()),
        "  proofs ", (f"{s.proofs_ok} ok", "green"), *(("/", (f"{s.proofs_failed} bad", "bold red"))
                                                          if s.proofs_failed else ()),
        "  fallbacks ", (str(s.fallbacks), "yellow" if s.fallbacks else ""),
        f"  {s.throughput_per_min():.1f}/min")
