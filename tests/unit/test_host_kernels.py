"""The compiled host kernels (prover/groth16/*_nb.py, prover/host) against the numpy reference: the same Synthesis
and MsmPrep arrays, bit for bit, and the same proof bytes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from prover.field import fr
from prover.groth16 import phases as P


@pytest.fixture(scope="session")
def key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same session key cache as test_groth16's (keys made once per size and seed)."""
    path = tmp_path_factory.getbasetemp() / "keys"
    path.mkdir(exist_ok=True)
    return path


def _same_synthesis(x: P.Synthesis, y: P.Synthesis) -> None:
    for name in ("z", "public_inputs", "a", "b", "c"):
        u, v = getattr(x, name), getattr(y, name)
        assert u.dtype == v.dtype == np.uint64 and u.shape == v.shape, name
        assert np.array_equal(u, v), name


@pytest.mark.parametrize(("k", "seed"), [(8, 1), (8, 2), (9, 3), (10, 1), (11, 7), (12, 2), (13, 5), (14, 1)])
def test_synthesis_matches_reference(k: int, seed: int) -> None:
    circuit = P.make_circuit(k, seed)
    for instance in (0, 1, 9):
        native, ref = P.synthesize(circuit, instance), P.synthesize_reference(circuit, instance)
        _same_synthesis(native, ref)
        assert np.array_equal(native.density, P.density(ref.z))


def test_matvec_on_field_valued_vectors() -> None:
    """Every z value full-size (no 0/1 shortcut): the wide path, negative coefficients and the
    full-size coefficients times field values."""
    from prover.groth16.prep_nb import density

    circuit = P.make_circuit(10, 3)
    for seed in (1, 2):
        z = fr.random(circuit.num_vars, seed)
        z[::7] = fr.from_ints([fr.R_MOD - 1])  # the largest value
        z[::11] = 0
        cls = density(z)
        assert np.array_equal(cls, P.density(z))
        for m in (circuit.a, circuit.b, circuit.c):
            assert np.array_equal(m.matvec_host(z, cls), m.matvec(z))


def _same_prep(x: P.MsmPrep, y: P.MsmPrep) -> None:
    assert np.array_equal(x.density, y.density)
    for name in ("a", "b_g1", "b_g2", "l"):
        u, v = getattr(x, name), getattr(y, name)
        for part in ("ones", "tail", "tail_scalars"):
            pu, pv = getattr(u, part), getattr(v, part)
            assert pu.dtype == pv.dtype and pu.shape == pv.shape and np.array_equal(pu, pv), (name, part)


@pytest.mark.parametrize(("k", "seed"), [(8, 1), (9, 2), (10, 1), (12, 3), (14, 1)])
def test_prep_msm_matches_reference(k: int, seed: int, key_dir: Path) -> None:
    circuit = P.make_circuit(k, seed)
    pk, _ = P.load_or_setup(circuit, seed, key_dir)
    for instance in (0, 4):
        syn = P.synthesize(circuit, instance)
        _same_prep(P.prep_msm(syn, pk), P.prep_msm_reference(syn, pk))
        # without the density the kernels made (a Synthesis from elsewhere)
        bare = P.Synthesis(z=syn.z, public_inputs=syn.public_inputs, a=syn.a, b=syn.b, c=syn.c)
        _same_prep(P.prep_msm(bare, pk), P.prep_msm_reference(bare, pk))


def test_proof_bytes_equal_reference(key_dir: Path) -> None:
    circuit = P.make_circuit(10, 1)
    pk, vk = P.load_or_setup(circuit, 1, key_dir)
    for instance in (0, 3):
        r, s = P.seeded_randomisers(1, instance)
        syn = P.synthesize_reference(circuit, instance)
        prep = P.prep_msm_reference(syn, pk)
        h = P.ntt_h(syn.a, syn.b, syn.c)
        ref = P.assemble(syn, P.msm_g1(prep, h, pk), P.b_g2_msm(prep, pk), pk, r, s)
        native = P.prove(circuit, pk, instance, r, s)
        assert native.to_bytes() == ref.to_bytes()
        assert P.verify(vk, syn.public_ints(), native)


