"""The phases of a Groth16 prove, SupraSeal C2 style, as plain functions the pipeline
engine calls one by one (plain data in and out, no global state):

    make_circuit -> load_or_setup -> synthesize -> prep_msm -> ntt_h -> msm_g1 -> b_g2_msm
    -> assemble            (prove() runs them in order; verify() checks with arkworks)

The CPU versions here are the reference the CUDA kernels must match bit for bit. The host
phases of every partition (synthesize, prep_msm) run as compiled nogil kernels
(groth16/*_nb.py, prover/host), bit-identical to their numpy references (*_reference, kept for the tests).
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import replace
from pathlib import Path

import numpy as np

from prover.backend import REFERENCE, settle
from prover.field import curve, fr, ntt
from prover.groth16 import compose
from prover.groth16.circuit import Circuit
from prover.groth16.circuit import make_circuit as _make_circuit
from prover.groth16.keys import ProvingKey, VerifyingKey
from prover.groth16.proof import Proof
from prover.groth16.results import ONE, OTHER, ZERO, G1Msms, MsmPrep, QuerySplit, Synthesis  # noqa: F401
from prover.groth16.setup import load_or_setup as _load_or_setup
from prover.groth16.witness import generate_witness
from prover.settings import KernelSettings
from prover.groth16 import prep_nb as host_prep
from prover.groth16 import witness_nb as host_witness
from prover.host.matvec import matvec_many as host_matvec_many
from prover.host import zpack_nb as host_zpack

# circuit and keys --------------------------------------------------------------------------------
def make_circuit(constraints_log2: int, seed: int) -> Circuit:
    return _make_circuit(constraints_log2, seed)


def load_or_setup(circuit: Circuit, seed: int, cache_dir: Path | None = None, *, insecure_seeded: bool = False,
                  kernels: KernelSettings | None = None) -> tuple[ProvingKey, VerifyingKey]:
    """Keys for ``circuit`` (cached). The toxic waste comes from the OS's randomness; only with
    ``insecure_seeded`` is it derived from ``seed`` (reproducible bytes, forgeable keys).
    `kernels`: the run's settings (setup on the GPU, key cache), else the environment's."""
    return _load_or_setup(circuit, cache_dir, insecure_seed=seed if insecure_seeded else None, kernels=kernels)


# phases -----------------------------------------------------------------------------------------
def synthesize(circuit: Circuit, instance: int, out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
               z: np.ndarray | None = None, threads: int = 1) -> Synthesis:
    """Witness for ``instance`` and the constraint evaluations a = A.z, b = B.z, c = C.z
    (length n = 2^k: the matrices have exactly n rows, unused ones zero), by the compiled
    nogil host kernels (groth16/witness_nb.py, prover/host/matvec.py): the same arrays as synthesize_reference. out: three
    (n, 4) uint64 arrays to write a, b, c into (the device's page-locked buffers); z: a
    (num_vars, 4) one for the witness (both reused by a worker, partition after partition);
    threads: the witness's lanes and the products' rows split over that many (host_threads)."""
    syn = witness(circuit, instance, z=z, threads=threads)
    a, b, c = products(circuit, syn, out, threads)
    return replace(syn, a=a, b=b, c=c)


def witness(circuit: Circuit, instance: int, z: np.ndarray | None = None, threads: int = 1,
            cls: np.ndarray | None = None, pack: bool | tuple[np.ndarray, np.ndarray] = False) -> Synthesis:
    """synthesize's witness alone (z, the publics, the classes; a, b, c None): what a partition's
    host builds when the GPU makes a, b, c (abc=gpu). z, cls: a worker's arrays to reuse. pack:
    also z's upload form (prover/host/zpack.py, room for the circuit's field variables), into a
    worker's (table, values) arrays when given (page-locked on CUDA), else fresh ones."""
    z, public, classes = host_witness.generate_witness(circuit, instance, z, threads, cls)
    zp = None
    if pack is not False:
        zp = host_zpack.pack(z, classes, circuit.field_vars, None if pack is True else pack, threads)
    return Synthesis(z=z, public_inputs=public, a=None, b=None, c=None, density=classes, zpack=zp)


