"""Zero knowledge: every proof's r, s are fresh OS randomness, so a proof made from a public
seed cannot be re-created (and its witness tested for) by whoever holds the key; the seeded
path exists only behind an explicit insecure flag, and says so."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover.groth16 import phases as P


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    key_dir = tmp_path_factory.getbasetemp() / "keys"
    key_dir.mkdir(exist_ok=True)
    circuit = P.make_circuit(8, 1)
    pk, vk = P.load_or_setup(circuit, 1, key_dir)
    return circuit, pk, vk


def test_two_proofs_of_one_statement_differ_and_both_verify(keys) -> None:  # type: ignore[no-untyped-def]
    circuit, pk, vk = keys
    public = P.synthesize(circuit, 3).public_ints()
    p1, p2 = (P.prove(circuit, pk, 3, *P.randomisers(1, 3)) for _ in range(2))
    assert p1.to_bytes() != p2.to_bytes()
    assert P.verify(vk, public, p1) and P.verify(vk, public, p2)


def test_the_public_seed_no_longer_reveals_the_witness(keys) -> None:  # type: ignore[no-untyped-def]
    """The attack: with the key and the public seed, re-prove each candidate witness with the
    seed's r, s and compare bytes. It matched every proof before; it matches none now."""
    circuit, pk, _ = keys
    proof = P.prove(circuit, pk, 2, *P.randomisers(1, 2))
    guesses = {i: P.prove(circuit, pk, i, *P.seeded_randomisers(1, i)).to_bytes() for i in range(3)}
    assert proof.to_bytes() not in guesses.values()
    # the explicit insecure path is still byte-reproducible (backends' byte-equality tests)
    assert P.randomisers(1, 2, insecure_seeded=True) == P.seeded_randomisers(1, 2)
    assert P.prove(circuit, pk, 2, *P.randomisers(1, 2, insecure_seeded=True)).to_bytes() == guesses[2]


def _prove(out: Path, key_dir: Path, *extra: str):  # type: ignore[no-untyped-def]
    args = ["prove", "--constraints-log2", "8", "--seed", "1", "--instance", "0", "--out", str(out), "--cache-dir", str(key_dir)]
    return CliRunner().invoke(main, [*args, *extra])


def test_prove_command_blinds_each_proof_unless_told_insecure(tmp_path: Path, tmp_path_factory, keys) -> None:  # type: ignore[no-untyped-def]
    key_dir = tmp_path_factory.getbasetemp() / "keys"
    flags = ((), (), ("--insecure-seeded-proofs",), ("--insecure-seeded-proofs",))
    runs = [_prove(tmp_path / f"p{i}", key_dir, *extra) for i, extra in enumerate(flags)]
    assert all(r.exit_code == 0 for r in runs), [r.output for r in runs]
    proofs = [json.loads((tmp_path / f"p{i}" / "proof.json").read_text()) for i in range(4)]
    assert proofs[0] != proofs[1] and proofs[2] == proofs[3]
    assert "INSECURE seeded proofs" in runs[2].output and "INSECURE" not in runs[0].output
