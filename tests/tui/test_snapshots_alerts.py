"""Snapshots of the operators' console (issue 36): alert thresholds on screen (the alert rules'
numbers, prover/observe/thresholds.py), the VRAM-growth warning from a planted leak, and the GPU
health row from a committed native H200 recording. Fixed run times of committed recordings."""
from __future__ import annotations

from pathlib import Path

from tests.tui.test_snapshots import make_app

REC = Path(__file__).parent / "recordings"
LEAK = REC / "vram_leak.jsonl.gz"  # tests/tui/make_recordings.py: vram_leak
SCALE27 = Path(__file__).parents[2] / "benchmarks" / "recordings" / "h200" / "scale27"


def test_a_threshold_turns_the_header_amber(snap_compare):
    """80x24, 0.1 s after the trend test's first VramGrowth (g0w1 keeps 64 MiB a partition): the
    header's bar turns amber and says which rule and why (C2tuiVramGrowing, warning)."""
    assert snap_compare(make_app(LEAK, at=12.0), terminal_size=(80, 24))


def test_vram_growth_warning_names_the_owner(snap_compare):
    """120x40 at 14 s: both workers' leaks found; the GPU panel's border is amber and its title
    names the owner, its growth a partition and the partitions left; the event log says it once."""
    assert snap_compare(make_app(LEAK, at=14.0), terminal_size=(120, 40))


def test_gpu_health_row_from_a_native_h200_run(snap_compare):
    """The native 2^27 run (two-lock + stream, the card's room) 40 s in: NVML's temperature,
    power against its limit, clocks, throttle reasons, PCIe and this process's memory; the host's
    16 CPUs and PSI from /proc."""
    assert snap_compare(make_app(SCALE27 / "n27_stream_card.jsonl.gz", at=40.0), terminal_size=(120, 40))
