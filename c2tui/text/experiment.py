"""How `c2tui experiment` and `c2tui tune` show their results: a table on a terminal (rich), and
the progress line while they run. JSON is the result models' own dump (the commands). Piped,
the tables are 140 columns wide (COLUMNS when set), and a value too wide folds onto the next
line: a number is never cut."""
from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from c2tui.text.fit_table import summary_console

VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "no difference detected": "yellow",
                 "too few cycles": "yellow", "no verdict": "yellow", "baseline": "dim", "not confirmed": "yellow"}


def _ci(ci: Any, fmt: str) -> str:
    return "-" if not ci else f"[{format(ci[0], fmt)}, {format(ci[1], fmt)}]"


def arms_table(result: Any, title: str) -> Table:
    """One row an arm (#, as the legend above it names them): what it counted, its rate and its
    ratio to #0, each with its 95% interval, and the verdict (fits 80 columns; narrower, its
    cells fold: never cut)."""
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("#", no_wrap=True, min_width=3)
    for col in ("counted", "per min", "95%", "ratio", "95%"):
        t.add_column(col, justify="right", overflow="fold")
    t.add_column("verdict", overflow="fold")
    for a in result.arms:
        t.add_row(f"#{a.arm}", str(a.verified), f"{a.per_min:.1f}", _ci(a.per_min_ci, ".1f"),
                  "-" if a.ratio is None else f"{a.ratio:.3f}x", _ci(a.ratio_ci, ".3f"),
                  Text(a.verdict, style=VERDICT_STYLE.get(a.verdict, "")))
    return t


def troubles(result: Any) -> list[str]:
    """The constraint counters, where any is not zero (in the counted windows)."""
    return [f"#{a.arm}: {a.ooms} OOM(s), {a.fallbacks} fallback(s), {a.failed} failed, {a.unchecked} unchecked"
            for a in result.arms if a.ooms or a.fallbacks or a.failed or a.unchecked]


def legend(result: Any) -> list[str]:
    return [f"#{a.arm}  {a.label}" for a in result.arms]


def out_console() -> Console:
    """The terminal's width on a TTY, else COLUMNS, else 140 (a pipe, a log): as summaries."""
    return summary_console()


def print_experiment(result: Any, run_line: str, design: str, console: Console | None = None) -> None:
    c = console or out_console()
    c.print(Text(run_line, style="bold yellow" if run_line.startswith("SIMULATED") else "bold"))
    c.print(design)
    for line in legend(result):
        c.print(line, overflow="fold")
    c.print(arms_table(result, f"verified partitions per minute, {result.cycles_complete} complete cycle(s)"))
    for n in [*troubles(result), *result.notes]:
        c.print(Text(f"note: {n}", style="yellow"))
    c.print(Text("a ratio is claimed only where its interval excludes 1 (docs/experiment.md)", style="dim"))


def found_line(result: Any) -> str:
    """What the tune found, exactly: confirmed, found but not confirmed (with the race's figure
    and the time a confirmation needs), or nothing better in any race."""
    changed = {k: v for k, v in result.best.items() if result.start.get(k) != v}
    if changed:
        ci = _ci(result.ratio_ci, ".2f")
        return (f"best: {', '.join(f'{k}={v}' for k, v in changed.items())}: {result.ratio:.2f}x {ci} against the "
                "start, confirmed on fresh holds")
    found = {k: v for k, v in result.found.items() if result.start.get(k) != v}
    if found:
        from prover import experiment

        return "found " + experiment.not_confirmed(result, result.confirm_needs_s or 0.0)
    blind = [s for s in result.steps if s.why]
    if blind:
        return f"best: the start: {len(blind)} race(s) could give no verdict ({blind[0].why})"
    if result.steps:
        return "best: the start: no setting was significantly faster than it in its race (each race above)"
    return "best: the start: nothing was raced"


def print_tune(result: Any, run_line: str, console: Console | None = None) -> None:
    c = console or out_console()
    c.print(Text(run_line, style="bold yellow" if run_line.startswith("SIMULATED") else "bold"))
    budget = f" of --time {result.budget_s:.0f} s" if result.budget_s else ""
    c.print(Text(f"tune: one race per knob, {result.seconds:.0f} s{budget}", style="bold"))
    for s in result.steps:
        ratio = "" if s.ratio is None else f" (x{s.ratio:.3f} {_ci(s.ratio_ci, '.3f')} against the incumbent)"
        ratio = ratio or (f" (no verdict: {s.why})" if s.why else "")
        c.print(f"  {s.knob}: raced {', '.join(s.values)} for {s.rounds} rounds; leader {s.leader}{ratio}: "
                f"{'adopted' if s.adopted else 'kept the incumbent'}", overflow="fold")
        for value, why in s.dropped.items():
            c.print(f"    dropped {value}: {why}", overflow="fold")
    changed = {k: v for k, v in result.best.items() if result.start.get(k) != v}
    c.print("start: " + ", ".join(f"{k}={v}" for k, v in result.start.items()), overflow="fold")
    if result.confirm is not None:
        for line in legend(result.confirm):
            c.print(line, overflow="fold")
        c.print(arms_table(result.confirm, "confirmation: the start (#0) against the races' best (#1), interleaved"))
    c.print(Text(found_line(result), style="bold " + VERDICT_STYLE.get(result.verdict, "")), overflow="fold")
    if changed:
        flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in changed.items())
        c.print(f"{'applied to the prover' if result.applied else 'to run with it'}: {flags}")
    for n in result.notes:
        if result.confirm_needs_s is None or "not confirmed on fresh holds" not in n:  # said above
            c.print(Text(f"note: {n}", style="yellow"), overflow="fold")


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


def experiment_parts(experiments: Any, prefix: str = "") -> list[Any]:
    """The experiments a recording carries (prover.fold.experiments.ExperimentSummary, counted
    again from its events), for `summary` and `compare`: each one's legend and arms table."""
    parts: list[Any] = []
    for x in experiments:
        r = x.result
        state = "" if x.ended == "done" else f"; {'the recording ends first' if x.ended is None else 'ended: ' + x.ended}"
        parts.append(Text(f"{prefix}experiment {x.name!r}: {len(x.arms)} arms x {x.cycles} cycles of {x.hold_s:g} s "
                          f"(settle {x.settle_s:g} s), {x.design}; {x.holds_complete} holds complete{state}",
                          style="bold"))
        parts.append(Text("\n".join(legend(r))))
        parts.append(arms_table(r, f"verified partitions per minute, {r.cycles_complete} complete cycle(s); "
                                   "ratio to #0 paired over cycles, 95%"))
        for n in [*troubles(r), *r.notes]:
            parts.append(Text(f"note: {n}", style="yellow"))
    return parts
