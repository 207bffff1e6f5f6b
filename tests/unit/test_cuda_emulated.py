"""The real CUDA kernels (prover/kernels/cuda/*.cu) and their real host wrappers on the CPU
emulator (tests/helpers/cudaemu), against the reference backend and Python integers: a kernel or
wrapper change is checked here before a GPU session. No gpu marker: runs in CI (skipped without g++).

What the emulator does not cover (PTX device products, true concurrency, memory errors): see
tests/helpers/cudaemu/__init__.py. The emulator's own behaviour (barriers, warps, argument checks)
is tested in tests/unit/test_cudaemu.py, on tiny kernels.
"""
from __future__ import annotations

import types

import numpy as np
import py_arkworks_bls12381 as ark
import pytest

from prover import backend as B
from prover.field.params import P_MOD, R_MOD
from prover.field.ref import fr_from_ints, fr_random, fr_to_ints, ntt_h_ref, ntt_ref
from prover.settings import KernelSettings
from tests.helpers.cudaemu import KernelError, config
from tests.helpers.cudaemu.errors import CUDADriverError
from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the fixture)
from tests.helpers.inputs import msm_inputs, rng_for

GROUP = {"g1": ark.G1Point, "g2": ark.G2Point}


@pytest.fixture
def backend(cuda_emulator):  # noqa: F811
    from prover.kernels.cuda_backend import CudaBackend

    return CudaBackend(KernelSettings())


@pytest.fixture(params=["reverse", "shuffle"])
def other_schedule(request, monkeypatch):
    monkeypatch.setattr(config, "schedule", request.param)
    monkeypatch.setattr(config, "seed", 12345)
    return request.param


# ------------------------------------------------------------------------------- NTT ----
@pytest.mark.parametrize("L", [6, 7, 8, 9])
def test_ntt_h_and_intt(backend, L) -> None:
    n = 1 << L
    rng = rng_for(f"emu-ntth{L}")
    a, b, c = (fr_random(n, rng) for _ in range(3))
    h = backend.ntt_h(a, b, c)
    assert type(h).__module__ == "cupy"  # h stays on the device for the MSM that reads it
    want = B.REFERENCE.ntt_h(a, b, c)
    assert np.array_equal(backend.to_host(h), want)
    if L == 6:
        assert fr_to_ints(want) == ntt_h_ref(fr_to_ints(a), fr_to_ints(b), fr_to_ints(c))
    assert np.array_equal(backend.intt(a), B.REFERENCE.intt(a))
    import cupy as cp

    views = [cp.asarray(x) for x in (a, b, c)]
    assert np.array_equal(backend.to_host(backend.ntt_h_staged(*views)), want)


@pytest.mark.parametrize("variant", ["c", "ptx"])
@pytest.mark.parametrize("L", [1, 3, 6, 9])
def test_natural_ntt_with_and_without_coset(cuda_emulator, L, variant) -> None:  # noqa: F811
    """Both builds of ntt.cu (the ptx one takes the same portable products here: no __CUDA_ARCH__)."""
    from prover.kernels import msm, ntt

    ks = KernelSettings(ntt_variant=variant)
    a = fr_random(1 << L, rng_for(f"emu-ntt{L}"))
    ai = fr_to_ints(a)
    for inverse in (False, True):
        for coset in (False, True):
            got = ntt.ntt_gpu(a, inverse=inverse, coset=coset, ks=ks)
            assert fr_to_ints(got) == ntt_ref(ai, inverse=inverse, coset=coset), (inverse, coset)


@pytest.mark.parametrize("ks", [KernelSettings(), KernelSettings(nvrtc_arch="sm_90", nvrtc_opts="-DFIELD_MUL=cios_v"),
                                KernelSettings(field_mul="eo_k2")],
                         ids=["default", "cios_v", "eo_k2"])
