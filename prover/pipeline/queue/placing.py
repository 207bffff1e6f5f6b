"""The one-host queue's placement bookkeeping (WorkQueue calls it under its condition): what
runs where by class, whether a free worker of a GPU may take a class now (the class_gpus knob,
prover/placement.py, read live from the controller), and why each class waits (QueueWait,
said when the reason changes; prover/pipeline/queue/queue_why.py)."""
from __future__ import annotations

from typing import Any, Callable

from prover import events as ev
from prover.classes import BY_PRIORITY
from prover.placement import Placement, parse
from prover.pipeline.queue.queue_why import EXPLAIN_AFTER_S, QueueView, why_waits


class Placing:
    def __init__(self, n_gpus: int, emit: Callable[..., Any], knobs: Callable[[], Any] | None = None) -> None:
        self._gpus = range(n_gpus)
        self._emit, self._knobs = emit, knobs
        self._busy: dict[int, dict[str, int]] = {g: {} for g in self._gpus}  # gpu -> class -> in flight
        self._where: dict[str, tuple[int, str]] = {}  # part -> (gpu, class) while in flight
        self._said: dict[str, tuple[str, list[int]]] = {}
        self._next_explain = 0.0

    def placement(self) -> Placement:
        return parse(getattr(self._knobs(), "class_gpus", "")) if self._knobs is not None else Placement()

    def _workers(self) -> int:
        return int(getattr(self._knobs(), "workers_per_gpu", 1)) if self._knobs is not None else 1

    def allowed(self, gpu: int) -> Callable[[str], bool]:
        """Which classes a free worker of `gpu` may take now."""
        pl = self.placement()
        if not pl:
            return lambda cls: True
        workers, busy = self._workers(), self._busy.get(gpu, {})
        return lambda cls: pl.may_take(cls, gpu, workers, busy)

    def took(self, p: Any, gpu: int, left: int) -> None:
        """p taken on `gpu`, `left` of its class still queued (none: it no longer waits, said now)."""
        self._where[p.id] = (gpu, p.cls)
        b = self._busy.setdefault(gpu, {})
        b[p.cls] = b.get(p.cls, 0) + 1
        if not left and self._said.get(p.cls, ("", []))[0]:
            self._said[p.cls] = ("", [])
            self._emit(ev.QueueWait, proof_class=p.cls, waiting=0, reason="", gpus=[])

    def left(self, p: Any) -> None:
        """p is no longer in flight (finished, failed for good, or back in the queue)."""
        got = self._where.pop(p.id, None)
        if got is not None:
            b = self._busy.get(got[0], {})
            b[got[1]] = max(0, b.get(got[1], 0) - 1)

    def explain(self, queues: Any, cordoned: set[int], now: float) -> None:
        """QueueWait for every class whose reason changed (at most every EXPLAIN_AFTER_S)."""
        if now < self._next_explain:
            return
        self._next_explain = now + EXPLAIN_AFTER_S
        k = self._knobs() if self._knobs is not None else None
        view = QueueView(self._gpus, self.placement(), self._workers(), bool(getattr(k, "paused", False)),
                         set(cordoned), {c: queues.waiting(c) for c in BY_PRIORITY},
                         {g: dict(b) for g, b in self._busy.items()})
        for cls in BY_PRIORITY:
            first = queues.oldest_t(cls)
            said: tuple[str, list[int]] = ("", [])
            if first is not None and now - first >= EXPLAIN_AFTER_S:
                said = why_waits(cls, view)
            if said != self._said.get(cls, ("", [])):
                self._said[cls] = said
                self._emit(ev.QueueWait, proof_class=cls, waiting=view.waiting.get(cls, 0), reason=said[0], gpus=said[1])
