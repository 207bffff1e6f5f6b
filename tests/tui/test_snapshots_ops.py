"""Snapshots of what operators asked for (issue 26): the host-RAM bar with a worker held back
by the budget. Committed recordings (tests/tui/make_recordings.py), fixed run times."""
from __future__ import annotations

from pathlib import Path

from tests.tui.test_snapshots import make_app

REC = Path(__file__).parent / "recordings"


def test_host_ram_bar_with_a_worker_held_back(snap_compare):
    """1 GPU x 3 workers, a 110 GiB budget holds the modelled key + 2 workers: g0w2 waits."""
    assert snap_compare(make_app(REC / "host_ram.jsonl", at=4.0), terminal_size=(120, 40))


def test_startup_panel_during_key_setup(snap_compare):
    """A fresh 2^12 key set-up: circuit done, keys at their fixed-base step, nothing proved yet."""
    assert snap_compare(make_app(REC / "startup.jsonl", at=1.0), terminal_size=(120, 40))


def test_class_queues_with_winning_and_window_ahead_of_c2(snap_compare):
    """Two c2 sectors queued; winning (3 s) and window (3.5 s) submitted behind them."""
    assert snap_compare(make_app(REC / "classes.jsonl", at=5.0), terminal_size=(120, 40))


def test_cordoned_gpu_and_a_cancelled_sector(snap_compare):
    """gpu1 cordoned at 1.5 s (its panel says so, its lanes go idle), sector 1 cancelled at 2 s."""
    assert snap_compare(make_app(REC / "cordon.jsonl", at=4.5), terminal_size=(120, 48))


def test_keys_of_two_sizes_one_hot_one_loading(snap_compare):
    """c2's 2^10 key hot (modelled 2^27), a winning sector's 2^8 key being set up at 2.15 s
    (half its steps done): the host-RAM bar by size, the keys panel with the load's progress."""
    assert snap_compare(make_app(REC / "keys.jsonl", at=2.15), terminal_size=(120, 40))


def test_a_b_c_made_on_the_gpu(snap_compare):
    """abc gpu, modelled 2^27 on the H200 profile (issue 41): the VRAM bar with the circuit's matrices
    resident first (r1cs:2^8) and each worker's z beside its d_a and d_bc; the phase bars' pre-stage
    segments end in the r1cs cell."""
    assert snap_compare(make_app(REC / "abc_gpu.jsonl.gz", at=5.0), terminal_size=(160, 48))
