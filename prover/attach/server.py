"""Serve a running engine's event stream and controller to attached clients.

    server = AttachServer(engine, "run.sock", header=header.model_dump())
    server.start()          # before engine.start(): the history then starts at RunStarted
    ...
    server.close()          # says Bye to every client, removes the socket file

The engine's sink only appends the event to a deque (O(1), never blocks a prover thread).
One dispatcher thread serialises each event once, keeps it in the history and hands the
line to every client's bounded queue (prover/attach/peer.py); a client that falls
QUEUE_LIMIT lines or QUEUE_BYTES bytes behind is dropped (replies count too).

Pushing it over: at most MAX_CLIENTS attached (checked and taken under one lock); every
byte queued for a client counted against it and against one server-wide cap
(prover/attach/queue_budget.py), replies waiting for the dispatcher included (a client's
reader waits while REPLIES_WAITING bytes of its replies are not yet queued); at most
MAX_PENDING connections that have not said hello yet, each with HELLO_DEADLINE_S for its
whole hello, not per read, and a new connection takes the place of the oldest one still
silent (so idle strangers cannot keep a client out: it says hello at once, they never do);
a hello's fields at their exact types, and an accept() error
(EMFILE, ENFILE, ...) backs off and goes on instead of ending the accept loop. History: every event since run start up to
HISTORY_LIMIT; past that the oldest high-volume events (phase progress, locks, VRAM
samples, ...) are dropped while the run's skeleton (PINNED_KINDS) is kept, and Welcome
says how many were left out.
"""
from __future__ import annotations

import hmac
import itertools
import os
import socket
import stat
import threading
from collections import deque
from heapq import merge
from typing import Any

from prover import bounds
from prover.attach import wire
from prover.attach.address import Address, AttachError, parse_address
from prover.attach.peer import QUEUE_BYTES, QUEUE_LIMIT, Peer
from prover.attach.queue_budget import SERVER_QUEUE_BYTES, QueueBudget
from prover.record import _dump_line

HISTORY_LIMIT = 100_000  # high-volume event lines kept for late joiners
PINNED_LIMIT = 20_000  # skeleton event lines kept (run, GPUs, workers, knobs, sectors, notes)
PINNED_KINDS = frozenset({"run_started", "gpu_info", "worker_started", "worker_stopped", "mode_change",
                          "sector_submitted", "note", "run_ended", "partition_done", "proof_result"})
MAX_CLIENTS = 16
MAX_PENDING = 16  # connections accepted and not yet through their hello (the oldest gives way)
REPLIES_WAITING = 256 << 10  # bytes of one client's replies not yet in its queue before its reader waits
ACCEPT_BACKOFF_S = (0.05, 1.0)  # after an accept() error: first wait, longest wait


class _Direct:
    """A line for one client, queued with the events so it follows those emitted before it."""

    __slots__ = ("peer", "data")

    def __init__(self, peer: Peer, data: bytes) -> None:
        self.peer, self.data = peer, data


HELLO_TIMEOUT_S = bounds.HELLO_DEADLINE_S  # for the whole hello, first byte to last


def _probe_unix(path: str) -> bool:
    """True if a server answers at path (a stale socket file refuses the connection)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect(path)
        return True
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError:
        return True  # e.g. a full backlog: something is there; do not take the path
    finally:
        s.close()


def bind_unix(path: str) -> tuple[socket.socket, int]:
    """Listen at path, owner-only (0600 from creation); replace a stale socket file, refuse a
    live one or a path that is not a socket. Returns the socket and the file's inode."""
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise AttachError(f"{path} exists and is not a socket; not touching it")
        if _probe_unix(path):
            raise AttachError(f"a c2tui prover is already serving at {path}; pick another path or stop it")
        os.unlink(path)  # stale: left by a killed run
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the file is created 0600: never reachable by another user, not even briefly
    try:
        s.bind(path)
    except OSError as exc:
        s.close()
        raise AttachError(f"cannot listen at {path}: {exc.strerror or exc}") from None
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    s.listen(128)  # a burst of connects queues; the limits are applied once accepted
    return s, os.stat(path).st_ino


