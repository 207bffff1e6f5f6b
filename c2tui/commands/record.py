"""`c2tui record --out FILE [options] [--duration S | --sectors N] [--switch AT:MODE ...]`

Headless: runs the embedded prover, writes the event stream as JSON lines (flushed as it
goes), shows a one-line progress on a TTY, and prints the run summary (read back from the
file just written) at the end. Ctrl-C (or SIGTERM, or SIGHUP: the terminal closed) stops
cleanly: locks released, RunEnded written, the file closed and readable, exit 3. An existing --out is never replaced without --force,
and a second writer on the same file fails at once (the first holds a lock on it).

Exit status (c2tui/cli/exits.py): 0 every partition's proof verified; 1 a proof or partition
failed; 2 bad options; 3 the run did not finish as asked: interrupted, the recording could
not be written (the OS's words are printed; what was written is a readable prefix), or
nothing was proved.
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.live import Live
from rich.text import Text

from c2tui.cli import outpath
from c2tui.cli.exits import INVALID, RUN, USAGE, OutPath
from c2tui.cli.cluster import cluster_option, make_engine
from c2tui.cli.listen import listen_options, start_listening
from c2tui.cli.grpc_options import grpc_options, start_grpc, stop_grpc
from c2tui.cli.metrics_options import metrics_options, start_metrics, stop_metrics
from c2tui.cli.options import config_from_options, finite, run_options
from c2tui.text.startup import key_loads, startup_table
from c2tui.cli.stop_signals import drop_output, interrupting, printed
from prover import EngineHandle
from prover import disciplines, starting
from prover import DashboardState

MAX_SECONDS = 365 * 86400.0  # a year: far beyond any run, far below what timers overflow on


def _parse_switches(specs: tuple[str, ...]) -> list[tuple[float, str]]:
    from prover import parse_knob_set

    out = []
    for spec in specs:
        at, sep, mode = spec.partition(":")
        if not sep:
            raise click.BadParameter(f"{spec!r}: use AT:KNOB=VALUE[,KNOB=VALUE...], e.g. 10:two-lock or "
                                     "20:lock_mode=two-lock,mem_sync=stream", param_hint="--switch")
        try:
            t = float(at)
        except ValueError:
            raise click.BadParameter(f"{spec!r}: AT must be seconds, e.g. 10 or 2.5", param_hint="--switch") from None
        if not 0 <= t <= MAX_SECONDS:  # also false for nan
            raise click.BadParameter(f"{spec!r}: AT must be finite seconds >= 0", param_hint="--switch")
        try:
            name, _, value = mode.partition("=")
            if name.strip().lower() in ("cancel", "requeue", "cordon", "uncordon"):  # bare: told it needs a target
                from prover import parse_target

                parse_target(name.strip().lower(), value)
            elif name.strip().lower() == "submit":  # submit[=CLASS]: a sector of a proof class
                from prover import proof_class

                proof_class(value or "c2")
            else:
                parse_knob_set(mode)  # a budget's size against the partition is checked when applied
        except ValueError as exc:
            raise click.BadParameter(f"{spec!r}: {exc}", param_hint="--switch") from None
        out.append((t, mode))
    return sorted(out, key=lambda x: x[0])


@click.command("record")
@click.option("--out", "-o", "out", required=True, type=OutPath(dir_okay=False, path_type=Path),
              help="recording to write (JSON lines)")
@run_options
@cluster_option
@click.option("--duration", type=float, default=None, help="run this many seconds, then let in-flight partitions finish")
@click.option("--sectors", type=int, default=None, help="prove this many sectors, then stop")
@click.option("--switch", "switches", multiple=True, metavar="AT:KNOB=V[,KNOB=V]",
              help=f"at AT seconds apply a knob set as one change: KNOB=VALUE[,KNOB=VALUE...] (e.g. "
                   f"5:lock_mode=two-lock,mem_sync=device), a bare value ({' | '.join(disciplines.names())} | stream | "
                   "device | pause | resume), submit[=CLASS] or a job action (cancel=s3p2, cordon=1); repeatable")
@click.option("--drain-timeout", type=float, default=120.0, show_default=True,
              help="after --duration, how long in-flight partitions may take to finish")
@click.option("--quiet", "-q", is_flag=True, help="no progress line, no summary")
@click.option("--force", is_flag=True, help="replace --out if it exists")
@metrics_options
@listen_options
@grpc_options
def command(out: Path, duration: float | None, sectors: int | None, switches: tuple[str, ...], drain_timeout: float,
            quiet: bool, force: bool, metrics_port: int | None, metrics_addr: str, metrics_linger: float,
            listen: str | None, token_file: str | None, cluster: str | None, **kwargs: Any) -> None:
    """Run the prover headless and record every event."""
    from prover import ConfigError
    from prover import DashboardState, RecordingHeader

    if duration is not None and sectors is not None:
        raise click.UsageError("give --duration or --sectors, not both")
    if duration is not None:
        finite(duration, "--duration", 0.0, MAX_SECONDS, low_open=True)
    finite(drain_timeout, "--drain-timeout", 0.0, MAX_SECONDS)
    plan = _parse_switches(switches)
    outpath.check(out, "--out", force=force)
    try:
        cfg = config_from_options(sectors=sectors, **kwargs)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    if duration is not None and cfg.sectors is not None:  # sectors may come from the TOML file
        raise click.UsageError("give a duration or a number of sectors, not both (sectors is set in --config)")
    engine = make_engine(cfg, cluster)  # no GPU for --backend cuda, a bad --cluster: a clean error
    metrics = start_metrics(engine, metrics_port, metrics_addr)  # before the file: a busy port leaves none
    header = RecordingHeader(argv=list(sys.argv), config=cfg.public_dict())
    server = start_listening(engine, listen, token_file, header.model_dump(), kwargs.pop("readonly_token_file", None))
    cuzk = start_grpc(engine, kwargs)  # Curio's cuzk wire (docs/cuzk.md); None without --grpc
    writer = _open_writer(out, header, force, server, cuzk)
    state = DashboardState()
    slock = threading.Lock()

    def fold_sink(e: Any) -> None:
        with slock:
            state.apply(e)

    engine.add_sink(writer.write)
    engine.add_sink(fold_sink)
    tty = sys.stdout.isatty() and not quiet

    failure: str | None = None
    interrupted = False
    live = _progress_line() if tty else None
    t_start = time.monotonic()
    with interrupting():  # SIGTERM, SIGHUP: as Ctrl-C
        engine.start()
        try:
            failure = _watch(engine, plan, writer, duration, drain_timeout, live,
                             lambda el: _locked_progress(slock, state, el), t_start)
        except KeyboardInterrupt:
            interrupted = True
            _stopping(live, engine)
        finally:
            _close(live, engine, writer, metrics, metrics_linger, server)
            stop_grpc(cuzk)
    failure = failure or writer.error or getattr(engine, "error", None)
    sys.exit(printed(lambda: _report(out, failure, interrupted, quiet), lambda: _report(out, failure, interrupted, True)))


def _stopping(live: Any, engine: EngineHandle) -> None:
    """Interrupted: say so (the terminal may be gone) and stop the engine cleanly. The progress
    line's last redraw fails too once the terminal closed: an EIO there used to skip the stop
    below, and the run was recorded as "stopped" rather than "interrupted"."""
    try:
        if live is not None:
            live.stop()
        click.echo("interrupted: stopping cleanly...", err=True)
    except OSError:  # SIGHUP: the terminal closed
        drop_output()
    try:
        engine.stop(timeout=30, reason="interrupted")
    except KeyboardInterrupt:  # a second Ctrl-C: still close the file
        pass


def _close(live: Any, engine: EngineHandle, writer: Any, metrics: Any, linger: float, server: Any) -> None:
    """Whatever happened: the engine stopped, the file closed, the listeners gone."""
    if live is not None:
        try:
            live.stop()
        except OSError:
            pass
    if not engine.finished:
        engine.stop(timeout=30)
    writer.close()
    stop_metrics(metrics, linger)
    if server is not None:
        server.close("run ended")


def _open_writer(out: Path, header: Any, force: bool, server: Any, cuzk: Any = None) -> Any:
    """The recording's writer; an unwritable file closes the listener and exits (RUN)."""
    from prover import RecordingError, RecordingWriter

    try:
        return RecordingWriter(out, header, force=force)
    except RecordingError as exc:
        if server is not None:
            server.close()
        stop_grpc(cuzk)
        click.echo(f"error: {exc}", err=True)
        sys.exit(RUN)


