"""One attached client on the server side: a bounded outgoing queue drained by its own
writer thread, and a reader thread that turns its control lines into controller calls.

The prover's side only ever appends to the queue (never blocks on the socket); a client
whose queue passes QUEUE_LIMIT event lines or QUEUE_BYTES bytes (every byte counts: history,
events, replies, and what its writer is sending now) is dropped (socket shut down), not
waited for; so is the client named when all clients' queues together would pass the
server-wide cap (prover/attach/queue_budget.py). The writer sends what is queued in groups of
at most SEND_GROUP bytes: a client's backlog is never copied whole (a stalled client's join
of 64 MiB was one copy per client). A Peer is the server's record of one client (name,
since, bytes queued and sent): what a status command would list.
"""
from __future__ import annotations

import itertools
import socket
import threading
import time
from collections import deque
from typing import Any, Callable

from prover import bounds
from prover.attach import wire
from prover.attach.queue_budget import QueueBudget

QUEUE_LIMIT = 50_000  # event lines queued for one client before it is dropped as too slow
QUEUE_BYTES = 32 << 20  # bytes queued for one client (history, events, replies) before it is dropped
SEND_GROUP = 256 << 10  # bytes joined into one send: the writer's only copy


class Peer:
    def __init__(self, sock: socket.socket, name: str, on_close: Callable[["Peer"], None],
                 queue_limit: int = QUEUE_LIMIT, queue_bytes: int = QUEUE_BYTES, readonly: bool = False,
                 budget: QueueBudget | None = None) -> None:
        self.sock = sock
        self.name = name
        self.readonly = readonly  # sees everything, steers nothing: its controls are refused
        self.queue_limit = queue_limit
        self.queue_bytes = queue_bytes
        self.since = time.time()
        self.sent = 0  # bytes written to the socket
        self._on_close = on_close
        self.budget = budget if budget is not None else QueueBudget()
        self.budget.join(self)
        self._q: deque[bytes] = deque()
        self._pending = 0  # event lines in _q
        self.queued = 0  # bytes in _q, whatever they are
        self.waiting = 0  # bytes of replies the server holds for this client, not yet in _q
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self.closed = False
        self._final = False  # close once the queue is sent (Bye)
        self.reason = ""
        self._writer = threading.Thread(target=self._write_loop, name=f"attach-w-{name}", daemon=True)

    def start(self) -> None:
        self._writer.start()

    # --- called by the dispatcher / reader: never blocks on the socket --------------------
    def push(self, data: bytes | list[bytes], lines: int = 0) -> bool:
        """Queue bytes (one piece, or pieces shared with others: the history's lines); False
        (and a client is dropped: this one, or the one hogging the server-wide cap) when they
        do not fit."""
        pieces = data if isinstance(data, list) else [data]
        n = sum(map(len, pieces))
        victim = None
        with self._lock:
            if self.closed:
                return False
            if self._pending + lines > self.queue_limit:
                overflow = f"more than {self.queue_limit} events queued"
            elif self.queued + n > self.queue_bytes:
                overflow = f"more than {self.queue_bytes >> 20} MiB queued"
            elif (victim := self.budget.take(self, n)) is self:
                overflow = (f"over its share of the server's queue ({self.budget.share() >> 20} MiB of "
                            f"{self.budget.cap >> 20} MiB for all clients)")
            else:
                overflow = ""
                if victim is None:
                    self._q.extend(pieces)
                    self._pending += lines
                    self.queued += n
        if overflow:
            self.close(f"too slow: {overflow}")
            return False
        if victim is not None:  # another client holds more than its share: it goes, this one retries
            victim.close(f"too slow: over its share of the server's queue ({self.budget.cap >> 20} MiB for all clients)")  # type: ignore[attr-defined]
            return self.push(pieces, lines)
        self._wake.set()
        return True

    def count_waiting(self, n: int) -> None:
        """Replies held by the server for this client (+n) or moved into its queue (-n)."""
        with self._lock:
            self.waiting += n

    def _release(self, n: int) -> None:
        with self._lock:
            self.queued -= n
        self.budget.give(n)

    def close(self, reason: str) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self.reason = reason
            dropped = sum(map(len, self._q))  # never to be sent: given back now
            self._q.clear()
            self._pending = 0
            self.queued -= dropped
        self.budget.give(dropped)
        self.budget.leave(self)
        try:  # wakes the writer's sendall and the reader's recv at once
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._wake.set()
        self._on_close(self)

    # --- writer thread --------------------------------------------------------------------
    def _write_loop(self) -> None:
        try:
            while not self.closed:
                self._wake.wait(0.5)
                self._wake.clear()
                with self._lock:
                    chunks = list(self._q)
                    self._q.clear()
                    self._pending = 0
                self._send(chunks)  # still counted against the bounds until sent: a reader that stops stalls sendall
                if self._final and not self._q:
                    self.close(self.reason or "bye")
        except OSError as exc:
            self.close(f"connection lost: {exc.strerror or exc}")
        finally:
            try:
                self.sock.close()
            except OSError:
                pass

    def _send(self, chunks: list[bytes]) -> None:
        """Send in groups of at most SEND_GROUP bytes; each group's bytes are given back once
        sent, and all that is left when the socket fails."""
        i = 0
        try:
            while i < len(chunks):
                j, size = i, 0
                while j < len(chunks) and (j == i or size + len(chunks[j]) <= SEND_GROUP):
                    size += len(chunks[j])
                    j += 1
                self.sock.sendall(chunks[i] if j == i + 1 else b"".join(chunks[i:j]))
                self._release(size)
                self.sent += size
                i = j
        finally:
            if i < len(chunks):
                self._release(sum(map(len, chunks[i:])))

    def flush_and_close(self, bye: wire.Bye, timeout: float = 2.0) -> None:
        """Say goodbye after what is queued (run ended / server closing), then close."""
        self.reason = bye.reason
        self._final = True
        self.push(wire.dump(bye))
        if self._writer.is_alive():
            self._writer.join(timeout)
        self.close(bye.reason)

    # --- control lines (runs on the peer's reader thread) ----------------------------------
    def serve_controls(self, reader: Any, controller: Any, reply: Callable[["Peer", bytes], None]) -> None:
        """Apply control lines; `reply` queues the answer behind the events the change emitted.
        Lines are read at most CLIENT_LINES_PER_S a second (what waits stays in the socket: the
        client's sends block) and MAX_CLIENT_LINES a connection, blank ones included."""
        source = f"attach:{self.name}"
        pace = _Pace(bounds.CLIENT_LINES_PER_S)
        for n in itertools.count(1):
            if self.closed:
                return
            if n > bounds.MAX_CLIENT_LINES:
                self.close(f"sent more than {bounds.MAX_CLIENT_LINES} lines (prover/bounds.py)")
                return
            pace.wait()
            line = reader.readline(wire.MAX_LINE)
            if not line:
                self.close("client closed the connection")
                return
            if not line.strip():
                continue
            try:
                msg = wire.parse_client(line)
            except wire.WireError as exc:
                reply(self, wire.dump(wire.Reply(id=-1, ok=False, error=str(exc))))
                continue
            if isinstance(msg, wire.Bye):
                self.close("detached")
                return
            if self.readonly and isinstance(msg, (wire.Control, wire.Submit)):
                reply(self, wire.dump(wire.Reply(id=msg.id, ok=False, error=(
                    f"read-only client: {source} may watch this run but not steer it (attached read-only); "
                    f"{msg.kind} refused"))))
                continue
            reply(self, wire.dump(_handle(msg, controller, source)))


def _handle(msg: Any, controller: Any, source: str) -> wire.Reply:
    try:
        if isinstance(msg, wire.Control):
            return wire.Reply(id=msg.id, ok=True, changed=bool(controller.apply(msg.spec, source=source)))
        if isinstance(msg, wire.Submit):
            sector = controller.submit_sector(msg.partitions, source=source)
            return wire.Reply(id=msg.id, ok=True, changed=True, result=sector)
        return wire.Reply(id=getattr(msg, "id", -1), ok=False, error=f"unexpected {msg.kind!r} after hello")
    except (ValueError, RuntimeError) as exc:  # a refused change is told to the client, in words
        return wire.Reply(id=msg.id, ok=False, error=str(exc))


class _Pace:
    """A token bucket: `rate` a second, a burst of as many; wait() sleeps until one is there."""

    def __init__(self, rate: float) -> None:
        self.rate, self.tokens, self.last = rate, rate, time.monotonic()

    def wait(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens < 1:
            time.sleep((1 - self.tokens) / self.rate)
            self.tokens, self.last = 1.0, time.monotonic()
        self.tokens -= 1
