"""Issue 44, done when: a prover whose knobs were set by attach, then `experiment --attach` or
`tune --attach` run on it (to their end, cut by SIGHUP, or by two Ctrl-C 1 ms apart during a
hold), has after it exactly the knobs it had before. And an embedded `experiment -o` on
SIGHUP ends its recording with run_ended. Real sim provers in subprocesses (slow)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from prover import AttachClient, RemoteController
from prover import events as ev
from prover.experiment.link import Live
from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
C2TUI = [sys.executable, "-m", "c2tui"]
SET_BY_HAND = {"lock_mode": "reserved", "workers_per_gpu": "5", "mem_sync": "stream"}
KNOBS = tuple(SET_BY_HAND)


class Watcher:
    """A client of the prover in the test: sets knobs by attach and follows every change."""

    def __init__(self, sock: Path) -> None:
        self.client = AttachClient(str(sock), name="test")
        self.client.connect()
        self.live = Live()
        self.changes: list[Any] = []
        self._seen = threading.Condition()
        self.client.start(self._on)
        self.remote = RemoteController(self.client)

    def _on(self, e: Any) -> None:
        self.live(e)
        if isinstance(e, ev.ModeChange):
            with self._seen:
                self.changes.append(e)
                self._seen.notify_all()

    def knobs(self) -> dict[str, str]:
        """The prover's knobs now: a control that changes nothing, answered after every event
        already emitted, then what the stream said."""
        self.remote.set("paused", False)
        return {k: self.live.knobs()[k] for k in KNOBS}

    def wait_change_by(self, source: str, since: int, timeout: float = 120.0) -> None:
        with self._seen:
            ok = self._seen.wait_for(lambda: any(c.source == source for c in self.changes[since:]), timeout)
        assert ok, f"no change by {source} within {timeout} s"


@pytest.fixture(scope="module")
def prover(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Watcher]]:
    d = tmp_path_factory.mktemp("asfound")
    sock = d / "p.sock"
    proc = subprocess.Popen([*C2TUI, "record", "--backend", "sim", "--gpus", "2", "--constraints-log2", "8",
                             "--time-scale", "0.25", "--duration", "1200", "-q", "-o", str(d / "prover.jsonl"),
                             "--listen", str(sock)], cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 120
    while not sock.exists() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    w = Watcher(sock)
    try:
        yield sock, w
    finally:
        w.client.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


EXPERIMENT = ["experiment", "--arm", "lock_mode=single,workers_per_gpu=16", "--arm", "lock_mode=two-lock,workers_per_gpu=1",
              "--cycles", "2", "--hold", "2", "--settle", "0.5", "--design", "abab", "-q"]
TUNE = ["tune", "--search", "lock_mode,workers_per_gpu", "--values", "lock_mode=single/two-lock", "--workers", "4..6",
        "--time", "40", "--hold", "1", "--settle", "0.2", "--confirm-cycles", "3", "-q"]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("how", ["done", "sighup", "two-ctrl-c"])
@pytest.mark.parametrize("cmd", ["experiment", "tune"])
def test_an_attached_prover_is_left_as_found(prover: tuple[Path, Watcher], cmd: str, how: str) -> None:
    sock, w = prover
    for k, v in SET_BY_HAND.items():  # not the knobs the prover started with
        w.remote.apply(f"{k}={v}")
    before = w.knobs()
    assert before == SET_BY_HAND
    name = f"{cmd}-{how}"
    since = len(w.changes)
    p = subprocess.Popen([*C2TUI, *(EXPERIMENT if cmd == "experiment" else TUNE), "--attach", str(sock), "--name", name],
                         cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if how != "done":  # during a hold: once the experiment has set an arm
        w.wait_change_by(f"attach:{name}", since)
        if how == "sighup":
            p.send_signal(signal.SIGHUP)
        else:
            p.send_signal(signal.SIGINT)
            time.sleep(0.001)
            p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=200)
    assert p.returncode == (0 if how == "done" else 3), err
    assert "Traceback" not in err
    assert w.knobs() == before, (err, [c for c in w.changes[since:]])


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_embedded_experiment_on_sighup_ends_its_recording_with_run_ended(tmp_path: Path) -> None:
    out = tmp_path / "exp.jsonl"
    p = subprocess.Popen([*C2TUI, *EXPERIMENT, "--backend", "sim", "--constraints-log2", "8", "-o", str(out)],
                         cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 180
    while p.poll() is None and time.monotonic() < end:  # the recording is flushed every 0.1 s
        if out.exists() and b'"hold_started"' in out.read_bytes():
            break
        time.sleep(0.05)
    assert p.poll() is None, p.communicate()
    p.send_signal(signal.SIGHUP)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3, err
    rec = read_recording(out)
    assert rec.error is None and rec.events[-1].kind == "run_ended", rec.error
    assert any(e.kind == "experiment_ended" and e.reason == "interrupted" for e in rec.events)
