"""The screen-side small defects of issue 22, each pinned: partition keys without Tab, the
quit dialog over the dashboard, the events screen inside 160 columns, a pause glyph the PNG
font has. (`n`'s source: test_controls.py; attached `q detach`: tests/attach/test_attach_e2e.py.)"""
from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.common import PAUSE
from c2tui.widgets.event_log import EventLog
from c2tui.widgets.partition_table import PartitionTable
from c2tui.widgets.quit_dialog import QuitDialog
from c2tui.widgets.replay_bar import ReplayBar

FAILURES = Path(__file__).parent / "recordings" / "synth_failures.jsonl"
pytestmark = pytest.mark.timeout(60)


def run(size, body) -> None:
    app = DashboardApp(ReplaySource.from_file(FAILURES, at=22.0, playing=False))

    async def go() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await body(app, pilot)

    asyncio.run(go())


def test_partition_keys_work_without_focus():
    async def body(app, pilot):
        table = app.query_one(PartitionTable)
        assert app.focused is not table
        await pilot.press("s", "f")
        assert (table.view.sort, table.view.state) == (1, 1)
        assert "sort failed first" in str(table.border_title)

    run((120, 40), body)


def test_quit_dialog_leaves_the_dashboard_visible():
    async def body(app, pilot):
        app.push_screen(QuitDialog(["s3p1"]))
        await pilot.pause()
        svg = app.export_screenshot()
        assert "drain" in svg and "Partitions" in svg  # the dialog, and the dashboard behind it

    run((120, 40), body)


def test_events_screen_fits_160_columns():
    async def body(app, pilot):
        await pilot.press("e")
        await pilot.pause()
        log = app.screen.query_one(EventLog)
        assert log.region.right <= 160 and log.region.width >= 150
        assert "notes" in str(log.border_subtitle)

    run((160, 48), body)


def test_pause_glyph_is_in_the_png_font():
    async def body(app, pilot):
        text = app.query_one(ReplayBar).render().plain
        assert f"{PAUSE} PAUSED" in text and "\u23f8" not in text

    run((100, 30), body)
    if shutil.which("fc-list"):
        out = subprocess.run(["fc-list", f":charset={ord(PAUSE):x}", "family"], capture_output=True, text=True).stdout
        fonts = subprocess.run(["fc-list", "family"], capture_output=True, text=True).stdout
        if "DejaVu Sans Mono" in fonts:
            assert "DejaVu Sans Mono" in out


def test_resizing_between_stacked_and_wide_keeps_the_plan():
    """120x40 (stacked) -> 160x48 (side by side) -> 120x40: every panel where the plan says."""
    async def body(app, pilot):
        for size in ((160, 48), (120, 40), (160, 48)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            app.redraw()
            await pilot.pause()
            pl = app.plan
            log, parts = app.query_one(EventLog), app.query_one(PartitionTable)
            hist = app.query_one("#history")
            assert pl.wide == (size[0] >= 150)
            if pl.wide:
                assert log.region.height == parts.region.height == pl.side_h
                assert hist.region.width == pl.history_w and log.region.right == size[0]
            else:
                assert log.region.height == pl.events_h and hist.region.width == size[0]
            assert app.query_one("#footer").region.y == size[1] - 1

    run((120, 40), body)
