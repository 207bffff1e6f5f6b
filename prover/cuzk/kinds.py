"""cuzk's proof kinds and priorities against c2tui's proof classes (prover/classes.py).

PoRep C2 is our `c2`, a WindowPoSt partition our `window`, a WinningPoSt our `winning`;
SnapDeals has no class here and is refused. The names are cuzk's own: its Display names in
QueueStatus.proof_kind and GPUStatus.current_proof_kind, its circuit ids' prefixes in
SRSStatus.circuit_id (with our circuit's size for cuzk's sector size: `porep-2^14`).
Priority orders partitions within a class (cuzk orders one queue by priority; ours serves the
classes in their order first, which cuzk's defaults agree with: winning CRITICAL, window
HIGH, c2 NORMAL).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from prover.classes import CLASSES


@dataclass(frozen=True)
class Kind:
    proto: int  # ProofKind's number
    cls: str  # our proof class
    name: str  # cuzk's Display name (porep-c2, ...)
    srs: str  # cuzk's circuit id prefix (porep, wpost, winning)
    default_priority: int


KINDS: tuple[Kind, ...] = (
    Kind(1, "c2", "porep-c2", "porep", 2),
    Kind(3, "window", "window-post", "wpost", 3),
    Kind(4, "winning", "winning-post", "winning", 4),
)
BY_PROTO = {k.proto: k for k in KINDS}
BY_CLASS = {k.cls: k for k in KINDS}
BY_SRS = {k.srs: k for k in KINDS}
PRIORITIES = {1: "LOW", 2: "NORMAL", 3: "HIGH", 4: "CRITICAL"}
SNAP = 2  # SNAP_DEALS_UPDATE: no such class here
MAX_PARTITIONS = 64  # vanilla_proofs beyond this is refused (a sector has at most 10 partitions in Filecoin)


class KindError(ValueError):
    """A request names what this prover cannot do; the message says what it accepts."""


def kind_of(proto: int) -> Kind:
    k = BY_PROTO.get(proto)
    if k is None:
        what = "SNAP_DEALS_UPDATE has no circuit here" if proto == SNAP else f"unknown proof_kind {proto}"
        raise KindError(f"{what}; this prover takes POREP_SEAL_COMMIT (1), WINDOW_POST_PARTITION (3), WINNING_POST (4)")
    return k


def priority_of(kind: Kind, proto_priority: int) -> int:
    """1..4; UNSPECIFIED (0) is the kind's default, as cuzk does; anything else is refused."""
    if proto_priority == 0:
        return kind.default_priority
    if proto_priority not in PRIORITIES:
        raise KindError(f"unknown priority {proto_priority}; use LOW (1), NORMAL (2), HIGH (3), CRITICAL (4)")
    return proto_priority


def instances(vanilla: bytes, per_partition: list[bytes], partitions: int) -> list[int]:
    """Each partition's witness seed from the request's bytes: one a `vanilla_proofs` entry, or
    `partitions` of them from `vanilla_proof` (blake2b of the bytes and the index, 63 bits).
    We prove our own circuit family, so the bytes choose the instance, not a Filecoin witness."""
    if per_partition:
        if len(per_partition) > MAX_PARTITIONS:
            raise KindError(f"{len(per_partition)} vanilla_proofs; at most {MAX_PARTITIONS} partitions a job")
        if any(not b for b in per_partition):
            raise KindError("an empty entry in vanilla_proofs")
        return [seed_of(b, 0) for b in per_partition]
    if not vanilla:
        raise KindError("empty vanilla_proof (and no vanilla_proofs): nothing to seed the proof with")
    return [seed_of(vanilla, i) for i in range(partitions)]


def seed_of(data: bytes, index: int) -> int:
    h = hashlib.blake2b(digest_size=8, person=b"c2tui-cuzk")
    h.update(index.to_bytes(4, "little"))
    h.update(data)
    return int.from_bytes(h.digest(), "little") >> 1


def partitions_of(kind: Kind, run_partitions: int) -> int:
    return CLASSES[kind.cls].partitions or run_partitions


def circuit_id(kind: Kind, log2: int) -> str:
    return f"{kind.srs}-2^{log2}"


_CIRCUIT = re.compile(r"^(porep|wpost|winning|snap)-(?:2\^(\d+)|(\d+)(?:g|gib|m|mib|k|kib))$")


def parse_circuit(text: str, sizes: dict[str, int]) -> tuple[Kind, int]:
    """`porep-2^14` (ours) or cuzk's `porep-32g` (any sector size: we prove one circuit a
    class) -> (kind, its key's log2 here). KindError naming what exists otherwise."""
    m = _CIRCUIT.match(text.strip().lower())
    known = ", ".join(circuit_id(k, sizes[k.cls]) for k in KINDS)
    if not m or m.group(1) == "snap":
        raise KindError(f"unknown circuit_id {text[:64]!r}; this prover has {known} (cuzk's porep-32g etc. name them too)")
    kind = BY_SRS[m.group(1)]
    log2 = sizes[kind.cls]
    if m.group(2) is not None and int(m.group(2)) != log2:
        raise KindError(f"no circuit {text!r} here: {kind.srs} is 2^{log2} on this prover ({known})")
    return kind, log2
