"""The device set-up's steps are timed honestly (issue 37): each step waits for its own kernels,
so the fixed-base steps carry their time (the 2^27 run of session 12 read 0.00 s for them, their
11.8 s landing after the last step): the stream is idle when each step's timer stops."""
from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.gpu


def test_device_setup_steps_carry_their_own_time() -> None:
    from prover.groth16 import phases as P
    from prover.groth16 import setup as S
    from prover.settings import KernelSettings

    circuit = P.make_circuit(16, 5)
    assert circuit.domain_size >= S.DEVICE_SETUP_MIN  # wholly on the device
    import cupy as cp

    ks = KernelSettings(key_resident="device", key_cache_write=False)
    S.setup(circuit, insecure_seed=5, kernels=ks)  # compile / first-use costs out of the way
    idle_at_end: dict[str, bool] = {}

    def on_step(name: str, ended: bool) -> None:
        if ended:  # the step's listener runs after its timer stopped: nothing of it may still run
            idle_at_end[name] = idle_at_end.get(name, True) and cp.cuda.get_current_stream().done

    before = dict(S.step_seconds)
    t0 = time.perf_counter()
    with S.observe_steps(on_step):
        pk, _ = S.setup(circuit, insecure_seed=5, kernels=ks)
    total = time.perf_counter() - t0
    steps = {k: v - before.get(k, 0.0) for k, v in S.step_seconds.items() if v != before.get(k, 0.0)}
    assert pk.resident
    for name in ("lagrange", "qap_matvecs", "scalars", "lagrange_coset", "fixed_base_g1", "fixed_base_g2"):
        assert steps.get(name, 0.0) > 0.0, (name, steps)
    assert all(idle_at_end.values()) and "fixed_base_g2" in idle_at_end, idle_at_end
    assert sum(steps.values()) <= total * 1.01 + 1e-3