def test_warm_up_compiles_every_kernel() -> None:
    from prover.groth16.warm import warm_up

    assert warm_up() >= 0.0


@pytest.mark.parametrize(("k", "seed"), [(8, 1), (10, 1), (12, 3)])
def test_presence_from_circuit_is_the_keys(k: int, seed: int, key_dir: Path) -> None:
    """The structural presence the benchmark uses at sizes without a key is the real key's."""
    from prover.groth16 import prep_nb as prep

    circuit = P.make_circuit(k, seed)
    pk, _ = P.load_or_setup(circuit, seed, key_dir)
    assert np.array_equal(prep.presence_from_circuit(circuit), prep.presence(pk))


def test_kernels_release_the_gil() -> None:
    """While a kernel runs on a worker thread, the main thread keeps running Python. With a
    short switch interval the worker hands the GIL over within 0.1 ms before its call, so a
    GIL-holding kernel would leave the later part of its run with no main-thread samples
    (checked: a plain @njit copy of the kernel gets 0 there)."""
    import sys
    import threading
    import time

    from prover.groth16 import prep_nb as prep
    from prover.groth16 import witness_nb as witness
    from prover.host import matvec

    for kernel in (witness.witness_kernel, matvec.matvec_kernel, prep._count, prep._fill, prep._density_kernel):
        assert kernel.targetoptions.get("nogil") is True, kernel
    circuit = P.make_circuit(18, 1)
    z, _, cls = witness.generate_witness(circuit, 0)
    plan = circuit.a.host_plan
    out = np.empty((circuit.a.n_rows, 4), dtype=np.uint64)
    args = (plan.indptr, plan.cols, plan.codes, plan.values, plan.big_plain, plan.big_mont, z, cls, out)
    best, old = 0, sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        for _ in range(5):
            span: list[float] = []

            def work() -> None:
                span.append(time.perf_counter())
                matvec.matvec_kernel(*args)
                span.append(time.perf_counter())

            stamps: list[float] = []
            worker = threading.Thread(target=work)
            worker.start()
            while worker.is_alive():
                stamps.append(time.perf_counter())
            worker.join()
            t0, t1 = span
            best = max(best, sum(t0 + 0.4 * (t1 - t0) < s < t1 - 0.1 * (t1 - t0) for s in stamps))
            if best >= 20:
                break
    finally:
        sys.setswitchinterval(old)
    assert best >= 20


def test_synthesis_into_given_buffers() -> None:
    """A worker's reused (page-locked on CUDA) a, b, c: the same bytes as fresh arrays, written
    in place; a wrong buffer is refused by name, not silently reallocated."""
    circuit = P.make_circuit(10, 3)
    fresh = P.synthesize(circuit, 5)
    n = fresh.a.shape[0]
    out = tuple(np.full((n, 4), 0xFFFF, dtype=np.uint64) for _ in range(3))
    again = P.synthesize(circuit, 5, out=out)
    for got, want, buf in zip((again.a, again.b, again.c), (fresh.a, fresh.b, fresh.c), out):
        assert got is buf
        assert np.array_equal(got, want)
    # and the witness into a reused (dirty) z, zeroed first
    z = np.full((circuit.num_vars, 4), 0xABCD, dtype=np.uint64)
    third = P.synthesize(circuit, 5, out=out, z=z)
    assert third.z is z and np.array_equal(z, fresh.z) and np.array_equal(third.a, fresh.a)
    with pytest.raises(ValueError, match="matvec out"):
        P.synthesize(circuit, 5, out=tuple(np.empty((n // 2, 4), dtype=np.uint64) for _ in range(3)))
    with pytest.raises(ValueError, match="witness z"):
        P.synthesize(circuit, 5, z=np.empty((3, 4), dtype=np.uint64))
