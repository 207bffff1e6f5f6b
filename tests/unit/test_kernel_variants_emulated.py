"""Issue 25's kernel variants on the CPU emulator (tests/helpers/cudaemu): the real kernels and
wrappers, bit for bit against the reference, at plans with one to four passes (a plan of small
passes stands in for 2^19..2^28, where the fused middle passes appear), the G1 MSMs on lanes,
the first accumulation level's piece length (skewed buckets included) and its batch-affine
rounds (msm_acc=affine: adversarial pairs, a whole proof)."""
from __future__ import annotations

import types

import numpy as np
import py_arkworks_bls12381 as ark
import pytest

from prover import backend as B
from prover.field.ref import fr_random, fr_to_ints, ntt_ref
from prover.settings import KernelSettings
from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the fixture)
from tests.helpers.inputs import msm_inputs, rng_for

R4 = KernelSettings(ntt_radix=4, field_mul="eo_k2")  # = tests/backends/test_conformance.py's EOK2
PLANS = {1: None, 2: [(0, 6), (6, 6)], 3: [(0, 4), (4, 4), (8, 4)], 4: [(0, 3), (3, 3), (6, 3), (9, 3)]}


@pytest.fixture(params=sorted(PLANS))
def plan_passes(request, monkeypatch):
    """NttPlan's passes for 2^12 (1 pass: 2^10 instead), as the larger sizes cut theirs."""
    from prover.kernels import ntt

    passes = PLANS[request.param]
    if passes is not None:
        monkeypatch.setattr(ntt.NttPlan, "_plan", staticmethod(lambda L: passes))
    return 10 if passes is None else 12


def test_fused_ntt_h_equals_the_steps_and_the_reference(cuda_emulator, plan_passes) -> None:  # noqa: F811
    from prover.kernels import ntt

    n = 1 << plan_passes
    rng = rng_for(f"fused-h{plan_passes}")
    a, b, c = (fr_random(n, rng) for _ in range(3))
    want = B.REFERENCE.ntt_h(a, b, c)
    # issue 38: radix-4 rounds in registers (odd and even stage counts per pass), with the
    # Karatsuba Fr product (the conformance suite's cuda-emulated-eok2 build: one compile for both)
    for ks in (KernelSettings(ntt_fused=True), KernelSettings(ntt_fused=False), R4, R4.model_copy(update={"ntt_fused": False})):
        got = ntt.ntt_h_gpu(a, b, c, ks=ks)
        assert np.array_equal(np.asarray(got), want), ks


def test_fused_natural_ntts(cuda_emulator, plan_passes) -> None:  # noqa: F811
    from prover.kernels import ntt

    a = fr_random(1 << plan_passes, rng_for(f"fused-n{plan_passes}"))
    ai = fr_to_ints(a)
    for inverse in (False, True):
        for coset in (False, True):
            for ks in (KernelSettings(ntt_fused=True), R4):
                got = ntt.ntt_gpu(a, inverse=inverse, coset=coset, ks=ks)
                assert fr_to_ints(got) == ntt_ref(ai, inverse=inverse, coset=coset), (inverse, coset, ks)


def test_the_fused_kernels_are_the_ones_launched(cuda_emulator) -> None:  # noqa: F811
    from prover.kernels import ntt
    from tests.helpers.cudaemu import config

    rng = rng_for("fused-launches")
    a, b, c = (fr_random(1 << 12, rng) for _ in range(3))
    config.launches.clear()
    ntt.ntt_h_gpu(a, b, c, ks=KernelSettings(ntt_fused=True))
    names = set(map(str, config.launches))
    # six transforms: no final coset iNTT (the H query is in coset-Lagrange form), so no
    # top_h / last_scatter pass; the quotient is one pointwise pass after c's coset NTT
    assert {"ntt_pass_mid", "pointwise_h"} <= names
    assert not {"scale_bitrev", "bitrev_permute", "ntt_pass_top_h", "ntt_pass_last_scatter"} & names


@pytest.mark.parametrize("lanes,acc", [(1, "xyzz"), (4, "xyzz"), (4, "affine")])
def test_a_proof_composed_over_lanes_has_the_recorded_bytes(cuda_emulator, lanes, acc) -> None:  # noqa: F811
    from prover.kernels.cuda_backend import CudaBackend
    from tests.backends.proof_bytes import proof_hex, recorded
    from tests.backends.test_proof_bytes import _prove_on

    from tests.helpers.cudaemu import config

    backend = CudaBackend(KernelSettings(msm_lanes=lanes, msm_acc=acc))
    assert (B.LANES in backend.capabilities) == (lanes > 1)
    before = config.launches.copy()
    assert proof_hex(10, _prove_on(backend)) == recorded()["10"]
    ran = config.launches - before
    assert (ran["g1_msm_acc0_list"] > 0, ran["g1_msm_acc0"] > 0) == (acc == "affine", acc == "xyzz")


