"""`c2tui prove` and `c2tui verify`: exit codes and messages."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main


@pytest.fixture(scope="module")
def proof_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    key_dir = tmp_path_factory.getbasetemp() / "keys"
    key_dir.mkdir(exist_ok=True)
    out = tmp_path_factory.mktemp("proof")
    result = CliRunner().invoke(main, ["prove", "--constraints-log2", "8", "--seed", "1", "--instance", "2", "--out", str(out), "--cache-dir", str(key_dir)])
    assert result.exit_code == 0, result.output
    return out


def _copy(src: Path, dst: Path) -> Path:
    for name in ("proof.json", "verification_key.json", "public.json"):
        (dst / name).write_text((src / name).read_text())
    return dst


def _verify(path: Path):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["verify", str(path)])


def test_prove_writes_a_verifying_directory(proof_dir: Path) -> None:
    assert {p.name for p in proof_dir.iterdir()} >= {"proof.json", "verification_key.json", "public.json"}
    result = _verify(proof_dir)
    assert result.exit_code == 0 and "valid" in result.output


def test_altered_proof_exits_1(proof_dir: Path, tmp_path: Path) -> None:
    d = _copy(proof_dir, tmp_path)
    pub = json.loads((d / "public.json").read_text())
    pub[0] = str(int(pub[0]) + 1)
    (d / "public.json").write_text(json.dumps(pub))
    result = _verify(d)
    assert result.exit_code == 1 and "INVALID" in result.output


def test_swapped_points_exit_1(proof_dir: Path, tmp_path: Path) -> None:
    d = _copy(proof_dir, tmp_path)
    doc = json.loads((d / "proof.json").read_text())
    doc["pi_a"], doc["pi_c"] = doc["pi_c"], doc["pi_a"]
    (d / "proof.json").write_text(json.dumps(doc))
    assert _verify(d).exit_code == 1


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("proof.json", "{not json", "not valid JSON"),
        ("proof.json", '{"pi_a": 1}', "pi_a"),
        ("verification_key.json", '{"protocol": "groth16"}', "curve"),
        ("public.json", '["1", 2]', "decimal strings"),
        ("public.json", '["1"]', "public inputs but the verifying key expects 4"),
    ],
)
def test_malformed_input_exits_2_naming_the_file(proof_dir: Path, tmp_path: Path, name: str, content: str, needle: str) -> None:
    d = _copy(proof_dir, tmp_path)
    (d / name).write_text(content)
    result = _verify(d)
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert name in flat and needle in flat and "malformed" in flat


def test_missing_file_and_directory_exit_2(proof_dir: Path, tmp_path: Path) -> None:
    d = _copy(proof_dir, tmp_path)
    (d / "public.json").unlink()
    result = _verify(d)
    assert result.exit_code == 2 and "public.json" in result.output and "not found" in result.output
    assert _verify(tmp_path / "nope").exit_code == 2
