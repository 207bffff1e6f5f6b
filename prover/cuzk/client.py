"""Watching a cuzk daemon: poll GetStatus (gRPC) and /status (HTTP) every POLL_S, turn each
pair into events (watch.py) for a sink, and send CancelProof for a watched job.

The poller is its own thread; a daemon that does not answer within its timeout is said once
in a Note and polled again, never waited on without end. /status bodies are read to at most
MAX_STATUS_BYTES.
"""
from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any, Callable

import grpc

from prover import events as ev
from prover.cuzk import proving_pb2 as pb
from prover.cuzk.service import Stub
from prover.cuzk.watch import CuzkWatch

POLL_S = 0.5  # cuzk's docs poll /status every 500 ms
TIMEOUT_S = 5.0
MAX_STATUS_BYTES = 8 << 20


def dial_target(address: str) -> str:
    """What grpc dials for an address as Curio writes it (unix:///path, host:port)."""
    return address if "://" not in address or address.startswith("unix:") else address.split("://", 1)[1]


class CuzkPoller:
    def __init__(self, address: str, status_url: str | None, sink: Callable[[Any], None],
                 token: str | None = None, name: str = "c2tui") -> None:
        self.address, self.status_url, self.sink = address, status_url, sink
        self.channel = grpc.insecure_channel(dial_target(address))
        self.stub = Stub(self.channel)
        self.metadata = [("x-c2tui-client", name)] + ([("authorization", f"Bearer {token}")] if token else [])
        self.watch = CuzkWatch(address)
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cuzk-poll", daemon=True)
        self._failing = False

    def first(self) -> Any:
        """One GetStatus now (raises grpc.RpcError: nothing to watch there)."""
        return self.stub.GetStatus(pb.GetStatusRequest(), timeout=TIMEOUT_S, metadata=self.metadata)

    def status_json(self) -> dict | None:
        if not self.status_url:
            return None
        with urllib.request.urlopen(self.status_url, timeout=TIMEOUT_S) as r:  # noqa: S310 - the operator's URL
            return json.loads(r.read(MAX_STATUS_BYTES + 1)[:MAX_STATUS_BYTES])

    def poll_once(self) -> None:
        t = time.monotonic() - self._t0
        try:
            status = self.first()
            snap = self.status_json()
        except Exception as exc:  # a daemon gone or slow: said once, polled again
            if not self._failing:
                self._failing = True
                self.sink(ev.Note(t=t, level="warn", text=f"cuzk daemon not answering: {exc}"[:300]))
            return
        self._failing = False
        for e in self.watch.step(t, status, snap):
            self.sink(e)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(POLL_S)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=TIMEOUT_S + 1)
        self.channel.close()

    def cancel(self, sector: int, source: str) -> str:
        """CancelProof for the job shown as sector `sector`; what the daemon answered, in words.
        ValueError when it did not act (cuzk's own CancelProof answers was_running=false and
        does nothing), so the screen says so plainly."""
        job = self.watch.job_of(sector)
        if job is None:
            raise ValueError(f"s{sector} is no cuzk job watched here")
        r = self.stub.CancelProof(pb.CancelProofRequest(job_id=job), timeout=TIMEOUT_S, metadata=self.metadata)
        try:  # did it act? the job's own answer says (cuzk's AwaitProof may ignore timeout_ms: a deadline too)
            a = self.stub.AwaitProof(pb.AwaitProofRequest(job_id=job, timeout_ms=2000), timeout=3.0,
                                     metadata=self.metadata)
            acted = a.status == pb.AwaitProofResponse.CANCELLED
        except grpc.RpcError:
            acted = False
        said = (f"CancelProof {job} ({source}): was_running={str(r.was_running).lower()}, "
                + ("cancelled" if acted else "NOT cancelled: the daemon did not act (cuzk's own CancelProof only "
                   "logs 'not yet implemented')"))
        self.sink(ev.Note(t=time.monotonic() - self._t0, level="info" if acted else "warn", text=said))
        if not acted:
            raise ValueError(said)
        return said
