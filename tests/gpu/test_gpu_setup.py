"""Setup on the GPU (G1 and G2 fixed-base kernels, the Lagrange iNTT) gives the same key bytes
as the CPU setup, and its proofs verify."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def _all_keys(pk, vk) -> dict[str, np.ndarray]:
    return {**{f"pk_{k}": v for k, v in pk.arrays().items()}, **{f"vk_{k}": v for k, v in vk.arrays().items()}}


@pytest.mark.parametrize("log2", [12, 14])
def test_gpu_setup_equals_cpu_setup(log2: int, monkeypatch) -> None:
    from prover.groth16 import phases as P
    from prover.groth16 import setup as S

    circuit = P.make_circuit(log2, 21)
    assert S.gpu_fixed_base_g1() is not None and S.gpu_fixed_base_g2() is not None and S.gpu_intt() is not None
    calls = {"g2": 0, "intt": 0}
    g2, intt = S.gpu_fixed_base_g2(), S.gpu_intt()
    monkeypatch.setattr(S, "gpu_fixed_base_g2", lambda ks=None: lambda b, c: calls.__setitem__("g2", calls["g2"] + 1) or g2(b, c))
    monkeypatch.setattr(S, "gpu_intt", lambda ks=None: lambda x: calls.__setitem__("intt", calls["intt"] + 1) or intt(x))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pk_gpu, vk_gpu = S.setup(circuit, insecure_seed=21)
    fallbacks = [str(w.message) for w in caught if "GPU" in str(w.message)]
    assert not fallbacks, fallbacks  # no silent CPU fallback
    nz_g2 = int(pk_gpu.b_g2_query.any(axis=1).sum())
    device = circuit.domain_size >= S.DEVICE_SETUP_MIN  # the whole set-up on the device: no piecewise calls
    assert calls["g2"] == (0 if device else 1 if nz_g2 >= S.GPU_FIXED_BASE_MIN else 0)
    # the host set-up's two Lagrange bases (the QAP's, the H query's coset one)
    assert calls["intt"] == (0 if device else 2 if circuit.domain_size >= S.GPU_NTT_MIN else 0)
    monkeypatch.setenv("C2TUI_SETUP_GPU", "0")
    pk_cpu, vk_cpu = S.setup(circuit, insecure_seed=21)
    want, got = _all_keys(pk_cpu, vk_cpu), _all_keys(pk_gpu, vk_gpu)
    for name in want:
        assert np.array_equal(want[name], got[name]), name
    syn = P.synthesize(circuit, 1)
    proof = P.prove(circuit, pk_gpu, 1, *P.seeded_randomisers(21, 1))
    assert P.verify(vk_gpu, syn.public_ints(), proof)


def test_gpu_lagrange_equals_numpy() -> None:
    from prover.field import fr, ntt
    from prover.groth16 import setup as S

    intt = S.gpu_intt()
    for L in (1, 8, 14, 16):
        powers = fr.from_mont(fr.mont_powers(123456789 + L, 1 << L))
        assert np.array_equal(np.asarray(intt(powers)), ntt.intt(powers)), L


@pytest.mark.parametrize("log2", [14, 16])
def test_a_resident_key_set_up_on_the_device_proves_the_host_keys_bytes(log2: int) -> None:
    """key_resident=device: the queries stay on the GPU (no host copy); the proof verifies and
    has the bytes of the host set-up's key's proof (same seeded toxic waste)."""
    from prover.backend import settle
    from prover.groth16 import compose
    from prover.groth16 import phases as P
    from prover.groth16 import setup as S
    from prover.kernels.cuda_backend import CudaBackend
    from prover.settings import KernelSettings

    circuit = P.make_circuit(log2, 22)
    pk, vk = S.setup(circuit, insecure_seed=22, kernels=KernelSettings(key_resident="device"))
    assert pk.resident and pk.nbytes < 2 * circuit.num_vars
    pk_host, _ = S.setup(circuit, insecure_seed=22, kernels=KernelSettings(setup_gpu=False))
    assert np.array_equal(pk.h_query.to_host(), pk_host.h_query)
    fns = compose.GpuCompute.over(CudaBackend(KernelSettings()), P)
    syn = P.synthesize(circuit, 3)
    r, s = P.seeded_randomisers(22, 3)
    prep = fns.pin_prep(P.prep_msm(syn, pk))
    h = fns.ntt_h(syn.a, syn.b, syn.c)
    proof = P.assemble(syn, settle(fns.msm_g1(prep, h, pk)), settle(fns.b_g2_msm(prep, pk)), pk, r, s)
    assert P.verify(vk, syn.public_ints(), proof)
    assert proof.to_bytes() == P.prove(circuit, pk_host, 3, r, s).to_bytes()
