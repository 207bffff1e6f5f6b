"""Setup's GPU paths (G1 and G2 fixed-base, the Lagrange iNTT) are wired so that the keys are the
same bytes either way.

Runs here with CPU stand-ins for the kernels (the real one is checked in tests/gpu); a
failing GPU falls back to the CPU with a warning and the same key."""
from __future__ import annotations

import numpy as np
import pytest

from prover.field import curve, ntt
from prover.groth16 import phases as P
from prover.groth16 import setup as S


def _cpu_stand_in(base_xy: np.ndarray, coeffs: np.ndarray) -> np.ndarray:
    base = curve.g1_from_bytes(bytes(base_xy))
    return curve.fixed_base_g1(base, coeffs)


def _cpu_stand_in_g2(base_xy: np.ndarray, coeffs: np.ndarray) -> np.ndarray:
    return curve.fixed_base_g2(curve.g2_from_bytes(bytes(base_xy)), coeffs)


@pytest.fixture
def small_gpu_threshold(monkeypatch):
    monkeypatch.setattr(S, "GPU_FIXED_BASE_MIN", 16)
    monkeypatch.setattr(S, "GPU_NTT_MIN", 16)
    for name in ("gpu_fixed_base_g2", "gpu_intt"):  # no device here anyway; be explicit
        monkeypatch.setattr(S, name, lambda ks=None: None)


def test_the_gpu_path_gives_the_same_key(monkeypatch, small_gpu_threshold) -> None:
    circuit = P.make_circuit(8, 11)
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda ks=None: None)
    pk_cpu, vk_cpu = S.setup(circuit, insecure_seed=11)
    calls = []
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda ks=None: lambda b, c: calls.append(len(c)) or _cpu_stand_in(b, c))
    pk_gpu, vk_gpu = S.setup(circuit, insecure_seed=11)
    assert calls, "the GPU path was not taken"
    for name in ("a_query", "b_g1_query", "l_query", "h_query"):
        assert np.array_equal(getattr(pk_cpu, name), getattr(pk_gpu, name)), name


def test_a_failing_gpu_falls_back_to_the_cpu(monkeypatch, small_gpu_threshold) -> None:
    circuit = P.make_circuit(8, 12)
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda ks=None: None)
    pk_cpu, _ = S.setup(circuit, insecure_seed=12)

    def broken(b, c):
        raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS")

    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda ks=None: broken)
    with pytest.warns(RuntimeWarning, match="GPU fixed-base failed"):
        pk, _ = S.setup(circuit, insecure_seed=12)
    assert np.array_equal(pk.h_query, pk_cpu.h_query)


def test_no_gpu_here_means_no_gpu_path(monkeypatch) -> None:
    monkeypatch.setenv("C2TUI_SETUP_GPU", "0")
    assert S.gpu_fixed_base_g1() is None


def _all_keys(pk, vk) -> dict[str, np.ndarray]:
    return {**{f"pk_{k}": v for k, v in pk.arrays().items()}, **{f"vk_{k}": v for k, v in vk.arrays().items()}}


def test_every_gpu_path_gives_the_same_key_bytes(monkeypatch, small_gpu_threshold) -> None:
    circuit = P.make_circuit(9, 13)
    pk_cpu, vk_cpu = S.setup(circuit, insecure_seed=13)
    calls: dict[str, list[int]] = {"g1": [], "g2": [], "intt": []}
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda ks=None: lambda b, c: calls["g1"].append(len(c)) or _cpu_stand_in(b, c))
    monkeypatch.setattr(S, "gpu_fixed_base_g2", lambda ks=None: lambda b, c: calls["g2"].append(len(c)) or _cpu_stand_in_g2(b, c))
    monkeypatch.setattr(S, "gpu_intt", lambda ks=None: lambda x: calls["intt"].append(len(x)) or ntt.intt(x))
    pk_gpu, vk_gpu = S.setup(circuit, insecure_seed=13)
    assert calls["g1"] and calls["g2"] == [int(pk_cpu.b_g2_query.any(axis=1).sum())] and calls["intt"] == [512, 512]  # the QAP's and the H query's Lagrange bases
    want, got = _all_keys(pk_cpu, vk_cpu), _all_keys(pk_gpu, vk_gpu)
    assert want.keys() == got.keys()
    for name in want:
        assert np.array_equal(want[name], got[name]), name


def test_failing_g2_and_intt_fall_back_to_the_cpu(monkeypatch, small_gpu_threshold) -> None:
    circuit = P.make_circuit(8, 14)
    pk_cpu, _ = S.setup(circuit, insecure_seed=14)

    def broken(*_a):
        raise RuntimeError("CUDA_ERROR_LAUNCH_FAILED")

    monkeypatch.setattr(S, "gpu_fixed_base_g2", lambda ks=None: broken)
    monkeypatch.setattr(S, "gpu_intt", lambda ks=None: broken)
    with pytest.warns(RuntimeWarning) as rec:
        pk, _ = S.setup(circuit, insecure_seed=14)
    msgs = " ".join(str(w.message) for w in rec)
    assert "GPU fixed-base failed" in msgs and "GPU iNTT failed" in msgs
    assert np.array_equal(pk.b_g2_query, pk_cpu.b_g2_query) and np.array_equal(pk.a_query, pk_cpu.a_query)


def test_dense_and_sparse_batches_land_in_their_rows(monkeypatch, small_gpu_threshold) -> None:
    from prover.field import fr

    coeffs = fr.random(40, 5)
    coeffs[[3, 17, 39]] = 0
    monkeypatch.setattr(S, "gpu_fixed_base_g2", lambda ks=None: _cpu_stand_in_g2)
    monkeypatch.setattr(S, "gpu_fixed_base_g1", lambda ks=None: _cpu_stand_in)
    for g2, fn in ((False, curve.fixed_base_g1), (True, curve.fixed_base_g2)):
        gen = curve.g2_generator() if g2 else curve.g1_generator()
        for c in (coeffs, coeffs[coeffs.any(axis=1)]):
            got = S._fixed(c, g2)
            want = np.zeros_like(got)
            nz = c.any(axis=1)
            want[nz] = fn(gen, c[nz])
            assert np.array_equal(got, want)


def test_setup_gpu_0_turns_every_gpu_path_off(monkeypatch) -> None:
    monkeypatch.setenv("C2TUI_SETUP_GPU", "0")
    assert S.gpu_fixed_base_g1() is None and S.gpu_fixed_base_g2() is None and S.gpu_intt() is None
