"""Snapshot tests of the dashboard over a small committed recording (pytest-textual-snapshot).

Deterministic: a paused ReplaySource folds the recording up to a fixed run time; every time
on screen is derived from the recording's t, never from a clock.
Refresh after an intended change: pytest tests/tui --snapshot-update
"""
from __future__ import annotations

from pathlib import Path

import pytest

from c2tui.app import DashboardApp
from c2tui.sources import ReplaySource


def make_app(recording, at: float, theme: str = "dark") -> DashboardApp:
    """The dashboard over a recording, paused at run time `at`."""
    return DashboardApp(ReplaySource.from_file(recording, at=at, playing=False), theme=theme)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_dashboard_sizes(snap_compare, recording, size):
    assert snap_compare(make_app(recording, at=6.0), terminal_size=size)


@pytest.mark.parametrize("theme", ["dark", "light", "high-contrast"])
def test_themes(snap_compare, recording, theme):
    assert snap_compare(make_app(recording, at=12.0, theme=theme), terminal_size=(120, 40))


def test_early_run_locks_and_fallback(snap_compare, recording):
    """Seconds into the run: first pre-stages, a lock wait, the first fallback."""
    assert snap_compare(make_app(recording, at=3.0), terminal_size=(120, 40))


def test_failed_proofs_and_mode_switch(snap_compare):
    """A synthetic run (tui_synth.py) with failed proofs and a live mem_sync switch."""
    path = Path(__file__).parent / "recordings" / "synth_failures.jsonl"
    assert snap_compare(make_app(path, at=22.0), terminal_size=(160, 48))


def test_replay_paused_mid_run_after_seek(snap_compare, recording):
    """Paused mid-run; seek forward twice and back once, slow down: position and speed show."""
    assert snap_compare(make_app(recording, at=8.0), press=["right", "right", "left", "left_square_bracket"],
                        terminal_size=(120, 40))


def test_help_screen(snap_compare, recording):
    assert snap_compare(make_app(recording, at=6.0), press=["question_mark"], terminal_size=(120, 40))


def test_theme_cycle_key(snap_compare, recording):
    """`t` cycles dark -> light."""
    assert snap_compare(make_app(recording, at=6.0), press=["t"], terminal_size=(100, 30))
