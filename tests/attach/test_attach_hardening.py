"""The attach server cannot be pushed over (issue 24): the client limit is atomic, every
byte queued to a client counts against its bound, accept() errors are survived, connections
before hello are capped and have one deadline for the whole hello, the hello's types are
strict."""
from __future__ import annotations

import errno
import json
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from fuzz_cases import first_line  # the raw-socket reader the fuzz probes use
from prover.attach import server as S
from prover.attach import wire
from prover.attach.wire import PROTOCOL_VERSION
from prover.attach.server import AttachServer
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases


@pytest.fixture
def srv(tmp_path):  # type: ignore[no-untyped-def]
    eng = Engine(load_config(None, backend="sim", profile="tiny", partitions=2), phases=NullPhases())
    server = AttachServer(eng, str(tmp_path / "a.sock"), queue_bytes=64 << 10)
    yield server
    server.close()


def _conn(server: AttachServer) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(server.address.path)
    return s


def _hello(s: socket.socket, **over: object) -> dict:
    doc = {"kind": "hello", "protocol": PROTOCOL_VERSION, "client": "t", **over}
    s.sendall(json.dumps(doc).encode() + b"\n")
    return first_line(s)


@pytest.mark.timeout(60)
def test_client_limit_is_atomic(srv: AttachServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "MAX_CLIENTS", 3)
    srv.start()
    socks = [_conn(srv) for _ in range(12)]
    kinds: list[str] = []
    go = threading.Barrier(len(socks))

    def one(s: socket.socket) -> None:
        go.wait()
        kinds.append(_hello(s)["kind"])

    threads = [threading.Thread(target=one, args=(s,)) for s in socks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert sorted(kinds).count("welcome") == 3 and len(srv.clients) == 3, kinds


@pytest.mark.timeout(60)
def test_replies_count_against_the_bound(srv: AttachServer) -> None:
    srv.start()
    s = _conn(srv)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    assert _hello(s, client="mute")["kind"] == "welcome"
    line = json.dumps({"kind": "control", "id": 1, "spec": "no_such_knob=1"}).encode() + b"\n"
    s.settimeout(0.5)
    try:
        for _ in range(400):  # answers it never reads: ~100 B each
            s.sendall(line * 50)
    except OSError:
        pass  # dropped: the server shut the connection
    end = time.monotonic() + 20
    while time.monotonic() < end and not srv.dropped:
        time.sleep(0.05)
    assert srv.dropped and "too slow" in srv.dropped[0][1] and "MiB queued" in srv.dropped[0][1], srv.dropped


class _Flaky:
    """The listening socket, whose accept() fails as a process out of descriptors does."""

    def __init__(self, sock: socket.socket, fails: int) -> None:
        self.sock, self.fails = sock, fails

    def accept(self):  # type: ignore[no-untyped-def]
        if self.fails:
            self.fails -= 1
            raise OSError(errno.EMFILE, "Too many open files")
        return self.sock.accept()

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.sock, name)


@pytest.mark.timeout(60)
def test_accept_errors_are_survived(srv: AttachServer) -> None:
    srv.start()
    srv._sock = _Flaky(srv._sock, 4)  # type: ignore[assignment]
    time.sleep(0.5)
    assert _hello(_conn(srv))["kind"] == "welcome"
    assert srv.accept_errors == 4


