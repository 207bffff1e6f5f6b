"""Every RPC of cuzk.v1.ProvingEngine over a sim prover (real proofs), bad requests answered
with gRPC status codes (never a traceback), tokens and read-only rules, and many clients at
once losing no job."""
from __future__ import annotations

import threading
from pathlib import Path

import grpc
import pytest

from prover import events as ev
from prover.cuzk import proving_pb2 as pb
from prover.cuzk.server import CUZK_MAX_MESSAGE
from prover.cuzk.service import Stub
from prover.groth16 import phases as P
from prover.groth16.proof import Proof
from tests.cuzk.conftest import make_served

C2 = pb.POREP_SEAL_COMMIT


def _code(call, *a, **kw) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as e:
        call(*a, **kw)
    assert e.value.details() and "Traceback" not in e.value.details()
    return e.value.code()


def test_submit_await_gives_proofs_that_verify_with_timings(served) -> None:
    eng, srv, st, events = served
    r = st.SubmitProof(pb.SubmitProofRequest(request_id="j1", proof_kind=C2, vanilla_proof=b"sector 7"),
                       metadata=[("x-c2tui-client", "tester")])
    assert r.job_id == "j1" and r.assigned_gpu == "gpu0"
    a = st.AwaitProof(pb.AwaitProofRequest(job_id="j1"), timeout=120)
    assert a.status == pb.AwaitProofResponse.COMPLETED and len(a.proof) == 2 * 192
    assert a.total_ms >= a.queue_wait_ms and a.synthesis_ms > 0 and a.gpu_compute_ms > 0
    # the bytes are real proofs of the instances the request's bytes chose
    from prover.cuzk.kinds import instances
    circuit = P.make_circuit(8, 0)
    vk = eng.keys.entry(8).vk
    for i, seed in enumerate(instances(b"sector 7", [], 2)):
        assert P.verify(vk, P.synthesize(circuit, seed).public_ints(), Proof.from_bytes(a.proof[192 * i:192 * (i + 1)]))
    subs = [e for e in events if isinstance(e, ev.SectorSubmitted)]
    assert subs and subs[-1].source == "cuzk:tester"  # on the dashboard and in recordings, by name
    again = st.SubmitProof(pb.SubmitProofRequest(request_id="j1", proof_kind=C2, vanilla_proof=b"sector 7"))
    assert again.job_id == "j1" and len([e for e in events if isinstance(e, ev.SectorSubmitted)]) == len(subs)


def test_prove_status_metrics_and_keys(served) -> None:
    eng, srv, st, events = served
    r = st.Prove(pb.ProveRequest(submit=pb.SubmitProofRequest(proof_kind=pb.WINNING_POST, vanilla_proof=b"w")), timeout=120)
    assert r.result.status == pb.AwaitProofResponse.COMPLETED and len(r.result.proof) == 192
    s = st.GetStatus(pb.GetStatusRequest())
    assert s.gpus[0].name and s.gpus[0].vram_total_bytes > 0 and s.total_proofs_completed == 1
    assert {q.proof_kind for q in s.queues} == {"porep-c2", "window-post", "winning-post"}
    hot = {x.circuit_id: x for x in s.loaded_srs}
    assert hot["winning-2^8"].tier == pb.SRSStatus.HOT and hot["winning-2^8"].size_bytes > 0
    assert "c2tui_run_info" in st.GetMetrics(pb.GetMetricsRequest()).prometheus_text
    e = st.EvictSRS(pb.EvictSrsRequest(circuit_id="winning-32g"))
    assert e.was_loaded and e.freed_bytes == hot["winning-2^8"].size_bytes
    assert st.GetStatus(pb.GetStatusRequest()).loaded_srs[0].tier == pb.SRSStatus.COLD
    assert not st.EvictSRS(pb.EvictSrsRequest(circuit_id="winning-32g")).was_loaded
    p = st.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-2^8"))
    assert not p.already_loaded and st.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-2^8")).already_loaded
    assert any(isinstance(x, ev.KeyEvicted) and "EvictSRS" in x.reason for x in events)
    assert _code(st.PreloadSRS, pb.PreloadSrsRequest(circuit_id="snap-32g")) == grpc.StatusCode.INVALID_ARGUMENT


