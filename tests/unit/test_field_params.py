"""BLS12-381's constants are defined once (prover/field/params.py): field.cuh's u32 tables
match them, and the scalar modulus is spelled as a literal once in all of the Python code."""
from __future__ import annotations

import re
from pathlib import Path

from prover.field import params

ROOT = Path(__file__).resolve().parents[2]
CUH = ROOT / "prover" / "kernels" / "cuda" / "field.cuh"


def _cuh_tables() -> dict[str, list[int]]:
    text = CUH.read_text()
    out: dict[str, list[int]] = {}
    for struct in ("FrP", "FpP"):
        body = re.search(r"struct %s \{(.*?)\n\};" % struct, text, re.S).group(1)
        out[f"{struct}.INV"] = [int(re.search(r"INV = (0x[0-9a-f]+)u", body).group(1), 16)]
        for fn in ("mod", "r2", "one"):
            block = re.search(r"static u32 %s\(int i\) \{\s*const u32 M\[\d+\] = \{(.*?)\};" % fn, body, re.S).group(1)
            out[f"{struct}.{fn}"] = [int(x, 16) for x in re.findall(r"0x([0-9a-f]+)u", block)]
    consts = {"FIELD_FR_MOD": "FrP.mod", "FIELD_FP_MOD": "FpP.mod"}
    for name, key in consts.items():  # the constant-bank copies of eo_c
        block = re.search(r"%s\[\d+\] = \{(.*?)\};" % name, text, re.S).group(1)
        out["const " + key] = [int(x, 16) for x in re.findall(r"0x([0-9a-f]+)u", block)]
    inv = re.search(r"FIELD_INV\[2\] = \{(.*?)\};", text).group(1)
    out["const INV"] = [int(x, 16) for x in re.findall(r"0x([0-9a-f]+)u", inv)]
    return out


def test_field_cuh_matches_params() -> None:
    want = params.cuh_tables()
    got = _cuh_tables()
    for key, value in want.items():
        assert got[key] == value, key
    assert got["const FrP.mod"] == want["FrP.mod"] and got["const FpP.mod"] == want["FpP.mod"]
    assert got["const INV"] == want["FrP.INV"] + want["FpP.INV"]


def test_scalar_modulus_is_one_literal() -> None:
    literal = re.compile(f"{params.R_MOD:#x}", re.I)  # built, not spelled: this file is not a hit
    hits = [p.relative_to(ROOT) for d in ("prover", "c2tui", "benchmarks", "tests")
            for p in (ROOT / d).rglob("*.py") if literal.search(p.read_text())]
    assert hits == [Path("prover/field/params.py")]


def test_derived_constants() -> None:
    w = params.root_of_unity(params.TWO_ADICITY)
    assert pow(w, 1 << 32, params.R_MOD) == 1 and pow(w, 1 << 31, params.R_MOD) != 1
    assert params.root_of_unity(0) == 1
