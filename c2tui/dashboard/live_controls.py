"""The dashboard's live controls: each key goes to the prover's Controller (off the UI thread)
and changes nothing on screen by itself; the knob's new value shows when its ModeChange comes
back through the fold. A mixin of DashboardApp, kept apart so the app file holds the layout."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from c2tui.widgets.common import truthy
from prover import JOB_ACTIONS, KNOBS, DashboardState, parse_target

if TYPE_CHECKING:
    from textual.app import App

    from c2tui.sources.live import Source
    from c2tui.widgets.row_actions import RowAction

    _App = App[None]  # a mixin of DashboardApp: the type checker reads it as the app it is
else:
    _App = object


def words(name: str) -> str:
    """A knob or method name as an operator reads it: workers_per_gpu -> workers per GPU."""
    return name.replace("_", " ").replace("gpu", "GPU")


JOB_FORMS = "cancel s3p2 | cancel s3 | requeue s3p2 | cordon 1 | uncordon 1"
SET_FORM = "lock_mode=two-lock,mem_sync=stream"  # prover/knob_set.py: the one syntax of a knob set


def prompt_spec(text: str) -> tuple[str, str]:
    """The `a` prompt's text as the controller's spec and what it is: "cordon 1" ->
    ("cordon=1", "job action") (attach --send's form); a knob set, in the syntax `--switch`,
    arms and `attach --send` take ("lock_mode=two-lock,mem_sync=stream", "two-lock") -> its
    canonical text and "knob change"; ("", "") for nothing typed. ValueError for anything else,
    naming both forms ("cancel" alone was once answered "unknown switch 'cancel'; use single | ...")."""
    from prover import knob_set_text, parse_knob_set

    parts = text.split()
    if not parts:
        return "", ""
    action = parts[0].lower().partition("=")[0]
    if action in JOB_ACTIONS:
        target = text.strip()[len(action):].strip(" =")
        if not target or len(target.split()) != 1:
            raise ValueError(f"job action {text.strip()!r}: type one of {JOB_FORMS}")
        parse_target(action, target)  # names what the target should look like
        return f"{action}={target}", "job action"
    try:
        return knob_set_text(parse_knob_set(text.strip())), "knob change"
    except ValueError as exc:
        if "=" in text or "," in text:  # meant as a knob set: its own words
            raise
        raise ValueError(f"{text.strip()!r}: type a job action ({JOB_FORMS}) or a knob set ({SET_FORM})") from exc


class LiveControls(_App):
    """The actions behind the live keys (prover.knobs' table, submit, job actions)."""

    state: DashboardState | None
    source: Source
    errors: list[str]

    def _knob(self, name: str, default: str = "") -> str:
        return (self.state.knobs.get(name, default) if self.state is not None else default)

    def _control(self, method: str, *args: Any, what: str | None = None, **kw: Any) -> None:
        """`what`: the refusal's words for it ("job action"); a knob's change by default."""
        ctl = getattr(self.source, "controller", None)
        if ctl is None:
            self.notify("no controller: this source is read-only", severity="warning")
            return
        said = what or f"{words(method.removeprefix('set_'))} change"

        def call() -> None:
            try:
                getattr(ctl, method)(*args, source="key", **kw)
            except Exception as exc:  # noqa: BLE001 - a refused change is shown, not fatal
                self.errors.append(f"{method}: {exc}")
                self.call_from_thread(self.notify, f"the prover refused the {said}: {exc}", severity="error")

        # off the UI thread: a controller call (e.g. resizing the worker pool) never stalls a frame
        self.run_worker(call, thread=True, group="control", name=method)

    def _cycle(self, name: str) -> None:
        """A choice knob's key: the next of its values (prover.knobs), through set_<knob>."""
        k = KNOBS[name]
        self._control(f"set_{name}", k.next_value(self._knob(name, str(k.default))))

    def action_lock_mode(self) -> None:
        self._cycle("lock_mode")

    def action_mem_sync(self) -> None:
        self._cycle("mem_sync")

    def _wpg(self) -> int:
        try:
            return int(self._knob("workers_per_gpu", "1"))
        except ValueError:
            return 1

    def _step_workers(self, step: int) -> None:
        """+ / -: one worker per GPU more or fewer; at a bound, say so in words (the bounds
        are the knob's, prover.knobs) instead of sending a change the controller refuses."""
        k, n = KNOBS["workers_per_gpu"], self._wpg() + step
        if not k.lo <= n <= k.hi:
            end, bound = ("maximum", k.hi) if n > k.hi else ("minimum", k.lo)
            self.notify(f"{words(k.name)} is already at the {end}, {bound}", severity="warning")
            return
        self._control("set_workers_per_gpu", n)

    def action_workers_up(self) -> None:
        self._step_workers(1)

    def action_workers_down(self) -> None:
        self._step_workers(-1)

    def action_prestage(self) -> None:
        self._control("set_prestage", not truthy(self._knob("prestage", "true")))

    def action_b_g2(self) -> None:
        self._cycle("b_g2")

    def action_pause(self) -> None:
        if truthy(self._knob("paused", "false")):
            self._control("resume")
        else:
            self._control("pause")

    def action_submit(self) -> None:
        self._control("submit_sector")

    def action_job(self) -> None:
        """A job action (cancel s3p2 | cancel s3 | requeue s3p2 | cordon 1 | uncordon 1) or a knob
        set (lock_mode=two-lock,mem_sync=stream: one change) typed in a prompt."""
        from c2tui.widgets.filter_prompt import FilterPrompt

        def done(text: str | None) -> None:
            try:
                spec, what = prompt_spec(text or "")
            except ValueError as exc:  # said here, in one line naming the forms
                self.notify(str(exc), severity="error")
                return
            if spec:
                self._control("apply", spec, what=what)

        from c2tui.widgets.row_actions import prompt_forms

        forms = prompt_forms(self.state) or JOB_FORMS  # what exists now (a row action: Tab, ↑ ↓, c x r o)
        self.push_screen(FilterPrompt(f"job action, or knob set like {SET_FORM} (recorded as key)", "", forms), done)

    def row_action(self, part: str, key: str) -> None:
        """A row action on a selected partition (c2tui/widgets/row_actions.py): asks, naming what it will
        do, then goes through the controller as the prompt does; nothing that does not exist now."""
        from c2tui.widgets.row_actions import row_action

        if self.state is not None:  # a row is selected only on a drawn state
            self._confirm(row_action(self.state, part, key))

    def sector_action(self, sector: int, key: str) -> None:
        """A row action on a selected sector row: `c` / `x` cancel it; `r` `o` say why not."""
        from c2tui.widgets.row_actions import sector_action

        if self.state is not None:  # a row is selected only on a drawn state
            self._confirm(sector_action(self.state, sector, key))

    def gpu_action(self, gpu: int) -> None:
        """`o` on a selected GPU (its panel focused, or its overview line): cordon / uncordon it."""
        from c2tui.widgets.row_actions import gpu_action

        if self.state is not None:  # a row is selected only on a drawn state
            self._confirm(gpu_action(self.state, gpu))

    def _confirm(self, got: RowAction | str) -> None:
        """A RowAction: ask (ConfirmAction), `y` sends it; a sentence: why there is none, said."""
        from c2tui.widgets.confirm_action import ConfirmAction

        if isinstance(got, str):
            self.notify(got, severity="warning")
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._control("apply", got.spec, what="job action")

        self.push_screen(ConfirmAction(got.words, got.warn), done)

    def action_submit_winning(self) -> None:
        """A WinningPoSt sector: served before every queued c2 partition (prover/classes.py)."""
        self._control("submit_sector", cls="winning")
