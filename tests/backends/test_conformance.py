"""Every primitive of the compute protocol (prover/backend.py) on every available backend,
against the reference on the same inputs (Harlequin's adapter_tests shape: one suite every
backend must pass).

Backends: "reference" (checked against independent references: Python-integer NTTs,
arkworks' multiexp over point objects, scalar multiplication one by one); "fallback" (a device
backend whose every primitive fails: the Fallback must give the reference's bytes and say so);
"cuda-emulated" (the CUDA backend, its real kernels and wrappers, on the CPU emulator of
tests/helpers/cudaemu; skipped without g++); "cuda" (gpu marker: the CUDA backend with the
default kernel settings, skipped without a device); "-steps" beside either: the same with every
kernel variant of issue 25 off (NTT-H and the natural NTTs a kernel a step, the G1 MSMs on one
stream; on the GPU at the sizes up to 2^16); "-affine" beside either: the MSMs' first level by
batch-affine rounds (msm_acc=affine; the MSM tests only, the other primitives are unchanged).

Sizes: a few per primitive from 2^8 to 2^16 here (CI; the emulated CUDA backend too), 2^8..2^22
on a GPU (CONFORMANCE_MAX_LOG lowers the top).
"""
from __future__ import annotations

import os
import re
import types

import numpy as np
import py_arkworks_bls12381 as ark
import pytest

from prover import backend as B
from prover.field.params import R_MOD
from prover.field.ref import fr_from_ints, fr_random, fr_to_ints, ntt_h_ref, ntt_ref
from prover.settings import KernelSettings
from tests.helpers.inputs import msm_inputs, rng_for

MAX_LOG = int(os.environ.get("CONFORMANCE_MAX_LOG", "22"))
GROUP = {"g1": ark.G1Point, "g2": ark.G2Point}


class Broken:
    """A device backend double whose every primitive fails (launch or download)."""

    name, impl = "broken", "broken"
    capabilities = B.ALL

    def __getattr__(self, name):
        def fail(*a, **k):
            raise RuntimeError(f"{name}: CUDA_ERROR_ILLEGAL_ADDRESS (double)")
        return fail

    def device_key(self):
        return 0


STEPS = KernelSettings(ntt_fused=False, msm_lanes=1)  # every variant off: the kernels before issue 25
AFFINE = KernelSettings(msm_acc="affine")  # batch-affine first MSM level (issue 25's lever)
# issue 38: Karatsuba products + one reduction per sum of products, and the NTT's radix-4 rounds
EOK2 = KernelSettings(field_mul="eo_k2", ntt_radix=4)


def _cuda(settings: KernelSettings = KernelSettings()):
    try:
        from prover.kernels.cuda_backend import CudaBackend

        return CudaBackend(settings)
    except Exception as exc:  # no CuPy or no device
        pytest.skip(f"no CUDA backend here ({type(exc).__name__}: {exc})")


@pytest.fixture(params=["reference", "fallback", "cuda-emulated", "cuda-emulated-steps", "cuda-emulated-affine",
                        "cuda-emulated-eok2",
                        pytest.param("cuda", marks=pytest.mark.gpu), pytest.param("cuda-steps", marks=pytest.mark.gpu),
                        pytest.param("cuda-affine", marks=pytest.mark.gpu), pytest.param("cuda-eok2", marks=pytest.mark.gpu)])
def backend(request):
    settings = {"steps": STEPS, "affine": AFFINE, "eok2": EOK2}.get(request.param.rsplit("-", 1)[-1], KernelSettings())
    if settings is AFFINE and "msm" not in request.node.name:
        pytest.skip("msm_acc=affine changes the MSMs only")
    if request.param == "cuda-emulated-eok2" and not re.search(r"test_ntt_h\[|test_msm\[.*g1", request.node.name):
        pytest.skip("CI time: NTT-H and the G1 MSM here (the host check runs every formula; the GPU every primitive)")
    if request.param == "reference":
        return B.REFERENCE
    if request.param.startswith("cuda-emulated"):
        from tests.helpers.cudaemu.fixture import install

        from prover.kernels.cuda_backend import CudaBackend

        install(request.getfixturevalue("monkeypatch"))  # `cupy` is the emulator for this test
        bk = CudaBackend(settings)  # not _cuda(): an emulator failure fails, never skips
        bk.emulated = True  # CI sizes (sizes() below)
        return bk
    if request.param == "fallback":
        notes = []
        fb = B.Fallback(Broken(), lambda cls, **kw: notes.append(kw["text"]))
        fb.notes = notes
        return fb
    return _cuda(settings)


def sizes(backend, ci, gpu):
    """The sizes a backend is checked at: `ci` here, `gpu` on the device; the fallback over a
    broken double (the wrapper, not the arithmetic, is under test) at the smallest only."""
    if backend.name == "cuda" and not getattr(backend, "emulated", False):
        top = MAX_LOG if backend.settings != STEPS else min(MAX_LOG, 16)
        return [L for L in gpu if L <= top]
    return list(ci[:1]) if isinstance(backend, B.Fallback) else list(ci)


