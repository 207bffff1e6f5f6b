"""A job's proof bytes laid out for `c2tui verify`: one snarkjs directory per partition.

A cuzk client holds what it sent (the request's vanilla bytes) and what came back (the
proof bytes: 192 compressed bytes a partition). The verifier needs each partition's public
inputs and the verifying key. The public inputs are recomputed here from the request's
bytes (each partition's witness seed, prover/cuzk/kinds.py) and the circuit (size, seed), as
the prover made them; the verifying key is read from the key cache the prover used (never
set up anew: a fresh key would verify nothing of the prover's). Then `c2tui verify DIR/pN`
checks each proof with its pairing, as for `c2tui prove`'s output.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prover.cuzk.kinds import instances
from prover.groth16.proof import PROOF_BYTES, Proof


class ProofDirError(ValueError):
    """The bytes or the key cache cannot be laid out; the message says which and why."""


def split_proofs(data: bytes) -> list[Proof]:
    if not data or len(data) % PROOF_BYTES:
        raise ProofDirError(f"proof bytes: {len(data)} is not a whole number of {PROOF_BYTES}-byte proofs")
    try:
        return [Proof.from_bytes(data[i:i + PROOF_BYTES]) for i in range(0, len(data), PROOF_BYTES)]
    except ValueError as exc:
        raise ProofDirError(f"proof bytes: {exc}") from None


def cached_vk(circuit: Any, cache_dir: Path, insecure_seed: int | None) -> Any:
    """The newest intact key of the circuit in the cache (the one the engine loads)."""
    from prover.groth16.key_cache import cached_keys, load_keys

    for path in cached_keys(circuit, cache_dir, insecure_seed):
        try:
            return load_keys(path, circuit)[1]
        except Exception:  # a damaged file: the engine would skip it too
            continue
    raise ProofDirError(f"no key for the 2^{circuit.constraints_log2} circuit (seed {circuit.seed}) in {cache_dir}: "
                        "give the prover's --cache-dir (and --insecure-seeded-setup if it used one)")


def proof_dirs(request: bytes, proof: bytes, log2: int, seed: int, cache_dir: Path,
               insecure_seeded_setup: bool = False, per_partition: list[bytes] | None = None) -> list[list[tuple[str, bytes]]]:
    """Each partition's (file name, bytes) of a snarkjs directory, in partition order."""
    from prover.groth16 import phases as P
    from prover.groth16.export import dir_files

    proofs = split_proofs(proof)
    seeds = instances(request, per_partition or [], len(proofs))
    if len(seeds) != len(proofs):
        raise ProofDirError(f"{len(proofs)} proofs for {len(seeds)} vanilla_proofs entries")
    circuit = P.make_circuit(log2, seed)
    vk = cached_vk(circuit, cache_dir, seed if insecure_seeded_setup else None)
    return [dir_files(pr, vk, P.synthesize(circuit, inst).public_ints()) for pr, inst in zip(proofs, seeds)]
