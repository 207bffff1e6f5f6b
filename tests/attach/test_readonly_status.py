"""Read-only watchers and `c2tui status` (issue 26).

Library level: a read-only client (asked for on a Unix socket, or by the read-only token on
TCP) gets every event and every control of its is refused with a clear Reply; the full token
still steers. End to end on a live sim `c2tui record --listen`: `status --json` (cuzk's
GetStatus fields), `status` as text, `attach --readonly --send` refused (exit 2, nothing
changed in the recording), a full client's `--send cordon=gpu1` applied and recorded with its
source, and nothing to attach to (exit 2)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prover.attach import wire
from prover.attach.client import AttachClient, AttachRefused, RemoteController
from prover.attach.server import AttachServer
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _engine() -> Engine:
    return Engine(load_config(None, backend="sim", profile="tiny", partitions=4, workers_per_gpu=2), phases=NullPhases())


@pytest.mark.timeout(30)
def test_readonly_clients_see_everything_and_steer_nothing(tmp_path):
    port = _free_port()
    eng = _engine()
    srv = AttachServer(eng, f"tcp://127.0.0.1:{port}", token="full", readonly_token="look").start()
    eng.start()
    try:
        watcher = AttachClient(f"tcp://127.0.0.1:{port}", name="watcher", token="look")
        assert watcher.connect().readonly
        seen: list = []
        watcher.start(seen.append)
        with pytest.raises(ValueError, match="read-only client: attach:watcher may watch this run but not steer it"):
            RemoteController(watcher).set_mem_sync("stream")
        with pytest.raises(ValueError, match="read-only"):
            RemoteController(watcher).submit_sector()
        asked = AttachClient(f"tcp://127.0.0.1:{port}", name="polite", token="full", readonly=True)
        assert asked.connect().readonly
        asked.start(lambda e: None)
        with pytest.raises(ValueError, match="read-only"):
            RemoteController(asked).pause()
        full = AttachClient(f"tcp://127.0.0.1:{port}", name="ops", token="full")
        assert not full.connect().readonly
        full.start(lambda e: None)
        assert RemoteController(full).set_mem_sync("stream")
        with pytest.raises(AttachRefused, match="token"):
            AttachClient(f"tcp://127.0.0.1:{port}", token="guess").connect()
        end = time.monotonic() + 10
        while time.monotonic() < end and not any(e.kind == "mode_change" for e in seen):
            time.sleep(0.02)
        changes = [(e.knob, e.source) for e in seen if e.kind == "mode_change"]
        assert changes == [("mem_sync", "attach:ops")]  # the watcher saw the change it could not make
        assert any(e.kind == "run_started" for e in seen)
        for c in (watcher, asked, full):
            c.close()
    finally:
        eng.stop(timeout=10)
        srv.close()


def test_readonly_is_in_the_wire_contract():
    assert wire.ClientHello(protocol=wire.PROTOCOL_VERSION, client="x", readonly=True).readonly
    assert wire.PROTOCOL_VERSION == 2


def c2tui(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "c2tui", *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


def _status_once_running(sock: Path, out: Path, rec: subprocess.Popen, seconds: float = 120) -> dict:
    """`status --json` once the run is past start-up: both GPUs registered and every worker
    started (read from the recording as it is written: a cold numba cache makes start-up take
    20 s or more, so no fixed delay fits), and the server has folded them."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert rec.poll() is None, rec.stderr.read() if rec.stderr else "the run ended early"
        text = out.read_text(errors="replace") if out.exists() else ""
        if sock.exists() and text.count('"worker_started"') >= 4:
            r = c2tui("status", str(sock), "--json")
            assert r.returncode == 0, r.stderr
            st = json.loads(r.stdout)
            if [g["gpu"] for g in st["gpus"]] == [0, 1] and all(g["workers"] == 2 for g in st["gpus"]):
                return st
        time.sleep(0.1)
    raise AssertionError("the run never got past start-up")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_status_and_readonly_attach_on_a_live_sim_run(tmp_path):
    """The run starts paused (so it is still running, however long start-up took, when the
    commands below come) and one sector long: the operator resumes it at the end."""
    sock, out = tmp_path / "run.sock", tmp_path / "run.jsonl"
    rec = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "-q", "--out", str(out), "--listen", str(sock),
                            "--backend", "sim", "--gpus", "2", "--workers-per-gpu", "2", "--constraints-log2", "8",
                            "--time-scale", "0.1", "--sectors", "1", "--switch", "0:pause",
                            "--host-ram-budget", "200GiB"],
                           cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        st = _status_once_running(sock, out, rec)
        assert st["backend"] == "sim" and st["simulated"] and st["uptime_s"] > 0 and not st["ended"]
        assert [g["gpu"] for g in st["gpus"]] == [0, 1]
        g = st["gpus"][0]
        assert g["name"] and g["vram_total"] > 0 and g["vram_budget"] > 0 and g["vram_free"] >= 0
        assert set(g["locks"]) == {"mem", "compute"} and g["workers"] == 2
        assert set(st["proofs"]) == {"verified", "failed", "unchecked"} and "c2" in st["queues"]
        assert st["host_ram"]["budget"] == 200 << 30 and st["host_ram"]["key"] > 0
        assert st["knobs"]["lock_mode"] == "two-lock"
        text = c2tui("status", str(sock))
        assert text.returncode == 0 and "per GPU" in text.stdout and "host RAM" in text.stdout, text.stderr
        ro = c2tui("attach", str(sock), "--readonly", "--name", "watcher", "--send", "mem_sync=stream")
        assert ro.returncode == 2 and "read-only client: attach:watcher may watch" in ro.stderr, ro.stderr
        ok = c2tui("attach", str(sock), "--name", "ops", "--send", "cordon=gpu1")
        assert ok.returncode == 0, ok.stderr
        go = c2tui("attach", str(sock), "--name", "ops", "--send", "resume")
        assert go.returncode == 0, go.stderr
        assert rec.wait(timeout=90) == 0, rec.stderr.read()
    finally:
        if rec.poll() is None:
            rec.kill()
    events = read_recording(out).events
    changes = [(e.knob, e.new, e.source) for e in events if e.kind == "mode_change"]
    assert changes == [("paused", "True", "switch"), ("paused", "False", "attach:ops")]  # the watcher changed nothing
    assert [(e.action, e.target, e.source) for e in events if e.kind == "job_action"] == [("cordon", "gpu1", "attach:ops")]
    gone = c2tui("status", str(sock), "--json")
    assert gone.returncode == 2 and "cannot attach" in gone.stderr


