"""Random schedules on the cuzk job table's bind (prover/cuzk/jobs.py, through the servicer's
submit, await and cancel): client threads submit (request ids drawn from a small pool, so the
same request comes again, at once, from several threads), await with short timeouts and cancel,
while worker threads run the partitions and a monitor checks the table under its lock.

The engine here is a stand-in for the queue only (no proofs are made: what is under test is the
table's bookkeeping, which reads events): submit_sector emits SectorSubmitted in the caller's
thread before it returns, as the engine's emit does; workers emit the partition's phases, its
proof bytes and PartitionDone; a cancel takes the queued partitions out at once and the running
ones at their next boundary. Invariants:
- none bound twice: one live job per request id; each sector bound to one job, each partition to
  its sector's job;
- no job lost: every sector the engine took belongs to a job a client holds, every job ends
  (completed, failed or cancelled, each counted once), an await on it returns;
- no orphaned entry: every partition entry names a job in the table, the open count is the jobs
  not ended, no phase bookkeeping is left at the end;
- bounded size: open jobs never past the servicer's bound, finished jobs never past KEEP_FINISHED.
"""
from __future__ import annotations

import random
import sys
import threading
import time
from collections import deque
from types import SimpleNamespace
from typing import Any

import pytest

from prover import events as ev
from prover.config import load_config
from prover.cuzk import jobs as jobs_mod
from prover.cuzk import proving_pb2 as pb
from prover.cuzk.jobs import JobTable
from prover.cuzk.servicer import Refused, Servicer
from tests.helpers.threads import run_threads

KINDS = (pb.POREP_SEAL_COMMIT, pb.WINNING_POST, pb.WINDOW_POST_PARTITION)


class QueueEngine:
    """The engine's side the table sees: a queue, workers, cancel; events into the table."""

    def __init__(self, table: JobTable, rnd: random.Random, fail_every: int = 7) -> None:
        self.config = load_config(None, backend="sim", profile="tiny", constraints_log2=8, partitions=2)
        self.table, self.rnd, self.fail_every = table, rnd, fail_every
        self.finished = False
        self.lock = threading.Lock()
        self.queue: deque[str] = deque()
        self.flags: dict[str, bool] = {}  # part -> cancel asked (running)
        self.on_proof: dict[str, Any] = {}
        self.sectors: dict[int, list[str]] = {}  # sector -> its parts
        self.left: set[str] = set()
        self.sources: dict[int, str] = {}
        self.controller = SimpleNamespace(job=self.job, snapshot=lambda: SimpleNamespace(class_gpus=""))
        self.t0 = time.monotonic()
        self.done_count = 0

    def now(self) -> float:
        return time.monotonic() - self.t0

    def emit(self, cls: type, **fields: Any) -> None:
        self.table.sink(cls(t=self.now(), **fields))

    def submit_sector(self, n: int, source: str, cls: str, instances: list, priority: int, on_proof: Any) -> int:
        with self.lock:
            if self.finished:
                raise RuntimeError("stopped")
            s = len(self.sectors)
            parts = [f"s{s}p{i}" for i in range(n)]
            self.sectors[s], self.sources[s] = parts, source
            self.left.update(parts)
            for p in parts:
                self.on_proof[p] = on_proof
            # emitted before the parts can be taken, in this thread (the engine's emit does so)
            self.emit(ev.SectorSubmitted, sector=s, partitions=n, proof_class=cls, source=source)
            self.queue.extend(parts)
        return s

    def queue_position(self, part: str) -> int | None:
        with self.lock:
            try:
                return self.queue.index(part)
            except ValueError:
                return None

    def job(self, action: str, target: str, source: str) -> None:
        assert action == "cancel"
        s = int(target[1:])
        with self.lock:
            parts = [p for p in self.sectors.get(s, []) if p in self.left]
            if not parts:
                raise ValueError(f"{target}: nothing left to cancel")
            for p in parts:
                if p in self.queue:
                    self.queue.remove(p)
                    self._gone(p)
                    self.emit(ev.PartitionCancelled, part=p, where="queued", source=source)
                else:
                    self.flags[p] = True

    def _gone(self, p: str) -> None:
        self.left.discard(p)
        self.done_count += 1

    def work(self, w: int, stop: threading.Event) -> None:
        """A worker: the next queued partition, its phases, its proof, its end."""
        name = f"g0w{w}"
        while not stop.is_set():
            with self.lock:
                part = self.queue.popleft() if self.queue else None
            if part is None:
                time.sleep(0.0005)
                continue
            ended = False
            for phase in (ev.Phase.synthesis, ev.Phase.msm, ev.Phase.b_g2_msm):
                with self.lock:
                    if self.flags.pop(part, False):
                        self._gone(part)
                        self.emit(ev.PartitionCancelled, part=part, where="running", source="test")
                        ended = True
                if ended:
                    break
                self.emit(ev.PhaseStart, part=part, phase=phase, worker=name, gpu=0,
                          impl="gpu" if self.rnd.random() < 0.5 else "cpu")
                if self.rnd.random() < 0.3:
                    time.sleep(0.0002)
                self.emit(ev.PhaseEnd, part=part, phase=phase, worker=name, gpu=0, duration=0.001)
            if ended:
                continue
            ok = self.rnd.randrange(self.fail_every) != 0
            if ok:
                self.on_proof[part](part, b"\x01" * 192)
            with self.lock:
                self.flags.pop(part, None)
                self._gone(part)
                self.emit(ev.PartitionDone, part=part, ok=ok, seconds=0.003, reason=None if ok else "verify failed")

    def end(self, reason: str) -> None:
        with self.lock:
            self.finished = True
            self.emit(ev.RunEnded, reason=reason)


