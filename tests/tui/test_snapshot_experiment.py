"""The experiment panel (`x`) over the native 2^22 experiment (benchmarks/recordings/h200/
experiment/: 7 arms x 4 cycles of 3 s on an H200), paused at fixed run times: mid-way (a hold
running, some verdicts not significant yet) and after the end (every arm's verdict)."""
from __future__ import annotations

from pathlib import Path

from tests.tui.test_snapshots import make_app

N22 = Path(__file__).parents[2] / "benchmarks" / "recordings" / "h200" / "experiment" / "n22_experiment.jsonl.gz"


def test_experiment_panel_mid_way(snap_compare):
    """50 s in: cycle 2 of 4 holding, the arms' rates so far with their intervals."""
    assert snap_compare(make_app(N22, at=50.0), press=["X"], terminal_size=(120, 30))


def test_experiment_panel_at_the_end(snap_compare):
    """Ended: 4 complete cycles, each arm against single with its verdict (80 columns)."""
    assert snap_compare(make_app(N22, at=98.5), press=["X"], terminal_size=(80, 24))