class AttachServer:
    def __init__(self, engine: Any, address: str | Address, *, header: dict | None = None,
                 token: str | None = None, history_limit: int = HISTORY_LIMIT,
                 queue_limit: int = QUEUE_LIMIT, queue_bytes: int = QUEUE_BYTES,
                 readonly_token: str | None = None, server_queue_bytes: int = SERVER_QUEUE_BYTES) -> None:
        self.engine = engine
        self.address = parse_address(address) if isinstance(address, str) else address
        if self.address.tcp and not token:
            raise AttachError("a TCP listener needs a token")
        self.header = header or {}
        self.token = token
        self.readonly_token = readonly_token  # TCP: a client with this one watches, never steers
        self.queue_limit = queue_limit
        self.queue_bytes = queue_bytes
        self._in: deque[Any] = deque()
        self._seq = itertools.count()
        self._pinned: deque[tuple[int, bytes]] = deque(maxlen=PINNED_LIMIT)
        self._window: deque[tuple[int, bytes]] = deque(maxlen=history_limit)
        self.total = 0
        # history + client list: a joiner gets history then live, no gap (re-entrant: a peer
        # dropped while being admitted leaves through _left)
        self._lock = threading.RLock()
        self._peers: list[Peer] = []
        self._names: set[str] = set()
        self.budget = QueueBudget(server_queue_bytes)
        self._pending: dict[int, socket.socket] = {}  # connections before their hello, oldest first (under _lock)
        self._evicted: set[int] = set()  # pending ones a newer connection displaced
        self._conn_ids = itertools.count()
        self.accept_errors = 0
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._ino: int | None = None
        self._threads: list[threading.Thread] = []
        self.dropped: list[tuple[str, str]] = []  # (client, reason) of clients that went away

    # --- life cycle ---------------------------------------------------------------------------
    def start(self) -> "AttachServer":
        a = self.address
        if a.tcp:
            s = socket.create_server((a.host, a.port), family=socket.AF_INET6 if ":" in str(a.host) else socket.AF_INET)
            self._sock = s
        else:
            self._sock, self._ino = bind_unix(a.path)  # type: ignore[arg-type]
        self._sock.settimeout(0.2)
        self.engine.add_sink(self.sink)
        for target, name in ((self._dispatch_loop, "attach-dispatch"), (self._accept_loop, "attach-accept")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def close(self, reason: str = "server closing") -> None:
        if self._stop.is_set():
            return
        self.engine.remove_sink(self.sink)
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self._fan_out()  # the last events (RunEnded) reach the clients before Bye
        for p in list(self._peers):
            p.flush_and_close(wire.Bye(reason=reason))
        if self._sock is not None:
            self._sock.close()
        self._unlink()

    def _unlink(self) -> None:
        """Remove our socket file (only if it is still ours, not a later server's)."""
        path = self.address.path
        if path is None or self._ino is None:
            return
        try:
            if os.stat(path).st_ino == self._ino:
                os.unlink(path)
        except OSError:
            pass

    def __enter__(self) -> "AttachServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def clients(self) -> list[str]:
        with self._lock:
            return [p.name for p in self._peers]

    # --- prover side ----------------------------------------------------------------------------
    def sink(self, e: Any) -> None:
        """Called on prover threads: O(1), never blocks."""
        self._in.append(e)

    def _dispatch_loop(self) -> None:
        while not self._stop.wait(0.01):
            self._fan_out()

    def _fan_out(self) -> None:
        q = self._in
        if not q:
            return
        out: list[tuple[Peer | None, list[bytes]]] = []  # None: every client
        batch: list[bytes] = []
        with self._lock:
            while q:
                e = q.popleft()
                if isinstance(e, _Direct):
                    if batch:
                        out.append((None, batch))
                        batch = []
                    out.append((e.peer, [e.data]))
                    continue
                line = _dump_line(e) + b"\n"
                (self._pinned if e.kind in PINNED_KINDS else self._window).append((next(self._seq), line))
                batch.append(line)
                self.total += 1
            if batch:
                out.append((None, batch))
            peers = list(self._peers)
        for target, lines in out:
            if target is not None:
                target.count_waiting(-len(lines[0]))
                target.push(lines[0])
                continue
            data = b"".join(lines)
            for p in peers:
                p.push(data, len(lines))

    def _reply(self, peer: Peer, data: bytes) -> None:
        """Called on the client's reader thread: it waits while too many of its replies are not
        yet queued, so a client that floods controls and never reads cannot grow _in."""
        while peer.waiting > REPLIES_WAITING and not peer.closed and not self._stop.wait(0.005):
            pass
        peer.count_waiting(len(data))
        self._in.append(_Direct(peer, data))

    # --- clients ----------------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        assert self._sock is not None
        backoff = ACCEPT_BACKOFF_S[0]
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (socket.timeout, TimeoutError):
                continue
            except OSError:  # EMFILE, ENFILE, ENOBUFS, ECONNABORTED...: wait a little, go on
                self.accept_errors += 1
                if self._stop.wait(backoff):
                    return
                backoff = min(backoff * 2, ACCEPT_BACKOFF_S[1])
                continue
            backoff = ACCEPT_BACKOFF_S[0]
            key = next(self._conn_ids)
            with self._lock:
                oldest = next(iter(self._pending)) if len(self._pending) >= MAX_PENDING else None
                if oldest is not None:  # the longest silent gives way: a stranger cannot hold the place
                    self._evicted.add(oldest)
                    _shutdown(self._pending.pop(oldest))
                self._pending[key] = conn
            try:
                threading.Thread(target=self._serve, args=(conn, key), name="attach-peer", daemon=True).start()
            except RuntimeError:  # no thread to spare
                self._hello_done(key)
                _refuse(conn, "the server cannot take another connection now")

    def _hello_done(self, key: int) -> bool:
        """The connection leaves the waiting places; False if a newer one had displaced it."""
        with self._lock:
            self._pending.pop(key, None)
            if key in self._evicted:
                self._evicted.discard(key)
                return False
            return True

    def _serve(self, conn: socket.socket, key: int) -> None:
        conn.settimeout(HELLO_TIMEOUT_S)
        # the deadline is for the whole hello: a byte every few seconds does not keep it open
        deadline = threading.Timer(HELLO_TIMEOUT_S, _shutdown, args=(conn,))
        deadline.daemon = True
        deadline.start()
        reader = conn.makefile("rb")
        try:
            try:
                hello = self._handshake(conn, reader)
            finally:
                deadline.cancel()
                kept = self._hello_done(key)
        except (OSError, wire.WireError) as exc:
            _refuse(conn, f"bad hello: {exc}" if kept else
                    f"no hello while {MAX_PENDING} newer connections came: the oldest silent one gives way")
            return
        if hello is None:
            return
        conn.settimeout(None)
        peer = self._join(conn, hello.client, hello.readonly or self._readonly_token(hello))
        if peer is None:
            return
        try:
            peer.serve_controls(reader, self.engine.controller, self._reply)
        except OSError as exc:
            peer.close(f"connection lost: {exc.strerror or exc}")

    def _handshake(self, conn: socket.socket, reader: Any) -> wire.ClientHello | None:
        line = reader.readline(wire.MAX_LINE + 1)
        if not line.endswith(b"\n"):
            raise wire.WireError("no whole hello line within the deadline" if len(line) <= wire.MAX_LINE
                                 else f"longer than {wire.MAX_LINE} bytes")
        msg = wire.parse_client(line)
        if not isinstance(msg, wire.ClientHello):
            _refuse(conn, "the first line must be a hello")
            return None
        if msg.protocol != wire.PROTOCOL_VERSION:
            _refuse(conn, f"protocol version {msg.protocol} is not spoken here: this prover speaks "
                          f"attach protocol {wire.PROTOCOL_VERSION}; use the c2tui that matches it")
            return None
        if self.address.tcp and not (_same(msg.token, self.token) or self._readonly_token(msg)):
            _refuse(conn, "bad or missing token")
            return None
        return msg

    def _readonly_token(self, hello: wire.ClientHello) -> bool:
        return self.address.tcp and self.readonly_token is not None and _same(hello.token, self.readonly_token)

    def _join(self, conn: socket.socket, want: str, readonly: bool = False) -> Peer | None:
        with self._lock:  # the limit checked and the place taken at once: 200 hellos, 16 welcomed
            peer = None if len(self._peers) >= MAX_CLIENTS else self._admit(conn, want, readonly)
            n = len(self._peers)
        if peer is None:
            _refuse(conn, f"too many clients attached ({MAX_CLIENTS})")
            return None
        if peer.closed:  # its history alone is over the bound
            conn.close()
            return None
        peer.start()
        self._note("info", f"attach: {peer.name} attached{' read-only' if readonly else ''} ({n} client(s))")
        return peer

    def _admit(self, conn: socket.socket, want: str, readonly: bool) -> Peer:
        """A new client's record, its history queued, on the list (called holding _lock)."""
        name = want
        for i in itertools.count(2):
            if name not in self._names:
                break
            name = f"{want}-{i}"
        peer = Peer(conn, name, self._left, self.queue_limit, self.queue_bytes, readonly=readonly, budget=self.budget)
        history = [line for _, line in merge(self._pinned, self._window)]  # shared with the history: no copy
        dropped = self.total - len(history)
        welcome = wire.Welcome(client=name, history=len(history), history_dropped=dropped, header=self.header,
                               readonly=readonly)
        if peer.push([wire.dump(welcome), *history, wire.dump(wire.Live(events=len(history)))]):
            self._peers.append(peer)
            self._names.add(name)
        return peer

    def _left(self, peer: Peer) -> None:
        with self._lock:
            if peer not in self._peers:
                return
            self._peers.remove(peer)
            self._names.discard(peer.name)
            self.dropped.append((peer.name, peer.reason))
        if not self._stop.is_set():
            self._note("warn" if "too slow" in peer.reason else "info", f"attach: {peer.name} left ({peer.reason})")

    def _note(self, level: str, text: str) -> None:
        """Attaches and departures are on record (a dropped slow client above all)."""
        emit = getattr(self.engine, "emit", None)
        if emit is not None:
            from prover import events as ev

            emit(ev.Note, level=level, text=text)


def _same(given: str | None, want: str | None) -> bool:
    return want is not None and hmac.compare_digest((given or "").encode(), want.encode())


def _shutdown(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _refuse(conn: socket.socket, reason: str) -> None:
    try:
        conn.sendall(wire.dump(wire.Refused(reason=reason)))
    except OSError:
        pass
    finally:
        conn.close()