def test_field_elementwise_kernels(cuda_emulator, ks) -> None:  # noqa: F811
    """Python integers for every op of Fr and Fp; the nvrtc_arch/nvrtc_opts settings reach the build."""
    from prover.kernels import msm, ntt

    for m, words, f in ((R_MOD, 4, ntt.fr_elementwise_gpu), (P_MOD, 6, ntt.fp_elementwise_gpu)):
        r = rng_for(f"emu-el{words}")
        vals = [0, 1, 2, m - 1, m - 2, (1 << 64) - 1] + [int.from_bytes(r.bytes(48), "little") % m for _ in range(58)]
        other = vals[::-1]

        def arr(vs):
            return np.array([[(v >> (64 * i)) & ((1 << 64) - 1) for i in range(words)] for v in vs], dtype=np.uint64)

        def ints(x):
            return [sum(int(row[i]) << (64 * i) for i in range(words)) for row in x]

        for op, ref in (("mul", lambda x, y: x * y), ("add", lambda x, y: x + y), ("sub", lambda x, y: x - y),
                        ("sqr", lambda x, y: x * x), ("inv", lambda x, y: pow(x, m - 2, m))):
            assert ints(f(arr(vals), arr(other), op, ks=ks)) == [ref(x, y) % m for x, y in zip(vals, other)], (m, op)


# ------------------------------------------------------------------------------- MSM ----
def _pk(xy: np.ndarray):
    return types.SimpleNamespace(a_query=xy, h_query=xy, b_g2_query=xy)


def _fetch(pending) -> bytes:
    return bytes(pending.fetch()())


@pytest.mark.parametrize("group,L", [("g1", 4), ("g1", 6), ("g1", 8), ("g2", 4), ("g2", 6)])
def test_msm_plain_and_over_rows(backend, group, L) -> None:
    objs, xy, scal, s = msm_inputs(group, L, f"emu-msm{group}{L}")
    points = backend.points(_pk(xy), "a" if group == "g1" else "b_g2")
    assert points.pre is None
    assert _fetch(backend.msm(points, s, group)) == GROUP[group].multiexp_unchecked(objs, scal).to_xy_bytes_le()
    rows = np.arange(0, len(objs), 3)
    got = _fetch(backend.msm(points, np.ascontiguousarray(s[rows]), group, rows=rows))
    assert got == GROUP[group].multiexp_unchecked([objs[i] for i in rows], [scal[i] for i in rows]).to_xy_bytes_le()
    if L == 4:  # the device-side Horner step (msm_final) instead of the host's finish_windows
        from prover.kernels import msm, ntt

        want = GROUP[group].multiexp_unchecked(objs, scal).to_xy_bytes_le()
        assert msm._to_bytes(msm._msm_device(points, s), None) == want


def test_msm_edge_scalars(backend) -> None:
    objs, xy, scal, s = msm_inputs("g1", 6, "emu-edge")
    points = backend.points(_pk(xy), "a")
    n = len(objs)
    for vals in ([0] * n, [1] * n, [R_MOD - 1] * n, [R_MOD - 1 if i % 2 else 1 for i in range(n)]):
        want = ark.G1Point.multiexp_unchecked(objs, [ark.Scalar(v % R_MOD) for v in vals]).to_xy_bytes_le()
        assert _fetch(backend.msm(points, fr_from_ints(vals), "g1")) == want
    assert _fetch(backend.msm(points, s[:0], "g1")) == bytes(96)  # no scalars: the identity


@pytest.mark.parametrize("L", [6, 8])
def test_msm_over_precomputed_window_shifts(backend, L) -> None:
    """The H query: its window shifts precomputed (auto: the emulated device has the memory)."""
    objs, xy, scal, s = msm_inputs("g1", L, f"emu-pre{L}")
    points = backend.points(_pk(xy), "h")
    assert points.pre is not None and points.d.shape[0] == points.pre[1] * points.n
    got = _fetch(backend.msm(points, s[:-1], "g1"))
    assert got == ark.G1Point.multiexp_unchecked(objs[:-1], scal[:-1]).to_xy_bytes_le()
    rows = np.arange(1, len(objs), 3)  # a tail over precomputed points: take() gathers plain rows
    got = _fetch(backend.msm(points, np.ascontiguousarray(s[rows]), "g1", rows=rows))
    assert got == ark.G1Point.multiexp_unchecked([objs[i] for i in rows], [scal[i] for i in rows]).to_xy_bytes_le()
    if L == 6:
        from prover.kernels import msm, ntt

        pre = msm.DevicePoints("g1", xy).precompute(5)  # another window width, fewer scalars than points
        k = 40
        assert msm.msm_g1_gpu(pre, s[:k]) == ark.G1Point.multiexp_unchecked(objs[:k], scal[:k]).to_xy_bytes_le()
        assert msm._to_bytes(msm._msm_device(pre, s), None) == ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()


