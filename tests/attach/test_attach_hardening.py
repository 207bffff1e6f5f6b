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
def test_connections_before_hello_are_capped(srv: AttachServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "MAX_PENDING", 3)
    srv.start()
    quiet = [_conn(srv) for _ in range(3)]
    time.sleep(0.3)
    extra = first_line(_conn(srv))
    assert extra["kind"] == "refused" and "waiting to say hello" in extra["reason"]
    for q in quiet:
        q.close()


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
