"""Pilot tests for the dashboard's own keys and mouse (issue 13): the event log scrolls,
selects, filters and opens a note's event; partitions sort and filter; the GPU overview
says where off-screen panels are; help scrolls; the theme is named. Over committed
recordings, paused at a fixed run time, so what is on screen is known."""
from __future__ import annotations

import asyncio
import functools
from pathlib import Path

import pytest
from textual import events

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.event_detail import EventDetail, detail_table
from c2tui.widgets.event_log import EventLog
from c2tui.widgets.events_screen import EventsScreen
from c2tui.widgets.filter_prompt import FilterPrompt
from c2tui.widgets.gpu_overview import GpuOverview
from c2tui.widgets.header_bar import HeaderBar
from c2tui.widgets.help_screen import HelpScreen
from c2tui.widgets.partition_table import PartitionTable, failed

from tests.helpers.pilot_wait import until as _until


async def until(pilot, cond, timeout: float = 15.0) -> None:
    await _until(pilot, cond, timeout)


pytestmark = pytest.mark.timeout(120)
RECORDINGS = Path(__file__).parent / "recordings"
FAILURES = RECORDINGS / "synth_failures.jsonl"
FOUR = RECORDINGS / "four_gpus.jsonl"


def sync(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return asyncio.run(fn(*a, **k))

    return wrapper


def app_at(path: Path, at: float) -> DashboardApp:
    return DashboardApp(ReplaySource.from_file(path, at=at, playing=False))


def rows(table: PartitionTable) -> list[str]:
    """The partition ids in table order (the body lines, not the head or queued line)."""
    lines = table.render().plain.splitlines()[1:]
    return [ln.split()[0] for ln in lines if ln and not ln.startswith(("+", "no partition"))]


@sync
async def test_event_log_select_and_detail():
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        log = app.query_one("#log", EventLog)
        log.focus()
        await pilot.press("up")
        assert log.selected == list(app.state.log)[-1]  # the first key selects the newest note
        await pilot.press("up", "up")
        assert log.selected == list(app.state.log)[-3]
        await pilot.press("enter")
        assert isinstance(app.screen, EventDetail)
        entry = app.screen.entry
        assert entry == list(app.state.log)[-3] and entry[3] is not None
        # every field of the event is a row of the detail table, by name
        names = set(detail_table(entry).columns[0]._cells)
        assert {"note", "level", "event", *entry[3].model_dump()} <= names
        await pilot.press("escape")
        assert not isinstance(app.screen, EventDetail)


@sync
async def test_event_log_filters_and_clear():
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        log = app.query_one("#log", EventLog)
        log.focus()
        await pilot.press("v")  # warnings and errors only
        shown = log.entries(app.state)
        assert shown and all(e[1] in ("warn", "error") for e in shown)
        await pilot.press("v")  # errors only
        assert all(e[1] == "error" for e in log.entries(app.state))
        assert "errors" in str(log.border_subtitle)
        await pilot.press("slash")
        assert isinstance(app.screen, FilterPrompt)
        await pilot.press(*"s0p7", "enter")
        assert log.text_filter == "s0p7"
        shown = log.entries(app.state)
        assert shown and all("s0p7" in e[2] and e[1] == "error" for e in shown)
        # each note's first line (a long note wraps onto indented lines under its text)
        assert all("s0p7" in ln for ln in log.render().plain.splitlines() if not ln.startswith(" " * 15))
        await pilot.press("escape")
        assert log.text_filter == "" and log.entries(app.state) == list(app.state.log)


@sync
async def test_event_log_scrolls_with_wheel_and_keys():
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        log = app.query_one("#log", EventLog)
        # many notes in a short log: only the newest fit
        notes = [(float(i), "info", f"note {i}", None) for i in range(40)]
        app.state.log.extend(notes)
        log.show(app.state)
        await pilot.pause(0.1)
        h = log.content_size.height
        assert log.render().plain.splitlines()[-1].endswith("note 39")
        await pilot._post_mouse_events([events.MouseScrollUp], "#log", offset=(10, 3))
        await pilot.pause(0.1)
        assert log.render().plain.splitlines()[-1].endswith(f"note {39 - 3}")
        assert "↓ 3 newer" in str(log.border_subtitle)
        log.focus()
        await pilot.press("pageup")
        assert log.selected is not None and log.render().plain.count("note") == h
        await pilot.press("escape")  # follow the tail again
        await pilot.pause(0.1)
        assert log.render().plain.splitlines()[-1].endswith("note 39")


@sync
async def test_events_screen_shows_the_whole_log_at_80x24():
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        assert not app.query_one("#log", EventLog).display  # no room for the panel here
        await pilot.press("e")
        assert isinstance(app.screen, EventsScreen)
        await pilot.pause(0.2)
        text = app.screen.query_one(EventLog).render().plain
        for _, _, note, _ in app.state.log:
            assert note[:40] in text
        await pilot.press("e")
        assert not isinstance(app.screen, EventsScreen)


@sync
async def test_partitions_sort_and_filter():
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        table = app.query_one(PartitionTable)
        parts = app.state.partitions
        bad = {k for k, p in parts.items() if failed(p)}
        assert bad, "the recording has failed partitions"
        table.focus()
        await pilot.press("s")  # failed first
        assert set(rows(table)[:len(bad)]) == bad
        assert "failed first" in str(table.border_title)
        await pilot.press("f", "f", "f")  # state: failed only
        assert set(rows(table)) == bad
        await pilot.press("escape", "g")  # gpu 0 only
        shown = rows(table)
        assert shown and all(parts[k].gpu == 0 for k in shown)
        await pilot.press("g", "w")  # gpu 1, first worker
        w = table.view.worker
        assert w and w.startswith("g1") and rows(table)
        assert all(parts[k].worker == w for k in rows(table))
        await pilot.press("escape")
        assert table.view.plain() and str(table.border_title) == "Partitions"


def test_partition_columns_never_run_together():
    """Each cell ends with a blank before the next column, at every width (was '4.84sprestaged')."""
    from c2tui.widgets.partition_table import render_rows
    import themes

    st = ReplaySource.from_file(RECORDINGS / "two_gpus.jsonl", at=6.0, playing=False)
    st.tick()
    _, state = st.snapshot()
    pal = themes.load("dark").palette
    for width in (60, 76, 96, 140):
        text = "\n".join(ln.plain for ln in render_rows(state, pal, width, 30))
        assert "sprestaged" not in text and "sfallback" not in text and "s–" not in text, text


@sync
async def test_overview_shows_and_jumps_when_panels_do_not_fit():
    app = app_at(FOUR, 10.0)
    async with app.run_test(size=(80, 24)) as pilot:  # 4 panels at their least do not fit 24 rows
        await pilot.pause(0.3)
        ov = app.query_one(GpuOverview)
        assert ov.display
        assert ov.places[0] == "shown" and ov.places[3] == "below"
        await until(pilot, lambda: len(ov.render().plain.splitlines()) == 4)
        assert "below" in ov.render().plain.splitlines()[3]
        await pilot.click(GpuOverview, offset=(2, 3))  # GPU3's line
        await pilot.pause(0.2)
        assert ov.places[3] == "shown" and ov.places[0] == "above"
    app = app_at(FOUR, 10.0)
    async with app.run_test(size=(160, 48)) as pilot:  # the panels share the rows: all four fit
        await pilot.pause(0.3)
        assert not app.query_one(GpuOverview).display


@sync
async def test_help_scrolls():
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("VerticalScroll")
        assert box.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause(0.1)
        assert box.scroll_y > 0
        await pilot.press("up")
        await pilot.pause(0.1)
        assert 0 < box.scroll_y


@sync
async def test_theme_is_named_in_the_header():
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        assert "theme dark" in app.query_one(HeaderBar).render().plain
        await pilot.press("t")
        await pilot.pause(0.1)
        assert "theme light" in app.query_one(HeaderBar).render().plain


def notes_of(app) -> list[str]:
    return [n.message for n in app._notifications]


@pytest.mark.parametrize("workers, key, said", [
    (16, "plus", "workers per GPU is already at the maximum, 16"),
    (1, "minus", "workers per GPU is already at the minimum, 1"),
])
@sync
async def test_refused_workers_change_says_why_in_words(workers, key, said):
    """+ past the knob's maximum and - at its minimum: a toast in words, no internal name,
    and nothing sent to the controller (no ModeChange)."""
    from tests.tui.test_controls import make, running

    app, eng, rec = make(workers_per_gpu=workers)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: running(app))
        await pilot.press(key)
        await pilot.pause(0.3)
        assert said in notes_of(app)
        assert not any("set_" in n for n in notes_of(app))
        assert rec.changes("workers_per_gpu") == [] and eng.controller.knobs.workers_per_gpu == workers



