"""The help screen's layout from 80x24 to 220x60: the key column is as wide as the widest key
(bounded), not as wide as a section title, so at 80x24 a description gets the rest of the line;
each title stands on a line of its own (c2tui/widgets/help_screen.py)."""
from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource

FAILURES = Path(__file__).parent / "recordings" / "synth_failures.jsonl"
WIDEST = "↑ ↓ PgUp PgDn, wheel"  # the widest key on the screen (panel_sections)


def help_lines(size: tuple[int, int]) -> list[str]:
    """The help's text as laid out in its box at this terminal size."""
    async def go() -> list[str]:
        app = DashboardApp(ReplaySource.from_file(FAILURES, at=22.0, playing=False))
        async with app.run_test(size=size) as pilot:
            await pilot.pause(0.2)
            await pilot.press("question_mark")
            await pilot.pause(0.2)
            static = app.screen.query_one(Static)
            console = Console(width=static.content_region.width, file=io.StringIO(), color_system=None)
            with console.capture() as cap:
                console.print(static.content)
            return cap.get().splitlines()

    return asyncio.run(go())


def desc_col(lines: list[str], key: str, desc: str) -> int:
    [line] = [ln for ln in lines if ln.startswith(key + "  ") and desc in ln]
    return line.index(desc)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", [(80, 24), (220, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_key_column_is_as_wide_as_the_widest_key(size):
    lines = help_lines(size)
    col = desc_col(lines, "?", "this help")
    assert col == len(WIDEST) + 2  # the widest key and the grid's gap: every section's descriptions line up
    assert desc_col(lines, "tab / shift+tab", "move focus") == col and desc_col(lines, WIDEST, "scroll the") == col
    assert desc_col(lines, "single", "mem+compute held") == col
    assert "Partitions (s f g w from anywhere; esc when focused)" in lines  # a title on a line of its own
    if size == (80, 24):  # 50 columns of description: 'this help' and the like on one line
        assert any(ln.rstrip().endswith("cycle theme (dark, light, high-contrast)") for ln in lines)
