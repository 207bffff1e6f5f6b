"""The device set-up's step timer waits for the step's own kernels (issue 37: the 2^27 run's
fixed-base steps read 0.00 s, their time landing after the last step): on the CPU emulator of
the CUDA backend, every step ends with a wait on the set-up's stream, before its timer stops."""
from __future__ import annotations

import pytest

from prover.groth16 import phases as P
from prover.groth16 import setup as S
from prover.kernels.cuda_backend import CudaBackend
from prover.settings import KernelSettings
from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the fixture)


@pytest.mark.timeout(300)
def test_each_device_set_up_step_waits_for_its_stream(cuda_emulator, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr(S, "DEVICE_SETUP_MIN", 1 << 8)  # the device path at 2^8
    trail: list[str] = []
    real = CudaBackend.setup_sync
    monkeypatch.setattr(CudaBackend, "setup_sync", lambda self: trail.append("sync") or real(self))

    def on_step(name: str, ended: bool) -> None:
        trail.append(("end " if ended else "start ") + name)

    with S.observe_steps(on_step):
        pk, _ = S.setup(P.make_circuit(8, 3), insecure_seed=3, kernels=KernelSettings(key_resident="device"))
    assert pk.resident
    ends = [i for i, x in enumerate(trail) if x.startswith("end ")]
    assert {trail[i] for i in ends} >= {"end lagrange", "end qap_matvecs", "end scalars", "end lagrange_coset",
                                        "end fixed_base_g1", "end fixed_base_g2"}
    assert all(trail[i - 1] == "sync" for i in ends), trail
