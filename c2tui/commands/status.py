"""`c2tui status PATH [--json] [--watch N]`: a snapshot of a running prover (`--listen PATH`)
for an on-call person or a script: it attaches read-only, takes the run so far, folds it,
prints and detaches (the prover goes on; nothing can be steered from here). With `--watch N`
it stays attached, folds the live events and redraws every N seconds in place (rich Live: one
frame replaced by the next, no clearing and so no flicker; a pipe gets one snapshot per N s)
until the run ends or Ctrl-C.

Exit status as elsewhere (docs/exit-codes.md): 0 the run is healthy so far; 1 a proof or a
partition failed; 2 nothing to attach to, or refused (bad token, other protocol); 3 Ctrl-C;
4 still starting (a start-up step runs and no partition has begun: "starting: STEP, N s",
never "healthy" with GPU ?); 5 (--watch) the prover went away without ending its run (killed,
crashed): said, never a silent 0. A watched prover that sends nothing for stale_after() seconds
(stopped, hung: it samples VRAM every vram_sample_s) is said to be stale on every frame.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

import click

from c2tui.cli.exits import GONE, INVALID, OK, RUN, STARTING, USAGE
from prover import DashboardState


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f}"


def _gib(n: int) -> str:
    return f"{_gb(n)} GiB"


def _render(r: Any) -> Any:
    from rich.console import Group
    from rich.text import Text

    sim = " [SIMULATED]" if r.simulated else ""
    head = Text.assemble(
        (f"c2tui status{sim}  ", "bold"),
        f"{r.backend} {r.profile}, proved 2^{r.proved_log2}, modelled 2^{r.modelled_log2}; up {r.uptime_s:.1f} s",
        (f"; ENDED ({r.end_reason})" if r.ended else ""), "\n",
        "proofs ", (f"verified {r.proofs['verified']}", "green"), ", ",
        (f"failed {r.proofs['failed']}", "bold red" if r.proofs["failed"] else ""), f", unchecked {r.proofs['unchecked']}",
        f"; fallbacks {r.fallbacks}, OOMs {r.ooms}, stalls {r.stalls}\n",  # a line each: 120 columns wrapped "stalls"
        f"partitions ok {r.partitions['ok']}, failed {r.partitions['failed']}, in flight {r.partitions['in_flight']}, "
        f"queued {r.partitions['queued']}\n",
        "queues: " + ", ".join(f"{c} {q.queued} queued (oldest {q.oldest_queued_s:.1f} s) + {q.in_flight} in flight"
                               for c, q in r.queues.items()) + "\n")
    if r.host_ram is not None:
        h = r.host_ram
        key = f"key {_gb(h.key)} + circuits {_gib(h.circuits)}" if h.circuits else f"key {_gib(h.key)}"  # as the dashboard
        head.append(f"host RAM {_gib(h.used)} of {_gib(h.budget) if h.budget else 'no budget'} ({key}, "
                    f"pinned {_gib(h.pinned)}, {h.workers_holding} workers{'; modelled' if h.modelled else ''})"
                    + (f"; held back: {', '.join(h.waiting)}" if h.waiting else "") + "\n")
    if r.starting or not r.started:
        head.append(starting_line(r) + "\n", style="bold yellow")
    head.append("knobs: " + knob_text(r.knobs) + "\n")
    head.append(rate_line(r) + "\n")
    for g in r.gpus:  # what sets each GPU's pace now (the dashboard's pace line, in words)
        if g.pace is not None:
            head.append(f"pace gpu{g.gpu}: {g.pace.sentence()}\n")
    for line in health_lines(r):  # the GPUs' own health (NVML), the host's CPUs, why classes wait, alerts
        head.append_text(line)
        head.append("\n")
    return Group(head, _gpu_table(r))


def health_lines(r: Any) -> list[Any]:
    """Alerts met now, why classes wait, the host's CPUs and each GPU's NVML health, a line each."""
    from rich.text import Text

    from c2tui.text.status_health import status_health_lines

    return [Text(t, style=st) for t, st in status_health_lines(r)]


def knob_text(knobs: dict[str, Any]) -> str:
    """Every knob as a person reads it (prover.knobs: the budgets as sizes, booleans on/off)."""
    from prover import KNOBS

    def one(k: str, v: Any) -> str:
        kn = KNOBS.get(k)
        if isinstance(v, bool):
            return "on" if v else "off"
        return kn.show(v) if kn is not None and kn.parse_value is not None else str(v)

    order = [k for k in KNOBS if k in knobs] + sorted(k for k in knobs if k not in KNOBS)
    return " · ".join(f"{k} {one(k, knobs[k])}" for k in order)


def _lock_cell(lk: Any, gpu: int | None = None) -> str:
    """holder (without its GPU's prefix), partition, seconds held, +waiting."""
    wait = f" +{len(lk.waiters)}" if lk.waiters else ""
    if not lk.holder:
        return "free" + wait
    who = lk.holder.removeprefix(f"g{gpu}") if gpu is not None else lk.holder
    return " ".join(x for x in (who, lk.part or "", f"{lk.held_s:.1f}s") if x) + wait


def _on_it(current: list) -> str:
    """What the GPU's workers are doing, as counts a phase: one short line, not a cell per worker."""
    from collections import Counter

    counts = Counter(c.phase or "between phases" for c in current)
    return ", ".join(f"{n} {phase}" for phase, n in counts.most_common()) or "-"


def _gpu_table(r: Any) -> Any:
    """One line a GPU that fits 100 columns (no vertical rules, VRAM used/budget in GiB, fallbacks/OOMs in
    one cell), then a line a GPU with its whole name (never cut) and what its workers are on
    (phase counts); --json has every worker's phase."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table(title="per GPU (lock: holder partition held +waiting)", title_justify="left", box=box.SIMPLE_HEAD,
              pad_edge=False, collapse_padding=True)
    for col in ("gpu", "pool GiB", "free", "util", "mem lock", "compute lock", "done", "fb/OOM"):
        t.add_column(col, no_wrap=True, overflow="ellipsis")
    for g in r.gpus:
        oom = f"{g.ooms}" + (f" ({g.ooms_retried}r {g.ooms_failed}f)" if g.ooms_retried or g.ooms_failed else "")
        t.add_row(str(g.gpu) + (" CORDONED" if g.cordoned else ""),
                  f"{_gb(g.vram_used)}/{_gb(g.vram_budget)}", _gb(g.vram_free),
                  "-" if g.util is None else f"{g.util:.0%}", _lock_cell(g.locks["mem"], g.gpu),
                  _lock_cell(g.locks["compute"], g.gpu), str(g.done), f"{g.fallbacks}/{oom}")
    on_it = Text("\n".join(f"gpu{g.gpu} {g.name}{' [SIMULATED]' if g.simulated else ''}: {_on_it(g.current)}"
                           for g in r.gpus))  # the name whole, on a line of its own: nothing to cut it
    return Group(t, on_it)


@click.command("status")
@click.argument("address", metavar="PATH")
@click.option("--json", "as_json", is_flag=True, help="the snapshot as JSON (prover.fold.status.StatusReport)")
@click.option("--token-file", default=None, metavar="FILE", help="TCP only: a token (the read-only one will do)")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="seconds to wait for the run so far")
@click.option("--watch", "watch", type=float, default=None, metavar="N",
              help="stay attached and redraw every N seconds (in place, no flicker) until the run ends or Ctrl-C")
def command(address: str, as_json: bool, token_file: str | None, timeout: float, watch: float | None) -> None:
    """A status snapshot of a prover served with --listen PATH (read-only); --watch N: every N s."""
    from prover import AttachError
    from prover import AttachClient
    from prover import DashboardState

    if not 0 < timeout <= 3600:
        raise click.BadParameter(f"{timeout} is not a number of seconds in (0, 3600]", param_hint="--timeout")
    if watch is not None and not 0.1 <= watch <= 3600:  # also refuses nan
        raise click.BadParameter(f"{watch} is not a number of seconds in [0.1, 3600]", param_hint="--watch")
    state, lock = DashboardState(), threading.Lock()
    try:
        client = AttachClient(address, name="status", token_file=token_file, readonly=True)
        welcome = client.connect()
    except AttachError as exc:
        click.echo(f"c2tui status: {exc}", err=True)
        sys.exit(USAGE)
    ended = threading.Event()
    heard = Heard()

    def on_event(e: Any) -> None:
        heard()
        if watch is not None or not client.live:  # one snapshot: the run up to the attach, nothing after
            with lock:
                state.apply(e)

    def on_end(reason: str) -> None:
        heard.end_reason = reason
        ended.set()

    client.start(on_event, on_end)
    try:
        arrived = _wait(client, ended, timeout)
        if not arrived:
            client.close()
            click.echo(f"c2tui status: the run so far did not arrive within {timeout:g} s", err=True)
            sys.exit(USAGE)
        report = _report(state, lock, welcome.history_dropped)
        if watch is not None:
            report = _watch(state, lock, welcome.history_dropped, watch, ended, as_json, heard)
            if not report.ended:  # the stream stopped, the run did not end: the prover is gone
                client.close()
                click.echo(f"c2tui status: the prover is gone: its stream stopped without the run's end "
                           f"({heard.end_reason or 'connection closed'}; last event {heard.quiet_s():.1f} s before)",
                           err=True)
                sys.exit(GONE)
        else:
            _print(report, as_json)
    except KeyboardInterrupt:  # Ctrl-C (the way out of --watch): 3, as for any command interrupted
        client.close()
        sys.exit(RUN)
    client.close()
    sys.exit(exit_of(report))


def exit_of(report: Any) -> int:
    """1 a failure; 4 still starting (docs/exit-codes.md); 0 healthy so far."""
    if not report.healthy:
        return INVALID
    return OK if report.started else STARTING


def _one_rate(x: Any) -> str:
    ci = "" if x.ci is None else f" [95% {x.ci[0]:.1f}-{x.ci[1]:.1f}]"
    settling = f"settling ({x.proofs} of {x.settle_proofs} proofs): " if x.settling else ""
    return f"{settling}{x.per_min:.1f}/min{ci} on {x.proofs} proofs over {x.span_s:.0f} s"


def rate_line(r: Any) -> str:
    """"verified/min over the window: 823.4/min [95% 700.1-960.2] on 412 proofs over 30 s; since the change: ..."."""
    out = "verified/min over the window: " + ("-" if r.rate_window is None else _one_rate(r.rate_window))
    return out + ("" if r.rate_since_change is None else f"; since the last change: {_one_rate(r.rate_since_change)}")


def starting_line(r: Any) -> str:
    """"starting: keys, 12 s" (every step still running, each with how long it has run)."""
    steps = [f"{n}, {r.starting_for_s.get(n, 0.0):.0f} s" for n in r.starting]
    return "starting: " + ("; ".join(steps) if steps else "no partition begun yet")


def _report(state: DashboardState, lock: threading.Lock, dropped: int) -> Any:
    from prover import screen, status_of

    with lock:  # the client's thread folds while we read
        r = status_of(state, dropped)
        r.alerts = [f"{v.level}: {v.reason} ({v.alert})" for v in screen.verdicts(state)]  # the screen's thresholds
        return r


def _console() -> Any:
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 140)


def _print(report: Any, as_json: bool) -> None:
    if as_json:
        click.echo(report.model_dump_json(indent=1))
    else:
        _console().print(_render(report))


STALE_MIN_S = 10.0  # a watched prover silent this long (or 3 VRAM sample periods, if longer) is stale


class Heard:
    """When the watched stream last brought an event (a SIGSTOPped prover's snapshot once
    showed "healthy" for ever), and why it ended."""

    def __init__(self) -> None:
        import time

        self._clock = time.monotonic
        self.last = self._clock()
        self.end_reason: str | None = None

    def __call__(self) -> None:
        self.last = self._clock()

    def quiet_s(self) -> float:
        return self._clock() - self.last


def stale_after(state: DashboardState) -> float:
    """Seconds of silence after which a running prover is stale: it samples VRAM every
    vram_sample_s (RunStarted's config), a start-up step beats every 0.5 s."""
    period = state.config.get("vram_sample_s")
    return max(STALE_MIN_S, 3 * float(period)) if isinstance(period, (int, float)) else STALE_MIN_S


def stale_line(report: Any, heard: Heard, after: float) -> str | None:
    """"STALE: no event from the prover for 42 s ..." while a running prover is silent."""
    quiet = heard.quiet_s()
    if report.ended or quiet < after:
        return None
    return (f"STALE: no event from the prover for {quiet:.0f} s (it sends one at least every {after / 3:g} s): "
            "stopped (SIGSTOP), hung or unreachable; these figures are from then")


def _watch(state: DashboardState, lock: threading.Lock, dropped: int, every: float, ended: threading.Event, as_json: bool,
           heard: Heard) -> Any:
    """Redraw every `every` s until the stream ends; returns the last report. On a terminal one
    frame replaces the last (rich Live, cursor moves, no clearing); elsewhere each is printed.
    A frame says when the prover has gone quiet (stale_line)."""
    import json
    import time

    from rich.console import Group
    from rich.live import Live
    from rich.text import Text

    from c2tui.cli.stop_signals import sleep_until

    console = _console()
    report = _report(state, lock, dropped)
    stale = lambda r: stale_line(r, heard, stale_after(state))  # noqa: E731
    if as_json or not console.is_terminal:
        while True:
            line = stale(report)
            if as_json:
                click.echo(json.dumps({**json.loads(report.model_dump_json()), "stale": line}, indent=1))
            else:
                _print(report, False)
                if line:
                    click.echo(line)
            if sleep_until(ended, every):
                return _report(state, lock, dropped)
            report = _report(state, lock, dropped)

    def frame(r: Any, foot: Text) -> Group:
        line = stale(r)
        return Group(Text(line, style="bold red"), _render(r), foot) if line else Group(_render(r), foot)

    stamp = lambda: Text(f"every {every:g} s · {time.strftime('%H:%M:%S')} · Ctrl-C leaves", style="dim")  # noqa: E731
    with Live(frame(report, stamp()), console=console, auto_refresh=False, transient=False) as live:
        while not sleep_until(ended, every):
            report = _report(state, lock, dropped)
            live.update(frame(report, stamp()), refresh=True)
        report = _report(state, lock, dropped)
        live.update(Group(_render(report), Text("the run's stream ended", style="dim")), refresh=True)
    return report


def _wait(client: Any, ended: threading.Event, timeout: float) -> bool:
    """True once the history is in (Live); False if the stream ended first or time ran out."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end and not client.live and not ended.is_set():
        time.sleep(0.02)
    return client.live
