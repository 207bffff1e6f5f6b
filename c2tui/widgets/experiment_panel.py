"""The experiment panel (`X`, shift+x): the arms an experiment holds in turn on this prover, from the
fold's copy (prover/fold/experiments.py: the same counting as `c2tui experiment`'s):
which arm holds now and how far in, cycles done, each arm's verified/min with its 95% interval,
its ratio to the first arm with its interval, and whether that is significant yet (a verdict
is claimed only where the ratio's interval excludes 1; docs/experiment.md).

The latest experiment first; earlier ones (a tune runs one a knob) below as far as the height
goes. Columns that do not fit go, least needed first."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from c2tui.widgets.common import Line, StateView
from c2tui.widgets.key_footer import KeyFooter
from prover import DashboardState

VERDICT = {"faster": "ok", "slower": "fail", "no difference detected": "warn", "too few cycles": "dim", "baseline": "dim",
           "no verdict": "warn"}


def _ci(ci: Any, fmt: str) -> str:
    return "–" if not ci else f"[{format(ci[0], fmt)}, {format(ci[1], fmt)}]"


def significance(a: Any, running: bool) -> str:
    """What the ratio says so far: a verdict only where its interval excludes 1."""
    if a.arm == 0:
        return "baseline"
    if a.verdict in ("faster", "slower"):
        return f"{a.verdict} (significant)"
    if a.verdict == "no verdict":  # an arm that counted nothing, holds too short: the note says why
        return "no verdict (see note)"
    if a.verdict == "too few cycles":
        return "too few cycles" + (" yet" if running else "")
    return "not significant yet" if running else a.verdict


@dataclass(frozen=True)
class Col:
    head: str
    width: int
    cell: Callable[[Any, Any], str]  # (arm result, experiment view) -> text
    rank: int  # lower: kept longer when the width is short
    right: bool = True


COLS = (
    Col("#", 3, lambda a, x: f"#{a.arm}", 0, right=False),
    Col("arm", 14, lambda a, x: a.label, 0, right=False),
    Col("holds", 5, lambda a, x: str(a.holds), 3),
    Col("counted", 7, lambda a, x: str(a.verified), 2),
    Col("per min", 8, lambda a, x: f"{a.per_min:.1f}", 0),
    Col("95%", 15, lambda a, x: _ci(a.per_min_ci, ".0f"), 1),
    Col("ratio", 7, lambda a, x: "–" if a.ratio is None else f"{a.ratio:.2f}x", 0),
    Col("95%", 14, lambda a, x: _ci(a.ratio_ci, ".2f"), 0),
    Col("", 22, lambda a, x: significance(a, x.running), 0, right=False),
)


def columns(width: int) -> list[Col]:
    """The columns that fit, dropping the highest rank first; spare width goes to the arm's label."""
    cols = list(COLS)
    for rank in (3, 2, 1):
        if sum(c.width + 1 for c in cols) <= width:
            break
        cols = [c for c in cols if c.rank < rank]
    spare = width - sum(c.width + 1 for c in cols)
    i = next((k for k, c in enumerate(cols) if c.head == "arm"), None)
    if i is not None and spare > 0:
        cols[i] = replace(cols[i], width=cols[i].width + min(spare, 24))
    return cols


def _cell(c: Col, text: str) -> str:
    text = text if len(text) <= c.width else text[:c.width - 1] + "…"
    return f"{text:>{c.width}} " if c.right else f"{text:<{c.width}} "


def head_line(x: Any, pal: Any) -> Line:
    """The experiment: its name, design, where it is."""
    cycles_done = x.result.cycles_complete if x.result is not None else 0
    state = "running" if x.running else f"ended: {x.ended}"
    ln = Line(f"{x.name}", style="bold")
    ln.append(f"  cycles done {cycles_done}/{x.cycles}, holds {x.holds_done}/{x.holds_planned}  ", "bold")
    ln.append(state, pal["info"] if x.running else pal["dim"])
    ln.append(f"  {len(x.arms)} arms x {x.cycles} cycles of {x.hold_s:g} s (settle {x.settle_s:g} s), {x.design}",
              pal["dim"])
    return ln


def now_line(x: Any, pal: Any) -> Line | None:
    n = x.now
    if n is None:
        return None
    label = x.arms[n.arm] if n.arm < len(x.arms) else "?"
    ln = Line(f"holding #{n.arm} {label}", style="bold " + pal["info"])
    ln.append(f"  cycle {n.cycle + 1}, {n.elapsed_s:.1f}/{n.hold_s:g} s  ", pal["dim"])
    ln.append("settling (not counted)" if n.settling else f"counted so far {n.verified}",
              pal["warn"] if n.settling else "")
    return ln


def arm_lines(x: Any, pal: Any, width: int) -> list[Line]:
    if x.result is None:
        return []
    cols = columns(width)
    head = Line(style="bold " + pal["dim"])
    for c in cols:
        head.append(_cell(c, c.head))
    lines = [head.truncate(width)]
    for a in x.result.arms:
        ln = Line()
        for c in cols:
            text = c.cell(a, x)
            style = ""
            if c.head == "":
                style = pal[VERDICT.get(a.verdict, "dim")] if a.arm else pal["dim"]
                if a.verdict in ("faster", "slower"):
                    style = "bold " + style
            elif c.head == "per min":
                style = "bold"
            ln.append(_cell(c, text), style)
        lines.append(ln.truncate(width, overflow="ellipsis"))
    return lines