@pytest.mark.parametrize("piece", [4, 64])
def test_msm_piece_lengths(cuda_emulator, piece) -> None:  # noqa: F811
    from prover.kernels.cuda_backend import CudaBackend

    bk = CudaBackend(KernelSettings(msm_piece=piece))
    objs, xy, scal, s = msm_inputs("g1", 9, f"piece{piece}")
    pk = types.SimpleNamespace(a_query=xy, h_query=xy)
    plain, pre = bk.points(pk, "a"), bk.points(pk, "h")  # h: over precomputed window shifts
    assert bytes(bk.msm(plain, s, "g1").fetch()()) == ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    assert bytes(bk.msm(pre, s, "g1").fetch()()) == ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    seven = np.zeros_like(s)
    seven[:, 0] = 7  # every entry in one bucket: the levels above the pieces carry it
    want = ark.G1Point.multiexp_unchecked(objs, [ark.Scalar(7)] * len(objs)).to_xy_bytes_le()
    assert bytes(bk.msm(plain, seven, "g1").fetch()()) == want


def _adversarial(n: int, tag: str) -> tuple[list, np.ndarray, list, np.ndarray]:
    """msm_inputs with the batch-affine rounds' edge pairs forced: P and -P and P twice in one
    bucket (scalars 9 and r-9, 9 and 9 on the same point), runs of one point with one scalar
    (doublings of sums), identities, and scalars that put single or odd counts in buckets."""
    from prover.field.params import R_MOD
    from prover.field.ref import fr_from_ints

    objs, xy, _, s = msm_inputs("g1", n.bit_length() - 1, tag)
    si = fr_to_ints(s)
    same = [0] * 4 + [1] * 6 + [2] * 7  # entries 40.. read points 0, 1, 2: pairs of equal points
    for j, src in enumerate(same):
        objs[40 + j], xy[40 + j] = objs[src], xy[src]
    for j in range(40, 57):
        si[j] = 9 if j % 3 else R_MOD - 9  # same bucket, both signs: P + P and P + (-P)
    for j in range(57, 57 + 9):
        si[j] = 1 << (j - 57)  # singles in buckets of their own
    for j in range(70, 77):
        objs[j], xy[j] = ark.G1Point.identity(), 0
        si[j] = 9
    scal = [ark.Scalar(v % R_MOD) for v in si]
    return objs, xy, scal, fr_from_ints(si)


@pytest.mark.parametrize("rounds,batch", [(1, 0), (2, 3), (3, 1)])
def test_msm_batch_affine_rounds(cuda_emulator, rounds, batch) -> None:  # noqa: F811
    """msm_acc=affine gives the reference's bytes: plain and precomputed, adversarial pairs,
    threads owning 1, 3 or 32 pairs (ranges over many buckets), one to three rounds."""
    from prover.kernels.cuda_backend import CudaBackend
    from tests.helpers.cudaemu import config

    bk = CudaBackend(KernelSettings(msm_acc="affine", msm_affine_rounds=rounds, msm_affine_batch=batch))
    objs, xy, scal, s = _adversarial(1 << 8, f"affine{rounds}{batch}")
    pk = types.SimpleNamespace(a_query=xy, h_query=xy)
    plain, pre = bk.points(pk, "a"), bk.points(pk, "h")
    want = ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    before = config.launches.copy()
    assert bytes(bk.msm(plain, s, "g1").fetch()()) == want
    ran = config.launches - before
    assert ran["g1_msm_pair_round0"] == 1 and ran["g1_msm_pair_round"] == rounds - 1 and ran["g1_msm_acc0_list"] == 1
    assert not ran["g1_msm_acc0"]
    assert bytes(bk.msm(pre, s, "g1").fetch()()) == want
    for v in (7, 1):  # every entry in one bucket (odd and even lengths through the rounds)
        same = np.zeros_like(s)
        same[:, 0] = v
        want = ark.G1Point.multiexp_unchecked(objs, [ark.Scalar(v)] * len(objs)).to_xy_bytes_le()
        assert bytes(bk.msm(plain, same[: len(objs) - rounds], "g1").fetch()()) == ark.G1Point.multiexp_unchecked(
            objs[: len(objs) - rounds], [ark.Scalar(v)] * (len(objs) - rounds)).to_xy_bytes_le()
        assert bytes(bk.msm(pre, same, "g1").fetch()()) == want