def _check(table: JobTable, max_open: int, keep: int) -> list[str]:
    """The invariants that hold at every moment, read under the table's lock."""
    bad: list[str] = []
    with table.cond:
        jobs = list(table._jobs.values())
        ids = {id(j) for j in jobs}
        open_ = sum(1 for j in jobs if not j.done)
        if table._open != open_:
            bad.append(f"open count {table._open} but {open_} jobs not ended")
        if open_ > max_open:
            bad.append(f"{open_} open jobs past the bound {max_open}")
        if len(jobs) - open_ > keep:
            bad.append(f"{len(jobs) - open_} finished jobs kept past {keep}")
        for part, j in table._by_part.items():
            if id(j) not in ids:
                bad.append(f"{part} names job {j.job_id} that is not in the table (orphaned)")
            elif part not in j.parts:
                bad.append(f"{part} bound to job {j.job_id} whose parts are {j.parts}")
        sectors = [j.sector for j in jobs if j.sector >= 0]
        if len(sectors) != len(set(sectors)):
            bad.append(f"a sector bound to two jobs: {sorted(sectors)}")
        live = [j.request_id for j in jobs if j.request_id and not j.done]
        if len(live) != len(set(live)):
            bad.append(f"two live jobs for one request id: {sorted(live)}")
    return bad


