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
