"""A real Prometheus server (loopback only, a temp dir, bounded time) scrapes a sim
`record --metrics-port` run that collapses to fallbacks (two-lock + mem_sync=device on a 16 GiB
card at 2^27) and evaluates the shipped rules: C2tuiFallbackCollapse fires.

The rules are the shipped file with every `for:` set to 0s (a test cannot wait 5 minutes);
the expressions are the ones an operator loads."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.observe.test_metrics_endpoint import ROOT, _port

RULES = ROOT / "docs" / "alerts" / "c2tui.rules.yml"
RUN = ["--backend", "sim", "--profile", "rtx5070ti-16g", "--constraints-log2", "8", "--time-scale", "0.05",
       "--gpus", "1", "--workers-per-gpu", "3", "--duration", "6", "--vram-budget", "16GiB",
       "--lock-mode", "two-lock", "--mem-sync", "device"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _firing(prom: str) -> set[str]:
    try:
        body = json.loads(urllib.request.urlopen(f"{prom}/api/v1/alerts", timeout=2).read())
    except OSError:  # not up yet
        return set()
    return {a["labels"]["alertname"] for a in body["data"]["alerts"] if a["state"] == "firing"}


def _prometheus_config(tmp: Path, target_port: int) -> Path:
    doc = yaml.safe_load(RULES.read_text())
    for g in doc["groups"]:
        for r in g["rules"]:
            r["for"] = "0s"
    (tmp / "rules.yml").write_text(yaml.safe_dump(doc))
    cfg = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
           "rule_files": [str(tmp / "rules.yml")],
           "scrape_configs": [{"job_name": "c2tui", "static_configs": [{"targets": [f"127.0.0.1:{target_port}"]}]}]}
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(cfg))
    return tmp / "prometheus.yml"


@pytest.mark.skipif(shutil.which("prometheus") is None,
                    reason="prometheus not installed (Debian package prometheus; .ci/run installs it)")
@pytest.mark.timeout(90)
def test_real_prometheus_fires_fallback_collapse_on_a_sim_run(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rec = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "-q", "--out", str(tmp_path / "r.jsonl"), *RUN,
                            "--metrics-port", "0", "--metrics-linger", "20"],
                           cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    prom_port, lines, prom = _free_port(), [], None
    try:
        cfg = _prometheus_config(tmp_path, _port(rec, lines))
        with open(tmp_path / "prometheus.log", "w") as log:
            prom = subprocess.Popen(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                     f"--web.listen-address=127.0.0.1:{prom_port}"],
                                    cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
        url, firing = f"http://127.0.0.1:{prom_port}", set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "C2tuiFallbackCollapse" not in firing:
            assert prom.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
            time.sleep(0.5)
            firing |= _firing(url)
        assert "C2tuiFallbackCollapse" in firing, (firing, (tmp_path / "prometheus.log").read_text()[-2000:])
        assert "C2tuiProofFailed" not in firing  # every sim proof verifies
    finally:
        for p in (prom, rec):
            if p is not None and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