def _schedule(seed: int, keep: int, max_open: int, end_run: bool, monkeypatch) -> None:
    monkeypatch.setattr(jobs_mod, "KEEP_FINISHED", keep)
    rnd = random.Random(44_600 + seed)
    table = JobTable()
    eng = QueueEngine(table, random.Random(seed))
    srv = Servicer(eng, table, fold=None, max_open_jobs=max_open)
    stop, workers_stop = threading.Event(), threading.Event()
    problems: list[str] = []
    held: list[Any] = []  # every job a submit returned
    by_rid: dict[str, set[int]] = {}
    hlock = threading.Lock()

    def monitor() -> None:
        while not stop.is_set():
            problems.extend(_check(table, max_open, keep))
            time.sleep(0.0005)

    def client(i: int) -> None:
        r = random.Random(seed * 100 + i)
        mine: list[Any] = []
        for _ in range(60):
            op = r.random()
            if op < 0.5 or not mine:
                rid = r.choice(["", *(f"r{k}" for k in range(12))])
                kind = r.choice(KINDS) if rid == "" else KINDS[int(rid[1:]) % 3]  # a request id keeps its kind
                req = pb.SubmitProofRequest(request_id=rid, proof_kind=kind, vanilla_proof=f"v{i}".encode())
                try:
                    job = srv._submit(req, f"c{i}")
                except Refused as exc:
                    assert exc.code.name in ("RESOURCE_EXHAUSTED", "UNAVAILABLE"), exc.text
                    continue
                mine.append(job)
                with hlock:
                    held.append(job)
                    if rid:
                        by_rid.setdefault(rid, set()).add(id(job))
            elif op < 0.8:
                table.wait(r.choice(mine), r.choice([0.0, 0.001, 0.01]), lambda: True)
            else:
                srv._cancel(r.choice(mine), f"c{i}", "CancelProof")
            if r.random() < 0.2:
                time.sleep(0.0003)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads switch often: more interleavings a run
    mon = threading.Thread(target=monitor, daemon=True)
    ws = [threading.Thread(target=eng.work, args=(w, workers_stop), daemon=True) for w in range(3)]
    try:
        mon.start()
        for w in ws:
            w.start()
        stuck = run_threads(client, 8, timeout=60)
        assert not stuck, f"clients {stuck} never returned"
        if end_run:  # the run ends with work queued and running: every job ends, failed
            eng.end("interrupted")
        else:  # the workers finish what was queued
            deadline = time.monotonic() + 60
            while (eng.left or eng.queue) and time.monotonic() < deadline:
                time.sleep(0.005)
            assert not eng.left, f"partitions never finished: {sorted(eng.left)[:5]}"
    finally:
        sys.setswitchinterval(old)
        workers_stop.set()
        for w in ws:
            w.join(10)
        stop.set()
        mon.join(10)
    problems.extend(_check(table, max_open, keep))
    assert not problems, problems[:5]
    _check_end(table, eng, held, by_rid, keep, end_run)


def _check_end(table: JobTable, eng: Any, held: list[Any], by_rid: dict[str, set[int]], keep: int,
               end_run: bool) -> None:
    """After the run: none bound twice, none lost, every job ended and counted once."""
    # none bound twice: one job per request id while kept (all are, when keep is large)
    if keep >= len(held):
        twice = {rid: n for rid, n in by_rid.items() if len(n) > 1}
        assert not twice, f"request ids bound to several jobs: {twice}"
    # no job lost: every sector the engine took is a job a client holds; every job ended, counted once
    sectors = {j.sector for j in held}
    assert sectors == set(eng.sectors), (sorted(set(eng.sectors) - sectors), sorted(sectors - set(eng.sectors)))
    assert len({id(j) for j in held}) == len(eng.sectors)  # one job a sector, one sector a job
    unique = {id(j): j for j in held}.values()
    assert all(j.done for j in unique), [j.job_id for j in unique if not j.done][:5]
    assert all(table.wait(j, 0.0, lambda: True) for j in unique)
    cancelled = sum(1 for j in unique if j.outcome == jobs_mod.CANCELLED)
    assert table.completed + table.failed + cancelled == len(eng.sectors)
    assert table.open_jobs() == 0 and not table._impl
    if end_run:
        assert table.completed == sum(1 for j in unique if j.outcome == jobs_mod.COMPLETED)


@pytest.mark.parametrize("seed", range(4))
def test_random_schedules_keep_the_bind_whole(seed, monkeypatch):
    """Every finished job kept: the strict checks (one job per request id for the whole run)."""
    _schedule(seed, keep=10_000, max_open=16, end_run=seed % 2 == 1, monkeypatch=monkeypatch)


@pytest.mark.parametrize("seed", range(4))
def test_random_schedules_forget_the_oldest_and_stay_bounded(seed, monkeypatch):
    """KEEP_FINISHED small: finished jobs forgotten while clients still hold and await them."""
    _schedule(seed, keep=4, max_open=6, end_run=seed % 2 == 0, monkeypatch=monkeypatch)
