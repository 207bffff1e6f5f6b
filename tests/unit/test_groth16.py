"""Groth16 end to end: proofs verify, tampering fails, keys cache, phases agree."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from prover.field import curve, fr
from prover.groth16 import phases as P
from prover.groth16.proof import Proof
from prover.groth16.setup import cache_path, load_or_setup

R = fr.R_MOD


@pytest.fixture(scope="session")
def key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One key cache for the whole session (the same path from every test module)."""
    path = tmp_path_factory.getbasetemp() / "keys"
    path.mkdir(exist_ok=True)
    return path


def _keys(k: int, seed: int, key_dir: Path):  # type: ignore[no-untyped-def]
    circuit = P.make_circuit(k, seed)
    pk, vk = P.load_or_setup(circuit, seed, key_dir)
    return circuit, pk, vk


@pytest.mark.parametrize(("k", "seed"), [(8, 1), (8, 2), (8, 3), (9, 1), (10, 1), (10, 5), (11, 1), (12, 1)])
def test_proofs_verify(k: int, seed: int, key_dir: Path) -> None:
    circuit, pk, vk = _keys(k, seed, key_dir)
    for instance in (0, 1):
        syn = P.synthesize(circuit, instance)
        proof = P.prove(circuit, pk, instance, *P.seeded_randomisers(seed, instance))
        assert P.verify(vk, syn.public_ints(), proof)


def test_circuit_is_satisfied_and_shaped_like_porep() -> None:
    circuit = P.make_circuit(12, 4)
    syn = P.synthesize(circuit, 3)
    assert fr.equal(fr.mul(syn.a, syn.b), syn.c)
    assert circuit.num_constraints + circuit.num_inputs == circuit.domain_size
    assert circuit.num_constraints >= circuit.domain_size - 8
    cls = P.density(syn.z)
    assert np.mean(cls != P.OTHER) > 0.9  # mostly bits
    assert circuit.a.nnz > 1.2 * circuit.b.nnz  # A denser than B
    assert np.diff(circuit.b.indptr).max() <= 2 < np.diff(circuit.a.indptr).max()


def test_instances_differ_and_are_deterministic() -> None:
    circuit = P.make_circuit(10, 1)
    s0, s0b, s1 = P.synthesize(circuit, 0), P.synthesize(circuit, 0), P.synthesize(circuit, 1)
    assert fr.equal(s0.z, s0b.z) and not fr.equal(s0.z, s1.z)
    assert len(set(s0.public_ints())) == 4 and s0.public_ints() != s1.public_ints()


def test_h_matches_quotient(key_dir: Path) -> None:
    """h * Z == a*b - c as polynomials: check at one random point via the NTT forms."""
    from prover.field import ntt

    circuit = P.make_circuit(8, 1)
    syn = P.synthesize(circuit, 2)
    h = ntt.h_coefficients(P.ntt_h(syn.a, syn.b, syn.c))  # ntt_h gives h on the coset
    n = circuit.domain_size
    assert not h[-1].any()  # degree <= n - 2
    x = 0x1234567890ABCDEF
    ev = lambda coeffs: sum(c * pow(x, i, R) for i, c in enumerate(fr.to_ints(coeffs))) % R  # noqa: E731
    a, b, c = (ev(ntt.intt(v)) for v in (syn.a, syn.b, syn.c))
    assert ev(h) * (pow(x, n, R) - 1) % R == (a * b - c) % R


def test_same_randomisers_same_bytes(key_dir: Path) -> None:
    circuit, pk, _ = _keys(8, 1, key_dir)
    r, s = P.seeded_randomisers(1, 4)
    assert P.seeded_randomisers(1, 4) == (r, s) != P.seeded_randomisers(1, 5)
    p1, p2 = P.prove(circuit, pk, 4, r, s), P.prove(circuit, pk, 4, r, s)
    assert p1.to_bytes() == p2.to_bytes() and len(p1.to_bytes()) == 192
    assert Proof.from_bytes(p1.to_bytes()) == p1
    assert P.prove(circuit, pk, 4, r + 1, s).to_bytes() != p1.to_bytes()
    with pytest.raises(ValueError):
        Proof.from_bytes(b"\x00" * 191)


