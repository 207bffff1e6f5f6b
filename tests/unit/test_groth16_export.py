"""snarkjs-layout JSON: layout, round trip, validation."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from prover.groth16 import export
from prover.groth16 import phases as P


@pytest.fixture(scope="module")
def proved(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    key_dir = tmp_path_factory.getbasetemp() / "keys"
    key_dir.mkdir(exist_ok=True)
    circuit = P.make_circuit(8, 1)
    pk, vk = P.load_or_setup(circuit, 1, key_dir)
    syn = P.synthesize(circuit, 0)
    return vk, P.prove(circuit, pk, 0, *P.seeded_randomisers(1, 0)), syn.public_ints()


def test_layout_is_snarkjs(proved, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    vk, proof, pub = proved
    export.write_dir(tmp_path, proof, vk, pub)
    p = json.loads((tmp_path / "proof.json").read_text())
    assert p["protocol"] == "groth16" and p["curve"] == "bls12381"
    assert p["pi_a"][2] == "1" and p["pi_b"][2] == ["1", "0"] and len(p["pi_b"][0]) == 2
    v = json.loads((tmp_path / "verification_key.json").read_text())
    assert v["nPublic"] == 4 and len(v["IC"]) == 5 and v["vk_gamma_2"][2] == ["1", "0"]
    assert json.loads((tmp_path / "public.json").read_text()) == [str(x) for x in pub]


def test_round_trip(proved, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    vk, proof, pub = proved
    export.write_dir(tmp_path, proof, vk, pub)
    proof2 = export.load_proof(tmp_path / "proof.json")
    vk2 = export.load_vk(tmp_path / "verification_key.json")
    assert proof2 == proof
    assert all(np.array_equal(a, b) for a, b in zip(vk.arrays().values(), vk2.arrays().values()))
    assert export.load_public(tmp_path / "public.json") == pub
    assert P.verify(vk2, pub, proof2)


def test_identity_points_round_trip() -> None:
    from prover.field import curve

    assert export.g1_json(bytes(96)) == ["0", "1", "0"]
    assert export.g1_from_json(["0", "1", "0"]) == curve.G1.identity()
    assert export.g2_from_json(export.g2_json(bytes(192))) == curve.G2.identity()


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"pi_a": 1}, "pi_a"),
        ({"pi_a": ["1", "2", "1"], "pi_b": [["1", "2"], ["3", "4"], ["1", "0"]], "pi_c": ["1", "2", "1"], "protocol": "plonk", "curve": "bls12381"}, "protocol"),
        ({"pi_a": ["1", "2", "1"], "pi_b": [["1", "2"], ["3", "4"], ["1", "0"]], "pi_c": ["1", "2", "1"], "protocol": "groth16", "curve": "bls12381"}, "invalid curve point"),
        ({"pi_a": ["x", "2", "1"]}, "pi_a.0"),
    ],
)
def test_malformed_proof_is_named(tmp_path: Path, doc: object, needle: str) -> None:
    path = tmp_path / "proof.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(export.MalformedInput, match=needle) as info:
        export.load_proof(path)
    assert str(path) in str(info.value)