def _locked_progress(slock: threading.Lock, state: DashboardState, el: float) -> Any:
    with slock:
        return startup_table(state, el) if starting(state) else _progress(state, el)


def _watch(engine: EngineHandle, plan: list, writer: Any, duration: float | None, drain_timeout: float, live: Any,
           progress: Any, t_start: float) -> str | None:
    """Until the run ends: apply the --switch plan on time, stop on a writer error (returned),
    drain once the duration is reached, refresh the progress line."""
    pending = list(plan)
    draining = False
    last_line = 0.0
    while not engine.wait(0.05):
        el = time.monotonic() - t_start
        while pending and pending[0][0] <= el:
            _, mode = pending.pop(0)
            try:
                engine.controller.apply(mode, source="switch")
            except ValueError as exc:  # e.g. a budget below one partition: refused, run goes on
                click.echo(f"c2tui record: --switch {mode!r} refused: {exc}", err=True)
        if writer.error is not None:
            engine.stop(timeout=30, reason=f"error: {writer.error}")
            return writer.error
        if duration is not None and el >= duration and not draining:
            draining = True
            if live is not None:
                live.update(Text(f"{el:6.1f}s  duration reached: letting in-flight partitions finish...", style="yellow"))
            threading.Thread(target=engine.drain, kwargs={"timeout": drain_timeout}, daemon=True).start()
        if live is not None and el - last_line >= 0.25:
            last_line = el
            line = progress(el)
            live.update(Text.assemble(("draining  ", "yellow"), line) if draining and isinstance(line, Text) else line)
    return None