def test_precompute_without_the_memory_falls_back(backend, monkeypatch) -> None:
    """_try_precompute's two ways out, which no GPU session exercises: auto skips when the shifts
    would take over a quarter of the free memory; "h" warns on OutOfMemoryError."""
    from prover.kernels import msm

    objs, xy, scal, s = msm_inputs("g1", 6, "emu-oom")
    monkeypatch.setattr(config, "memory_total", 64 << 10)
    assert backend.points(_pk(xy), "h").pre is None
    pts = msm.DevicePoints("g1", xy)
    with pytest.warns(RuntimeWarning, match="no device memory for the precomputed H query"):
        assert msm._try_precompute(pts, False, None) is pts


def test_g2_msm_over_precomputed_window_shifts(cuda_emulator) -> None:  # noqa: F811
    from prover.kernels import msm, ntt

    objs, xy, scal, s = msm_inputs("g2", 4, "emu-pre-g2")
    pre = msm.DevicePoints("g2", xy).precompute()
    assert msm.msm_g2_gpu(pre, s) == ark.G2Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_batch_addition(backend, group) -> None:
    objs, xy, _, _ = msm_inputs(group, 7, f"emu-ba{group}")
    points = backend.points(_pk(xy), "a" if group == "g1" else "b_g2")
    mask = rng_for(f"emu-bamask{group}").random(len(objs)) < 0.3
    want = GROUP[group].multiexp_unchecked([o for o, m in zip(objs, mask) if m], [ark.Scalar(1)] * int(mask.sum()))
    assert _fetch(backend.batch_add(points, np.flatnonzero(mask), group)) == want.to_xy_bytes_le()
    from prover.kernels import msm, ntt

    add = msm.batch_add_g1_gpu if group == "g1" else msm.batch_add_g2_gpu
    assert add(points, mask) == want.to_xy_bytes_le()  # a boolean mask: cupy.nonzero on the device
    assert _fetch(backend.batch_add(points, np.array([], dtype=np.int64), group)) == bytes(len(xy[0]))


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_fixed_base(backend, group) -> None:
    rng = rng_for(f"emu-fb{group}")
    base = GROUP[group]() * ark.Scalar(int(rng.integers(1, 1 << 62)))
    si = fr_to_ints(fr_random(70, rng))
    si[:5] = [0, 1, R_MOD - 1, 2, 255]
    got = backend.fixed_base(np.frombuffer(base.to_xy_bytes_le(), dtype=np.uint8), fr_from_ints(si), group)
    assert got.shape == (70, 96 if group == "g1" else 192)
    for i, v in enumerate(si):
        assert got[i].tobytes() == (base * ark.Scalar(v)).to_xy_bytes_le(), i


@pytest.mark.parametrize("variant", ["inline", "ptx_call", "ptx"])
def test_the_other_msm_builds(cuda_emulator, variant) -> None:  # noqa: F811
    """The other g1 builds: "inline" (no FP_MUL_CALL) takes another host path through field.cuh;
    the ptx ones build and run their non-PTX code (their products are the portable ones here)."""
    from prover.kernels import msm, ntt

    objs, xy, scal, s = msm_inputs("g1", 5, f"emu-{variant}")
    ks = KernelSettings(g1_variant=variant)
    want = ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    assert msm.msm_g1_gpu(msm.DevicePoints("g1", xy, ks=ks), s) == want