def test_tampered_proofs_fail(key_dir: Path) -> None:
    circuit, pk, vk = _keys(8, 1, key_dir)
    syn = P.synthesize(circuit, 0)
    proof = P.prove(circuit, pk, 0, *P.seeded_randomisers(1, 0))
    pub = syn.public_ints()
    g1, g2 = curve.g1_generator(), curve.g2_generator()
    assert P.verify(vk, pub, proof)
    assert not P.verify(vk, pub, Proof(proof.a + g1, proof.b, proof.c))
    assert not P.verify(vk, pub, Proof(proof.a, proof.b + g2, proof.c))
    assert not P.verify(vk, pub, Proof(proof.a, proof.b, proof.c + g1))
    assert not P.verify(vk, [pub[0] + 1] + pub[1:], proof)
    assert not P.verify(vk, pub[:3], proof)
    assert not P.verify(vk, pub[:3] + [R], proof)


def test_other_circuits_vk_fails(key_dir: Path) -> None:
    circuit, pk, _ = _keys(8, 1, key_dir)
    _, _, vk_other_seed = _keys(8, 2, key_dir)
    syn = P.synthesize(circuit, 0)
    proof = P.prove(circuit, pk, 0, *P.seeded_randomisers(1, 0))
    _, _, vk_other_size = _keys(9, 1, key_dir)
    assert not P.verify(vk_other_seed, syn.public_ints(), proof)
    assert not P.verify(vk_other_size, syn.public_ints(), proof)


def test_phases_compose_like_prove(key_dir: Path) -> None:
    circuit, pk, vk = _keys(9, 1, key_dir)
    syn = P.synthesize(circuit, 1)
    prep = P.prep_msm(syn, pk)
    assert len(prep.a.ones) > 5 * len(prep.a.tail) > 0  # batch addition carries the bulk
    h = P.ntt_h(syn.a, syn.b, syn.c)
    r, s = P.seeded_randomisers(1, 1)
    proof = P.assemble(syn, P.msm_g1(prep, h, pk), P.b_g2_msm(prep, pk), pk, r, s)
    assert proof == P.prove(circuit, pk, 1, r, s)
    assert P.verify(vk, syn.public_ints(), proof)


def test_key_cache_hit_and_damaged_file_rebuilt(tmp_path: Path) -> None:
    circuit = P.make_circuit(8, 9)
    pk, vk = load_or_setup(circuit, tmp_path, insecure_seed=9)
    path = cache_path(circuit, vk, tmp_path, insecure_seed=9)
    assert path.exists() and not list(tmp_path.glob("*.tmp"))
    pk2, _ = load_or_setup(circuit, tmp_path, insecure_seed=9)
    assert np.array_equal(pk2.h_query, pk.h_query)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match="damaged"):
        pk3, vk3 = load_or_setup(circuit, tmp_path, insecure_seed=9)
    assert np.array_equal(pk3.a_query, pk.a_query) and np.array_equal(vk3.ic, vk.ic)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_or_setup(circuit, tmp_path, insecure_seed=9)  # the rebuilt file is intact again


def test_a_cache_without_room_is_skipped_with_a_warning(tmp_path: Path, monkeypatch) -> None:
    """A disk that cannot hold the key (a 2^27 key is ~70 GiB): no file, half-written or whole;
    the key is used as set up, and that is said."""
    import collections

    from prover.groth16 import setup as S

    monkeypatch.setattr(S.shutil, "disk_usage", lambda p: collections.namedtuple("U", "total used free")(1, 1, 1000))
    circuit = P.make_circuit(8, 5)
    with pytest.warns(RuntimeWarning, match="key cache not written"):
        pk, vk = load_or_setup(circuit, tmp_path, insecure_seed=5)
    assert list(tmp_path.iterdir()) == [] and P.verify(vk, P.synthesize(circuit, 0).public_ints(),
                                                         P.prove(circuit, pk, 0, *P.seeded_randomisers(5, 0)))
