"""How `c2tui experiment` and `c2tui tune` show their results: a table on a terminal (rich), and
the progress line while they run. JSON is the result models' own dump (the commands)."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "no difference detected": "yellow",
                 "too few cycles": "yellow", "baseline": "dim"}


def _ci(ci: Any, fmt: str) -> str:
    return "-" if not ci else f"[{format(ci[0], fmt)}, {format(ci[1], fmt)}]"


def arms_table(result: Any, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for col, just in (("#", "right"), ("arm", "left"), ("holds", "right"), ("verified", "right"),
                      ("verified/min", "right"), ("95% interval", "right"), ("ratio to #0", "right"),
                      ("95% interval", "right"), ("verdict", "left"), ("OOMs/fallbacks/failed", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for a in result.arms:
        t.add_row(str(a.arm), a.label, str(a.holds), str(a.verified), f"{a.per_min:.1f}", _ci(a.per_min_ci, ".1f"),
                  "-" if a.ratio is None else f"{a.ratio:.3f}x", _ci(a.ratio_ci, ".3f"),
                  Text(a.verdict, style=VERDICT_STYLE.get(a.verdict, "")), f"{a.ooms}/{a.fallbacks}/{a.failed}")
    return t


def print_experiment(result: Any, run_line: str, design: str, console: Console | None = None) -> None:
    c = console or Console()
    c.print(Text(run_line, style="bold yellow" if run_line.startswith("SIMULATED") else "bold"))
    c.print(design)
    c.print(arms_table(result, f"verified partitions per minute, {result.cycles_complete} complete cycle(s)"))
    for n in result.notes:
        c.print(Text(f"note: {n}", style="yellow"))
    c.print(Text("a ratio is claimed only where its interval excludes 1; method: " + result.method, style="dim"))


def print_tune(result: Any, run_line: str, console: Console | None = None) -> None:
    c = console or Console()
    c.print(Text(run_line, style="bold yellow" if run_line.startswith("SIMULATED") else "bold"))
    t = Table(title=f"tune: one race per knob ({result.seconds:.0f} s)", title_justify="left")
    for col in ("knob", "values raced", "rounds", "leader", "ratio to incumbent", "adopted", "dropped"):
        t.add_column(col)
    for s in result.steps:
        ratio = "-" if s.ratio is None else f"{s.ratio:.3f}x {_ci(s.ratio_ci, '.3f')}"
        t.add_row(s.knob, ", ".join(s.values), str(s.rounds), s.leader, ratio, "yes" if s.adopted else "no",
                  "; ".join(f"{k}: {v}" for k, v in s.dropped.items()) or "-")
    c.print(t)
    changed = {k: v for k, v in result.best.items() if result.start.get(k) != v}
    c.print("start: " + ", ".join(f"{k}={v}" for k, v in result.start.items()))
    c.print(Text("best:  " + (", ".join(f"{k}={v}" for k, v in changed.items()) or "the start (no change found)"),
                 style="bold"))
    if result.confirm is not None:
        c.print(arms_table(result.confirm, "confirmation: start (#0) against best (#1), interleaved"))
        style = VERDICT_STYLE.get(result.verdict, "")
        c.print(Text(f"best against start: {result.verdict}", style=style))
    if changed:
        flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in changed.items())
        c.print(f"{'applied to the prover' if result.applied else 'to run with it'}: {flags}")
    for n in result.notes:
        c.print(Text(f"note: {n}", style="yellow"))


class Progress:
    """One line on stderr (a TTY only): which hold runs, cycles done, each arm's rate so far."""

    def __init__(self, enabled: bool) -> None:
        self.live: Live | None = None
        if enabled:
            self.live = Live(Text(""), console=Console(stderr=True), refresh_per_second=4, transient=True)
            self.live.start()

    def __call__(self, what: str, tally: Any) -> None:
        if self.live is None:
            return
        x = tally.current()
        counted = ""
        if x is not None:
            per_arm: dict[int, int] = {}
            for h in tally.holds_of(x.experiment, complete_only=False):
                per_arm[h.arm] = per_arm.get(h.arm, 0) + h.verified
            counted = "  counted " + " ".join(f"#{a}:{n}" for a, n in sorted(per_arm.items()))
        self.live.update(Text(f"{tally.t:7.1f}s  {what}{counted}"))

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
