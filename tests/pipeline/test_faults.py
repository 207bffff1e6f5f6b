"""Faults from the config's [faults] section (issue 7 hooks): each ends with the partition
marked failed with its reason (or retried), every lock released, the run going on, the
summary counting it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers.invariants import InvariantChecker  # noqa: E402
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from prover.fold.apply import fold
from prover.fold.summary import summarize


def run(real: bool = False, timeout: float = 40, **kw):
    base = dict(backend="sim", profile="tiny", time_scale=1.0, sectors=1, partitions=6, workers_per_gpu=2,
                constraints_log2=8)
    base.update(kw)
    chk = InvariantChecker()
    eng = Engine(load_config(None, **base), [chk], phases=None if real else NullPhases())
    eng.start()
    assert eng.wait(timeout)
    assert chk.final() == []
    return chk, summarize(fold(chk.events))


@pytest.mark.timeout(60)
def test_corrupted_proof_is_a_failure_never_a_success():
    chk, sm = run(real=True, partitions=3, faults={"corrupt_proof_rate": 1.0})
    assert sm.proofs_failed == 3 and sm.proofs_ok == 0 and sm.partitions_failed == 3
    assert not sm.all_proofs_verified
    assert all(e.reason and "verification" in e.reason for e in chk.events if e.kind == "partition_done")


@pytest.mark.timeout(60)
def test_real_proofs_verify_and_sampled_share():
    chk, sm = run(real=True, partitions=4, verify_share=0.5, seed=5)
    assert sm.proofs_ok + sm.proofs_unchecked == 4 and sm.proofs_failed == 0
    # issue 16: only verified partitions are ok; unchecked ones are their own outcome
    assert sm.partitions_ok == sm.proofs_ok and sm.partitions_unchecked == sm.proofs_unchecked
    assert sm.all_proofs_verified == (sm.proofs_unchecked == 0)


@pytest.mark.timeout(30)
def test_oom_injected_partitions_fall_back_or_retry():
    chk, sm = run(partitions=10, faults={"oom_rate": 0.3})
    assert sm.ooms > 0
    assert sm.partitions_ok + sm.partitions_failed == 10
    assert all(e.reason for e in chk.done.values() if not e.ok)


@pytest.mark.timeout(30)
def test_worker_death_is_survived():
    chk, sm = run(partitions=10, faults={"worker_death_rate": 0.3}, seed=2)
    stops = [e for e in chk.events if e.kind == "worker_stopped" and e.reason.startswith("died")]
    assert stops and sm.partitions_ok == 10


@pytest.mark.timeout(30)
def test_hang_raises_watchdog_stall():
    chk, sm = run(partitions=2, faults={"hang": {"ntt_h": 1.0}, "hang_seconds": 0.6, "watchdog_phase_s": 0.2,
                                        "watchdog_lock_s": 0.3})
    stalls = [e for e in chk.events if e.kind == "stall"]
    assert {s.what for s in stalls} == {"phase", "lock"}
    assert any(s.name == "ntt_h" for s in stalls) and any(s.name == "compute" for s in stalls)
    assert sm.stalls == len(stalls) and sm.partitions_ok == 2


@pytest.mark.timeout(30)
def test_retries_recover_transient_errors():
    chk, sm = run(partitions=8, faults={"phase_error": {"msm": 0.4}, "retries": 5}, seed=11)
    assert sm.partitions_ok == 8
    assert any(e.kind == "note" and "retry" in e.text for e in chk.events)


@pytest.mark.timeout(30)
def test_cuda_error_injected_fails_partition_with_reason():
    chk, sm = run(partitions=6, faults={"cuda_error_rate": 0.5}, seed=4)
    failed = [e for e in chk.done.values() if not e.ok]
    assert failed and all("CUDA error" in e.reason for e in failed)


def test_cuda_error_rates_help_says_what_happens():
    """Issue 35: its help promised a CPU fallback that does not happen: the partition fails."""
    from prover.config import FaultsConfig

    text = FaultsConfig.model_fields["cuda_error_rate"].description or ""
    assert "partition fails" in text and "no CPU fallback" in text
    chk, sm = run(partitions=2, faults={"cuda_error_rate": 1.0}, seed=4)
    assert sm.partitions_failed == 2 and not [e for e in chk.events if e.kind == "fallback"]
