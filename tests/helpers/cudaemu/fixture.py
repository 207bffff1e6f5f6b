"""Installing the emulator as `cupy` for a test, with the prover's module-level device caches
swapped for empty ones until the test ends (a compiled module, NTT plan or fixed-base table made
over one `cupy` must not be handed to code running over another; the real ones come back intact).

    from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the pytest fixture)

    def test_x(cuda_emulator):
        backend = CudaBackend(KernelSettings())   # the real wrappers and kernels, on the CPU
"""
from __future__ import annotations

import sys
from typing import Iterator

import pytest

from tests.helpers.cudaemu import MODULES, available


def install(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The emulator as `cupy`, and empty device caches, until monkeypatch undoes them (at the end
    of the test); returns the fake module. Skips the test where g++ is missing."""
    from prover.kernels import fixed_base, loader, ntt, r1cs

    if not available():
        pytest.skip("g++ not installed: the CUDA emulator compiles the kernels with it")
    for name, mod in MODULES.items():
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(loader, "_cache", {})        # compiled modules
    monkeypatch.setattr(ntt, "_plans", {})    # NTT twiddle tables (device arrays)
    monkeypatch.setattr(fixed_base, "_tables", {})   # fixed-base tables (device arrays)
    monkeypatch.setattr(r1cs, "_cache", {})          # R1CS matrices uploaded by device_matrix (device arrays)
    return MODULES["cupy"]


@pytest.fixture
def cuda_emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The fake `cupy` module, installed for this test (the real kernels run on the CPU)."""
    yield install(monkeypatch)
