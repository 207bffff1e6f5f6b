"""The fold's host level (a fleet on Ray): HostState and the HostJoined / HostLeft steps.

On one host no event has a host and the state's `hosts` stays empty. A lost host takes its
GPUs' locks, buffers and workers with it (the GPUs are the world's).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.world import World


@dataclass
class HostState:
    """One fleet host (a Ray node's engine); its GPUs keep their fleet-wide numbers."""

    host: str
    node: str = "?"
    gpus: list[int] = field(default_factory=list)
    alive: bool = True
    joined_t: float = 0.0
    left_t: float | None = None
    reason: str | None = None
    lost: bool = False
    requeued: int = 0  # partitions taken back from this host when it was lost
    done: int = 0
    failed: int = 0


def host_joined(hosts: dict[str, HostState], e: ev.HostJoined, w: World) -> None:
    h = hosts[e.host or "?"] = HostState(host=e.host or "?", node=e.node, joined_t=e.t,
                                           gpus=list(range(e.gpu_offset, e.gpu_offset + e.gpus)))
    for i in h.gpus:
        w.gpu(i).host = h.host
    w.note("info", f"host {h.host} joined (node {e.node}, gpu{e.gpu_offset}..{e.gpu_offset + e.gpus - 1})")


def host_left(hosts: dict[str, HostState], e: ev.HostLeft, w: World) -> None:
    h = hosts.setdefault(e.host or "?", HostState(host=e.host or "?"))
    h.alive, h.left_t, h.reason, h.lost = False, e.t, e.reason, e.lost
    if not e.lost:
        w.note("info", f"host {h.host} left ({e.reason})")
        return
    h.requeued += len(e.requeued)
    for i in h.gpus:  # the process is gone, and with it its locks, buffers and workers
        g = w.gpu(i)
        for lk in g.locks.values():
            lk.holder, lk.holder_part = None, None
            lk.waiters.clear()
        g.live.clear()
        g.live_total = 0
        g.workers.clear()
        for seg in g.timeline:
            if seg.t1 is None:
                seg.t1 = e.t
    w.note("error", f"host {h.host} lost ({e.reason}); {len(e.requeued)} partition(s) requeued on the others")


def _partition_done(hosts: dict[str, HostState], e: ev.PartitionDone, w: World) -> None:
    h = hosts.get(e.host) if e.host is not None else None
    if h is not None:
        h.done += 1
        h.failed += not e.ok


def _view(hosts: dict[str, HostState], now: float) -> dict[str, HostState]:
    return {h: replace(x, gpus=list(x.gpus)) for h, x in hosts.items()}


CONCEPT = Concept("hosts", dict, {ev.HostJoined: host_joined, ev.HostLeft: host_left,
                                         ev.PartitionDone: _partition_done}, view=_view)