def _noted(backend) -> None:
    if isinstance(backend, B.Fallback) and isinstance(backend.primary, Broken):
        assert backend.notes and "CPU reference used" in backend.notes[0]


def _bytes(pending) -> bytes:
    return bytes(pending.fetch()())


def _computes_on_the_reference(backend) -> bool:
    """The reference itself, or a fallback whose every result is the reference's: checked
    against the Python-integer NTTs at every size, never against B.REFERENCE (itself)."""
    return backend is B.REFERENCE or isinstance(backend, B.ReferenceBackend) or isinstance(backend, B.Fallback)


def _independent(backend, L: int) -> bool:
    """Whether the Python-integer reference is the expected value: always for the reference
    (issue 35: at 2^12 it was compared with itself), at 2^8 for the others (B.REFERENCE, a
    different implementation from theirs, above)."""
    return _computes_on_the_reference(backend) or (backend.name != "cuda" and L <= 8)


# ------------------------------------------------------------------------------ NTT ----
def test_ntt_h(backend) -> None:
    for L in sizes(backend, (8, 12), (8, 12, 16, 20, 22)):
        n = 1 << L
        rng = rng_for(f"ntth{L}")
        a, b, c = (fr_random(n, rng) for _ in range(3))
        got = np.asarray(backend.to_host(backend.ntt_h(a, b, c)))
        if _independent(backend, L):
            want = fr_from_ints(ntt_h_ref(fr_to_ints(a), fr_to_ints(b), fr_to_ints(c)))
        else:
            want = B.REFERENCE.ntt_h(a, b, c)
        assert np.array_equal(got, want), L
    _noted(backend)


def test_ntt_h_staged(backend) -> None:
    if B.NTT_H_STAGED not in backend.capabilities:
        pytest.skip(f"{backend.name} has no staged NTT-H")
    for L in sizes(backend, (8,), (8, 16, 22)):
        n = 1 << L
        rng = rng_for(f"staged{L}")
        a, b, c = (fr_random(n, rng) for _ in range(3))
        want = B.REFERENCE.ntt_h(a, b, c)
        if backend.name == "cuda":
            import cupy as cp

            views = [cp.asarray(x) for x in (a, b, c)]
            got = backend.ntt_h_staged(*views)
        else:
            got = backend.ntt_h_staged(a.copy(), b.copy(), c.copy(), host=(a, b, c))
        assert np.array_equal(np.asarray(backend.to_host(got)), want), L
    _noted(backend)


def test_intt(backend) -> None:
    for L in sizes(backend, (8, 12), (8, 16, 22)):
        x = fr_random(1 << L, rng_for(f"intt{L}"))
        got = np.asarray(backend.intt(x))
        if _independent(backend, L):
            want = fr_from_ints(ntt_ref(fr_to_ints(x), inverse=True))
        else:
            want = B.REFERENCE.intt(x)
        assert np.array_equal(got, want), L
    _noted(backend)


# ------------------------------------------------------------------------------ MSM ----
def _pk(group: str, xy: np.ndarray):
    return types.SimpleNamespace(**{("a" if group == "g1" else "b_g2") + "_query": xy, "h_query": xy})


def _query(group: str) -> str:
    return "a" if group == "g1" else "b_g2"


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_msm(backend, group: str) -> None:
    top = (8, 12, 16, 20, 22) if group == "g1" else (8, 12, 16, 20)
    for L in sizes(backend, (8, 12) if group == "g1" else (8,), top):
        objs, xy, scal, s = msm_inputs(group, L, f"msm{group}{L}")
        points = backend.points(_pk(group, xy), _query(group))
        got = _bytes(backend.msm(points, s, group))
        want = GROUP[group].multiexp_unchecked(objs, scal).to_xy_bytes_le()
        assert got == want, L
        rows = np.arange(0, len(objs), 3)  # a tail: the rows a query's MSM reads
        got = _bytes(backend.msm(points, np.ascontiguousarray(s[rows]), group, rows=rows))
        want = GROUP[group].multiexp_unchecked([objs[i] for i in rows], [scal[i] for i in rows]).to_xy_bytes_le()
        assert got == want, (L, "rows")
    _noted(backend)


