"""An event sink that checks the engine's invariants from the event stream alone.

Events reach sinks under the engine's emit lock, LockAcquired while the lock is held and
LockReleased before it is let go, Alloc/Free under the device's pool lock: so the stream
nests exactly like the real state and the checks below are exact.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any


class InvariantChecker:
    def __init__(self) -> None:
        self.violations: list[str] = []
        self.holders: dict[tuple[int, str], str | None] = {}
        self.held: dict[tuple[int, str], list[str]] = defaultdict(list)
        self.live: dict[int, int] = defaultdict(int)
        self.max_live: dict[int, int] = defaultdict(int)
        self.budget: dict[int, int] = {}
        self.compute_max: dict[int, int] = defaultdict(int)
        self.queued: set[str] = set()
        self.done: dict[str, Any] = {}
        self.kinds: dict[str, int] = defaultdict(int)
        self.events: list[Any] = []
        self.last_t = 0.0

    def __call__(self, e: Any) -> None:
        self.events.append(e)
        k = e.kind
        self.kinds[k] += 1
        if e.t + 1e-9 < self.last_t:
            self.violations.append(f"time went backwards at {k}: {e.t} < {self.last_t}")
        self.last_t = max(self.last_t, e.t)
        if k == "gpu_info":
            self.budget[e.gpu] = e.budget_bytes
        elif k == "lock_requested":
            mine = self.held[(e.gpu, e.worker)]
            if e.lock == "mem" and "compute" in mine:
                self.violations.append(f"order inverted: {e.worker} requests mem holding compute on gpu{e.gpu}")
            if e.lock in mine:
                self.violations.append(f"{e.worker} re-requests {e.lock}")
        elif k == "lock_acquired":
            key = (e.gpu, e.lock)
            if self.holders.get(key):
                self.violations.append(f"two holders of {e.lock} on gpu{e.gpu}: {self.holders[key]} and {e.worker}")
            self.holders[key] = e.worker
            self.held[(e.gpu, e.worker)].append(e.lock)
            if e.lock == "compute":
                n = sum(1 for (g, ln), w in self.holders.items() if g == e.gpu and ln == "compute" and w)
                self.compute_max[e.gpu] = max(self.compute_max[e.gpu], n)
        elif k == "lock_released":
            key = (e.gpu, e.lock)
            if self.holders.get(key) != e.worker:
                self.violations.append(f"{e.worker} releases {e.lock} on gpu{e.gpu} held by {self.holders.get(key)}")
            self.holders[key] = None
            mine = self.held[(e.gpu, e.worker)]
            if e.lock in mine:
                mine.remove(e.lock)
        elif k == "alloc":
            self.live[e.gpu] += e.bytes
            self.max_live[e.gpu] = max(self.max_live[e.gpu], self.live[e.gpu])
            b = self.budget.get(e.gpu)
            if b is not None and self.live[e.gpu] > b:
                self.violations.append(f"live bytes {self.live[e.gpu]} above budget {b} on gpu{e.gpu}")
        elif k == "free":
            self.live[e.gpu] -= e.bytes
            if self.live[e.gpu] < 0:
                self.violations.append(f"negative live bytes on gpu{e.gpu}")
        elif k == "partition_queued":
            self.queued.add(e.part)
        elif k == "partition_done":
            if e.part in self.done:
                self.violations.append(f"{e.part} done twice")
            self.done[e.part] = e
            if not e.ok and not e.reason:
                self.violations.append(f"{e.part} failed without a reason")

    def final(self, *, all_done: bool = True) -> list[str]:
        out = list(self.violations)
        for (g, ln), w in self.holders.items():
            if w:
                out.append(f"{ln} on gpu{g} still held by {w} at the end")
        for g, n in self.live.items():
            if n:
                out.append(f"{n} live bytes left on gpu{g} at the end")
        if not self.events or self.events[0].kind != "run_started":
            out.append("first event is not run_started")
        if not self.events or self.events[-1].kind != "run_ended":
            out.append("last event is not run_ended")
        if all_done and set(self.done) != self.queued:
            out.append(f"partitions not finished: {sorted(self.queued - set(self.done))[:10]}")
        return out
