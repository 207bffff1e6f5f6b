"""snarkjs-layout JSON for Groth16 over BLS12-381: proof.json, verification_key.json,
public.json, and validated loaders back.

snarkjs writes affine points as decimal strings with a projective z: G1 ``[x, y, "1"]``,
G2 ``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]``; the identity as z = 0 (G1
``["0", "1", "0"]``). Loading checks every point is on the curve and in the subgroup, that
no point the scheme needs non-trivial is the identity (alpha, beta, gamma, delta; the proof's
A, B, C: with those at infinity the pairing equation holds for anything), that decimals are
canonical (no leading zeros, below the modulus), and that the document is exactly the
snarkjs layout (keys and JSON types; snarkjs's optional ``vk_alphabeta_12`` and our
``c2tui_setup`` label are the only extra keys allowed). A file is read with a size bound, and
too deep a nesting is "unreadable", never a RecursionError.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from prover import bounds
from prover.inputs import InputError, read_input
from prover.field import curve, fr
from prover.field.params import P_MOD as FP_MOD  # |Fp|, defined once
from prover.groth16.keys import VerifyingKey
from prover.groth16.proof import Proof

FP_BYTES = 48
PROOF_FILE, VK_FILE, PUBLIC_FILE = "proof.json", "verification_key.json", "public.json"

MAX_JSON_BYTES = bounds.MAX_JSON_BYTES  # far above any key we write (2^24 constraints: 5 public inputs)
DEC_RE = r"^(0|[1-9][0-9]{0,119})$"  # canonical: no sign, no leading zeros, no exponent
Dec = Annotated[StrictStr, Field(pattern=DEC_RE)]
G1Json = Annotated[list[Dec], Field(min_length=3, max_length=3)]
Fp2Json = Annotated[list[Dec], Field(min_length=2, max_length=2)]
G2Json = Annotated[list[Fp2Json], Field(min_length=3, max_length=3)]


class MalformedInput(ValueError):
    """A file that cannot be read as what it should be; the message names the file."""


STRICT = ConfigDict(extra="forbid", strict=True)
SetupLabel = Literal["random", "insecure-seeded"]


class ProofJson(BaseModel):
    model_config = STRICT
    pi_a: G1Json
    pi_b: G2Json
    pi_c: G1Json
    protocol: Literal["groth16"]
    curve: Literal["bls12381"]


class VerificationKeyJson(BaseModel):
    model_config = STRICT
    protocol: Literal["groth16"]
    curve: Literal["bls12381"]
    nPublic: StrictInt = Field(ge=0, le=1 << 20)
    vk_alpha_1: G1Json
    vk_beta_2: G2Json
    vk_gamma_2: G2Json
    vk_delta_2: G2Json
    IC: list[G1Json] = Field(min_length=1)
    vk_alphabeta_12: list[list[Fp2Json]] | None = None  # snarkjs writes e(alpha, beta); unused here
    c2tui_setup: SetupLabel | None = None  # our label: "insecure-seeded" keys can be forged by whoever knows the seed


# points <-> decimal strings -----------------------------------------------------------------------
def _fp_ints(xy: bytes) -> list[int]:
    return [int.from_bytes(xy[i : i + FP_BYTES], "little") for i in range(0, len(xy), FP_BYTES)]


def _fp_bytes(values: list[int]) -> bytes:
    if not any(values):  # all-zero bytes would decode as the identity: that has its own spelling
        raise ValueError("(0, 0) is not on the curve")
    for v in values:
        if v >= FP_MOD:
            raise ValueError("coordinate not below the base field modulus")
    return b"".join(v.to_bytes(FP_BYTES, "little") for v in values)


def g1_json(xy: bytes | np.ndarray) -> list[str]:
    xy = bytes(xy)
    if not any(xy):
        return ["0", "1", "0"]
    x, y = _fp_ints(xy)
    return [str(x), str(y), "1"]


def g2_json(xy: bytes | np.ndarray) -> list[list[str]]:
    xy = bytes(xy)
    if not any(xy):
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    x0, x1, y0, y1 = _fp_ints(xy)
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def g1_from_json(p: list[str]) -> curve.G1:
    if p[2] == "0":
        if p[:2] != ["0", "1"]:
            raise ValueError('the identity is written ["0", "1", "0"]')
        return curve.G1.identity()
    if p[2] != "1":
        raise ValueError("z must be 1 (affine) or 0 (identity)")
    return curve.G1.from_xy_bytes_le(_fp_bytes([int(p[0]), int(p[1])]))


def g2_from_json(p: list[list[str]]) -> curve.G2:
    if p[2] == ["0", "0"]:
        if p[:2] != [["0", "0"], ["1", "0"]]:
            raise ValueError('the identity is written [["0", "0"], ["1", "0"], ["0", "0"]]')
        return curve.G2.identity()
    if p[2] != ["1", "0"]:
        raise ValueError('z must be ["1", "0"] (affine) or ["0", "0"] (identity)')
    return curve.G2.from_xy_bytes_le(_fp_bytes([int(p[0][0]), int(p[0][1]), int(p[1][0]), int(p[1][1])]))


_Point = TypeVar("_Point", curve.G1, curve.G2)


def _nonzero(name: str, point: _Point) -> _Point:
    """Groth16 needs these points non-trivial: at infinity the pairing check accepts anything."""
    if point == type(point).identity():
        raise ValueError(f"{name} is the identity (point at infinity), which Groth16 forbids")
    return point


# documents ----------------------------------------------------------------------------------------
def proof_json(proof: Proof) -> dict:
    return {
        "pi_a": g1_json(proof.a.to_xy_bytes_le()),
        "pi_b": g2_json(proof.b.to_xy_bytes_le()),
        "pi_c": g1_json(proof.c.to_xy_bytes_le()),
        "protocol": "groth16",
        "curve": "bls12381",
    }


def vk_json(vk: VerifyingKey) -> dict:
    """The key's setup label ("random" / "insecure-seeded") goes in as ``c2tui_setup``."""
    label = {"c2tui_setup": vk.setup_label} if vk.setup_label in ("random", "insecure-seeded") else {}
    return label | {
        "protocol": "groth16",
        "curve": "bls12381",
        "nPublic": vk.num_public,
        "vk_alpha_1": g1_json(vk.alpha_g1),
        "vk_beta_2": g2_json(vk.beta_g2),
        "vk_gamma_2": g2_json(vk.gamma_g2),
        "vk_delta_2": g2_json(vk.delta_g2),
        "IC": [g1_json(p) for p in vk.ic],
    }


