"""What each fleet host holds, as its events say: locks acquired and not released, buffers
allocated and not freed. When a host is lost its process (and with it every lock and buffer)
is gone; the driver closes them in the stream with explicit LockReleased / Free events
(reason "host_lost"), so a recording read on its own ends with nothing held."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HOST_LOST = "host_lost"


@dataclass
class _Lock:
    worker: str
    part: str | None
    since: float


@dataclass
class HostHoldings:
    locks: dict[tuple[int, str], _Lock] = field(default_factory=dict)  # (gpu, lock name)
    buffers: dict[tuple[int, str, str], tuple[str | None, int]] = field(default_factory=dict)  # (gpu, owner, name)


class Held:
    """Per host: open locks and live buffers, learned from the host's events."""

    def __init__(self) -> None:
        self.hosts: dict[str, HostHoldings] = {}

    def learn(self, e: Any) -> None:
        if e.host is None or e.kind not in ("lock_acquired", "lock_released", "alloc", "free"):
            return
        h = self.hosts.setdefault(e.host, HostHoldings())
        if e.kind == "lock_acquired":
            h.locks[(e.gpu, e.lock)] = _Lock(e.worker, e.part, e.t)
        elif e.kind == "lock_released":
            h.locks.pop((e.gpu, e.lock), None)
        elif e.kind == "alloc":
            part, n = h.buffers.get((e.gpu, e.owner, e.name), (e.part, 0))
            h.buffers[(e.gpu, e.owner, e.name)] = (part, n + e.bytes)
        else:
            key = (e.gpu, e.owner, e.name)
            part, n = h.buffers.get(key, (e.part, 0))
            if n - e.bytes > 0:
                h.buffers[key] = (part, n - e.bytes)
            else:
                h.buffers.pop(key, None)

    def closing(self, host: str, now: float) -> list[tuple[str, dict[str, Any]]]:
        """(event kind, fields) releasing and freeing all `host` held, then forgets it:
        compute before mem (the reverse of the acquire order), buffers after the locks."""
        h = self.hosts.pop(host, None)
        if h is None:
            return []
        out: list[tuple[str, dict[str, Any]]] = []
        for (gpu, lock), lk in sorted(h.locks.items(), key=lambda kv: (kv[0][0], kv[0][1] != "compute")):
            out.append(("lock_released", dict(gpu=gpu, lock=lock, worker=lk.worker, part=lk.part,
                                              hold=max(0.0, now - lk.since), reason=HOST_LOST)))
        for (gpu, owner, name), (part, n) in sorted(h.buffers.items()):
            out.append(("free", dict(gpu=gpu, owner=owner, part=part, name=name, bytes=n, reason=HOST_LOST)))
        return out