def test_setup_on_the_gpu_paths_gives_the_same_keys(cuda_emulator, monkeypatch) -> None:  # noqa: F811
    """Setup's GPU paths (G1/G2 fixed-base, the Lagrange iNTT) with the real kernels, thresholds
    lowered to reach them at 2^8: the same key bytes as the CPU's. Those paths fall back to the CPU
    with a warning on any failure, so a warning fails this test."""
    import warnings

    from prover.groth16 import phases as P
    from prover.groth16 import setup as S

    monkeypatch.setattr(S, "GPU_FIXED_BASE_MIN", 16)
    monkeypatch.setattr(S, "GPU_NTT_MIN", 16)
    circuit = P.make_circuit(8, 13)
    before = config.launches.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pk_gpu, vk_gpu = S.setup(circuit, insecure_seed=13, kernels=KernelSettings())
    ran = config.launches - before
    # the Lagrange iNTT: a pass kernel (one fused pass at 2^8 with ntt_fused, the default)
    assert ran["g1_fixed_base"] and ran["g2_fixed_base"] and (ran["ntt_pass"] or ran["ntt_pass_last_scatter"]), ran
    pk_cpu, vk_cpu = S.setup(circuit, insecure_seed=13, kernels=KernelSettings(setup_gpu=False))
    for name, want in {**pk_cpu.arrays(), **{"vk_" + k: v for k, v in vk_cpu.arrays().items()}}.items():
        got = pk_gpu.arrays()[name] if not name.startswith("vk_") else vk_gpu.arrays()[name[3:]]
        assert np.array_equal(got, want), name


# ------------------------------------------------------------------------ schedules ----
def test_results_do_not_depend_on_the_thread_order(backend, other_schedule) -> None:
    """The shared-memory kernels (ntt_pass, msm_window_reduce, reduce_xyzz) and the atomics of
    the bucket sort, run with threads and blocks in another order: a race would change bytes."""
    a, b, c = (fr_random(1 << 9, rng_for(f"emu-order{i}")) for i in range(3))
    assert np.array_equal(backend.to_host(backend.ntt_h(a, b, c)), B.REFERENCE.ntt_h(a, b, c))
    objs, xy, scal, s = msm_inputs("g1", 8, "emu-order")
    points = backend.points(_pk(xy), "a")
    assert _fetch(backend.msm(points, s, "g1")) == ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    rows = np.arange(0, len(objs), 2)
    want = ark.G1Point.multiexp_unchecked([objs[i] for i in rows], [ark.Scalar(1)] * len(rows)).to_xy_bytes_le()
    assert _fetch(backend.batch_add(points, rows, "g1")) == want


# ---------------------------------------------------------------------- whole proof ----
@pytest.mark.slow
@pytest.mark.parametrize("log2", [8, 9, 10])  # make_circuit starts at 2^8
def test_a_gpu_composed_proof_verifies(backend, log2, tmp_path) -> None:
    import cupy as cp

    from prover.backend import settle
    from prover.groth16 import compose
    from prover.groth16 import phases as P

    fns = compose.GpuCompute.over(backend)  # the bare backend, no fallback: a failure fails here
    assert {"b_g2_msm", "pin_prep"} <= set(fns.in_use())
    circuit = P.make_circuit(log2, 5)
    pk, vk = P.load_or_setup(circuit, 5, cache_dir=tmp_path)
    syn = P.synthesize(circuit, 1)
    before = config.launches.copy()
    pinned = fns.pin_prep(P.prep_msm(syn, pk))
    r, s = P.seeded_randomisers(5, 1)
    with cp.cuda.Stream(non_blocking=True):
        h = fns.ntt_h(syn.a, syn.b, syn.c)
        g1 = settle(fns.msm_g1(pinned, h, pk))
        b2 = settle(fns.b_g2_msm(pinned, pk))
    proof = P.assemble(syn, g1, b2, pk, r, s)
    assert P.verify(vk, syn.public_ints(), proof)
    assert proof.to_bytes() == P.prove(circuit, pk, 1, r, s).to_bytes()
    ran = config.launches - before
    ntt_passes = ran["ntt_pass"] + ran["ntt_pass_mid"]  # one fused pass a transform at these sizes
    assert ran["g1_msm_precompute"] == 1 and ran["g2_batch_add"] >= 1 and ntt_passes >= 1