def public_json(public_inputs: list[int]) -> list[str]:
    return [str(x) for x in public_inputs]


def dir_files(proof: Proof, vk: VerifyingKey, public_inputs: list[int]) -> list[tuple[str, bytes]]:
    """(file name, bytes) of the snarkjs directory: proof, verification key, public inputs."""
    docs = ((PROOF_FILE, proof_json(proof)), (VK_FILE, vk_json(vk)), (PUBLIC_FILE, public_json(public_inputs)))
    return [(name, (json.dumps(doc, indent=1) + "\n").encode()) for name, doc in docs]


def write_dir(out: Path, proof: Proof, vk: VerifyingKey, public_inputs: list[int]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, data in dir_files(proof, vk, public_inputs):
        (out / name).write_bytes(data)


# loaders ----------------------------------------------------------------------------------------------
def _read(path: Path, limit: int = MAX_JSON_BYTES) -> object:
    """A JSON file of at most `limit` bytes (its kind's: a proof is far smaller than a key; a
    63 MB proof.json once took 2.7 GB to parse before it was found malformed); a regular file
    only (a FIFO would block)."""
    try:
        if not path.exists() and not path.is_symlink():
            raise MalformedInput(f"{path}: file not found")
        try:
            raw = read_input(path, limit, "JSON file")
        except InputError as exc:
            raise MalformedInput(f"{path}: unreadable ({exc})") from None
        return bounds.parse_nested("JSON", json.loads, raw.decode("utf-8"))
    except bounds.BoundError as exc:
        raise MalformedInput(f"{path}: unreadable ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MalformedInput(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    except json.JSONDecodeError as exc:
        raise MalformedInput(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise MalformedInput(f"{path}: unreadable (JSON nested too deeply)") from None


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "document"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def load_proof(path: Path) -> Proof:
    try:
        doc = ProofJson.model_validate(_read(path, bounds.MAX_PROOF_BYTES))
    except ValidationError as exc:
        raise MalformedInput(f"{path}: {_describe(exc)}") from None
    try:
        return Proof(a=_nonzero("pi_a", g1_from_json(doc.pi_a)), b=_nonzero("pi_b", g2_from_json(doc.pi_b)),
                     c=_nonzero("pi_c", g1_from_json(doc.pi_c)))
    except ValueError as exc:
        raise MalformedInput(f"{path}: invalid curve point ({exc})") from None


def _g1_bytes(name: str, p: list[str]) -> np.ndarray:
    return np.frombuffer(_nonzero(name, g1_from_json(p)).to_xy_bytes_le(), np.uint8).copy()


def _g2_bytes(name: str, p: list[list[str]]) -> np.ndarray:
    return np.frombuffer(_nonzero(name, g2_from_json(p)).to_xy_bytes_le(), np.uint8).copy()


def load_vk(path: Path) -> VerifyingKey:
    try:
        doc = VerificationKeyJson.model_validate(_read(path, bounds.MAX_VK_BYTES))
    except ValidationError as exc:
        raise MalformedInput(f"{path}: {_describe(exc)}") from None
    if len(doc.IC) != doc.nPublic + 1:
        raise MalformedInput(f"{path}: IC has {len(doc.IC)} points but nPublic is {doc.nPublic} (expected nPublic + 1)")
    try:
        ic = curve.g1_array([g1_from_json(p) for p in doc.IC])
        return VerifyingKey(
            alpha_g1=_g1_bytes("vk_alpha_1", doc.vk_alpha_1), beta_g2=_g2_bytes("vk_beta_2", doc.vk_beta_2),
            gamma_g2=_g2_bytes("vk_gamma_2", doc.vk_gamma_2), delta_g2=_g2_bytes("vk_delta_2", doc.vk_delta_2),
            ic=ic, setup_label=doc.c2tui_setup or "unknown",
        )
    except ValueError as exc:
        raise MalformedInput(f"{path}: invalid curve point ({exc})") from None


def load_public(path: Path) -> list[int]:
    doc = _read(path, bounds.MAX_PUBLIC_BYTES)
    if not isinstance(doc, list) or not all(isinstance(x, str) and re.fullmatch(DEC_RE, x) for x in doc):
        raise MalformedInput(f"{path}: expected a JSON list of canonical decimal strings (no leading zeros)")
    values = [int(x) for x in doc]
    if any(v >= fr.R_MOD for v in values):
        raise MalformedInput(f"{path}: a public input is not below the scalar field modulus")
    return values
