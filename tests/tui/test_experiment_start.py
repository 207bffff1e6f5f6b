"""An experiment started from the dashboard's experiment panel (`x`, then `n`; `s` stops it):
the prompt takes `c2tui experiment`'s words, a bad one is refused in one line and nothing
starts, and a started one runs on the live prover, shows in the panel, and puts the knobs back."""
from __future__ import annotations

import pytest
from textual.widgets import Input

from c2tui.widgets.experiment_start import BadExperiment, design_of
from c2tui.widgets.experiment_panel import ExperimentPanel, ExperimentScreen
from tests.tui.test_controls import make, running, sync, until

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("text,words", [
    ("--arm lock_mode=narrow", "at least two arms"),
    ("--arm lock_mode=triple --arm narrow", "lock_mode must be one of"),
    ("--arm narrow --arm reserved --hold 5 --settle 5", "must be shorter than the hold"),
    ("--arm narrow --arm reserved --cycles x", "invalid int value"),
    ("--arm narrow --arm 'reserved", "quotation"),
])
def test_a_bad_experiment_is_refused_in_words(text: str, words: str) -> None:
    with pytest.raises(BadExperiment, match=words):
        design_of(text)


def test_the_prompts_words_make_the_design() -> None:
    d = design_of("--arm lock_mode=narrow --arm two-lock,stream --cycles 3 --hold 4 --settle 1 --design abab")
    assert [a.label for a in d.arms] == ["lock_mode=narrow", "lock_mode=two-lock,mem_sync=stream"]
    assert (d.cycles, d.hold_s, d.settle_s, d.order) == (3, 4.0, 1.0, "abab")


def test_the_prompt_plans_its_holds_as_the_command_does() -> None:
    """No --hold: auto, as `c2tui experiment`'s default: the same Runner pilots each arm and sizes
    the holds (prover/stats/plan.py); --hold S keeps the old settle of 5 s unless given."""
    d = design_of("--arm lock_mode=narrow --arm lock_mode=reserved --precision 0.1")
    assert d.auto and d.hold_s is None and d.settle_s is None and d.precision == 0.1
    assert design_of("--arm narrow --arm reserved --hold auto").auto
    assert design_of("--arm narrow --arm reserved --hold 30").settle_s == 5.0


@pytest.mark.slow
@sync
async def test_started_from_the_panel_it_runs_shows_and_stops() -> None:
    app, eng, rec = make(workers_per_gpu=2)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: running(app))
        await pilot.press("X")
        await until(pilot, lambda: isinstance(app.screen, ExperimentScreen))
        await pilot.press("n")
        await until(pilot, lambda: bool(app.screen.query(Input)))
        app.screen.query_one(Input).value = "--arm lock_mode=narrow --arm lock_mode=reserved --cycles 3 --hold 2 --settle 0.5"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ExperimentScreen))
        await until(pilot, lambda: any(e.kind == "hold_ended" for e in rec.events), timeout=30)
        panel = app.screen.query_one(ExperimentPanel)
        await until(pilot, lambda: "lock_mode=reserved" in panel.render().plain)
        await pilot.press("s")
        await until(pilot, lambda: any(e.kind == "experiment_ended" for e in rec.events), timeout=30)
        ended = [e for e in rec.events if e.kind == "experiment_ended"][-1]
        assert ended.reason == "stopped"
        assert eng.controller.knobs.lock_mode == "two-lock"  # as found
        await until(pilot, lambda: "ended: stopped" in panel.render().plain)
        await pilot.press("X")
        await pilot.press("q")