def footer_keys(app) -> list[str]:
    """The footer's key actions left to right (grouped keys sit in a KeyGroup)."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    out = []
    for child in app.screen.query_one(Footer).children:
        out += [child.action] if isinstance(child, FooterKey) else [k.action for k in child.query(FooterKey)]
    return out


@sync
async def test_footer_keeps_quit_and_help_first_at_80x24():
    """Quit and help lead the footer, also when a panel's own keys are added in front."""
    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(80, 24)) as pilot:
        # the footer recomposes a moment after the keys change: wait for it, then look
        await until(pilot, lambda: "play" in footer_keys(app))
        assert footer_keys(app)[:2] == ["quit", "help"]
        app.query_one(PartitionTable).focus()
        await until(pilot, lambda: "cycle_sort" in footer_keys(app))
        assert footer_keys(app)[:2] == ["quit", "help"]
        await pilot.press("e")
        await until(pilot, lambda: "filter_level" in footer_keys(app))
        assert footer_keys(app)[:2] == ["dismiss", "app.help"]


@sync
async def test_footer_keeps_quit_and_help_first_live():
    from tests.tui.test_controls import make

    app, eng, rec = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "lock_mode" in footer_keys(app))
        assert footer_keys(app)[:2] == ["quit", "help"]


def help_text(screen) -> str:
    import io

    from rich.console import Console

    con = Console(width=200, file=io.StringIO(), record=True)
    con.print(screen.query_one("Static").content)  # the help's rich Table
    return con.export_text()