@pytest.mark.timeout(60)
def test_connections_before_hello_are_capped_and_the_oldest_gives_way(srv: AttachServer,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: 16 connections that never said hello refused 49 of 60 legitimate attaches. Now
    the places before hello stay capped, and a new connection takes the oldest silent one's."""
    monkeypatch.setattr(S, "MAX_PENDING", 3)
    srv.start()
    quiet = [_conn(srv) for _ in range(3)]
    time.sleep(0.3)
    assert len(srv._pending) == 3
    welcomed = 0
    for i in range(10):  # each legitimate client gets in while the strangers keep coming back
        quiet.append(_conn(srv))
        welcomed += _hello(_conn(srv), client=f"ok{i}")["kind"] == "welcome"
        quiet.append(_conn(srv))
    assert welcomed == 10
    assert len(srv._pending) <= 3
    evicted = first_line(quiet[0])
    assert evicted["kind"] in ("refused", "closed") and "gives way" in evicted.get("reason", "gives way")
    for q in quiet:
        q.close()


@pytest.mark.timeout(120)
def test_sixteen_idle_strangers_keep_no_client_out(tmp_path) -> None:
    """The issue's probe at the real limits: 16 connections that never say hello, held open;
    then 20 legitimate attaches, one after another: every one is welcomed."""
    eng = Engine(load_config(None, backend="sim", profile="tiny", partitions=2), phases=NullPhases())
    server = AttachServer(eng, str(tmp_path / "b.sock")).start()
    try:
        strangers = [_conn(server) for _ in range(S.MAX_PENDING)]
        time.sleep(0.3)
        kinds = []
        for i in range(20):
            s = _conn(server)
            kinds.append(_hello(s, client=f"legit{i}")["kind"])
            s.close()
            strangers.append(_conn(server))  # a stranger takes a place again
        assert kinds == ["welcome"] * 20, kinds
    finally:
        server.close()
        for s in strangers:
            s.close()


@pytest.mark.timeout(60)
def test_every_clients_queue_counts_against_one_server_wide_cap(tmp_path) -> None:
    """Issue 35: 8 clients that do not read took the server from 172 MB to 2 GB. Every byte
    queued for a client is counted against it and against the server's cap; a client over its
    share is dropped, and the bytes counted never pass the cap."""
    from prover import events as ev

    eng = Engine(load_config(None, backend="sim", profile="tiny", partitions=2), phases=NullPhases())
    server = AttachServer(eng, str(tmp_path / "c.sock"), queue_bytes=4 << 20, server_queue_bytes=6 << 20).start()
    mute = []
    for i in range(4):  # 4 x 4 MiB allowed each, 6 MiB for all together
        s = _conn(server)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        assert _hello(s, client=f"mute{i}", readonly=i % 2 == 1)["kind"] == "welcome"
        mute.append(s)
    note = "x" * 4000
    for k in range(3000):  # ~12 MB of events, none of it read
        server.sink(ev.Note(t=k * 0.001, level="info", text=note))
        if k % 100 == 0:
            time.sleep(0.02)
            assert server.budget.used <= server.budget.cap
    end = time.monotonic() + 20
    while time.monotonic() < end and len(server.dropped) < 3:
        time.sleep(0.05)
    assert server.budget.peak <= 6 << 20
    assert any("share of the server's queue" in r for _, r in server.dropped), server.dropped
    server.close()
    assert server.budget.used == 0  # every byte counted was given back
    for s in mute:
        s.close()


@pytest.mark.timeout(60)
def test_the_whole_hello_has_one_deadline(srv: AttachServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "HELLO_TIMEOUT_S", 1.0)
    srv.start()
    s = _conn(srv)
    t0 = time.monotonic()
    try:
        for ch in b'{"kind": "hello", "protocol": %d, "client": "drip"}' % PROTOCOL_VERSION:  # a byte every 0.2 s: 10 s in all
            s.sendall(bytes([ch]))
            time.sleep(0.2)
    except OSError:
        pass
    s.settimeout(5)
    assert first_line(s)["kind"] in ("refused", "closed") and time.monotonic() - t0 < 4
    assert srv.clients == []


@pytest.mark.parametrize("protocol", [str(PROTOCOL_VERSION), float(PROTOCOL_VERSION), True])
def test_hello_types_are_strict(srv: AttachServer, protocol: object) -> None:
    srv.start()
    reply = _hello(_conn(srv), protocol=protocol)
    assert reply["kind"] == "refused" and "bad hello" in reply["reason"], reply


class _CountingEngine:
    """What AttachServer needs of an engine, with a controller that counts the controls applied."""

    def __init__(self) -> None:
        self.sinks: list = []
        self.applied = 0
        self.controller = self

    def add_sink(self, fn) -> None:  # type: ignore[no-untyped-def]
        self.sinks.append(fn)

    def remove_sink(self, fn) -> None:  # type: ignore[no-untyped-def]
        self.sinks.remove(fn)

    def apply(self, spec: str, source: str = "") -> bool:
        self.applied += 1
        return False


@pytest.mark.timeout(60)
def test_a_client_flooding_controls_is_paced_and_its_replies_bounded(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: 8 clients sending controls without reading a reply took the prover from 102 to
    1 verified/min (the server's CPU) and grew one server-wide reply queue. Lines are read at
    CLIENT_LINES_PER_S, the replies not yet queued for a client are bounded, and past
    MAX_CLIENT_LINES the client is dropped."""
    from prover import bounds

    monkeypatch.setattr(bounds, "MAX_CLIENT_LINES", 300)
    eng = _CountingEngine()
    server = AttachServer(eng, str(tmp_path / "f.sock")).start()
    s = _conn(server)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    assert _hello(s, client="flood")["kind"] == "welcome"
    line = json.dumps({"kind": "control", "id": 1, "spec": "mem_sync=stream"}).encode() + b"\n"
    s.settimeout(0.05)
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < 1.5:  # as fast as the socket takes them
            s.sendall(line * 100)
    except OSError:
        pass
    seen = eng.applied
    assert seen <= bounds.CLIENT_LINES_PER_S * 2.5 + 50, seen  # a burst, then the pace; before: all of them
    assert sum(x.peer.waiting for x in list(server._in) if hasattr(x, "peer")) <= S.REPLIES_WAITING + 4096
    end = time.monotonic() + 20
    while time.monotonic() < end and not server.dropped:
        time.sleep(0.05)
    assert server.dropped and "more than 300 lines" in server.dropped[0][1], server.dropped
    server.close()
    s.close()
