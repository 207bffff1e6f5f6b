"""A stand-in for Curio's cuzk daemon, built from its published schema (our proving.proto is
its own, field for field) and answering as its service.rs does today: every SRS HOT with size
0, pinned memory 0, CancelProof was_running=false and nothing cancelled, AwaitProof with no
regard for timeout_ms; and an HTTP /status in its status.rs shape. Its jobs follow a script a
test steps through (`advance()`), so what a watcher sees is known.
"""
from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc

from prover.cuzk import proving_pb2 as pb
from prover.cuzk.service import generic_handler

GIB = 1 << 30
# (synth_ms, gpu_ms, state) of the two partitions of job curio-42, one row a step
SCRIPT = [
    (("pending", None, None), ("pending", None, None)),
    (("synthesizing", 800, None), ("synthesizing", 700, None)),
    (("gpu", 21000, 900), ("synth_done", 20500, None)),
    (("done", 21000, 3700), ("gpu", 20500, 1200)),
    (("done", 21000, 3700), ("gpu", 20500, 3100)),
    (("done", 21000, 3700), ("done", 20500, 3750)),
]


class FakeCuzk:
    def __init__(self) -> None:
        self.step = 0
        self.cancels: list[str] = []

    def advance(self) -> None:
        self.step = min(self.step + 1, len(SCRIPT) - 1)

    # --- the status it reports ---------------------------------------------------------
    def _parts(self) -> tuple:
        return SCRIPT[self.step]

    def _on_gpu(self) -> int | None:
        return next((i for i, (s, _, _) in enumerate(self._parts()) if s == "gpu"), None)

    def snapshot(self) -> dict:
        parts = self._parts()
        on = self._on_gpu()
        return {
            "uptime_secs": 100.0 + self.step * 0.5,
            "memory": {"total_bytes": 256 * GIB, "used_bytes": 140 * GIB, "available_bytes": 116 * GIB},
            "synthesis": {"max_concurrent": 7, "active": sum(s == "synthesizing" for s, _, _ in parts)},
            "pipelines": [{"job_id": "curio-42", "proof_kind": "porep-c2", "started_secs_ago": 1.0 + self.step * 0.5,
                           "total_partitions": 2, "partitions_done": sum(s == "done" for s, _, _ in parts),
                           "partitions": [{"index": i, "state": s, "synth_ms": sm, "gpu_ms": gm}
                                          for i, (s, sm, gm) in enumerate(parts)]}],
            "gpu_workers": [{"worker_id": 0, "gpu_ordinal": 0, "state": "proving" if on is not None else "idle",
                             "current_job": "curio-42" if on is not None else None, "current_partition": on,
                             "busy_secs": 0.4 if on is not None else None}],
            "allocations": {"srs": [{"circuit_id": "porep-32g", "bytes": 47 * GIB, "last_used_secs_ago": 0.2,
                                     "evictable": False}], "pce": []},
            "counters": {"total_completed": 0, "total_failed": 0, "completed_by_kind": {}, "failed_by_kind": {},
                         "queue_depth": 1},
            "buffers": {"synth_in_flight": 1, "provers_in_flight": 1, "aux_in_flight": 0, "shells_in_flight": 0,
                        "pending_handles": 0},
        }

    # --- the RPCs, as cuzk's service.rs answers them ----------------------------------------
    def get_status(self, request: Any, context: Any) -> Any:
        on = self._on_gpu()
        return pb.GetStatusResponse(
            gpus=[pb.GPUStatus(ordinal=0, name="NVIDIA GeForce RTX 5070 Ti", vram_total_bytes=16 * GIB,
                               vram_free_bytes=(3 if on is not None else 15) * GIB,
                               current_job_id="curio-42" if on is not None else "",
                               current_proof_kind="porep-c2" if on is not None else "")],
            loaded_srs=[pb.SRSStatus(circuit_id="porep-32g", tier=pb.SRSStatus.HOT, size_bytes=0, ref_count=0)],
            queues=[pb.QueueStatus(proof_kind="porep-c2", pending=1, in_progress=1)],
            total_proofs_completed=0, total_proofs_failed=0, uptime_seconds=100,
            pinned_memory_bytes=0, pinned_memory_limit_bytes=0)

    def cancel_proof(self, request: Any, context: Any) -> Any:
        self.cancels.append(request.job_id)  # logged "not yet implemented" there; nothing happens
        return pb.CancelProofResponse(was_running=False)

    def await_proof(self, request: Any, context: Any) -> Any:
        threading.Event().wait(min(context.time_remaining() or 5.0, 5.0) + 0.5)  # blocks; timeout_ms ignored
        return pb.AwaitProofResponse(job_id=request.job_id)

    def __getattr__(self, name: str) -> Any:
        def unimplemented(request: Any, context: Any) -> Any:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"fake cuzk: {name}")
        return unimplemented


class FakeDaemon:
    """The fake on a Unix socket (gRPC) and loopback HTTP (/status)."""

    def __init__(self, sock: str) -> None:
        self.fake = FakeCuzk()
        self.grpc = grpc.server(ThreadPoolExecutor(max_workers=8), handlers=[generic_handler(self.fake)])
        self.grpc.add_insecure_port(f"unix:{sock}")
        self.address = f"unix://{sock}"
        fake = self.fake

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = json.dumps(fake.snapshot()).encode() if self.path == "/status" else b"404 Not Found\n"
                self.send_response(200 if self.path == "/status" else 404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.status_url = f"http://127.0.0.1:{self.http.server_address[1]}/status"

    def start(self) -> "FakeDaemon":
        self.grpc.start()
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.grpc.stop(0)
        self.http.shutdown()
        self.http.server_close()
