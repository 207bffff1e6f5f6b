"""The bytes queued for attached clients, all together, under one server-wide cap.

Each client's queue has its own bound (prover/attach/peer.py); this one is over all of them,
so that many clients that stop reading cannot together take the server's memory (issue 35:
8 of them took a server from 172 MB to 2 GB). Every byte queued for a client is counted here
as it is queued and given back as it is sent or dropped. When a push would pass the cap, the
client furthest over its fair share (cap / clients) is named to be dropped: the one pushing
when that is itself, else the largest queue, which frees the most.
"""
from __future__ import annotations

import threading
from typing import Protocol

SERVER_QUEUE_BYTES = 256 << 20  # every client's queue together (history, events, replies)


class _Queued(Protocol):
    queued: int
    closed: bool


class QueueBudget:
    def __init__(self, cap: int = SERVER_QUEUE_BYTES) -> None:
        self.cap = cap
        self.used = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._members: list[_Queued] = []

    def join(self, peer: _Queued) -> None:
        with self._lock:
            self._members.append(peer)

    def leave(self, peer: _Queued) -> None:
        with self._lock:
            if peer in self._members:
                self._members.remove(peer)

    def share(self) -> int:
        return self.cap // max(1, len(self._members))

    def take(self, peer: _Queued, n: int) -> _Queued | None:
        """Count n bytes for `peer`; None when they fit, else the client to drop (nothing counted)."""
        with self._lock:
            if self.used + n <= self.cap:
                self.used += n
                self.peak = max(self.peak, self.used)
                return None
            live = [p for p in self._members if not p.closed and p is not peer]
            share = self.cap // max(1, len(live) + 1)
            if peer.queued + n > share or not live:
                return peer
            return max(live, key=lambda p: p.queued)

    def give(self, n: int) -> None:
        with self._lock:
            self.used -= n
