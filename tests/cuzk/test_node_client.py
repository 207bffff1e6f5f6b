"""A client that is not ours: Node's @grpc/grpc-js loading our .proto with @grpc/proto-loader
(another gRPC and protobuf implementation end to end) submits a C2 job, awaits it, and the
proof bytes it got verify with `c2tui verify` (laid out by `c2tui cuzk-proof`); it reads
GetStatus and cancels a queued job (CANCELLED on await).

.ci/run installs the two packages, pinned, into .ci/node/grpc and sets C2TUI_GRPC_NODE to that
folder and C2TUI_REQUIRE_GRPC_NODE=1: then a missing node fails the test instead of skipping it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cuzk.conftest import make_served

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "prover" / "cuzk" / "proto" / "cuzk" / "v1" / "proving.proto"
SCRIPT = Path(__file__).with_name("node_client.js")


def _node_modules() -> Path | None:
    where = Path(os.environ.get("C2TUI_GRPC_NODE", ROOT / ".ci" / "node" / "grpc")) / "node_modules"
    node = shutil.which("node")
    if node and (where / "@grpc" / "grpc-js").is_dir() and (where / "@grpc" / "proto-loader").is_dir():
        return where
    if os.environ.get("C2TUI_REQUIRE_GRPC_NODE"):
        pytest.fail(f"node or @grpc/grpc-js + @grpc/proto-loader missing under {where} (.ci/run installs them)")
    pytest.skip("node, @grpc/grpc-js or @grpc/proto-loader not installed (.ci/run installs them into .ci/node/grpc)")
    return None


def test_a_node_grpc_js_client_proves_verifies_reads_status_and_cancels(tmp_path: Path, key_cache: Path) -> None:
    modules = _node_modules()
    eng, srv, _events = make_served(tmp_path, key_cache, config={"time_scale": 0.5})
    try:
        out = subprocess.run(["node", str(SCRIPT), srv.target, str(PROTO), str(tmp_path)], capture_output=True,
                             text=True, timeout=300, env={**os.environ, "NODE_PATH": str(modules)})
    finally:
        srv.close()
        eng.stop(timeout=20)
    assert out.returncode == 0, out.stderr[-2000:]
    said = {d["what"]: d for d in map(json.loads, out.stdout.splitlines())}
    assert said["submit"]["job_id"] == "node-c2" and said["submit"]["assigned_gpu"] == "gpu0"
    done = said["await"]
    assert done["status"] == "COMPLETED" and done["bytes"] == 2 * 192  # two partitions, 192 compressed bytes each
    assert done["total_ms"] >= done["synthesis_ms"] > 0 and done["gpu_compute_ms"] > 0
    st = said["status"]
    assert st["gpus"][0]["name"] and int(st["gpus"][0]["vram_total_bytes"]) > 0 and st["completed"] == 1
    assert {s["circuit_id"] for s in st["loaded_srs"]} >= {"porep-2^8"} and len(st["queues"]) == 3
    assert said["cancel"] == {"what": "cancel", "queue_position": said["cancel"]["queue_position"],
                              "was_running": False, "status": "CANCELLED"}
    assert said["unknown"]["code"] == 5  # NOT_FOUND

    # the bytes it got: laid out and checked by our verifier, as an operator would
    c2tui = [sys.executable, "-m", "c2tui"]
    lay = subprocess.run([*c2tui, "cuzk-proof", str(tmp_path / "request.bin"), str(tmp_path / "proof.bin"),
                          "--constraints-log2", "8", "--cache-dir", str(key_cache), "--insecure-seeded-setup",
                          "--out", str(tmp_path / "v")], capture_output=True, text=True, timeout=120)
    assert lay.returncode == 0, lay.stderr
    for part in ("p0", "p1"):
        v = subprocess.run([*c2tui, "verify", str(tmp_path / "v" / part)], capture_output=True, text=True, timeout=120)
        assert v.returncode == 0 and "valid" in v.stderr, v.stderr
