"""One attached client on the server side: a bounded outgoing queue drained by its own
writer thread, and a reader thread that turns its control lines into controller calls.

The prover's side only ever appends to the queue (never blocks on the socket); a client
whose queue passes QUEUE_LIMIT event lines or QUEUE_BYTES bytes (every byte counts: history,
events, replies) is dropped (socket shut down), not waited for. A Peer is the server's record
of one client (name, since, bytes queued and sent): what a status command would list.
"""
from __future__ import annotations

import socket
import threading
import time
from collections import deque
from typing import Any, Callable

from prover.attach import wire

QUEUE_LIMIT = 50_000  # event lines queued for one client before it is dropped as too slow
QUEUE_BYTES = 64 << 20  # bytes queued for one client (history, events, replies) before it is dropped


class Peer:
    def __init__(self, sock: socket.socket, name: str, on_close: Callable[["Peer"], None],
                 queue_limit: int = QUEUE_LIMIT, queue_bytes: int = QUEUE_BYTES, readonly: bool = False) -> None:
        self.sock = sock
        self.name = name
        self.readonly = readonly  # sees everything, steers nothing: its controls are refused
        self.queue_limit = queue_limit
        self.queue_bytes = queue_bytes
        self.since = time.time()
        self.sent = 0  # bytes written to the socket
        self._on_close = on_close
        self._q: deque[bytes] = deque()
        self._pending = 0  # event lines in _q
        self.queued = 0  # bytes in _q, whatever they are
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self.closed = False
        self._final = False  # close once the queue is sent (Bye)
        self.reason = ""
        self._writer = threading.Thread(target=self._write_loop, name=f"attach-w-{name}", daemon=True)

    def start(self) -> None:
        self._writer.start()

    # --- called by the dispatcher / reader: never blocks on the socket --------------------
    def push(self, data: bytes, lines: int = 0) -> bool:
        """Queue bytes; False (and the client is dropped) when it is too far behind."""
        with self._lock:
            if self.closed:
                return False
            if self._pending + lines > self.queue_limit:
                overflow = f"more than {self.queue_limit} events queued"
            elif self.queued + len(data) > self.queue_bytes:
                overflow = f"more than {self.queue_bytes >> 20} MiB queued"
            else:
                overflow = ""
                self._q.append(data)
                self._pending += lines
                self.queued += len(data)
        if overflow:
            self.close(f"too slow: {overflow}")
            return False
        self._wake.set()
        return True

    def close(self, reason: str) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self.reason = reason
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
                if chunks:  # still counted against the bound until sent: a reader that stops stalls sendall
                    data = b"".join(chunks)
                    self.sock.sendall(data)
                    with self._lock:
                        self.queued -= len(data)
                    self.sent += len(data)
                if self._final and not self._q:
                    self.close(self.reason or "bye")
        except OSError as exc:
            self.close(f"connection lost: {exc.strerror or exc}")
        finally:
            try:
                self.sock.close()
            except OSError:
                pass

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
        """Apply control lines; `reply` queues the answer behind the events the change emitted."""
        source = f"attach:{self.name}"
        while not self.closed:
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
