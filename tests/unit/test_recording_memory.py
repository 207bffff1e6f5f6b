"""`summary` folds a recording as it reads it (issue 35: a legal recording at the event bound
took 1.1-2.1 GB, every event held as a model before the fold). Memory counted by tracemalloc,
not time: what a summary allocates must not grow with the events read."""
from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover import DashboardState, summarize
from prover.fold.apply import fold
from prover.record import RecordingHeader, _dump_line, read_recording
from tests.helpers.tui_synth import synth_events

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)


def _recording(path: Path, partitions: int) -> int:
    events = synth_events(gpus=4, workers_per_gpu=3, sectors=1, partitions=partitions)
    path.write_bytes(b"\n".join([RecordingHeader().model_dump_json().encode(), *map(_dump_line, events)]) + b"\n")
    return len(events)


def _summary_peak(path: Path) -> tuple[int, dict]:
    gc.collect()
    tracemalloc.start()
    try:
        r = CliRunner().invoke(main, ["summary", "--json", str(path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.exit_code in (0, 1), r.output
    return peak, json.loads(r.output)


def test_summary_memory_does_not_grow_with_the_events(tmp_path: Path) -> None:
    """~2k and ~8.5k events: held as models it was ~1.2 KB an event (10 MB for 8.5k); folded
    as read, what grows is the fold's own bounded state (~60 B an event at these sizes)."""
    CliRunner().invoke(main, ["summary", str(ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl")])  # imports
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    n_small, n_large = _recording(small, 40), _recording(large, 160)
    (p_small, _), (p_large, doc) = _summary_peak(small), _summary_peak(large)
    assert doc["recording"]["events"] == n_large
    per_event = (p_large - p_small) / (n_large - n_small)
    assert per_event < 300, (per_event, p_small >> 10, p_large >> 10)


def test_a_streamed_read_folds_what_a_whole_read_does(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    n = _recording(p, 30)
    p.write_bytes(p.read_bytes() + b'{"kind": "note", "t": 0.0}\n')  # out of order: the prefix, then the error
    whole = read_recording(p)
    state = DashboardState()
    streamed = read_recording(p, sink=state.apply)
    assert streamed.events == [] and streamed.count == whole.count == len(whole.events) == n
    assert (streamed.error, streamed.bad_line) == (whole.error, whole.bad_line) and whole.error
    assert summarize(state) == summarize(fold(whole.events))
