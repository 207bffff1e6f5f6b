"""Snapshot tests of the dashboard over a small committed recording (pytest-textual-snapshot).

Deterministic: a paused ReplaySource folds the recording up to a fixed run time; every time
on screen is derived from the recording's t, never from a clock.
Refresh after an intended change: pytest tests/tui --snapshot-update
"""
from __future__ import annotations

from pathlib import Path

import pytest

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource


def make_app(recording, at: float, theme: str = "dark") -> DashboardApp:
    """The dashboard over a recording, paused at run time `at`."""
    return DashboardApp(ReplaySource.from_file(recording, at=at, playing=False), theme=theme)


SWITCH = Path(__file__).parent / "recordings" / "switch_device_stream.jsonl.gz"
FOUR = Path(__file__).parent / "recordings" / "four_gpus.jsonl"
NATIVE = Path(__file__).parents[2] / "benchmarks" / "recordings" / "h200" / "native"
SIZES = [(80, 24), (120, 40), (160, 48), (220, 60)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_one_gpu_sizes(snap_compare, size):
    """One GPU, 6 s after a device -> stream switch (real engine, sim): the layout at each
    size; from 120x40 the history with the switch's mark and the segment panel's two rows."""
    assert snap_compare(make_app(SWITCH, at=14.0), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_four_gpu_sizes(snap_compare, size):
    """Four GPUs: the panels share the rows (or scroll, named by the overview at 80x24)."""
    assert snap_compare(make_app(FOUR, at=10.0), terminal_size=size)


def test_device_sync_cause_in_the_lane(snap_compare):
    """mem_sync=device, a mem holder mid-sync: the mem lane, its timeline lane and its
    partition row say "device sync behind g0w1 s0p1 ... ms"."""
    assert snap_compare(make_app(SWITCH, at=1.2), terminal_size=(160, 48))


def test_compare_device_and_stream(snap_compare):
    """`c2tui compare` of the native 2^22 device (tight budget) and stream (card) runs, 10 s
    after each one's first GPU section: one column each, one clock."""
    from c2tui.dashboard.compare_app import compare_app
    from prover.fold.align import Alignment
    from prover.record import read_recording

    files = [NATIVE / "n22_device_tight.jsonl.gz", NATIVE / "n22_stream_card.jsonl.gz"]
    al = Alignment.of([read_recording(f).events for f in files], "first-gpu")
    assert snap_compare(compare_app(files, al.anchors, at=10.0), terminal_size=(160, 48))


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


def test_history_key_at_80x24(snap_compare):
    """80x24 has no room for the history beside the partitions: `h` shows it in their place."""
    assert snap_compare(make_app(SWITCH, at=14.0), press=["h"], terminal_size=(80, 24))
