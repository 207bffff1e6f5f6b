"""A lost fleet host in the recording, without Ray: the driver's poll loop over a fake
cluster. The file alone must end with nothing held (explicit releases / frees, reason
host_lost), and a host's own HostLeft (its engine ended) is kept, not dropped."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from prover import events as ev
from prover.config import RunConfig
from prover.fleet import driver as D

GiB = 1024**3


class _Remote:
    def __init__(self, batches: list[list[Any]]) -> None:
        self.batches = batches

    def remote(self) -> list[Any]:
        return self.batches.pop(0) if self.batches else []


class _Actor:
    def __init__(self, batches: list[list[Any]]) -> None:
        self.poll = _Remote(batches)


class _Ray:
    killed: list[Any] = []

    def get(self, ref: Any, timeout: float | None = None) -> Any:
        return ref

    def kill(self, actor: Any) -> None:
        self.killed.append(actor)


class _Cluster:
    def __init__(self, spec: str, backend: str) -> None:
        self.ray = _Ray()


def _held_at_end(events: list[Any]) -> tuple[dict, dict]:
    """An independent reader: locks acquired and not released, bytes allocated and not freed."""
    locks: dict[tuple, int] = defaultdict(int)
    live: dict[tuple, int] = defaultdict(int)
    for e in events:
        if e.kind in ("lock_acquired", "lock_released"):
            locks[(e.host, e.gpu, e.lock)] += 1 if e.kind == "lock_acquired" else -1
        elif e.kind in ("alloc", "free"):
            live[(e.host, e.gpu, e.owner, e.name)] += e.bytes if e.kind == "alloc" else -e.bytes
    return {k: v for k, v in locks.items() if v}, {k: v for k, v in live.items() if v}


def test_lost_host_closes_its_locks_and_buffers_and_keeps_its_own_host_left(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("prover.fleet.cluster.Cluster", _Cluster)
    out: list[Any] = []
    fleet = D.FleetEngine(RunConfig(backend="sim", gpus=1), "local:2", sinks=[out.append])
    w, h = "g1w0", "h1"
    batch = [ev.LockAcquired(t=0.1, host=h, gpu=1, lock="mem", worker=w, part="s0p1", wait=0.0),
             ev.Alloc(t=0.11, host=h, gpu=1, owner=w, part="s0p1", name="d_a", bytes=4 * GiB),
             ev.Alloc(t=0.12, host=h, gpu=1, owner=w, part="s0p1", name="d_bc", bytes=8 * GiB),
             ev.LockReleased(t=0.13, host=h, gpu=1, lock="mem", worker=w, part="s0p1", hold=0.03),
             ev.LockAcquired(t=0.14, host=h, gpu=1, lock="compute", worker=w, part="s0p1", wait=0.0),
             ev.Free(t=0.15, host=h, gpu=1, owner=w, part="s0p1", name="d_a", bytes=4 * GiB),
             ev.HostLeft(t=0.2, host=h, reason="engine error: boom")]
    fleet.hosts[h] = D._Host(h, "n1", _Actor([batch]))
    fleet.sched.add_host(h, 1, 1, workers=1, budget=16 * GiB)
    fleet._poll_round()
    kinds = [(e.kind, getattr(e, "lost", None), getattr(e, "reason", None)) for e in out]
    assert kinds[-4:] == [("host_left", False, "engine error: boom"), ("lock_released", None, "host_lost"),
                          ("free", None, "host_lost"), ("host_left", True, "engine ended: engine error: boom")]
    assert _held_at_end(out) == ({}, {})
    assert [e.bytes for e in out if e.kind == "free" and e.reason] == [8 * GiB]
    assert [e.t for e in out] == sorted(e.t for e in out)
    assert h not in fleet.hosts and fleet.cluster.ray.killed
