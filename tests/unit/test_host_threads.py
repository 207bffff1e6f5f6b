"""A partition's host phases on several threads (prover/host/threads.py): the witness's lanes,
A.z B.z C.z's rows and prep_msm's variables split over them give the one-thread bytes, which
are the numpy reference's, at every thread count, under random schedules, with several workers
calling at once; and a proof made that way verifies."""
from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from prover.field import fr
from prover.groth16 import phases as P
from prover.groth16 import prep_nb, witness_nb
from prover.host import matvec, threads


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a lane, a row, a variable: small circuits then cut into many pieces."""
    monkeypatch.setattr(witness_nb, "MIN_LANES", 1)
    monkeypatch.setattr(matvec, "MIN_ROWS", 1)
    monkeypatch.setattr(prep_nb, "MIN_VARS", 1)


@pytest.fixture(scope="module")
def key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.getbasetemp() / "keys"
    path.mkdir(exist_ok=True)
    return path


def _same(x: P.Synthesis, y: P.Synthesis) -> None:
    for name in ("z", "public_inputs", "a", "b", "c"):
        assert np.array_equal(getattr(x, name), getattr(y, name)), name


def test_run_chunks_runs_each_chunk_once_under_random_schedules():
    """Every index exactly once, on at most `threads` threads at a time, whatever the order the
    threads take them in (random sleeps), and the first exception raised after all stopped."""
    rng = random.Random(7)
    for trial in range(30):
        n, t = rng.randint(0, 40), rng.randint(1, 9)
        seen: list[int] = []
        live, most = [0], [0]
        lock = threading.Lock()

        def body(i: int) -> None:
            with lock:
                live[0] += 1
                most[0] = max(most[0], live[0])
            time.sleep(rng.random() * 0.002)
            with lock:
                seen.append(i)
                live[0] -= 1

        threads.run_chunks(n, t, body)
        assert sorted(seen) == list(range(n)) and most[0] <= max(1, t), (trial, n, t)
    with pytest.raises(ZeroDivisionError):
        threads.run_chunks(16, 4, lambda i: 1 // (i - 9))


def test_chunking_bounds():
    assert threads.chunk_count(1, 10**6, 1) == 1 and threads.chunk_count(4, 10**6, 1) == 16
    assert threads.chunk_count(8, 100, 64) == 1  # too few items for more than one chunk
    b = threads.even_bounds(10, 3)
    assert b[0] == 0 and b[-1] == 10 and all(x <= y for x, y in zip(b, b[1:]))


@pytest.mark.parametrize(("k", "seed"), [(8, 1), (10, 3), (12, 2), (14, 5)])
def test_synthesis_on_threads_is_the_reference(k, seed, small_chunks):
    circuit = P.make_circuit(k, seed)
    for instance in (0, 7):
        ref = P.synthesize_reference(circuit, instance)
        for t in (1, 2, 3, 8):
            got = P.synthesize(circuit, instance, threads=t)
            _same(got, ref)
            assert np.array_equal(got.density, P.density(ref.z)), t


def test_witness_needs_no_zeroed_buffer(small_chunks):
    """z and the classes are written whole (no fill first): a dirty reused z gives the same bytes."""
    circuit = P.make_circuit(11, 4)
    want = P.synthesize(circuit, 3)
    for t in (1, 4):
        z = np.full((circuit.num_vars, 4), 0xDEADBEEF, dtype=np.uint64)
        out = tuple(np.full((circuit.domain_size, 4), 7, dtype=np.uint64) for _ in range(3))
        got = P.synthesize(circuit, 3, out=out, z=z, threads=t)
        assert got.z is z and got.a is out[0]
        _same(got, want)
        assert np.array_equal(got.density, want.density)


def test_matvec_rows_on_threads_cross_full_size_coefficients(small_chunks):
    """Field-valued z (the wide path) and the full-size coefficients (round 0's accumulators),
    with row ranges cut everywhere: each range must start at its own full-size coefficient."""
    circuit = P.make_circuit(10, 3)
    z = fr.random(circuit.num_vars, 2)
    z[::7] = fr.from_ints([fr.R_MOD - 1])
    z[::11] = 0
    cls = prep_nb.density(z, threads=3)
    assert np.array_equal(cls, P.density(z))
    plans = [m.host_plan for m in (circuit.a, circuit.b, circuit.c)]
    assert any(len(p.big_plain) for p in plans)
    want = [m.matvec(z) for m in (circuit.a, circuit.b, circuit.c)]
    for t in (2, 5, 16):
        got = matvec.matvec_many(plans, z, cls, [None, None, None], threads=t)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), t
        chunks = matvec.row_chunks(plans[0], 4 * t)
        assert chunks[0][0] == 0 and chunks[-1][1] == circuit.a.n_rows
        assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))


def _same_prep(x: P.MsmPrep, y: P.MsmPrep) -> None:
    for q in ("a", "b_g1", "b_g2", "l"):
        for part in ("ones", "tail", "tail_scalars"):
            u, v = getattr(getattr(x, q), part), getattr(getattr(y, q), part)
            assert u.dtype == v.dtype and np.array_equal(u, v), (q, part)


@pytest.mark.parametrize(("k", "seed"), [(8, 1), (10, 1), (12, 3)])
def test_prep_msm_on_threads_is_the_reference(k, seed, key_dir, small_chunks):
    circuit = P.make_circuit(k, seed)
    pk, _ = P.load_or_setup(circuit, seed, key_dir)
    syn = P.synthesize(circuit, 2)
    want = P.prep_msm_reference(syn, pk)
    bare = P.Synthesis(z=syn.z, public_inputs=syn.public_inputs, a=syn.a, b=syn.b, c=syn.c)
    for t in (1, 2, 3, 7):
        _same_prep(P.prep_msm(syn, pk, threads=t), want)
        _same_prep(P.prep_msm(bare, pk, threads=t), want)  # its classes found on the threads too


def test_workers_at_once_on_one_pool_give_their_own_bytes(small_chunks):
    """Three workers each synthesising its own instances with 3 threads at the same time (the
    pool is shared and holds fewer threads than they ask for at times): each gets the bytes it
    would alone."""
    circuit = P.make_circuit(12, 6)
    want = {i: P.synthesize(circuit, i) for i in range(6)}
    errors: list[str] = []

    def worker(first: int) -> None:
        for i in (first, first + 3):
            got = P.synthesize(circuit, i, threads=3)
            if not all(np.array_equal(getattr(got, n), getattr(want[i], n)) for n in ("z", "a", "b", "c")):
                errors.append(f"instance {i}")

    ts = [threading.Thread(target=worker, args=(w,)) for w in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


def test_a_proof_from_threaded_host_phases_verifies_and_is_the_references(key_dir, small_chunks):
    circuit = P.make_circuit(10, 1)
    pk, vk = P.load_or_setup(circuit, 1, key_dir)
    r, s = P.seeded_randomisers(1, 5)
    ref = P.synthesize_reference(circuit, 5)
    prep_ref = P.prep_msm_reference(ref, pk)
    want = P.assemble(ref, P.msm_g1(prep_ref, P.ntt_h(ref.a, ref.b, ref.c), pk), P.b_g2_msm(prep_ref, pk), pk, r, s)
    syn = P.synthesize(circuit, 5, threads=4)
    prep = P.prep_msm(syn, pk, threads=4)
    got = P.assemble(syn, P.msm_g1(prep, P.ntt_h(syn.a, syn.b, syn.c), pk), P.b_g2_msm(prep, pk), pk, r, s)
    assert got.to_bytes() == want.to_bytes()
    assert P.verify(vk, syn.public_ints(), got)


def test_the_knob_parses_and_resolves():
    assert threads.parse_spec("auto") == threads.AUTO == threads.parse_spec(0)
    assert threads.parse_spec(" 12 ") == 12 and threads.show(0) == "auto" and threads.show(6) == "6"
    for bad in ("lots", -1, 300, True, 2.5, "2.5"):
        with pytest.raises(ValueError, match="host_threads"):
            threads.parse_spec(bad)
    assert threads.resolve(5, 99) == 5
    assert threads.resolve(threads.AUTO, 1) == threads.cores()
    assert threads.resolve(threads.AUTO, 10**6) == 1
    assert "auto" in threads.threads_line(0, 2) and "host_threads" in threads.threads_line(3, 2)