def test_bad_requests_get_status_codes(served) -> None:
    eng, srv, st, events = served
    bad = grpc.StatusCode.INVALID_ARGUMENT
    assert _code(st.SubmitProof, pb.SubmitProofRequest(proof_kind=9, vanilla_proof=b"x")) == bad
    assert _code(st.SubmitProof, pb.SubmitProofRequest(proof_kind=pb.SNAP_DEALS_UPDATE, vanilla_proof=b"x")) == bad
    assert _code(st.SubmitProof, pb.SubmitProofRequest(proof_kind=C2)) == bad  # empty bytes
    assert _code(st.SubmitProof, pb.SubmitProofRequest(proof_kind=C2, vanilla_proof=b"x", priority=9)) == bad
    assert _code(st.Prove, pb.ProveRequest()) == bad
    assert _code(st.AwaitProof, pb.AwaitProofRequest(job_id="nope")) == grpc.StatusCode.NOT_FOUND
    assert _code(st.CancelProof, pb.CancelProofRequest(job_id="nope")) == grpc.StatusCode.NOT_FOUND
    big = pb.SubmitProofRequest(proof_kind=C2, vanilla_proof=b"\0" * (300 << 20))  # over cuzk's 256 MiB too
    assert _code(st.SubmitProof, big) == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert st.GetStatus(pb.GetStatusRequest()).gpus  # and the server goes on


def test_cancel_a_queued_job_and_a_running_one(served) -> None:
    eng, srv, st, events = served
    eng.controller.set("paused", True)  # nothing starts: both wait
    a = st.SubmitProof(pb.SubmitProofRequest(proof_kind=C2, vanilla_proof=b"a"))
    b = st.SubmitProof(pb.SubmitProofRequest(proof_kind=C2, vanilla_proof=b"b", priority=pb.HIGH))
    assert b.queue_position == 0 and st.SubmitProof(
        pb.SubmitProofRequest(proof_kind=C2, vanilla_proof=b"c", priority=pb.LOW)).queue_position == 4
    assert not st.CancelProof(pb.CancelProofRequest(job_id=a.job_id)).was_running
    assert st.AwaitProof(pb.AwaitProofRequest(job_id=a.job_id, timeout_ms=10000)).status == pb.AwaitProofResponse.CANCELLED
    t = st.AwaitProof(pb.AwaitProofRequest(job_id=b.job_id, timeout_ms=50))
    assert t.status == pb.AwaitProofResponse.TIMEOUT
    eng.controller.set("paused", False)
    started = threading.Event()
    eng.add_sink(lambda e: started.set() if isinstance(e, ev.PhaseStart) and e.part.startswith(f"s{srv.table.get(b.job_id).sector}p") else None)
    assert started.wait(60)
    assert st.CancelProof(pb.CancelProofRequest(job_id=b.job_id)).was_running
    assert st.AwaitProof(pb.AwaitProofRequest(job_id=b.job_id, timeout_ms=60000)).status == pb.AwaitProofResponse.CANCELLED
    assert any(isinstance(e, ev.JobAction) and e.source.startswith("cuzk:") for e in events)


def test_tcp_needs_the_token_and_the_readonly_token_only_reads(tmp_path: Path, key_cache: Path) -> None:
    full, ro = "f" * 24, "r" * 24
    eng, srv, _ = make_served(tmp_path, key_cache, address="127.0.0.1:0", token=full, readonly_token=ro)
    try:
        st = Stub(grpc.insecure_channel(srv.target))
        req = pb.SubmitProofRequest(proof_kind=C2, vanilla_proof=b"x")
        assert _code(st.GetStatus, pb.GetStatusRequest()) == grpc.StatusCode.UNAUTHENTICATED
        assert _code(st.GetStatus, pb.GetStatusRequest(), metadata=[("authorization", "Bearer " + "x" * 24)]) == \
            grpc.StatusCode.UNAUTHENTICATED
        assert st.GetStatus(pb.GetStatusRequest(), metadata=[("authorization", "Bearer " + ro)]).gpus
        assert _code(st.SubmitProof, req, metadata=[("authorization", "Bearer " + ro)]) == grpc.StatusCode.PERMISSION_DENIED
        assert st.SubmitProof(req, metadata=[("authorization", "Bearer " + full)]).job_id
    finally:
        srv.close()
        eng.stop(timeout=20)


def test_twenty_clients_submitting_and_awaiting_lose_no_job(tmp_path: Path, key_cache: Path) -> None:
    eng, srv, events = make_served(tmp_path, key_cache, serve_only=False, config={"workers_per_gpu": 2})
    got: dict[str, int] = {}
    lock = threading.Lock()

    def client(i: int) -> None:
        st = Stub(grpc.insecure_channel(srv.target))
        for j in range(2):
            rid = f"c{i}-{j}"
            st.SubmitProof(pb.SubmitProofRequest(request_id=rid, proof_kind=C2, vanilla_proof=rid.encode(),
                                                 priority=pb.HIGH))
            r = st.AwaitProof(pb.AwaitProofRequest(job_id=rid), timeout=240)
            with lock:
                got[rid] = r.status if len(r.proof) == 384 else -1
    try:
        threads = [threading.Thread(target=client, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    finally:
        srv.close()
        eng.stop(timeout=30)
    assert len(got) == 40 and set(got.values()) == {pb.AwaitProofResponse.COMPLETED}
    own = [e for e in events if isinstance(e, ev.SectorSubmitted) and not (e.source or "").startswith("cuzk:")]
    assert own  # the run's own sectors went on beside them