def render_experiments(experiments: Any, pal: Any, width: int, height: int, can_start: bool = False) -> list[Line]:
    """Every experiment the view carries, the latest first, as far as `height` goes; none yet:
    how to start one (`n` here, where it works: the prover this dashboard runs)."""
    if not experiments:
        how = ("n starts one here (or c2tui experiment --arm ... --arm ...)" if can_start
               else "`c2tui experiment --arm ... --arm ...` runs one")
        return [Line(f"no experiment in this run: {how} (docs/experiment.md)", style=pal["dim"]).truncate(width)]
    lines: list[Line] = []
    for x in reversed(experiments):
        block = [head_line(x, pal).truncate(width, overflow="ellipsis")]
        now = now_line(x, pal)
        if now is not None:
            block.append(now.truncate(width, overflow="ellipsis"))
        block += arm_lines(x, pal, width)
        for note in (x.result.notes if x.result is not None and not x.running else [])[:2]:
            block.append(Line(f"note: {note}", style=pal["warn"]).truncate(width, overflow="ellipsis"))
        if lines and len(lines) + 1 + len(block) > height:
            break
        if lines:
            lines.append(Line())
        lines += block
    lines.append(Line("a ratio is claimed only where its 95% interval excludes 1 (paired over cycles)",
                      style=pal["dim"]).truncate(width))
    return lines[:height]


class ExperimentPanel(StateView):
    DEFAULT_CSS = "ExperimentPanel { height: 1fr; border: round $primary; }"

    def show(self, st: DashboardState) -> None:
        xs = st.experiments.views(st.t)
        self.set_titles("Experiment", f"{len(xs)} experiment{'s' if len(xs) != 1 else ''} in this run · "
                                      "verified/min per arm, 95% intervals")
        super().show(st)

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        engine = getattr(self.app, "_engine", lambda: None)()  # where `n` works (ExperimentScreen.check_action)
        can_start = engine is not None and not getattr(getattr(self.app, "source", None), "readonly", False)
        return render_experiments(st.experiments.views(st.t), self.palette, width, height, can_start)


class ExperimentScreen(Screen[None]):
    """The panel on the whole screen; it follows the app's latest snapshot (as `e` does). `n`
    starts an experiment on the prover this dashboard runs, `s` stops it (c2tui/widgets/experiment_start.py)."""

    BINDINGS = [Binding("x,q,escape", "dismiss", "close"), Binding("n", "new", "new experiment"),
                Binding("s", "stop", "stop it"), Binding("question_mark", "app.help", "help", key_display="?")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`n` and `s` where an experiment can start here: a prover this dashboard runs (not a replay)."""
        if action in ("new", "stop"):
            engine = getattr(self.app, "_engine", lambda: None)()
            return engine is not None and not getattr(getattr(self.app, "source", None), "readonly", False)
        return True

    def action_new(self) -> None:
        from c2tui.widgets.experiment_start import EXAMPLE, control_of
        from c2tui.widgets.filter_prompt import FilterPrompt

        ctl = control_of(self.app)
        if ctl is None or getattr(getattr(self.app, "source", None), "readonly", False):
            self.notify("an experiment starts here only on the prover this dashboard runs; against a --listen "
                        "prover: c2tui experiment --attach ADDRESS --arm ... --arm ...", severity="warning")
        elif ctl.running:
            self.notify("an experiment is running: s stops it", severity="warning")
        else:
            self.app.push_screen(FilterPrompt("experiment: --arm KNOBS --arm KNOBS [--cycles N --hold S --settle S]",
                                              value=EXAMPLE, placeholder=EXAMPLE), self._begin)

    def _begin(self, text: str | None) -> None:
        from c2tui.widgets.experiment_start import BadExperiment, control_of, design_of

        ctl = control_of(self.app)
        if not text or ctl is None:
            return
        try:
            ctl.start(design_of(text), getattr(self.app, "state", None))
        except (BadExperiment, RuntimeError) as exc:
            self.notify(str(exc), severity="error")
            return
        auto = getattr(getattr(ctl, "design", None), "auto", False)
        self.notify("experiment started: " + ("a short pilot of each arm first, then the plan in the event log; "
                                              if auto else "") + "its arms fill in as holds end (s stops it)")

    def action_stop(self) -> None:
        ctl = getattr(self.app, "experiment_control", None)
        if ctl is None or not ctl.running:
            self.notify("no experiment of this dashboard's is running", severity="warning")
            return
        ctl.stop.set()
        self.notify("stopping: the hold running now is not counted; the knobs go back")

    def compose(self) -> ComposeResult:
        yield ExperimentPanel(id="experiment")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._shown = None
        self.follow()
        self.set_interval(1.0 / max(1.0, getattr(self.app, "fps", 10.0)), self.follow)

    def follow(self) -> None:
        st = getattr(self.app, "state", None)
        if st is not None and st is not self._shown:
            self._shown = st
            self.query_one(ExperimentPanel).show(st)
