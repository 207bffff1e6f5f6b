"""snarkjs-layout JSON for Groth16 over BLS12-381: proof.json, verification_key.json,
public.json, and validated loaders back.

snarkjs writes affine points as decimal strings with a projective z: G1 ``[x, y, "1"]``,
G2 ``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]``; the identity as z = 0 (G1
``["0", "1", "0"]``). Loading checks every point is on the curve and in the subgroup.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prover.bls import curve, fr
from prover.groth16.keys import VerifyingKey
from prover.groth16.proof import Proof

FP_BYTES = 48
FP_MOD = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
PROOF_FILE, VK_FILE, PUBLIC_FILE = "proof.json", "verification_key.json", "public.json"

Dec = Annotated[str, Field(pattern=r"^[0-9]{1,120}$")]
G1Json = Annotated[list[Dec], Field(min_length=3, max_length=3)]
Fp2Json = Annotated[list[Dec], Field(min_length=2, max_length=2)]
G2Json = Annotated[list[Fp2Json], Field(min_length=3, max_length=3)]


class MalformedInput(ValueError):
    """A file that cannot be read as what it should be; the message names the file."""


class ProofJson(BaseModel):
    model_config = ConfigDict(extra="ignore")
    pi_a: G1Json
    pi_b: G2Json
    pi_c: G1Json
    protocol: Literal["groth16"]
    curve: Literal["bls12381"]


class VerificationKeyJson(BaseModel):
    model_config = ConfigDict(extra="ignore")
    protocol: Literal["groth16"]
    curve: Literal["bls12381"]
    nPublic: int = Field(ge=0)
    vk_alpha_1: G1Json
    vk_beta_2: G2Json
    vk_gamma_2: G2Json
    vk_delta_2: G2Json
    IC: list[G1Json] = Field(min_length=1)


# points <-> decimal strings -----------------------------------------------------------------------
def _fp_ints(xy: bytes) -> list[int]:
    return [int.from_bytes(xy[i : i + FP_BYTES], "little") for i in range(0, len(xy), FP_BYTES)]


def _fp_bytes(values: list[int]) -> bytes:
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
        return curve.G1.identity()
    if p[2] != "1":
        raise ValueError("z must be 1 (affine) or 0 (identity)")
    return curve.G1.from_xy_bytes_le(_fp_bytes([int(p[0]), int(p[1])]))


def g2_from_json(p: list[list[str]]) -> curve.G2:
    if p[2] == ["0", "0"]:
        return curve.G2.identity()
    if p[2] != ["1", "0"]:
        raise ValueError('z must be ["1", "0"] (affine) or ["0", "0"] (identity)')
    return curve.G2.from_xy_bytes_le(_fp_bytes([int(p[0][0]), int(p[0][1]), int(p[1][0]), int(p[1][1])]))


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
    return {
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


def write_dir(out: Path, proof: Proof, vk: VerifyingKey, public_inputs: list[int]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in ((PROOF_FILE, proof_json(proof)), (VK_FILE, vk_json(vk)), (PUBLIC_FILE, public_json(public_inputs))):
        (out / name).write_text(json.dumps(doc, indent=1) + "\n")


# loaders ----------------------------------------------------------------------------------------------
def _read(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise MalformedInput(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MalformedInput(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise MalformedInput(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "document"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def load_proof(path: Path) -> Proof:
    try:
        doc = ProofJson.model_validate(_read(path))
    except ValidationError as exc:
        raise MalformedInput(f"{path}: {_describe(exc)}") from None
    try:
        return Proof(a=g1_from_json(doc.pi_a), b=g2_from_json(doc.pi_b), c=g1_from_json(doc.pi_c))
    except ValueError as exc:
        raise MalformedInput(f"{path}: invalid curve point ({exc})") from None


def load_vk(path: Path) -> VerifyingKey:
    try:
        doc = VerificationKeyJson.model_validate(_read(path))
    except ValidationError as exc:
        raise MalformedInput(f"{path}: {_describe(exc)}") from None
    if len(doc.IC) != doc.nPublic + 1:
        raise MalformedInput(f"{path}: IC has {len(doc.IC)} points but nPublic is {doc.nPublic} (expected nPublic + 1)")
    try:
        ic = curve.g1_array([g1_from_json(p) for p in doc.IC])
        return VerifyingKey(
            alpha_g1=np.frombuffer(g1_from_json(doc.vk_alpha_1).to_xy_bytes_le(), np.uint8).copy(),
            beta_g2=np.frombuffer(g2_from_json(doc.vk_beta_2).to_xy_bytes_le(), np.uint8).copy(),
            gamma_g2=np.frombuffer(g2_from_json(doc.vk_gamma_2).to_xy_bytes_le(), np.uint8).copy(),
            delta_g2=np.frombuffer(g2_from_json(doc.vk_delta_2).to_xy_bytes_le(), np.uint8).copy(),
            ic=ic,
        )
    except ValueError as exc:
        raise MalformedInput(f"{path}: invalid curve point ({exc})") from None


def load_public(path: Path) -> list[int]:
    doc = _read(path)
    if not isinstance(doc, list) or not all(isinstance(x, str) and re.fullmatch(r"[0-9]{1,120}", x) for x in doc):
        raise MalformedInput(f"{path}: expected a JSON list of decimal strings")
    values = [int(x) for x in doc]
    if any(v >= fr.R_MOD for v in values):
        raise MalformedInput(f"{path}: a public input is not below the scalar field modulus")
    return values
