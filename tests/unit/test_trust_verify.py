"""Issue 16: `verify` rejects degenerate keys and proofs, non-canonical encodings and any JSON
that is not exactly the snarkjs layout; the setup's toxic waste comes from the OS."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover.groth16 import export
from prover.groth16 import phases as P
from prover.groth16 import setup as S

G1_ID, G2_ID = ["0", "1", "0"], [["0", "0"], ["1", "0"], ["0", "0"]]


@pytest.fixture(scope="module")
def proof_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("proof")
    res = CliRunner().invoke(main, ["prove", "--constraints-log2", "8", "--seed", "1", "--out", str(out),
                                    "--cache-dir", str(tmp_path_factory.mktemp("keys"))])
    assert res.exit_code == 0, res.output
    return out


def _dir(src: Path, dst: Path, **changes: object) -> Path:
    for name in (export.PROOF_FILE, export.VK_FILE, export.PUBLIC_FILE):
        (dst / name).write_text((src / name).read_text())
    for name, edit in changes.items():
        path = dst / f"{name}.json"
        if isinstance(edit, str):
            path.write_text(edit)
        else:
            doc = json.loads(path.read_text())
            edit(doc)  # type: ignore[operator]
            path.write_text(json.dumps(doc))
    return dst


def _verify(d: Path):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["verify", str(d)])


def _all_identity(doc: dict) -> None:
    doc["vk_alpha_1"] = G1_ID
    doc["vk_beta_2"] = doc["vk_gamma_2"] = doc["vk_delta_2"] = G2_ID
    doc["IC"] = [G1_ID] * len(doc["IC"])


def _identity_proof(doc: dict) -> None:
    doc["pi_a"] = doc["pi_c"] = G1_ID
    doc["pi_b"] = G2_ID


def _set(key: str, value: object):  # type: ignore[no-untyped-def]
    return lambda doc: doc.__setitem__(key, value)


def _lead_zero(key: str):  # type: ignore[no-untyped-def]
    def edit(doc: dict) -> None:
        doc[key][0] = "0" + doc[key][0]
    return edit


def test_all_identity_key_with_identity_proof_is_rejected(proof_dir: Path, tmp_path: Path) -> None:
    res = _verify(_dir(proof_dir, tmp_path, verification_key=_all_identity, proof=_identity_proof))
    assert res.exit_code == 2 and "identity" in res.output, res.output


@pytest.mark.parametrize(("file", "edit", "needle"), [
    ("verification_key", _set("vk_alpha_1", G1_ID), "vk_alpha_1 is the identity"),
    ("verification_key", _set("vk_beta_2", G2_ID), "vk_beta_2 is the identity"),
    ("verification_key", _set("vk_gamma_2", G2_ID), "vk_gamma_2 is the identity"),
    ("verification_key", _set("vk_delta_2", G2_ID), "vk_delta_2 is the identity"),
    ("proof", _set("pi_a", G1_ID), "pi_a is the identity"),
    ("proof", _set("pi_b", G2_ID), "pi_b is the identity"),
    ("proof", _set("pi_c", G1_ID), "pi_c is the identity"),
    ("proof", _set("pi_a", ["0", "0", "1"]), "not on the curve"),
    ("proof", _set("pi_a", ["1", "2", "1"]), "invalid curve point"),
    ("proof", _lead_zero("pi_a"), "pi_a.0"),
    ("proof", _set("pi_a", [str(export.FP_MOD + 1), "2", "1"]), "modulus"),
    ("verification_key", _set("nPublic", "4"), "nPublic"),
    ("verification_key", _set("nPublic", 4.0), "nPublic"),
    ("verification_key", _set("nPublic", True), "nPublic"),
    ("verification_key", _set("extra", 1), "extra"),
    ("proof", _set("pi_a", [1, 2, 1]), "pi_a.0"),
    ("public", lambda doc: doc.__setitem__(0, "0" + doc[0]), "canonical"),
    ("verification_key", "[" * 100000 + "]" * 100000, "unreadable"),
    ("proof", "{\"a\":" * 50000 + "1" + "}" * 50000, "unreadable"),
])
def test_degenerate_or_non_canonical_input_exits_2(proof_dir: Path, tmp_path: Path, file: str, edit: object,
                                                    needle: str) -> None:
    res = _verify(_dir(proof_dir, tmp_path, **{file: edit}))
    flat = " ".join(res.output.split())
    assert res.exit_code == 2 and needle in flat and "Traceback" not in flat, flat


def test_snarkjs_optional_alphabeta_is_accepted(proof_dir: Path, tmp_path: Path) -> None:
    gt = [[["1", "2"], ["3", "4"], ["5", "6"]], [["7", "8"], ["9", "10"], ["11", "12"]]]
    assert _verify(_dir(proof_dir, tmp_path, verification_key=_set("vk_alphabeta_12", gt))).exit_code == 0


def test_oversized_input_is_an_error_not_memory(tmp_path: Path) -> None:
    with pytest.raises(export.MalformedInput, match="not a regular file"):  # refused before a byte is read
        export.load_vk(Path("/dev/zero"))


# setup: toxic waste from the OS ---------------------------------------------------------------
def test_two_default_setups_differ_and_a_seeded_proof_fails_a_default_key(tmp_path: Path) -> None:
    circuit = P.make_circuit(8, 1)
    pk1, vk1 = S.setup(circuit)
    _, vk2 = S.setup(circuit)
    assert not np.array_equal(vk1.delta_g2, vk2.delta_g2) and not np.array_equal(vk1.ic, vk2.ic)
    assert vk1.setup_label == "random"
    spk, svk = S.setup(circuit, insecure_seed=1)
    assert svk.insecure and np.array_equal(S.setup(circuit, insecure_seed=1)[1].ic, svk.ic)  # reproducible
    syn = P.synthesize(circuit, 0)
    seeded_proof = P.prove(circuit, spk, 0, *P.seeded_randomisers(1, 0))
    assert P.verify(svk, syn.public_ints(), seeded_proof)
    assert not P.verify(vk1, syn.public_ints(), seeded_proof)
    assert P.verify(vk1, syn.public_ints(), P.prove(circuit, pk1, 0, *P.seeded_randomisers(1, 0)))


def test_cache_is_keyed_by_key_id_and_never_serves_seeded_keys_by_default(tmp_path: Path) -> None:
    circuit = P.make_circuit(8, 2)
    _, seeded = S.load_or_setup(circuit, tmp_path, insecure_seed=2)
    _, vk = S.load_or_setup(circuit, tmp_path)
    assert not vk.insecure and not np.array_equal(vk.ic, seeded.ic)
    names = sorted(p.name for p in tmp_path.glob("*.npz"))
    assert any("INSECURE-seed2" in n for n in names) and any(S.key_id(vk) in n for n in names)
    assert all("-s2-" not in n for n in names)  # the file name holds the key id, not the seed
    _, again = S.load_or_setup(circuit, tmp_path)
    assert np.array_equal(again.ic, vk.ic) and again.setup_label == "random"


def test_prove_labels_insecure_keys_and_verify_warns(tmp_path: Path) -> None:
    out = tmp_path / "p"
    res = CliRunner().invoke(main, ["prove", "--constraints-log2", "8", "--seed", "3", "--out", str(out),
                                    "--cache-dir", str(tmp_path / "k"), "--insecure-seeded-setup"])
    assert res.exit_code == 0, res.output
    assert json.loads((out / export.VK_FILE).read_text())["c2tui_setup"] == "insecure-seeded"
    res = _verify(out)
    assert res.exit_code == 0 and "INSECURE" in res.output
