"""The attach server and client as a library (no Textual): handshake, history then live,
controls recorded as attach:<client>, refusals, socket mode, stale and live socket files."""
from __future__ import annotations

import os
import socket
import stat
import threading
import time

import pytest

from prover import events as ev
from prover.attach import wire
from prover.attach.address import AttachError, parse_address
from prover.attach.client import AttachClient, AttachRefused, RemoteController
from prover.attach.server import AttachServer
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases


def _engine(**kw):
    base = dict(backend="sim", profile="tiny", time_scale=1.0, partitions=4, workers_per_gpu=2)
    base.update(kw)
    return Engine(load_config(None, **base), phases=NullPhases())


def _wait(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


class Collector:
    def __init__(self):
        self.events, self.ended = [], None

    def __call__(self, e):
        self.events.append(e)

    def end(self, reason):
        self.ended = reason

    def knob(self, name):
        ch = [e for e in self.events if isinstance(e, ev.ModeChange) and e.knob == name]
        return ch[-1] if ch else None


@pytest.fixture
def served(tmp_path):
    eng = _engine()
    path = str(tmp_path / "p.sock")
    srv = AttachServer(eng, path, header={"argv": ["test"]}).start()
    eng.start()
    yield eng, srv, path
    eng.stop(timeout=10)
    srv.close()


@pytest.mark.timeout(60)
def test_history_then_live_and_controls_recorded_with_client(served):
    eng, srv, path = served
    seen = []
    eng.add_sink(seen.append)
    assert _wait(lambda: srv.total > 20)
    a, b = AttachClient(path, name="alice"), AttachClient(path, name="bob")
    ca, cb = Collector(), Collector()
    for c, col in ((a, ca), (b, cb)):
        w = c.connect()
        assert w.protocol == wire.PROTOCOL_VERSION and w.history > 0 and w.header["argv"] == ["test"]
        c.start(col, col.end)
    # the history starts at RunStarted, so a late joiner folds the whole run
    assert _wait(lambda: a.live and b.live)
    assert isinstance(ca.events[0], ev.RunStarted)
    assert RemoteController(a).set_mem_sync("stream") is True
    assert _wait(lambda: cb.knob("mem_sync") is not None)
    ch = cb.knob("mem_sync")
    assert (ch.new, ch.source) == ("stream", "attach:alice")
    assert any(isinstance(e, ev.ModeChange) and e.source == "attach:alice" for e in seen)  # the engine's own stream
    assert any(isinstance(e, ev.Note) and e.text.startswith("attach: bob attached") for e in seen)
    with pytest.raises(ValueError, match="workers_per_gpu must be"):
        RemoteController(b).set_workers_per_gpu(99)
    assert RemoteController(b).set_vram_budget("20GiB") is True  # a knob like the others over attach
    assert _wait(lambda: ca.knob("vram_budget") is not None)
    assert (ca.knob("vram_budget").new, ca.knob("vram_budget").source) == ("20 GiB", "attach:bob")
    with pytest.raises(ValueError, match="vram_budget"):
        RemoteController(b).set_vram_budget("lots")
    assert RemoteController(b).submit_sector(2) >= 0
    a.close()
    assert _wait(lambda: srv.clients == ["bob"])
    n = len(cb.events)
    assert _wait(lambda: len(cb.events) > n + 5)  # the prover and the other client go on
    b.close()


@pytest.mark.timeout(30)
def test_other_protocol_version_is_refused(served):
    _, _, path = served
    with pytest.raises(AttachRefused, match="protocol version 99 is not spoken here"):
        AttachClient(path, protocol=99).connect()


@pytest.mark.timeout(30)
def test_socket_is_owner_only(served):
    _, _, path = served
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o600, oct(mode)


@pytest.mark.timeout(30)
def test_live_socket_refused_stale_socket_reused_removed_on_close(tmp_path):
    path = str(tmp_path / "s.sock")
    eng = _engine()
    srv = AttachServer(eng, path).start()
    with pytest.raises(AttachError, match="already serving"):
        AttachServer(_engine(), path).start()
    srv.close()
    assert not os.path.exists(path)
    # a stale socket file, as a SIGKILLed run leaves it
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()
    assert os.path.exists(path)
    srv2 = AttachServer(_engine(), path).start()
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    srv2.close()
    (tmp_path / "f").write_text("x")
    with pytest.raises(AttachError, match="not a socket"):
        AttachServer(_engine(), str(tmp_path / "f")).start()


@pytest.mark.timeout(30)
def test_slow_client_is_dropped_not_waited_for(tmp_path):
    eng = _engine(time_scale=0.05)
    path = str(tmp_path / "q.sock")
    srv = AttachServer(eng, path, queue_limit=50).start()
    notes = []
    eng.add_sink(lambda e: notes.append(e.text) if isinstance(e, ev.Note) else None)
    # a client that says hello and then never reads
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(path)
    s.sendall(wire.dump(wire.ClientHello(protocol=wire.PROTOCOL_VERSION, client="sloth")))
    eng.start()
    try:
        assert _wait(lambda: any(n == "sloth" and "too slow" in r for n, r in srv.dropped), 20)
        assert _wait(lambda: any(t.startswith("attach: sloth left (too slow") for t in notes))
        t = srv.total
        assert _wait(lambda: srv.total > t + 50)
    finally:
        eng.stop(timeout=10)
        srv.close()
        s.close()


def test_tcp_is_loopback_only():
    assert parse_address("tcp://127.0.0.1:7700").port == 7700
    with pytest.raises(AttachError, match="loopback only"):
        parse_address("tcp://0.0.0.0:7700")


@pytest.mark.timeout(30)
def test_tcp_needs_the_token(tmp_path):
    port = _free_port()
    eng = _engine()
    srv = AttachServer(eng, f"tcp://127.0.0.1:{port}", token="s3cret").start()
    try:
        with pytest.raises(AttachRefused, match="token"):
            AttachClient(f"tcp://127.0.0.1:{port}", token="wrong").connect()
        c = AttachClient(f"tcp://127.0.0.1:{port}", token="s3cret")
        assert c.connect().client
        c.close()
    finally:
        srv.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(30)
def test_reply_follows_the_change_it_caused(served):
    _, _, path = served
    c = AttachClient(path, name="order")
    c.connect()
    seen = []
    c.start(seen.append)
    assert _wait(lambda: c.live)
    r = RemoteController(c).set_b_g2("gpu")
    assert r is True
    # the ModeChange was delivered before the Reply released the caller
    assert any(isinstance(e, ev.ModeChange) and e.knob == "b_g2" and e.source == "attach:order" for e in seen)
    c.close()