@pytest.mark.timeout(60)
def test_a_readonly_dashboard_lists_no_steering_keys_and_says_why_a_key_does_nothing(tmp_path):
    import asyncio

    from textual.widgets._footer import FooterKey

    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.live import AttachSource
    from tests.helpers.pilot_wait import until

    port = _free_port()
    eng = _engine()
    srv = AttachServer(eng, f"tcp://127.0.0.1:{port}", token="full-token-0123456789",
                       readonly_token="look-token-0123456789").start()
    eng.controller.pause(source="test")
    eng.start()
    token = tmp_path / "look"
    token.write_text("look-token-0123456789")  # 16 characters at least (prover/bounds.py)
    token.chmod(0o600)
    try:
        source = AttachSource(f"tcp://127.0.0.1:{port}", name="watcher", token_file=str(token))
        source.connect()
        assert source.readonly
        app = DashboardApp(source)

        async def drive() -> None:
            async with app.run_test(size=(160, 48)) as pilot:
                await until(pilot, lambda: app.state is not None and app.state.started, 20)
                await until(pilot, lambda: any(True for _ in app.screen.query(FooterKey)), 10)
                actions = {k.action for k in app.screen.query(FooterKey)}
                assert "detach" in actions and "help" in actions
                assert not actions & {"lock_mode", "mem_sync", "pause", "submit"}, actions
                before = dict(app.state.knobs)
                await pilot.press("m")
                await until(pilot, lambda: any("read-only" in str(n.message) for n in app._notifications), 5)
                await pilot.pause(0.3)
                assert app.state.knobs == before and not [e for e in app.state.log if "mem_sync" in str(e)]

        asyncio.run(drive())
    finally:
        eng.stop(timeout=10)
        srv.close()
