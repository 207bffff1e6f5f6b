"""Setup's GPU fixed-base path is wired so that the keys are the same bytes either way.

Runs here with a CPU stand-in for the kernel (the real one is checked in tests/gpu); a
failing GPU falls back to the CPU with a warning and the same key."""
from __future__ import annotations

import numpy as np
import pytest

from prover.bls import curve
from prover.groth16 import phases as P
from prover.groth16 import setup as S


def _cpu_stand_in(base_xy: np.ndarray, coeffs: np.ndarray) -> np.ndarray:
    base = curve.g1_from_bytes(bytes(base_xy))
    return curve.fixed_base_g1(base, coeffs)


@pytest.fixture
def small_gpu_threshold(monkeypatch):
    monkeypatch.setattr(S, "GPU_FIXED_BASE_MIN", 16)


def test_the_gpu_path_gives_the_same_key(monkeypatch, small_gpu_threshold) -> None:
    circuit = P.make_circuit(8, 11)
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda: None)
    pk_cpu, vk_cpu = S.setup(circuit, 11)
    calls = []
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda: lambda b, c: calls.append(len(c)) or _cpu_stand_in(b, c))
    pk_gpu, vk_gpu = S.setup(circuit, 11)
    assert calls, "the GPU path was not taken"
    for name in ("a_query", "b_g1_query", "l_query", "h_query"):
        assert np.array_equal(getattr(pk_cpu, name), getattr(pk_gpu, name)), name


def test_a_failing_gpu_falls_back_to_the_cpu(monkeypatch, small_gpu_threshold) -> None:
    circuit = P.make_circuit(8, 12)
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda: None)
    pk_cpu, _ = S.setup(circuit, 12)

    def broken(b, c):
        raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS")

    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda: broken)
    with pytest.warns(RuntimeWarning, match="GPU fixed-base failed"):
        pk, _ = S.setup(circuit, 12)
    assert np.array_equal(pk.h_query, pk_cpu.h_query)


def test_no_gpu_here_means_no_gpu_path(monkeypatch) -> None:
    monkeypatch.setenv("C2TUI_SETUP_GPU", "0")
    assert S.gpu_fixed_base_g1() is None
