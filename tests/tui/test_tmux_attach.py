"""Attach in real terminals: record --listen in one tmux pane, attach in another; `m` in the
attach pane changes mem_sync in both headers (benchmarks/tmux_attach_smoke.sh)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(180)
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_tmux_attach(tmp_path):
    out = tmp_path / "attach.json"
    env = dict(os.environ, PYTHON=sys.executable)
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "tmux_attach_smoke.sh"), str(out)], env=env,
                       capture_output=True, text=True, timeout=170)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    assert all(res["seen"].values()) and res["record_still_running"] and res["socket_removed"]
    assert ["mem_sync", "stream", "attach:tmux"] in res["recorded_changes"]


@pytest.mark.timeout(120)
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_tmux_run_listen(tmp_path):
    """`c2tui --backend sim --listen PATH` (the interactive run) serves too: a control sent with
    `c2tui attach PATH --send` shows in its header; on quit the socket file is gone."""
    import re
    import time

    sock, session = tmp_path / "run.sock", f"c2tui-runlisten-{os.getpid()}"
    cmd = (f"TERM=xterm-256color {sys.executable} -m c2tui --backend sim --profile tiny --time-scale 0.3 "
           f"--listen {sock}; echo RUN-EXIT=$?; sleep 30")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "48", cmd], cwd=ROOT, check=True)

    def cap() -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout

    def until(pred, limit=30.0):
        end = time.time() + limit
        while time.time() < end:
            if pred():
                return True
            time.sleep(0.25)
        return False

    try:
        assert until(lambda: sock.exists() and re.search(r"mem_sync\s+device", cap())), cap()
        r = subprocess.run([sys.executable, "-m", "c2tui", "attach", str(sock), "--send", "mem_sync=stream", "--name", "ops"],
                           cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert until(lambda: re.search(r"mem_sync\s+stream", cap())), cap()
        subprocess.run(["tmux", "send-keys", "-t", session, "C-c"])  # Ctrl-C: exit 3, as for any command
        assert until(lambda: "RUN-EXIT=3" in cap()), cap()
        assert not sock.exists()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
