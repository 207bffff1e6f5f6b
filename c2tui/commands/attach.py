"""`c2tui attach PATH`: the dashboard on a prover started elsewhere with `--listen PATH`.

It first receives the run so far (the server's history), then live events; every control
key goes to that prover's controller and is recorded there as attach:<name>. `q` detaches
(the prover goes on). `--raw` prints the event lines instead (for scripts); `--send SPEC`
applies one control and exits. `--readonly` (or, over TCP, the server's read-only token)
attaches a watcher: every event, no control (the prover refuses each with a Reply saying
so; `--send` then exits 2). Exit status 2: refused (other protocol version, bad token, a
control from a read-only client) or nothing to attach to.
"""
from __future__ import annotations

import json
import sys
import threading

import click
from prover import DashboardState



@click.command("attach")
@click.argument("address", metavar="PATH", required=False)
@click.option("--cuzk", "cuzk", default=None, metavar="ADDR",
              help="watch a cuzk proving daemon (Curio's; unix:///PATH or HOST:PORT) instead (docs/cuzk.md)")
@click.option("--status-url", default=None, metavar="URL", help="--cuzk: its HTTP /status (pipelines, workers)")
@click.option("--steer", is_flag=True, help="--cuzk: let cancel send CancelProof (read-only otherwise)")
@click.option("--record", "record", default=None, metavar="FILE", help="--cuzk: keep what is watched as a recording")
@click.option("--name", default=None, help="how this client's controls are recorded (attach:NAME)  [default: user-pid]")
@click.option("--token-file", default=None, metavar="FILE", help="TCP only: the server's token (or $C2TUI_ATTACH_TOKEN)")
@click.option("--raw", is_flag=True, help="print the event stream as JSON lines instead of the dashboard")
@click.option("--send", "send", default=None, metavar="SPEC",
              help="apply one control and exit: a knob set (mem_sync=stream, lock_mode=two-lock,mem_sync=device, "
                   "two-lock, pause), submit[=CLASS] or a job action (cancel=s3p2, cordon=1)")
@click.option("--readonly", is_flag=True,
              help="watch only: this client sees everything and can steer nothing (the prover refuses its controls)")
@click.option("--theme", default=None, help="dark | light | high-contrast  [default: the last one chosen with t, else dark]")
@click.option("--fps", type=float, default=10.0, show_default=True, help="screen refresh rate (Hz)")
def command(address: str | None, name: str | None, token_file: str | None, raw: bool, send: str | None,
            readonly: bool, theme: str | None, fps: float, cuzk: str | None = None, status_url: str | None = None,
            steer: bool = False, record: str | None = None) -> None:
    """Attach the dashboard to a running `c2tui record/run --listen PATH` (or a cuzk daemon: --cuzk)."""
    if cuzk is not None:
        from c2tui.dashboard.cuzk_watch import watch_cuzk

        watch_cuzk(cuzk, status_url, steer, record, name, token_file, theme, fps)
        return
    if address is None:
        raise click.UsageError("give the PATH a prover listens on (--listen), or --cuzk ADDR")
    from prover import AttachError
    from prover import AttachClient, RemoteController

    if send is not None and not send.strip():  # "" once opened the dashboard instead
        raise click.BadParameter("an empty control: e.g. mem_sync=stream, pause, submit", param_hint="--send")
    if raw and send is not None:
        raise click.BadParameter("--raw prints the stream, --send applies one control: give one", param_hint="--send")
    if raw or send is not None:
        try:
            client = AttachClient(address, name=name, token_file=token_file, readonly=readonly)
            client.connect()
        except AttachError as exc:
            click.echo(f"c2tui attach: {exc}", err=True)
            sys.exit(2)
        if send:
            _send(client, RemoteController(client), send)
        else:
            _raw(client)
        return
    from c2tui.cli.options import check_screen

    from c2tui.dashboard import prefs

    saved = prefs.load()
    theme = theme or saved.theme
    check_screen(theme, fps)  # as run checks them: --fps 0 or nan once crashed the attached dashboard
    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.live import AttachSource

    try:
        source = AttachSource(address, name=name, token_file=token_file, readonly=readonly)
        welcome = source.connect()
    except AttachError as exc:
        click.echo(f"c2tui attach: {exc}", err=True)
        sys.exit(2)
    app = DashboardApp(source, theme=theme, fps=fps, prefs=saved)
    app.run()
    click.echo(f"c2tui: detached from {address} (as attach:{welcome.client}); the prover goes on")
    sys.exit(app.exit_code())  # Ctrl-C or a crash: 3, as for any command; q detaches: 0


def _send(client, remote, spec: str) -> None:
    from prover import DashboardState

    state = DashboardState()  # the run so far: what a warning needs (the GPUs still taking work)

    def on_event(e) -> None:
        if not client.live:
            state.apply(e)

    client.start(on_event)
    warn = _cordon_warning(client, state, spec)
    try:
        changed = remote.submit_sector() if spec == "submit" else remote.apply(spec)
    except ValueError as exc:
        client.close()
        raise click.UsageError(f"refused: {exc}") from None
    client.close()
    click.echo(f"{spec}: {'sector ' + str(changed) if spec == 'submit' else ('changed' if changed else 'already so')}")
    if warn and changed:
        click.echo(f"warning: {warn}", err=True)


def _cordon_warning(client, state: DashboardState, spec: str) -> str:
    """What the dashboard says before such a cordon (the last GPU taking work idles the run)."""
    import re
    import time

    m = re.fullmatch(r"\s*cordon\s*=\s*(?:gpu)?(\d{1,4})\s*", spec)
    if m is None:
        return ""
    end = time.monotonic() + 10
    while not client.live and client.end_reason is None and time.monotonic() < end:
        time.sleep(0.02)
    from c2tui.widgets.row_actions import gpu_action

    action = gpu_action(state, int(m.group(1)))
    return getattr(action, "warn", "")


def _raw(client) -> None:
    done = threading.Event()
    out = sys.stdout

    def write(line: str) -> None:
        try:
            out.write(line + "\n")
            out.flush()
        except (BrokenPipeError, ValueError):  # e.g. `| head`: detach quietly
            done.set()

    def on_event(e) -> None:
        if not done.is_set():
            write(e.model_dump_json())

    def on_end(reason: str) -> None:
        write(json.dumps({"kind": "bye", "reason": reason}))
        done.set()

    client.start(on_event, on_end)
    from c2tui.cli.stop_signals import sleep_until

    try:
        sleep_until(done)  # Ctrl-C: KeyboardInterrupt goes on to the CLI's one line and status 3
    finally:
        client.close()
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            sys.stdout = None  # type: ignore[assignment]  # nothing left to say to a closed pipe
