"""Pilot tests for every control: key pressed -> the engine's Controller changed -> a
ModeChange (or SectorSubmitted) event emitted -> the screen shows the new state.

A real Engine on the simulated device with a fast time scale; the screen is read from the
widgets' rendered text (what the terminal would show)."""
from __future__ import annotations

import re

import asyncio

import pytest

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.live import LiveSource
from c2tui.widgets.event_log import EventLog
from c2tui.widgets.header_bar import HeaderBar
from prover import events as ev
from prover.config import load_config
from prover.pipeline.engine import Engine

from tests.helpers.pilot_wait import until as _until


async def until(pilot, cond, timeout: float = 15.0) -> None:
    await _until(pilot, cond, timeout)


pytestmark = pytest.mark.timeout(120)


def sync(fn):
    """Run an async test body with asyncio.run (no async pytest plugin is needed)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*a, **k):
        return asyncio.run(fn(*a, **k))

    return wrapper


def running(app) -> bool:
    """The run is under way: knobs known and a partition in a phase (setup is done)."""
    st = app.state
    return st is not None and st.started and bool(st.knobs) and any(p.phases for p in st.partitions.values())


def header_text(app) -> str:
    return app.query_one(HeaderBar).render().plain


def log_text(app) -> str:
    return app.query_one(EventLog).render().plain



class Recorder:
    def __init__(self) -> None:
        self.events: list = []

    def __call__(self, e) -> None:
        self.events.append(e)

    def changes(self, knob: str) -> list:
        return [e for e in self.events if isinstance(e, ev.ModeChange) and e.knob == knob]


def make(**over):
    cfg = load_config(**{**dict(backend="sim", gpus=1, workers_per_gpu=2, time_scale=0.05, lock_mode="two-lock",
                                mem_sync="device"), **over})
    eng = Engine(cfg)
    rec = Recorder()
    eng.add_sink(rec)
    app = DashboardApp(LiveSource(eng), fps=20)
    return app, eng, rec


# key, knob, controller attribute, expected new value, expected text in the header
CASES = [
    ("l", "lock_mode", "lock_mode", "reserved", "lock reserved"),  # the next discipline after two-lock
    ("m", "mem_sync", "mem_sync", "stream", "mem_sync stream"),
    ("plus", "workers_per_gpu", "workers_per_gpu", 3, "workers/gpu 3"),
    ("minus", "workers_per_gpu", "workers_per_gpu", 1, "workers/gpu 1"),
    ("p", "prestage", "prestage", False, "prestage off"),
    ("b", "b_g2", "b_g2", "gpu", "b_g2 gpu"),
    ("space", "paused", "paused", True, "PAUSED"),
]


@pytest.mark.parametrize("key,knob,attr,value,shown", CASES, ids=[c[0] for c in CASES])
@sync
async def test_key_changes_knob_through_controller(key, knob, attr, value, shown):
    app, eng, rec = make()
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))
        assert shown not in header_text(app)
        await pilot.press(key)
        # the controller changed
        await until(pilot, lambda: getattr(eng.controller.knobs, attr) == value)
        # the event was emitted, from the key
        await until(pilot, lambda: rec.changes(knob))
        assert rec.changes(knob)[-1].source == "key"
        # the screen shows the new state (it came back through the fold)
        await until(pilot, lambda: shown in header_text(app))
        await until(pilot, lambda: f"{knob}:" in log_text(app))
        await pilot.press("q")


@sync
async def test_pause_then_resume():
    app, eng, rec = make()
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))
        await pilot.press("space")
        await until(pilot, lambda: "PAUSED" in header_text(app))
        await pilot.press("space")
        await until(pilot, lambda: not eng.controller.knobs.paused)
        await until(pilot, lambda: "PAUSED" not in header_text(app))
        from c2tui.widgets.common import truthy

        assert [truthy(e.new) for e in rec.changes("paused")] == [True, False]


@sync
async def test_submit_sector():
    app, eng, rec = make(sectors=1, partitions=2)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))
        await pilot.press("n")
        await until(pilot, lambda: any(isinstance(e, ev.SectorSubmitted) and e.sector == 1 for e in rec.events))
        # the key is named as the change's source, as for every other control (issue 22)
        assert [e.source for e in rec.events if isinstance(e, ev.SectorSubmitted) and e.sector == 1] == ["key"]
        await until(pilot, lambda: "sector 1 submitted" in log_text(app))
        # "(2 partitions, 2^N, key)": the sector's circuit size (its class's) and the source
        assert any(re.search(r"sector 1 submitted \(2 partitions, 2\^\d+, key\)", n[2]) for n in app.state.log)
        await until(pilot, lambda: any(p.sector == 1 for p in app.state.partitions.values()))


@sync
async def test_screen_shows_knob_only_when_event_comes_back():
    """A controller that refuses (raises) leaves the screen as it was."""
    app, eng, rec = make()
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))

        def refuse(*a, **k):
            raise ValueError("refused for the test")

        eng.controller.set_lock_mode = refuse  # type: ignore[method-assign]
        await pilot.press("l")
        await until(pilot, lambda: app.errors)
        await pilot.pause(0.3)
        assert "lock two-lock" in header_text(app)
        assert not rec.changes("lock_mode")


@pytest.mark.slow
@sync
async def test_theme_key_and_help_and_quit():
    app, eng, rec = make()
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.state is not None)
        assert app.theme == "c2tui-dark"
        await pilot.press("t")
        await until(pilot, lambda: app.theme_name == "light")
        await pilot.press("t")
        await until(pilot, lambda: app.theme_name == "high-contrast")
        await pilot.press("t")
        await until(pilot, lambda: app.theme_name == "dark")
        await pilot.press("question_mark")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        await pilot.press("escape")
        await until(pilot, lambda: type(app.screen).__name__ != "HelpScreen")
        await pilot.press("q")
    assert eng.wait(10), "quitting the app stops the engine"


@sync
async def test_footer_click_runs_control():
    """Mouse: clicking a footer key runs its action like the key does."""
    app, eng, rec = make()
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))
        from textual.widgets._footer import FooterKey

        def footer_key():
            return [k for k in app.query(FooterKey) if k.action == "mem_sync"]

        await until(pilot, lambda: footer_key())  # mem_sync is listed in the footer
        # the footer recomposes when bindings refresh (focus, screen changes): click the key
        # that is on screen now, and once more if a recompose swallowed the first click
        for _attempt in range(3):
            await pilot.pause(0.3)
            await pilot.click(footer_key()[0])
            try:
                await until(pilot, lambda: eng.controller.knobs.mem_sync == "stream", timeout=3.0)
                break
            except AssertionError:
                continue
        assert eng.controller.knobs.mem_sync == "stream"
        await until(pilot, lambda: "mem_sync stream" in header_text(app))
