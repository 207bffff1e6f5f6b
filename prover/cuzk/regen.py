"""Make prover/cuzk/proving_pb2.py (and its .pyi) from proto/cuzk/v1/proving.proto with
grpcio-tools' protoc: `python -m prover.cuzk.regen [--check]`.

The generated modules are committed (a run needs only grpcio and protobuf, never the
compiler); tests/cuzk/test_schema.py regenerates them and fails if a byte differs, so the
committed code is always what the committed .proto gives. Only the messages are generated:
the server and our client bind the service's methods from its descriptor
(prover/cuzk/service.py), so no *_pb2_grpc module with its absolute imports is needed.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE / "proto"
PROTO = "cuzk/v1/proving.proto"
OUTPUTS = ("proving_pb2.py", "proving_pb2.pyi")


def generate(out_dir: Path) -> dict[str, bytes]:
    """protoc's output for the .proto, by file name (written under out_dir)."""
    from grpc_tools import protoc  # the test extra's compiler; never needed at run time

    rc = protoc.main(["protoc", f"-I{PROTO_ROOT}", f"--python_out={out_dir}", f"--pyi_out={out_dir}", PROTO])
    if rc != 0:
        raise RuntimeError(f"protoc failed on {PROTO} (exit {rc})")
    gen = out_dir / "cuzk" / "v1"
    return {name: (gen / name).read_bytes() for name in OUTPUTS}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    with tempfile.TemporaryDirectory() as tmp:
        made = generate(Path(tmp))
    stale = [n for n, data in made.items() if not (HERE / n).is_file() or (HERE / n).read_bytes() != data]
    if check:
        for n in stale:
            print(f"prover/cuzk/{n} is not what {PROTO} gives: run python -m prover.cuzk.regen", file=sys.stderr)
        return 1 if stale else 0
    for n, data in made.items():
        (HERE / n).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
