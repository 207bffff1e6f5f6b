"""Proof classes (prover/classes.py): a winning sector submitted behind a full c2 queue is
done before the c2 partitions that were still queued, read from the recording; deadlines
missed are reported once; bad classes are refused by name."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from prover.record import RecordingHeader, RecordingWriter, read_recording
from prover.fold.apply import fold
from prover.fold.summary import summarize

COMMITTED = Path(__file__).resolve().parents[1] / "tui" / "recordings" / "classes.jsonl"


def jumped_the_queue(events: list, cls: str = "winning") -> tuple[float, list[float]]:
    """(when the class's sector was done, when each c2 partition still queued at its
    submission was done)."""
    sub = next(e for e in events if e.kind == "sector_submitted" and e.proof_class == cls)
    started = {e.part for e in events if e.kind == "phase_start" and e.t <= sub.t}
    c2 = {e.part for e in events if e.kind == "partition_queued" and e.proof_class == "c2" and e.t <= sub.t}
    done = {e.part: e.t for e in events if e.kind == "partition_done"}
    mine = [t for p, t in done.items() if p.startswith(f"s{sub.sector}p")]
    return max(mine), [done[p] for p in c2 - started if p in done]


def test_committed_recording_winning_and_window_before_queued_c2():
    events = read_recording(COMMITTED).events
    for cls in ("winning", "window"):
        done, queued = jumped_the_queue(events, cls)
        assert len(queued) >= 6 and done < min(queued), cls


@pytest.mark.timeout(60)
def test_winning_behind_a_full_c2_queue_is_done_first(tmp_path):
    out = tmp_path / "w.jsonl"
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=1.0, sectors=2, partitions=8, workers_per_gpu=2)
    writer = RecordingWriter(out, RecordingHeader(config=cfg.public_dict()))
    seen: list = []
    eng = Engine(cfg, [writer, seen.append], phases=NullPhases())
    eng.start()
    end = time.monotonic() + 20
    while not any(e.kind == "partition_done" for e in seen) and time.monotonic() < end:
        time.sleep(0.01)
    assert eng.controller.apply("submit=winning", source="test")
    assert eng.wait(40)
    writer.close()
    events = read_recording(out).events
    done, queued = jumped_the_queue(events)
    assert len(queued) >= 8 and done < min(queued)
    sub = next(e for e in events if e.kind == "sector_submitted" and e.proof_class == "winning")
    assert sub.source == "test" and sub.partitions == 1 and sub.deadline_s == pytest.approx(25.0)
    sm = summarize(fold(events))
    assert sm.classes["winning"].sectors_done == 1 and sm.classes["c2"].partitions_done == 16


@pytest.mark.timeout(60)
def test_a_deadline_missed_while_paused_is_reported_once():
    seen: list = []
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=0.01, sectors=1, partitions=2, workers_per_gpu=1,
                      paused=True)
    eng = Engine(cfg, [seen.append], phases=NullPhases())
    eng.start()
    end = time.monotonic() + 20
    while not any(e.kind == "worker_started" for e in seen) and time.monotonic() < end:
        time.sleep(0.01)
    eng.controller.submit_sector(source="test", cls="winning")  # 25 s x 0.01: due in 0.25 s
    while not any(e.kind == "deadline_missed" for e in seen) and time.monotonic() < end:
        time.sleep(0.01)
    eng.controller.resume("test")
    assert eng.wait(30)
    missed = [e for e in seen if e.kind == "deadline_missed"]
    assert len(missed) == 1 and missed[0].proof_class == "winning" and missed[0].left == 1
    s = fold(seen)
    assert s.queues.classes["winning"].missed == 1 and not s.queues.overdue(s.t)
    assert summarize(s).classes["winning"].deadlines_missed == 1
    assert any("missed its deadline" in text for _, _, text, _ in s.log)


def test_unknown_class_is_refused_by_name():
    eng = Engine(load_config(None, backend="sim", profile="tiny"), phases=NullPhases())
    with pytest.raises(ValueError, match="unknown proof class 'gold'; known: winning, window, c2"):
        eng.controller.apply("submit=gold")
