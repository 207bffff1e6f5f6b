"""The fold's host level (a fleet on Ray): HostState and the HostJoined / HostLeft steps.

Kept beside prover/state.py (which calls these from its handler table) so the one fold stays
one fold; on one host no event has a host and `DashboardState.hosts` stays empty.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prover import events as ev

if TYPE_CHECKING:  # pragma: no cover
    from prover.state import DashboardState


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


def host_joined(s: "DashboardState", e: ev.HostJoined) -> None:
    h = s.hosts[e.host or "?"] = HostState(host=e.host or "?", node=e.node, joined_t=e.t,
                                           gpus=list(range(e.gpu_offset, e.gpu_offset + e.gpus)))
    for i in h.gpus:
        s.gpu(i).host = h.host
    s.note("info", f"host {h.host} joined (node {e.node}, gpu{e.gpu_offset}..{e.gpu_offset + e.gpus - 1})")


def host_left(s: "DashboardState", e: ev.HostLeft) -> None:
    h = s.hosts.setdefault(e.host or "?", HostState(host=e.host or "?"))
    h.alive, h.left_t, h.reason, h.lost = False, e.t, e.reason, e.lost
    if not e.lost:
        s.note("info", f"host {h.host} left ({e.reason})")
        return
    h.requeued += len(e.requeued)
    for i in h.gpus:  # the process is gone, and with it its locks, buffers and workers
        g = s.gpu(i)
        for lk in g.locks.values():
            lk.holder, lk.holder_part = None, None
            lk.waiters.clear()
        g.live.clear()
        g.workers.clear()
        for seg in g.timeline:
            if seg.t1 is None:
                seg.t1 = e.t
    s.note("error", f"host {h.host} lost ({e.reason}); {len(e.requeued)} partition(s) requeued on the others")