def _report(out: Path, failure: str | None, interrupted: bool, quiet: bool) -> int:
    """Print the summary of what was written (a prefix if writing failed) and choose the exit status."""
    from prover import RecordingError, read_recording
    from prover import fold_events as fold
    from c2tui.text.summary import print_summary
    from prover import summarize

    try:
        rec = read_recording(out)
    except RecordingError as exc:  # e.g. the directory was removed under us
        click.echo(f"error: {failure or exc}", err=True)
        return RUN
    sm = summarize(fold(rec.events))
    if not quiet:
        print_summary(sm)
        click.echo(f"recording: {out} ({len(rec.events)} events)")
    if failure:
        click.echo(f"error: {failure} (the recording holds the {len(rec.events)} events written before it)", err=True)
        return RUN
    if rec.error:
        click.echo(f"recording is damaged: {rec.error}", err=True)
        return RUN
    if sm.proofs_failed or sm.partitions_failed:
        click.echo(f"FAILED: {sm.proofs_failed} proof(s) failed verification, {sm.partitions_failed} partition(s) failed",
                   err=True)
        return INVALID
    if interrupted:
        click.echo("interrupted: the run was stopped before it finished", err=True)
        return RUN
    ended = sm.end_reason or ""
    if ended.startswith("error: KeyDoesNotFit") and sm.partitions_ok == 0:  # the budget given
        click.echo(f"error: --host-ram-budget: {ended.split(': ', 2)[-1]}", err=True)
        return USAGE
    if sm.partitions_ok == 0:
        unchecked = f" ({sm.partitions_unchecked} finished unchecked)" if sm.partitions_unchecked else ""
        click.echo(f"FAILED: the run proved nothing: no partition's proof verified{unchecked}", err=True)
        return RUN
    if sm.partitions_unchecked:
        click.echo(f"note: {sm.partitions_unchecked} partition(s) finished with proofs never verified "
                   "(--verify-share < 1); they are not counted as ok", err=True)
    return 0


def _progress_line() -> Live:
    """One rich line, redrawn in place on a TTY (rich handles width and cursor moves)."""
    live = Live(Text(""), console=Console(), refresh_per_second=4, transient=False)
    live.start()
    return live


def _progress(s: DashboardState, el: float) -> Text:
    k = s.knobs
    return Text.assemble(
        f"{el:6.1f}s ", ("SIMULATED " if s.simulated else "", "bold yellow"),
        (f"{k.get('lock_mode', '?')}/{k.get('mem_sync', '?')}", "cyan"),
        "  verified ", (str(s.partitions_ok), "green"),
        *((" + ", (f"{s.partitions_unchecked} unchecked", "bold yellow")) if s.partitions_unchecked else ()), *((" + ", (f"{s.partitions_failed} failed", "bold red"))
                                                       if s.partitions_failed else ()),
        "  proofs ", (f"{s.proofs_ok} ok", "green"), *(("/", (f"{s.proofs_failed} bad", "bold red"))
                                                          if s.proofs_failed else ()),
        "  fallbacks ", (str(s.fallbacks), "yellow" if s.fallbacks else ""), *_rates(s), *key_loads(s))


def _rates(s: DashboardState) -> tuple:
    """The windowed rate (named window) and since the last change: what a switch did."""
    r = s.rates()
    since = () if r.since_change_per_min is None else (f", {r.since_change_per_min:.1f} since change "
                                                       f"({r.since_change_proofs} proofs)",)
    settling = f"settling {r.window_proofs} of {r.settle_proofs}: " if r.settling else ""
    return (f"  {settling}{r.windowed_per_min:.1f}/min ({r.window_s:g} s, {r.window_proofs} proofs)", *since)
