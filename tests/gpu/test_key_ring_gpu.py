"""Keys of several sizes on a real GPU (pytest -m gpu): a CUDA engine proving c2 at 2^12
natively takes a winning (2^8) and a window (2^10) sector while it runs, under a host-RAM
budget that holds the workers and one key beside c2's. Each class's key is loaded (set up on
the GPU and cached) with progress, keys are evicted and come back, every proof verifies
against its own key, and no GPU primitive fell back to the CPU.
"""
from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.gpu

cuda_mod = pytest.importorskip("prover.device.cuda")
ok, why = cuda_mod.available()
if not ok:
    pytest.skip(f"no CUDA: {why}", allow_module_level=True)


def _until(seen: list, what, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not any(what(e) for e in list(seen)):
        assert time.monotonic() < end, "never happened"
        time.sleep(0.01)


@pytest.mark.timeout(300)
def test_three_sizes_on_cuda_load_evict_and_verify(tmp_path):
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold
    from tests.helpers.invariants import InvariantChecker
    from tests.helpers.key_invariants import KeyChecker

    keys, inv = KeyChecker(), InvariantChecker()
    cfg = load_config(None, backend="cuda", profile="native", constraints_log2=12, modelled_log2=12, sectors=1,
                      partitions=6, workers_per_gpu=2, lock_mode="two-lock", mem_sync="stream", seed=5,
                      cache_dir=str(tmp_path / "keys"), paused=True)
    eng = Engine(cfg, [keys, inv])
    eng.start()
    _until(keys.events, lambda e: e.kind == "worker_started")
    ring, need = eng.keys, eng.host_ram.need
    assert ring is not None and sorted(ring.sizes()) == [8, 10, 12]
    budget = 2 * need + ring.entry(12).nbytes + ring.entry(10).nbytes  # c2's key and one other, never both
    eng.controller.set("host_ram_budget", budget, source="test")
    eng.controller.resume("test")
    _until(keys.events, lambda e: e.kind == "partition_done")
    eng.controller.submit_sector(source="test", cls="winning")
    eng.controller.submit_sector(source="test", cls="window")
    assert eng.wait(240)
    assert keys.final() == [] and inv.final() == []
    s = fold(keys.events)
    assert s.partitions_ok == 6 + 1 + 2 and s.proofs_failed == 0 and s.partitions_failed == 0 and s.ooms == 0
    assert s.proofs_ok == s.partitions_ok  # every proof checked against its own size's vk
    loads = {e.log2 for e in keys.of("key_load", state="end") if e.ok}
    assert loads == {8, 10, 12}
    assert s.keys.classes == {"c2": 12, "winning": 8, "window": 10}
    assert s.knobs["b_g2"] == "gpu"
    warns = [e.text for e in keys.events if e.kind == "note" and e.level in ("warn", "error")]
    assert not [w for w in warns if "on the GPU failed" in w], warns
    assert keys.peak <= budget
