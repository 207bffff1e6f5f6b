"""The jobs cuzk clients submitted, fed by the engine's events: their partitions, proofs,
timings and end.

The table is one of the engine's sinks (`JobTable.sink`): it reads only the events of
partitions it knows (a dict lookup, under its own lock, never a call into the engine), so
the prover never waits on it. A client waits in `wait(job, timeout)` on the table's
condition; a job ends when each of its partitions is done (PartitionDone) or cancelled
(PartitionCancelled), or when the run ends. Finished jobs are kept for their clients to
collect, the oldest forgotten past KEEP_FINISHED; jobs not yet finished are bounded by the
server (MAX_OPEN_JOBS).

Timings, in milliseconds, from our phases (cuzk's AwaitProofResponse fields): queue_wait from
submission to the first phase of its first partition; srs_load the partitions' waits for
their key (KeyWait); synthesis the partitions' synthesis, summed; gpu_compute their GPU
phases (pre-stage, NTT-H, MSM, and B over G2 where it ran on the GPU), summed; total from
submission to the last partition's end.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from prover.cuzk.kinds import Kind

KEEP_FINISHED = 1024
GPU_PHASES = frozenset({"prestage", "ntt_h", "msm"})
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"


@dataclass
class Job:
    job_id: str
    request_id: str
    kind: Kind
    client: str
    priority: int
    source: str = ""  # the SectorSubmitted source its sector is queued with (cuzk:CLIENT)
    sector: int = -1
    parts: list[str] = field(default_factory=list)
    submitted_t: float = 0.0
    first_phase_t: float | None = None
    end_t: float | None = None
    proofs: dict[str, bytes] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)
    started: set[str] = field(default_factory=set)  # partitions that began a phase
    cancelled: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)  # part -> reason
    srs_load_s: float = 0.0
    synthesis_s: float = 0.0
    gpu_s: float = 0.0
    outcome: str | None = None  # completed | failed | cancelled once ended
    error: str = ""

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def proof_bytes(self) -> bytes:
        """One compressed proof per partition, in partition order (only when all are there)."""
        if any(p not in self.proofs for p in self.parts):
            return b""
        return b"".join(self.proofs[p] for p in self.parts)

    def timings_ms(self) -> dict[str, int]:
        ms = lambda s: max(0, int(round(s * 1000)))  # noqa: E731
        end = self.end_t if self.end_t is not None else self.submitted_t
        wait = (self.first_phase_t if self.first_phase_t is not None else end) - self.submitted_t
        return {"queue_wait_ms": ms(wait), "srs_load_ms": ms(self.srs_load_s), "synthesis_ms": ms(self.synthesis_s),
                "gpu_compute_ms": ms(self.gpu_s), "total_ms": ms(end - self.submitted_t)}


class JobTable:
    def __init__(self, on_end: Callable[[Job], None] | None = None) -> None:
        self.cond = threading.Condition()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._by_part: dict[str, Job] = {}
        self._impl: dict[tuple[str, str], str] = {}  # (part, phase) -> impl of the open phase
        self._open = 0
        self._incoming: Job | None = None
        self._on_end = on_end
        self.completed = self.failed = 0
        self.completed_by: dict[str, int] = {}  # cuzk kind name -> jobs
        self.failed_by: dict[str, int] = {}
        self.ended: str | None = None  # the run's end reason, once it ended

    # --- the server's side ------------------------------------------------------------------
    def get(self, job_id: str) -> Job | None:
        with self.cond:
            return self._jobs.get(job_id)

    def open_jobs(self) -> int:
        with self.cond:
            return self._open

    def jobs(self) -> list[Job]:
        with self.cond:
            return list(self._jobs.values())

    def job_of(self, part: str) -> Job | None:
        with self.cond:
            return self._by_part.get(part)

    def left_of(self, job: Job) -> list[str]:
        """Its partitions not ended yet (the sink changes the set as they end)."""
        with self.cond:
            return sorted(job.left)

    def add(self, job: Job) -> None:
        """Before its sector is submitted: its events may come before submit_sector returns.
        A job id in the table already is refused (it would orphan that job's partitions): the
        servicer looks its request id up and adds in one step."""
        with self.cond:
            if job.job_id in self._jobs:
                raise ValueError(f"job {job.job_id!r} is in the table already")
            self._jobs[job.job_id] = job
            self._open += 1

    def expect(self, job: Job | None) -> None:
        """The job whose sector is being queued now (None: done): its SectorSubmitted binds its
        partitions, in the engine's emit, before any of them can be taken. The server queues
        one job at a time."""
        with self.cond:
            self._incoming = job

    def _bind(self, e: Any) -> None:
        job = self._incoming
        if job is None or job.sector >= 0 or e.source != job.source:
            return
        job.sector, job.submitted_t = e.sector, e.t
        job.parts = [f"s{e.sector}p{i}" for i in range(e.partitions)]
        job.left = set(job.parts)
        for p in job.parts:
            self._by_part[p] = job

    def drop(self, job: Job) -> None:
        """A submission the engine refused: forget the job."""
        with self.cond:
            if self._jobs.pop(job.job_id, None) is not None and not job.done:
                self._open -= 1
            for p in job.parts:  # bound before the engine refused it: nothing may name it now
                if self._by_part.get(p) is job:
                    del self._by_part[p]

    def wait(self, job: Job, timeout: float | None, alive: Callable[[], bool]) -> bool:
        """Until the job ended (True), timeout passed or alive() turned false (False)."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        with self.cond:
            while not job.done:
                left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
                if left <= 0 or not alive():
                    return False
                self.cond.wait(left)
            return True

    def proof(self, part: str, data: bytes) -> None:
        """A partition's proof bytes (the flow calls this before its PartitionDone)."""
        with self.cond:
            job = self._by_part.get(part)
            if job is not None:
                job.proofs[part] = data

    # --- the engine's sink ------------------------------------------------------------------
    def sink(self, e: Any) -> None:
        k = e.kind
        if k == "run_ended":
            self._run_ended(e)
            return
        if k == "sector_submitted":
            with self.cond:
                self._bind(e)
            return
        part = getattr(e, "part", None)
        if part is None:
            return
        with self.cond:
            job = self._by_part.get(part)
            if job is None or job.done:
                return
            if k == "phase_start":
                self._impl[(part, e.phase.value)] = e.impl
                job.started.add(part)
                if job.first_phase_t is None:
                    job.first_phase_t = e.t
            elif k == "phase_end":
                self._phase_end(job, e)
            elif k == "key_wait" and e.state == "end":
                job.srs_load_s += e.wait or 0.0
            elif k == "partition_done":
                if not e.ok:
                    job.failed[part] = e.reason or "failed"
                self._left(job, part, e.t)
            elif k == "partition_cancelled":
                job.cancelled.add(part)
                self._left(job, part, e.t)

    def _phase_end(self, job: Job, e: Any) -> None:
        phase = e.phase.value
        impl = self._impl.pop((e.part, phase), "cpu")
        if phase == "synthesis":
            job.synthesis_s += e.duration
        elif phase in GPU_PHASES or (phase == "b_g2_msm" and impl != "cpu"):
            job.gpu_s += e.duration

    def _left(self, job: Job, part: str, t: float) -> None:
        job.left.discard(part)
        if not job.left and job.parts:
            self._end(job, t)

    def _end(self, job: Job, t: float, error: str = "") -> None:
        job.end_t = t
        if job.cancelled:
            job.outcome = CANCELLED
        elif job.failed or error or not job.proof_bytes():
            job.outcome = FAILED
            job.error = error or "; ".join(f"{p}: {r}" for p, r in sorted(job.failed.items()))[:1000] or "no proof"
            self.failed += 1
            self.failed_by[job.kind.name] = self.failed_by.get(job.kind.name, 0) + 1
        else:
            job.outcome = COMPLETED
            self.completed += 1
            self.completed_by[job.kind.name] = self.completed_by.get(job.kind.name, 0) + 1
        self._open -= 1
        for p in job.parts:  # its parts stay named (status's job ids) until the job is forgotten
            for ph in GPU_PHASES | {"synthesis", "b_g2_msm"}:
                self._impl.pop((p, ph), None)
        self._forget_old()
        self.cond.notify_all()
        if self._on_end is not None:
            self._on_end(job)

    def _run_ended(self, e: Any) -> None:
        with self.cond:
            self.ended = e.reason
            for job in list(self._jobs.values()):
                if not job.done:
                    self._end(job, e.t, error=f"the prover stopped ({e.reason}) before this job was done")
            self.cond.notify_all()

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.done]
        for j in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._jobs[j.job_id]
            for p in j.parts:
                if self._by_part.get(p) is j:
                    del self._by_part[p]
