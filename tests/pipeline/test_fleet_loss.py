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
    fleet.hosts[h] = D.Host(h, "n1", _Actor([batch]))
    fleet.sched.add_host(h, 1, 1, workers=1, budget=16 * GiB)
    fleet._poll_round()
    kinds = [(e.kind, getattr(e, "lost", None), getattr(e, "reason", None)) for e in out]
    assert kinds[-4:] == [("host_left", False, "engine error: boom"), ("lock_released", None, "host_lost"),
                          ("free", None, "host_lost"), ("host_left", True, "engine ended: engine error: boom")]
    assert _held_at_end(out) == ({}, {})
    assert [e.bytes for e in out if e.kind == "free" and e.reason] == [8 * GiB]
    assert [e.t for e in out] == sorted(e.t for e in out)
    assert h not in fleet.hosts and fleet.cluster.ray.killed


class _Assign:
    def __init__(self) -> None:
        self.parts: list[Any] = []

    def remote(self, parts: list[Any]) -> None:
        self.parts += parts


def test_fleet_queues_sectors_lazily_and_ends_after_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """--sectors 10^20 on a fleet: a couple of sectors wait at a time (the driver once queued every
    sector before placing one, so the run never started and its memory grew without bound); a
    bounded run still ends once its last sector is done."""
    monkeypatch.setattr("prover.fleet.cluster.Cluster", _Cluster)
    out: list[Any] = []
    fleet = D.FleetEngine(RunConfig(backend="sim", gpus=1, partitions=3, sectors=10**20), "local:1", sinks=[out.append])
    actor = _Actor([])
    actor.assign = _Assign()  # type: ignore[attr-defined]
    fleet.hosts["h0"] = D.Host("h0", "n0", actor)
    fleet.sched.add_host("h0", 1, 1, workers=4, budget=16 * GiB)
    fleet._place()
    submitted = [e for e in out if e.kind == "sector_submitted"]
    assert 1 <= len(submitted) <= D.LOOKAHEAD_SECTORS + 2 and len(fleet._waiting) <= D.LOOKAHEAD_SECTORS * 3
    assert actor.assign.parts and fleet._sectors_left == 10**20 - len(submitted)

    small = D.FleetEngine(RunConfig(backend="sim", gpus=1, partitions=2, sectors=3), "local:1", sinks=[])
    small._top_up()
    assert small._sectors_left == 1 and small._queued_total == 4
    small._done |= set(small._parts)
    small._check_end()
    assert not small._stop.is_set()  # a third sector is still to come
    small._waiting.clear()
    small._top_up()
    small._done |= set(small._parts)
    small._check_end()
    assert small._sectors_left == 0 and small._stop.is_set() and small._stop_reason == "done"


class _Control:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def remote(self, *args: Any) -> None:
        self.calls.append(args)


def test_a_knob_changed_while_a_host_starts_reaches_it_when_it_joins(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--switch 0.05:vram_budget=20GiB` on a fleet whose hosts join at 0.8 s was lost: no host
    had joined to send it to, and the starting ones had their config already. Now it waits on
    each starting host and goes out, in order and with its source, as the host joins; a joined
    host gets it at once, and a change after the join is not sent twice."""
    monkeypatch.setattr("prover.fleet.cluster.Cluster", _Cluster)
    fleet = D.FleetEngine(RunConfig(backend="sim", gpus=1, partitions=2, sectors=1), "local:2", sinks=[])
    up, starting = _Actor([]), _Actor([])
    up.control, starting.control = _Control(), _Control()  # type: ignore[attr-defined]
    fleet.hosts["h0"] = D.Host("h0", "n0", up)
    late = D.Host("h1", "n1", starting)
    fleet._starting["h1"] = ("ref", late, None)
    fc = fleet.controller
    fc.apply("vram_budget=20GiB", source="switch")
    fc.apply("single", source="key")
    with pytest.raises(ValueError, match="no host or GPU 'h1'"):
        fc.apply("h1:stream", source="key")  # a starting host is not a target yet: said, not lost
    assert [c[:3] for c in up.control.calls] == [("vram_budget", 20 * GiB, "switch"), ("lock_mode", "single", "key")]
    assert starting.control.calls == []
    late.info = D.HostInfo(host="h1", node="n1", gpus=1, gpu_offset=1, workers_per_gpu=2, budget=16 * GiB, pid=1)
    fleet._joined(late)
    assert [c[:3] for c in starting.control.calls] == [("vram_budget", 20 * GiB, "switch"), ("lock_mode", "single", "key")]
    fc.apply("stream", source="key")
    assert [c[:3] for c in starting.control.calls][-1] == ("mem_sync", "stream", "key")
    assert len(starting.control.calls) == 3 and late.pending == []
