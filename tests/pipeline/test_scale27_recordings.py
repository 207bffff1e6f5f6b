"""Issue 37's native 2^27 recordings (one H200, 2026-12-03, benchmarks/scale_native.py) pass the
project's own checks without a GPU: each reads whole, is native 2^27 with every proof verified
and no OOM, keeps the lock and VRAM invariants (tests/helpers/invariants.py), and says what
benchmarks/RESULTS.md says of it."""
from __future__ import annotations

from pathlib import Path

import pytest

from prover.fold.apply import fold
from prover.fold.summary import summarize
from prover.record import read_recording
from tests.helpers.invariants import InvariantChecker

SCALE27 = Path(__file__).resolve().parents[2] / "benchmarks" / "recordings" / "h200" / "scale27"
RUNS = {"n27_stream_card": (4, "two-lock", "stream"), "n27_device_24g": (3, "two-lock", "device"),
        "n27_stream_24g": (3, "two-lock", "stream"), "n27_narrow_24g": (3, "narrow", "stream"),
        "n27_reserved_24g": (3, "reserved", "stream")}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_2_27_recording_is_native_verified_and_keeps_the_invariants(name: str) -> None:
    rec = read_recording(SCALE27 / f"{name}.jsonl.gz")
    assert rec.error is None and rec.header is not None
    chk = InvariantChecker()
    for e in rec.events:
        chk(e)
    assert chk.final(all_done=False) == []  # drained at the end: the queued rest never started
    s = summarize(fold(rec.events))
    workers, lock_mode, mem_sync = RUNS[name]
    assert s.backend == "cuda" and not s.simulated and s.profile == "native"
    assert s.proved_log2 == s.modelled_log2 == 27 and s.time_scale == 1.0
    assert s.knobs["workers_per_gpu"] == workers and s.knobs["lock_mode"] == lock_mode
    assert s.knobs["mem_sync"] == mem_sync
    assert s.proofs_ok >= 6 and s.proofs_failed == 0 and s.proofs_unchecked == 0 and s.all_proofs_verified
    assert s.ooms == 0 and s.gpus[0].name == "NVIDIA H200" and s.gpus[0].nvml
    assert (s.knobs["vram_budget"] == 24 << 30) == name.endswith("_24g")


def test_the_seeds_mechanism_shows_at_2_27() -> None:
    """Under two-lock + device the mem holder's device syncs wait behind the other worker and a
    partition falls back; under stream no sync and no fallback (RESULTS, issue 37)."""
    device = summarize(fold(read_recording(SCALE27 / "n27_device_24g.jsonl.gz").events))
    seg = device.segments[0]
    assert device.fallbacks == 1 and seg.device_syncs == 6 and seg.device_sync_s > 1.0
    for name in ("n27_stream_24g", "n27_narrow_24g", "n27_reserved_24g", "n27_stream_card"):
        s = summarize(fold(read_recording(SCALE27 / f"{name}.jsonl.gz").events))
        assert s.fallbacks == 0 and s.segments[0].device_syncs == 0, name