@pytest.mark.parametrize("replay", [True, False], ids=["replay", "live"])
@sync
async def test_every_binding_is_in_the_help(replay):
    """Each key the app or a panel binds (for the mode the help is about) is named there."""
    from c2tui.dashboard.app import LIVE_ACTIONS, REPLAY_ACTIONS

    app = app_at(FAILURES, 22.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        app.push_screen(HelpScreen(replay))
        await pilot.pause(0.2)
        text = help_text(app.screen)
    skip = LIVE_ACTIONS if replay else REPLAY_ACTIONS
    bindings = [b for b in app.BINDINGS if b.action not in skip]
    bindings += [*PartitionTable.BINDINGS, *EventLog.BINDINGS]
    for b in bindings:
        key = b.key.split(",")[0]
        names = {b.key_display or "", key, "shift" if key.startswith("shift+") else ""} - {""}
        assert any(n in text for n in names), (b, names)


@sync
async def test_overview_names_the_gpus_it_has_no_room_for(tmp_path):
    """8 GPUs at 80x24: the overview is capped at 4 lines, the last names the other GPUs."""
    from tests.tui import make_recordings

    path = tmp_path / "eight.jsonl"
    make_recordings.synth(path, gpus=8, workers_per_gpu=2, sectors=2, partitions=8, progress_steps=1,
                          sample_every=1.0)
    app = app_at(path, 8.0)
    async with app.run_test(size=(80, 24)) as pilot:
        ov = app.query_one(GpuOverview)
        await until(pilot, lambda: ov.display and len(ov.render().plain.splitlines()) == 4)
        lines = ov.render().plain.splitlines()
        assert [ln.split()[0] for ln in lines[:3]] == ["GPU0", "GPU1", "GPU2"]
        assert lines[3].startswith("+5 more GPUs (GPU3…GPU7)")
