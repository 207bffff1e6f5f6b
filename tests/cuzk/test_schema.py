"""The .proto is cuzk's schema and the committed generated code is what it gives."""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from prover.cuzk import proving_pb2 as pb
from prover.cuzk import regen
from prover.cuzk.service import METHODS

# sha256 of the serialized FileDescriptorProto that protoc makes from Curio's own
# extern/cuzk/cuzk-proto/proto/cuzk/v1/proving.proto at 3f74a5cd125636bf0de19bd0109085ad92c1975a
# (unchanged at e0294b0f..., 2026-08-20): every name, number, type and order the same (comments
# are not part of a descriptor). Computed once with grpcio-tools 1.85.1's protoc.
CUZK_DESCRIPTOR_SHA256 = "78343781046daf13b5324223d05830d0b0119b6824c0d73587b6b7a1ec599609"


def test_the_schema_is_cuzks_field_for_field() -> None:
    assert hashlib.sha256(pb.DESCRIPTOR.serialized_pb).hexdigest() == CUZK_DESCRIPTOR_SHA256
    assert pb.DESCRIPTOR.package == "cuzk.v1"
    assert list(METHODS) == ["SubmitProof", "AwaitProof", "Prove", "CancelProof", "GetStatus", "GetMetrics",
                             "PreloadSRS", "EvictSRS"]
    f = pb.AwaitProofResponse.DESCRIPTOR.fields_by_name
    assert {n: f[n].number for n in ("queue_wait_ms", "srs_load_ms", "synthesis_ms", "gpu_compute_ms", "total_ms")} == {
        "queue_wait_ms": 10, "srs_load_ms": 11, "synthesis_ms": 12, "gpu_compute_ms": 13, "total_ms": 14}


def test_the_committed_generated_code_is_what_the_proto_gives() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        made = regen.generate(Path(tmp))
    for name, data in made.items():
        assert (regen.HERE / name).read_bytes() == data, f"prover/cuzk/{name} is stale: python -m prover.cuzk.regen"
