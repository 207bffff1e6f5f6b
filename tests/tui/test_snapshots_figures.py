"""Snapshots of issue 33's figures: the settling header, a segment row with its interval,
History's windowed rates, and an 8-GPU screen with "+N more" (rows and lanes hidden, said
outside them). Paused replays at fixed times, like tests/tui/test_snapshots.py."""
from __future__ import annotations

from pathlib import Path

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource

HERE = Path(__file__).parent / "recordings"
SWITCH = HERE / "switch_device_stream.jsonl.gz"
EIGHT = HERE / "eight_gpus.jsonl"


def make_app(recording: Path, at: float) -> DashboardApp:
    return DashboardApp(ReplaySource.from_file(recording, at=at, playing=False), theme="dark")


def test_settling_header(snap_compare):
    """2 s in: the windowed rate rests on 2 proofs, so the header says "settling 2 of 10 proofs in the 30 s window"."""
    assert snap_compare(make_app(SWITCH, at=2.0), terminal_size=(120, 40))


def test_segment_row_with_its_interval(snap_compare):
    """After the device -> stream switch: each segment's proofs and 95% interval, the ratio's
    interval, and the draining sections' OOM and fallback in the new row's transitional column."""
    assert snap_compare(make_app(SWITCH, at=16.0), terminal_size=(220, 60))


def test_history_windowed_rates(snap_compare):
    """History (`h`): fallbacks and OOMs per minute over the named sliding window."""
    assert snap_compare(make_app(SWITCH, at=16.0), press=["h"], terminal_size=(100, 30))


def test_eight_gpus_with_more_hidden(snap_compare):
    """8 GPUs at 160x48: "+N more in flight" under the partition rows, totals named as such."""
    assert snap_compare(make_app(EIGHT, at=6.0), terminal_size=(160, 48))