def products(circuit: Circuit, syn: Synthesis, out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
             threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a = A.z, b = B.z, c = C.z of a witness on the host (synthesize's second half; the R1CS
    kernel's host twin where the GPU does not make them), into `out` when given."""
    cls = syn.density if syn.density is not None else host_prep.density(syn.z, threads)
    mats = (circuit.a, circuit.b, circuit.c)
    a, b, c = host_matvec_many([m.host_plan for m in mats], syn.z, cls, list(out or (None, None, None)), threads)
    return a, b, c


def synthesize_reference(circuit: Circuit, instance: int) -> Synthesis:
    """synthesize by the numpy reference (vectorised witness, Montgomery products per entry)."""
    z, public = generate_witness(circuit, instance)
    zm = fr.to_mont(z)
    a, b, c = (m.matvec_mont(zm) for m in (circuit.a, circuit.b, circuit.c))
    return Synthesis(z=z, public_inputs=public, a=a, b=b, c=c)


def density(z: fr.FrArray) -> np.ndarray:
    """ZERO / ONE / OTHER class of each value (the bitmaps SupraSeal builds in prep_msm)."""
    high = z[:, 1:].any(axis=1)
    cls = np.full(len(z), OTHER, dtype=np.uint8)
    cls[~high & (z[:, 0] == 0)] = ZERO
    cls[~high & (z[:, 0] == 1)] = ONE
    return cls


def _split(cls: np.ndarray, scalars: fr.FrArray, query: np.ndarray) -> QuerySplit:
    """Skip zero scalars and identity points (variables absent from the query)."""
    present = query.any(axis=1)
    ones = np.flatnonzero((cls == ONE) & present)
    tail = np.flatnonzero((cls == OTHER) & present)
    return QuerySplit(ones=ones, tail=tail, tail_scalars=np.ascontiguousarray(scalars[tail]))


def prep_msm(syn: Synthesis, pk: ProvingKey, threads: int = 1) -> MsmPrep:
    """Density classes and the four splits by the compiled nogil host kernels (the query
    points' presence is read once per key): the same arrays as prep_msm_reference; both
    passes over ranges of variables on `threads` threads (host_threads)."""
    cls = syn.density if syn.density is not None else host_prep.density(syn.z, threads)
    a, b_g1, b_g2, l = (QuerySplit(*parts) for parts in host_prep.splits(cls, syn.z, pk, threads))
    return MsmPrep(density=cls, a=a, b_g1=b_g1, b_g2=b_g2, l=l)


def prep_msm_reference(syn: Synthesis, pk: ProvingKey) -> MsmPrep:
    cls = density(syn.z)
    ni = pk.num_inputs
    return MsmPrep(
        density=cls,
        a=_split(cls, syn.z, pk.a_query),
        b_g1=_split(cls, syn.z, pk.b_g1_query),
        b_g2=_split(cls, syn.z, pk.b_g2_query),
        l=_split(cls[ni:], syn.z[ni:], pk.l_query),
    )


def ntt_h(a: fr.FrArray, b: fr.FrArray, c: fr.FrArray) -> fr.FrArray:
    """h = (a*b - c) / Z as coefficients (prover.field.ntt.ntt_h, the reference's NTT-H)."""
    return REFERENCE.ntt_h(a, b, c)


_KEYS = compose.KeyPoints(REFERENCE)


def msm_g1(prep: MsmPrep, h: fr.FrArray, pk: ProvingKey) -> G1Msms:
    """H (plain MSM over h_0..h_{n-2}), and L, A, B_G1 each as batch addition + tail MSM:
    the composition (groth16/compose.py) over the CPU reference."""
    return settle(compose.msm_g1(REFERENCE, _KEYS, prep, h, pk))


def b_g2_msm(prep: MsmPrep, pk: ProvingKey) -> bytes:
    return settle(compose.b_g2_msm(REFERENCE, _KEYS, prep, pk))


def assemble(syn: Synthesis, g1: G1Msms, b_g2: bytes, pk: ProvingKey, r: int, s: int) -> Proof:
    """A = alpha + sum z_i u_i + r delta;  B = beta + sum z_i v_i + s delta (G2 and G1);
    C = sum_priv z_i L_i + h(tau) Z(tau)/delta + s A + r B1 - r s delta."""
    R, S = curve.Scalar(r % fr.R_MOD), curve.Scalar(s % fr.R_MOD)
    delta1, delta2 = curve.g1_from_bytes(pk.delta_g1), curve.g2_from_bytes(pk.delta_g2)
    a = curve.g1_from_bytes(pk.alpha_g1) + curve.g1_from_bytes(g1.a) + delta1 * R
    b2 = curve.g2_from_bytes(pk.beta_g2) + curve.g2_from_bytes(b_g2) + delta2 * S
    b1 = curve.g1_from_bytes(pk.beta_g1) + curve.g1_from_bytes(g1.b_g1) + delta1 * S
    c = curve.g1_from_bytes(g1.l) + curve.g1_from_bytes(g1.h) + a * S + b1 * R - delta1 * curve.Scalar(r * s % fr.R_MOD)
    return Proof(a=a, b=b2, c=c)


def randomisers(seed: int = 0, instance: int = 0, *, insecure_seeded: bool = False) -> tuple[int, int]:
    """Non-zero r, s blinding one proof, drawn from the OS's randomness (`secrets`), fresh for
    every call: without them a proof and the public key tell which witness it was made from.
    Only with ``insecure_seeded`` are they derived from (seed, instance) (seeded_randomisers)."""
    if insecure_seeded:
        return seeded_randomisers(seed, instance)
    return secrets.randbelow(fr.R_MOD - 1) + 1, secrets.randbelow(fr.R_MOD - 1) + 1


def seeded_randomisers(seed: int, instance: int) -> tuple[int, int]:
    """INSECURE: r, s derived from (seed, instance), so the same inputs give the same proof
    bytes (byte-equality tests across backends). The seed is public (recordings, `prove`
    output), so a proof made with these reveals its witness to anyone holding the key."""
    out = []
    for label in (b"r", b"s"):
        digest = hashlib.sha512(b"c2tui-randomiser:" + label + f":{seed}:{instance}".encode()).digest()
        out.append(int.from_bytes(digest, "little") % (fr.R_MOD - 1) + 1)
    return out[0], out[1]


def prove(circuit: Circuit, pk: ProvingKey, instance: int, r: int, s: int) -> Proof:
    syn = witness(circuit, instance)
    prep = prep_msm(syn, pk)
    h = ntt_h(*products(circuit, syn))
    return assemble(syn, msm_g1(prep, h, pk), b_g2_msm(prep, pk), pk, r, s)


def verify(vk: VerifyingKey, public_inputs: list[int], proof: Proof) -> bool:
    """e(A, B) == e(alpha, beta) e(IC(x), gamma) e(C, delta), by arkworks' pairing check
    of e(A, B) e(-alpha, beta) e(-IC(x), gamma) e(-C, delta) == 1."""
    if len(public_inputs) != vk.num_public or any(not 0 <= x < fr.R_MOD for x in public_inputs):
        return False
    ic = curve.g1_points(vk.ic)
    acc = ic[0]
    for point, x in zip(ic[1:], public_inputs):
        acc = acc + point * curve.Scalar(x)
    g1s = [proof.a, -curve.g1_from_bytes(vk.alpha_g1), -acc, -proof.c]
    g2s = [proof.b, curve.g2_from_bytes(vk.beta_g2), curve.g2_from_bytes(vk.gamma_g2), curve.g2_from_bytes(vk.delta_g2)]
    return bool(curve.GT.pairing_check(g1s, g2s))
