"""An event sink that checks the engine's invariants from the event stream alone.

Events reach sinks under the engine's emit lock, LockAcquired while the lock is held and
LockReleased before it is let go, Alloc/Free under the device's pool lock: so the stream
nests exactly like the real state and the checks below are exact.

In a fleet every GPU is keyed by (host, gpu) and time runs forwards per host (hosts' batches
are merged by the driver); a host lost with its actor (HostLeft lost=True) took its locks
and buffers with its process, so its holders and live bytes are dropped there, and what it
had pending must still finish elsewhere, once.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from prover.disciplines import COMPUTE, lock_order


class InvariantChecker:
    def __init__(self) -> None:
        self.order = lock_order()  # every lock the disciplines declare, in the one global order
        self.violations: list[str] = []
        self.holders: dict[tuple[Any, int, str], str | None] = {}
        self.held: dict[tuple[Any, int, str], list[str]] = defaultdict(list)
        self.live: dict[tuple[Any, int], int] = defaultdict(int)
        self.max_live: dict[tuple[Any, int], int] = defaultdict(int)
        self.budget: dict[tuple[Any, int], int] = {}
        self.max_budget: dict[tuple[Any, int], int] = defaultdict(int)  # the largest budget ever in force
        self.compute_max: dict[tuple[Any, int], int] = defaultdict(int)
        self.last_t_host: dict[Any, float] = defaultdict(float)
        self.lost_hosts: set[str] = set()
        self.queued: set[str] = set()
        self.done: dict[str, Any] = {}
        self.kinds: dict[str, int] = defaultdict(int)
        self.events: list[Any] = []
        self.last_t = 0.0

    def __call__(self, e: Any) -> None:
        self.events.append(e)
        k = e.kind
        self.kinds[k] += 1
        h = getattr(e, "host", None)
        if e.t + 1e-9 < self.last_t_host[h]:
            self.violations.append(f"time went backwards at {k} on host {h}: {e.t} < {self.last_t_host[h]}")
        self.last_t_host[h] = max(self.last_t_host[h], e.t)
        self.last_t = max(self.last_t, e.t)
        g = (h, e.gpu) if hasattr(e, "gpu") else None
        if k == "gpu_info":
            self.budget[g] = e.budget_bytes
            self.max_budget[g] = max(self.max_budget[g], e.budget_bytes)
        elif k == "vram_sample":  # the budget in force (a live change is said before anyone allocates under it)
            self.budget[g] = e.budget
            self.max_budget[g] = max(self.max_budget[g], e.budget)
        elif k == "host_left" and e.lost:
            self._drop_host(h)
        elif k == "lock_requested":
            mine = self.held[(h, e.gpu, e.worker)]
            order = self.order
            later = [h for h in mine if order.index(h) > order.index(e.lock)] if e.lock in order else []
            if e.lock not in order:
                self.violations.append(f"{e.worker} requests {e.lock!r}, a lock no discipline declares")
            elif later:
                self.violations.append(f"order inverted: {e.worker} requests {e.lock} holding {later} on gpu{e.gpu}")
            if e.lock in mine:
                self.violations.append(f"{e.worker} re-requests {e.lock}")
        elif k == "lock_acquired":
            key = (h, e.gpu, e.lock)
            if self.holders.get(key):
                self.violations.append(f"two holders of {e.lock} on gpu{e.gpu}: {self.holders[key]} and {e.worker}")
            self.holders[key] = e.worker
            self.held[(h, e.gpu, e.worker)].append(e.lock)
            if e.lock == COMPUTE:
                n = sum(1 for (hh, gg, ln), w in self.holders.items() if (hh, gg) == g and ln == COMPUTE and w)
                self.compute_max[g] = max(self.compute_max[g], n)
        elif k == "lock_released":
            key = (h, e.gpu, e.lock)
            if self.holders.get(key) != e.worker:
                self.violations.append(f"{e.worker} releases {e.lock} on gpu{e.gpu} held by {self.holders.get(key)}")
            self.holders[key] = None
            mine = self.held[(h, e.gpu, e.worker)]
            if e.lock in mine:
                mine.remove(e.lock)
        elif k == "alloc":
            self.live[g] += e.bytes
            self.max_live[g] = max(self.max_live[g], self.live[g])
            b = self.budget.get(g)
            if b is not None and self.live[g] > b:
                self.violations.append(f"live bytes {self.live[g]} above budget {b} on gpu{e.gpu} {h or ''}")
        elif k == "free":
            self.live[g] -= e.bytes
            if self.live[g] < 0:
                self.violations.append(f"negative live bytes on gpu{e.gpu}")
        elif k == "partition_queued":
            self.queued.add(e.part)
        elif k == "partition_done":
            if e.part in self.done:
                self.violations.append(f"{e.part} done twice")
            self.done[e.part] = e
            if not e.ok and not e.reason:
                self.violations.append(f"{e.part} failed without a reason")

    def _drop_host(self, host: str) -> None:
        self.lost_hosts.add(host)
        for d in (self.holders, self.held):
            for key in [key for key in d if key[0] == host]:
                del d[key]
        for key in [key for key in self.live if key[0] == host]:
            self.live[key] = 0

    def final(self, *, all_done: bool = True) -> list[str]:
        out = list(self.violations)
        for (h, g, ln), w in self.holders.items():
            if w:
                out.append(f"{ln} on gpu{g} {h or ''} still held by {w} at the end")
        for (h, g), n in self.live.items():
            if n:
                out.append(f"{n} live bytes left on gpu{g} {h or ''} at the end")
        if not self.events or self.events[0].kind != "run_started":
            out.append("first event is not run_started")
        if not self.events or self.events[-1].kind != "run_ended":
            out.append("last event is not run_ended")
        if all_done and set(self.done) != self.queued:
            out.append(f"partitions not finished: {sorted(self.queued - set(self.done))[:10]}")
        return out
