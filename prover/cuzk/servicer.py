"""The RPCs of cuzk.v1.ProvingEngine over c2tui's engine (docs/cuzk.md).

Every handler answers a gRPC status code with one line on bad input or a refusal, never a
traceback (`_answer` turns any other exception into INTERNAL with its one line). What a
client causes goes through the engine's own doors and is recorded with its source
`cuzk:CLIENT`: a job is a sector (SectorSubmitted), a cancel the controller's job action
(JobAction), a preload or evict a key load or eviction beside a Note naming the client.
"""
from __future__ import annotations

import functools
import threading
import time
import uuid
from typing import Any, Callable

import grpc
from prometheus_client import generate_latest

from prover import events as ev
from prover import placement
from prover.cuzk import proving_pb2 as pb
from prover.cuzk.jobs import CANCELLED, COMPLETED, FAILED, Job, JobTable
from prover.cuzk.kinds import PRIORITIES, KindError, circuit_id, instances, kind_of, parse_circuit, partitions_of, priority_of
from prover.cuzk.status_rpc import status_response

MAX_REQUEST_ID = 128
STATUS = {COMPLETED: pb.AwaitProofResponse.COMPLETED, "failed": pb.AwaitProofResponse.FAILED,
          CANCELLED: pb.AwaitProofResponse.CANCELLED}


