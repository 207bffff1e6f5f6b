"""Installing the emulator as `cupy` for a test, with the prover's module-level device caches
emptied before and after (a compiled module, NTT plan or fixed-base table made over one `cupy` must
not be handed to code running over another).

    from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the pytest fixture)

    def test_x(cuda_emulator):
        backend = CudaBackend(KernelSettings())   # the real wrappers and kernels, on the CPU
"""
from __future__ import annotations

import sys
from typing import Iterator

import pytest

from tests.helpers.cudaemu import MODULES, available, config


def clear_device_caches() -> None:
    from prover.kernels import fixed_base, gpu_phases, loader

    loader._cache.clear()
    gpu_phases._plans.clear()
    fixed_base._tables.clear()


def install(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The emulator as `cupy` until monkeypatch undoes it; returns the fake module."""
    if not available():
        pytest.skip("g++ not installed: the CUDA emulator compiles the kernels with it")
    for name, mod in MODULES.items():
        monkeypatch.setitem(sys.modules, name, mod)
    clear_device_caches()
    return MODULES["cupy"]


@pytest.fixture
def cuda_emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    cp = install(monkeypatch)
    config.launches.clear()
    yield cp
    clear_device_caches()
