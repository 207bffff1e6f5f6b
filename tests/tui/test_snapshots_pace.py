"""Snapshots of the GPU panel's pace line (prover/fold/pace.py) over committed native H200
recordings: 2^27 host-bound on synthesis (its 16 cores mostly idle: more host_threads may
help, another discipline will not), and 2^22 two-lock + stream GPU-bound."""
from __future__ import annotations

from pathlib import Path

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource

H200 = Path(__file__).parents[2] / "benchmarks" / "recordings" / "h200"


def _app(path: Path, at: float) -> DashboardApp:
    return DashboardApp(ReplaySource.from_file(path, at=at, playing=False))


def test_host_bound_names_its_phase(snap_compare):
    """Native 2^27, narrow, 3 workers, 50 s in: synthesis 11.7 s a partition sets the pace."""
    assert snap_compare(_app(H200 / "scale27" / "n27_narrow_24g.jsonl.gz", 50.0), terminal_size=(120, 40))


def test_gpu_bound(snap_compare):
    """Native 2^22, two-lock + stream, 8 workers, 10 s in: the GPU computes nearly all the time."""
    assert snap_compare(_app(H200 / "native" / "n22_stream_card.jsonl.gz", 10.0), terminal_size=(120, 40))
