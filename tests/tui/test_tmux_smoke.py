"""The real app in a real terminal (tmux): within 10 s of start it shows a lock holder, a VRAM
bar and an advancing phase bar, and quits cleanly on `q` (benchmarks/tmux_smoke.sh)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(120)
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_tmux_smoke(tmp_path):
    out = tmp_path / "smoke.json"
    env = dict(os.environ, PYTHON=sys.executable)
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "tmux_smoke.sh"), str(out)], env=env,
                       capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    assert res["ok"] and set(res["seen"]) == {"lock_holder", "vram_bar", "phase_bar_advanced"}
    assert all(v["t"] <= 10.0 for v in res["seen"].values())