class Refused(Exception):
    """A request answered with a gRPC status code and one line."""

    def __init__(self, code: grpc.StatusCode, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text


def _answer(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(self: "Servicer", request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return fn(self, request, context)
        except Refused as r:
            context.abort(r.code, r.text)
        except KindError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except Exception as exc:  # a bug here must not print a traceback into the operator's terminal
            context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}"[:300])
    return run


def client_of(context: grpc.ServicerContext) -> str:
    """The caller's name: x-c2tui-client metadata (64 printable characters), else its peer."""
    for k, v in context.invocation_metadata() or ():
        if k == "x-c2tui-client" and isinstance(v, str) and 0 < len(v) <= 64 and v.isprintable():
            return v
    peer = context.peer() or "?"
    return "local" if peer.startswith("unix:") else peer.split(":", 1)[-1][:64]


class Servicer:
    def __init__(self, engine: Any, table: JobTable, fold: Any, max_open_jobs: int = 256) -> None:
        self.engine, self.table, self.fold = engine, table, fold
        self.max_open_jobs = max_open_jobs
        cfg = engine.config
        self.sizes = {name: z.log2 for name, z in cfg.class_sizes.items()}
        self._submit_lock = threading.Lock()  # one job queued at a time: its SectorSubmitted binds it

    # --- jobs -----------------------------------------------------------------------------
    @_answer
    def submit_proof(self, request: Any, context: grpc.ServicerContext) -> Any:
        job = self._submit(request, client_of(context))
        return self._submitted(job)

    @_answer
    def await_proof(self, request: Any, context: grpc.ServicerContext) -> Any:
        job = self._job(request.job_id)
        timeout = None if request.timeout_ms == 0 else request.timeout_ms / 1000.0
        self.table.wait(job, timeout, context.is_active)
        return self._result(job)

    @_answer
    def prove(self, request: Any, context: grpc.ServicerContext) -> Any:
        if not request.HasField("submit"):
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "ProveRequest without its submit field")
        client = client_of(context)
        job = self._submit(request.submit, client)
        if not self.table.wait(job, None, context.is_active) and not job.done:
            self._cancel(job, client, "its Prove caller went away")  # nobody is left to take the proof
        return pb.ProveResponse(result=self._result(job))

    @_answer
    def cancel_proof(self, request: Any, context: grpc.ServicerContext) -> Any:
        job = self._job(request.job_id)
        return pb.CancelProofResponse(was_running=self._cancel(job, client_of(context), "CancelProof"))

    # --- status ---------------------------------------------------------------------------
    @_answer
    def get_status(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.fold.folding() as f:
            return status_response(f.state, self.table, self.engine.keys, self.sizes)

    @_answer
    def get_metrics(self, request: Any, context: grpc.ServicerContext) -> Any:
        text = generate_latest(self.fold.registry).decode()  # its collector folds what is queued first
        return pb.GetMetricsResponse(prometheus_text=text)

    # --- keys -----------------------------------------------------------------------------
    @_answer
    def preload_srs(self, request: Any, context: grpc.ServicerContext) -> Any:
        kind, log2, keys = self._key(request.circuit_id)
        before = {k[0]: k[1] for k in keys.entries()}.get(log2)
        t0 = time.monotonic()
        try:
            how = keys.preload(log2)
        except Exception as exc:  # KeyDoesNotFit (with the sizes), Stopped
            code = grpc.StatusCode.UNAVAILABLE if type(exc).__name__ == "Stopped" else grpc.StatusCode.RESOURCE_EXHAUSTED
            raise Refused(code, f"key 2^{log2}: {exc or 'the prover is stopping'}"[:300]) from None
        took = time.monotonic() - t0
        loaded = before == "hot" and not how
        self.engine.emit(ev.Note, level="info", text=(
            f"cuzk:{client_of(context)} PreloadSRS {circuit_id(kind, log2)}: key 2^{log2} "
            + ("already hot" if loaded else f"{how or 'hot'} in {took:.2f}s")))
        return pb.PreloadSrsResponse(already_loaded=loaded, load_time_ms=0 if loaded else int(took * 1000))

    @_answer
    def evict_srs(self, request: Any, context: grpc.ServicerContext) -> Any:
        kind, log2, keys = self._key(request.circuit_id)
        who = f"cuzk:{client_of(context)}"
        try:
            freed = keys.evict(log2, f"EvictSRS {circuit_id(kind, log2)} from {who}")
        except ValueError as exc:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, f"EvictSRS {request.circuit_id}: {exc}") from None
        if not freed:
            self.engine.emit(ev.Note, level="info", text=f"{who} EvictSRS {circuit_id(kind, log2)}: key 2^{log2} was not loaded")
        return pb.EvictSrsResponse(was_loaded=freed > 0, freed_bytes=freed)

    # --- the parts --------------------------------------------------------------------------
    def _key(self, text: str) -> tuple[Any, int, Any]:
        kind, log2 = parse_circuit(text, self.sizes)
        keys = getattr(self.engine, "keys", None)
        if keys is None or not hasattr(keys, "entries"):
            raise Refused(grpc.StatusCode.UNAVAILABLE, "the prover is still starting: its keys are not set up yet")
        return kind, log2, keys

    def _job(self, job_id: str) -> Job:
        job = self.table.get(job_id)
        if job is None:
            raise Refused(grpc.StatusCode.NOT_FOUND, f"no job {job_id[:MAX_REQUEST_ID]!r} here "
                          "(never submitted, or finished and forgotten)")
        return job

    def _submit(self, req: Any, client: str) -> Job:
        kind = kind_of(req.proof_kind)
        priority = priority_of(kind, req.priority)
        seeds = instances(req.vanilla_proof, list(req.vanilla_proofs), partitions_of(kind, self.engine.config.partitions))
        rid = req.request_id
        if len(rid) > MAX_REQUEST_ID or not rid.isprintable():
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, f"request_id: at most {MAX_REQUEST_ID} printable characters")
        # the look-up, the bound and the add in one step: two submits of one request_id at once
        # each found none and each queued a sector, the second job replacing the first in the
        # table (its partitions orphaned, the open count off by one for ever; random schedules,
        # tests/cuzk/test_job_table_schedules.py)
        with self._submit_lock:
            old = self.table.get(rid) if rid else None
            if old is not None:  # the idempotency key: the same request gets the same job
                if old.kind != kind:
                    raise Refused(grpc.StatusCode.ALREADY_EXISTS, f"request_id {rid!r} is a {old.kind.name} job already")
                return old
            if self.engine.finished or self.table.ended is not None:
                raise Refused(grpc.StatusCode.UNAVAILABLE, "the prover has stopped")
            if self.table.open_jobs() >= self.max_open_jobs:
                raise Refused(grpc.StatusCode.RESOURCE_EXHAUSTED,
                              f"{self.max_open_jobs} jobs queued or running already (--grpc-max-jobs); try again later")
            job = Job(job_id=rid or uuid.uuid4().hex[:16], request_id=rid, kind=kind, client=client,
                      priority=priority, source=f"cuzk:{client}")
            self.table.add(job)
            self.table.expect(job)
            try:
                self.engine.submit_sector(len(seeds), source=job.source, cls=kind.cls, instances=seeds,
                                          priority=priority, on_proof=self.table.proof)
            except Exception as exc:
                self.table.drop(job)
                raise Refused(grpc.StatusCode.UNAVAILABLE, f"the prover did not take the job: {exc}"[:300]) from None
            finally:
                self.table.expect(None)
        self.engine.emit(ev.Note, level="info", text=(
            f"cuzk:{client} job {job.job_id}: {kind.name}, {len(seeds)} partition(s), priority "
            f"{PRIORITIES[priority]} -> sector s{job.sector}"))
        return job

    def _submitted(self, job: Job) -> Any:
        pos = self.engine.queue_position(job.parts[0]) if job.parts and not job.done else None
        return pb.SubmitProofResponse(job_id=job.job_id, queue_position=pos or 0, assigned_gpu=self._gpu_for(job))

    def _gpu_for(self, job: Job) -> str:
        """The GPU it will run on where that is fixed (one GPU, or its class pinned to one)."""
        n = self.engine.config.n_gpus
        if n == 1:
            return "gpu0"
        pin = placement.parse(self.engine.controller.snapshot().class_gpus).pin(job.kind.cls)
        return f"gpu{next(iter(pin.gpus))}" if pin is not None and len(pin.gpus) == 1 else ""

    def _result(self, job: Job) -> Any:
        if not job.done:
            return pb.AwaitProofResponse(job_id=job.job_id, status=pb.AwaitProofResponse.TIMEOUT,
                                         error_message="the job has not ended yet")
        proof = job.proof_bytes() if job.outcome == COMPLETED else b""
        return pb.AwaitProofResponse(job_id=job.job_id, status=STATUS[job.outcome or FAILED], proof=proof,
                                     error_message=job.error, **job.timings_ms())

    def _cancel(self, job: Job, client: str, why: str) -> bool:
        """Cancel its sector through the controller; True when a partition of it was in flight."""
        if job.done:
            return False
        running = any(self.engine.queue_position(p) is None for p in self.table.left_of(job))
        try:
            self.engine.controller.job("cancel", f"s{job.sector}", source=f"cuzk:{client}")
        except ValueError:  # it ended meanwhile: nothing left to cancel
            return False
        if why != "CancelProof":
            self.engine.emit(ev.Note, level="warn", text=f"cuzk:{client} job {job.job_id} cancelled: {why}")
        return running