def test_msm_over_the_h_query(backend) -> None:
    """The H query's points (precomputed window shifts where the backend keeps them)."""
    for L in sizes(backend, (8,), (12, 20)):
        objs, xy, scal, s = msm_inputs("g1", L, f"msmh{L}")
        points = backend.points(_pk("g1", xy), "h")
        got = _bytes(backend.msm(points, s[: len(s) - 1], "g1"))
        assert got == ark.G1Point.multiexp_unchecked(objs[:-1], scal[:-1]).to_xy_bytes_le(), L
    _noted(backend)


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_batch_add(backend, group: str) -> None:
    top = (8, 16, 22) if group == "g1" else (8, 16, 20)
    for L in sizes(backend, (8, 12, 16) if group == "g1" else (8, 12), top):  # 2^16 here: the cheap one
        objs, xy, _, _ = msm_inputs(group, L, f"ba{group}{L}")
        rows = np.flatnonzero(rng_for(f"bamask{group}{L}").random(len(objs)) < 0.3)
        points = backend.points(_pk(group, xy), _query(group))
        got = _bytes(backend.batch_add(points, rows, group))
        want = GROUP[group].multiexp_unchecked([objs[i] for i in rows], [ark.Scalar(1)] * len(rows)).to_xy_bytes_le()
        assert got == want, L
    _noted(backend)


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_fixed_base(backend, group: str) -> None:
    for L in sizes(backend, (8,), (8, 16, 20)):
        n = 1 << L
        rng = rng_for(f"fb{group}{L}")
        base = GROUP[group]() * ark.Scalar(int(rng.integers(1, 1 << 62)))
        si = fr_to_ints(fr_random(n, rng))
        si[0], si[1], si[2] = 0, 1, R_MOD - 1
        got = np.asarray(backend.fixed_base(np.frombuffer(base.to_xy_bytes_le(), dtype=np.uint8),
                                            fr_from_ints(si), group))
        assert got.shape == (n, 96 if group == "g1" else 192)
        for i in [0, 1, 2] + [int(j) for j in rng.integers(0, n, size=min(n, 32))]:
            assert got[i].tobytes() == (base * ark.Scalar(si[i])).to_xy_bytes_le(), (L, i)
    _noted(backend)


def test_the_reference_is_checked_against_an_independent_one(monkeypatch) -> None:
    """A reference NTT that goes wrong above 2^8 is caught by the conformance tests themselves
    (they once compared the reference with itself there, and passed it)."""
    real_ntt_h, real_intt = B.ReferenceBackend.ntt_h, B.ReferenceBackend.intt

    def bad(real):
        def wrong(self, *a):
            out = np.array(real(self, *a))
            if len(out) > 256:
                out[-1] = out[0]
            return out
        return wrong

    monkeypatch.setattr(B.ReferenceBackend, "ntt_h", bad(real_ntt_h))
    monkeypatch.setattr(B.ReferenceBackend, "intt", bad(real_intt))
    for check in (test_ntt_h, test_intt):
        with pytest.raises(AssertionError):
            check(B.REFERENCE)


def test_pin_keeps_the_values(backend) -> None:
    x = fr_random(1000, rng_for("pin"))
    assert np.array_equal(backend.pin(x), x)


def test_every_backend_satisfies_the_protocol(backend) -> None:
    assert isinstance(backend, B.Backend)
    assert backend.capabilities <= B.ALL


def test_a_download_that_fails_reruns_on_the_reference() -> None:
    """The fallback's second path: the launch worked, the download (Pending.fetch) failed."""
    class FailsAtFetch(B.ReferenceBackend):
        name, impl = "fetch-fails", "fetch-fails"

        def msm(self, points, scalars, group, rows=None):
            return types.SimpleNamespace(fetch=lambda: (_ for _ in ()).throw(RuntimeError("d2h copy failed")))

        def device_key(self):
            return 0

    notes = []
    fb = B.Fallback(FailsAtFetch(), lambda cls, **kw: notes.append(kw["text"]))
    objs, xy, scal, s = msm_inputs("g1", 6, "fetch")
    got = _bytes(fb.msm(fb.points(_pk("g1", xy), "a"), s, "g1"))
    assert got == ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    assert notes == ["msm g1 on the GPU failed, CPU reference used: d2h copy failed"]


def test_a_new_gpu_primitive_is_one_backend_method() -> None:
    """Adding a GPU primitive for an existing phase (here the in-place NTT-H over the pre-staged
    buffers) is the kernel, its wrapper, and one backend method with its capability: the
    composition and the engine pick it up from the capabilities, nothing else changes."""
    from prover.groth16 import compose

    class Before(B.ReferenceBackend):
        name, impl = "before", "before"

        def device_key(self):
            return 0

    class After(Before):
        capabilities = Before.capabilities | {B.NTT_H_STAGED}  # the one line beside the method

        def ntt_h_staged(self, d_a, d_b, d_c, host=None):  # the new primitive (a kernel wrapper on a GPU)
            d_b[...] = B.REFERENCE.ntt_h(d_a, d_b, d_c)
            return d_b

    assert "ntt_h_staged" not in compose.GpuCompute.over(Before()).in_use()
    gpu = compose.GpuCompute.over(After())
    a, b, c = (fr_random(256, rng_for(f"new{i}")) for i in range(3))
    want = B.REFERENCE.ntt_h(a, b, c)
    views = (a.copy(), b.copy(), c.copy())
    assert np.array_equal(gpu.ntt_h_staged(views, (a, b, c)), want)
    assert views[1] is not b and np.array_equal(views[1], want)  # in place, over the views
    assert "ntt_h_staged" in gpu.in_use()
