"""Every event a real engine run emits survives the recording round trip unchanged, and the
fold of the file equals the fold of the live stream (what the TUI shows live = replay)."""
from __future__ import annotations

import pytest

from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.record import RecordingHeader, RecordingWriter, read_recording
from prover.fold.apply import fold
from prover.fold.summary import summarize


@pytest.mark.timeout(60)
def test_engine_events_round_trip(tmp_path):
    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=8, sectors=1, partitions=3,
                      workers_per_gpu=2, gpus=2, b_g2="gpu", faults={"phase_error": {"assemble": 0.3}}, seed=1)
    live = []
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path, RecordingHeader(config=cfg.public_dict())) as w:
        eng = Engine(cfg, [live.append, w.write])
        eng.start()
        eng.controller.apply("mem_sync=stream")
        assert eng.wait(60)
    rec = read_recording(path)
    assert rec.error is None and rec.events == live
    kinds = {e.kind for e in live}
    assert {"run_started", "gpu_info", "worker_started", "sector_submitted", "partition_queued", "phase_start",
            "phase_end", "lock_requested", "lock_acquired", "lock_released", "alloc", "free", "vram_sample",
            "mode_change", "proof_result", "partition_done", "worker_stopped", "note", "run_ended"} <= kinds
    assert summarize(fold(rec.events)) == summarize(fold(live))
    assert [e.t for e in live] == sorted(e.t for e in live)


@pytest.mark.timeout(120)
def test_native_worker_reuses_its_witness_buffer():
    """A native worker writes each partition's witness into the same array (no fresh pages a
    partition): every proof still verifies, one partition after another on one worker."""
    cfg = load_config(None, backend="sim", profile="native", constraints_log2=8, sectors=1, partitions=4,
                      workers_per_gpu=1, seed=3)
    events = []
    eng = Engine(cfg, [events.append])
    eng.start()
    assert eng.wait(90)
    st = fold(events)
    assert st.proofs_ok == 4 and st.proofs_failed == 0
