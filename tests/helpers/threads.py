"""Run n threads of one target to the end (or a timeout): the random-schedule tests' harness."""
from __future__ import annotations

import threading
from typing import Callable


def run_threads(target: Callable[[int], None], n: int, timeout: float) -> list[int]:
    """Start target(0) .. target(n-1) on threads, join each within `timeout`; the ones still
    alive after it (a thread that never got what it waited for)."""
    ts = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
    return [i for i, t in enumerate(ts) if t.is_alive()]
