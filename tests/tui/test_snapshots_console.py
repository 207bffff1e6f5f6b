"""Snapshots of the operator's-console views (issue 13) at 80x24 and 160x48: the event log
on its own screen, filtered and opened on one event; the partitions sorted and filtered;
the per-GPU overview when four panels do not fit, before and after jumping to one; the
help scrolled, and at its top (80x24 and 220x60). Committed recordings, paused at fixed run
times (see test_snapshots.py).
Refresh after an intended change: pytest tests/tui --snapshot-update
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.test_snapshots import make_app

RECORDINGS = Path(__file__).parent / "recordings"
FAILURES = RECORDINGS / "synth_failures.jsonl"
FOUR = RECORDINGS / "four_gpus.jsonl"
SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")


async def until(pilot, ready) -> None:
    """Poll, not a fixed pause: CI machines are loaded (up to 5 s)."""
    for _ in range(100):
        await pilot.pause(0.05)
        if ready():
            return


def laid_out(pilot, selector: str) -> bool:
    """The widget is drawn and its region lies on the screen (on a loaded machine the
    first layouts can place a panel past the screen's right edge for a frame or two)."""
    node = pilot.app.screen.query_one(selector)  # the screen shown (`e` pushes one)
    region, screen = node.region, pilot.app.screen.size.region
    return bool(node.display and region.area and screen.contains_region(region))


async def focus(pilot, selector: str) -> None:
    pilot.app.query_one(selector).focus()
    await pilot.pause()


@SIZES
def test_events_screen_errors_only(snap_compare, size):
    """`e`: the whole log on its own screen; `v` `v`: errors only (the border says so)."""
    assert snap_compare(make_app(FAILURES, at=22.0), press=["e", "v", "v"], terminal_size=size)


@SIZES
def test_event_detail(snap_compare, size):
    """`e`, ↑ ↑ selects the second newest note, ⏎ opens its event with every field."""
    assert snap_compare(make_app(FAILURES, at=22.0), press=["e", "up", "up", "enter"], terminal_size=size)


@SIZES
def test_event_log_panel_selected(snap_compare, size):
    """The log panel focused (its keys in the footer), a line selected; at 80x24 the panel
    has no room and the focus stays where it was."""
    async def before(pilot):
        if pilot.app.query_one("#log").display:
            await focus(pilot, "#log")

    assert snap_compare(make_app(FAILURES, at=22.0), press=["up", "up", "up"], run_before=before,
                        terminal_size=size)


@SIZES
def test_partitions_failed_first(snap_compare, size):
    """Partitions focused, `s`: failed partitions first (the border names the sort)."""
    async def before(pilot):
        await focus(pilot, "#partitions")

    assert snap_compare(make_app(FAILURES, at=22.0), press=["s"], run_before=before, terminal_size=size)


@SIZES
def test_partitions_filtered(snap_compare, size):
    """Partitions focused, `g` `f` `f`: GPU 1's finished partitions only."""
    async def before(pilot):
        await focus(pilot, "#partitions")

    assert snap_compare(make_app(FAILURES, at=22.0), press=["g", "g", "f", "f"], run_before=before,
                        terminal_size=size)


SHORT = pytest.mark.parametrize("size", [(80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")


@SHORT
def test_four_gpus_overview(snap_compare, size):
    """Four GPUs do not fit 80x24 (from 160x48 the panels share the rows, see
    test_snapshots.py::test_four_gpu_sizes): one line each, saying which panels are below."""
    assert snap_compare(make_app(FOUR, at=10.0), terminal_size=size)


@SHORT
def test_four_gpus_overview_jump(snap_compare, size):
    """A click on GPU3's overview line scrolls its panel into view."""
    async def before(pilot):
        overview = pilot.app.query_one("#overview")
        await until(pilot, lambda: overview.display and 3 in overview.places)
        await pilot.click("#overview", offset=(2, 3))
        await until(pilot, lambda: overview.places.get(3) == "shown")
        await pilot.pause(0.1)

    assert snap_compare(make_app(FOUR, at=10.0), run_before=before, terminal_size=size)


@SIZES
def test_help_scrolled(snap_compare, size):
    """`?` then PgDn: the help scrolls (its border says how)."""
    assert snap_compare(make_app(FAILURES, at=22.0), press=["question_mark", "pagedown"], terminal_size=size)


@SIZES
def test_event_log_scrolled_back(snap_compare, size):
    """More notes than fit; two wheel steps up (3 lines each): the border says how many
    newer notes are below. At 80x24 on the log's own screen (`e`)."""
    from textual import events

    async def before(pilot):
        await pilot.pause(0.2)
        target = "#log"
        if not pilot.app.query_one("#log").display:
            await pilot.press("e")
            await pilot.pause(0.2)
            target = "#log-full"
        await until(pilot, lambda: laid_out(pilot, target))
        await pilot._post_mouse_events([events.MouseScrollUp], target, offset=(10, 5), times=2)
        await pilot.pause(0.1)

    assert snap_compare(make_app(FOUR, at=21.0), run_before=before, terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (220, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_top(snap_compare, size):
    """`?`: each title on its own line, the key column as wide as the widest key; at 80x24 it
    scrolls, at 220x60 all of it fits."""
    assert snap_compare(make_app(FAILURES, at=22.0), press=["question_mark"], terminal_size=size)
