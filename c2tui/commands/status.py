"""`c2tui status PATH [--json]`: one snapshot of a running prover (`--listen PATH`) for an
on-call person or a script: it attaches read-only, takes the run so far, folds it, prints
and detaches (the prover goes on; nothing can be steered from here).

Exit status as elsewhere (docs/exit-codes.md): 0 the run is healthy so far; 1 a proof or a
partition failed; 2 nothing to attach to, or refused (bad token, other protocol).
"""
from __future__ import annotations

import sys
import threading
from typing import Any

import click

from c2tui.exits import INVALID, OK, USAGE


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
        f"; partitions ok {r.partitions['ok']}, failed {r.partitions['failed']}, in flight {r.partitions['in_flight']}, "
        f"queued {r.partitions['queued']}; fallbacks {r.fallbacks}, OOMs {r.ooms}, stalls {r.stalls}\n",
        "queues: " + ", ".join(f"{c} {q.queued} queued (oldest {q.oldest_queued_s:.1f} s) + {q.in_flight} in flight"
                               for c, q in r.queues.items()) + "\n")
    if r.host_ram is not None:
        h = r.host_ram
        head.append(f"host RAM {_gib(h.used)} of {_gib(h.budget) if h.budget else 'no budget'} (key {_gib(h.key)}, "
                    f"pinned {_gib(h.pinned)}, {h.workers_holding} workers{'; modelled' if h.modelled else ''})"
                    + (f"; held back: {', '.join(h.waiting)}" if h.waiting else "") + "\n")
    if r.starting:
        head.append(f"starting: {', '.join(r.starting)}\n", style="yellow")
    return Group(head, _gpu_table(r))


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
    one cell, a long name cut with an ellipsis), then a line a GPU of what its workers are on
    (phase counts); --json has every worker's phase."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table(title="per GPU (lock: holder partition held +waiting)", title_justify="left", box=box.SIMPLE_HEAD,
              pad_edge=False, collapse_padding=True)
    for col in ("gpu", "name", "VRAM GiB", "free", "util", "mem lock", "compute lock", "done", "fb/OOM"):
        t.add_column(col, no_wrap=True, overflow="ellipsis", max_width=14 if col == "name" else None)
    for g in r.gpus:
        t.add_row(str(g.gpu) + (" CORDONED" if g.cordoned else ""), g.name,
                  f"{_gb(g.vram_used)}/{_gb(g.vram_budget)}", _gb(g.vram_free),
                  "-" if g.util is None else f"{g.util:.0%}", _lock_cell(g.locks["mem"], g.gpu),
                  _lock_cell(g.locks["compute"], g.gpu), str(g.done), f"{g.fallbacks}/{g.ooms}")
    on_it = Text("\n".join(f"gpu{g.gpu} workers: {_on_it(g.current)}" for g in r.gpus))
    return Group(t, on_it)


@click.command("status")
@click.argument("address", metavar="PATH")
@click.option("--json", "as_json", is_flag=True, help="the snapshot as JSON (prover.status.StatusReport)")
@click.option("--token-file", default=None, metavar="FILE", help="TCP only: a token (the read-only one will do)")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="seconds to wait for the run so far")
def command(address: str, as_json: bool, token_file: str | None, timeout: float) -> None:
    """One status snapshot of a prover served with --listen PATH (read-only)."""
    from prover import AttachError
    from prover import AttachClient
    from prover import DashboardState
    from prover import status_of

    if not 0 < timeout <= 3600:
        raise click.BadParameter(f"{timeout} is not a number of seconds in (0, 3600]", param_hint="--timeout")
    state, live = DashboardState(), threading.Event()
    try:
        client = AttachClient(address, name="status", token_file=token_file, readonly=True)
        welcome = client.connect()
    except AttachError as exc:
        click.echo(f"c2tui status: {exc}", err=True)
        sys.exit(USAGE)
    ended = threading.Event()

    def on_event(e: Any) -> None:
        if not client.live:  # the run up to the attach: one consistent snapshot, nothing after
            state.apply(e)

    client.start(on_event, lambda reason: ended.set())
    arrived = _wait(client, ended, timeout)
    client.close()
    if not arrived:
        click.echo(f"c2tui status: the run so far did not arrive within {timeout:g} s", err=True)
        sys.exit(USAGE)
    report = status_of(state, welcome.history_dropped)
    if as_json:
        click.echo(report.model_dump_json(indent=1))
    else:
        from rich.console import Console

        Console(width=None if sys.stdout.isatty() else 140).print(_render(report))
    sys.exit(OK if report.healthy else INVALID)


def _wait(client: Any, ended: threading.Event, timeout: float) -> bool:
    """True once the history is in (Live); False if the stream ended first or time ran out."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end and not client.live and not ended.is_set():
        time.sleep(0.02)
    return client.live
