"""Proof bytes for fixed seeds, the refactor's yardstick (issue 23: same bytes before and after).

    python -m tests.backends.proof_bytes            # print the bytes of the current code
    python -m tests.backends.proof_bytes --write    # record them into fixtures/proof_bytes.json

Keys come from the explicit insecure seeded setup and r, s from the seeded randomisers: the only
way a proof's bytes are reproducible (a real proof draws them from the OS).
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any, Callable

FIXTURE = Path(__file__).with_name("fixtures") / "proof_bytes.json"
SIZES = (10, 11, 12, 13, 14)
SEED, INSTANCE = 7, 3

Prove = Callable[[Any, Any, int, int, int], Any]  # (circuit, pk, instance, r, s) -> Proof


def proof_hex(k: int, prove: Prove | None = None, key_dir: Path | None = None) -> str:
    """The 192-byte compressed proof of INSTANCE of the 2^k circuit for SEED, as hex."""
    from prover.groth16 import phases as P

    circuit = P.make_circuit(k, SEED)
    with tempfile.TemporaryDirectory() as tmp:
        pk, _vk = P.load_or_setup(circuit, SEED, key_dir or Path(tmp), insecure_seeded=True)
    r, s = P.seeded_randomisers(SEED, INSTANCE)  # the explicit insecure path: fixed bytes
    proof = (prove or P.prove)(circuit, pk, INSTANCE, r, s)
    return proof.to_bytes().hex()


def recorded() -> dict[str, str]:
    return json.loads(FIXTURE.read_text())["proofs"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="record into " + str(FIXTURE))
    args = ap.parse_args()
    proofs = {str(k): proof_hex(k) for k in SIZES}
    for k, h in proofs.items():
        print(k, h)
    if args.write:
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(json.dumps({"seed": SEED, "instance": INSTANCE, "what": (
            "compressed Groth16 proof bytes (A||B||C) of the 2^k circuit, seeded setup and randomisers, "
            "CPU reference; recorded before the issue-23 refactor, re-recorded in issue 37 (the circuit's "
            "digest, from which the seeded toxic waste is derived, now hashes the compact matrices; the "
            "matrices themselves are unchanged)"), "proofs": proofs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
