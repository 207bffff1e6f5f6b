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

from tests.observe.test_metrics_endpoint import ROOT

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


def _scraping(prom: str) -> bool:
    """Prometheus is ready and its scrape loop has run once (`up` exists, 0 while the target is
    not listening yet)."""
    if not _ready(prom):
        return False
    try:
        body = json.loads(urllib.request.urlopen(f"{prom}/api/v1/query?query=up", timeout=2).read())
    except OSError:
        return False
    return bool(body["data"]["result"])


def _api(prom: str, what: str) -> str:
    """An API answer for the failure message (what Prometheus scraped and evaluated)."""
    try:
        return urllib.request.urlopen(f"{prom}/api/v1/{what}", timeout=2).read().decode()[:1500]
    except OSError as exc:
        return f"{what}: {exc}"


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


def _ready(prom: str) -> bool:
    try:
        return urllib.request.urlopen(f"{prom}/-/ready", timeout=1).status == 200
    except OSError:
        return False


@pytest.mark.skipif(shutil.which("prometheus") is None,
                    reason="prometheus not installed (Debian package prometheus; .ci/run installs it)")
@pytest.mark.slow
@pytest.mark.timeout(90)
def test_real_prometheus_fires_fallback_collapse_on_a_sim_run(tmp_path):
    """Prometheus first (ready before the run starts, so it scrapes the counters rising), then
    the run on the port Prometheus was told."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    prom_port, metrics_port = _free_port(), _free_port()
    url, log = f"http://127.0.0.1:{prom_port}", tmp_path / "prometheus.log"
    prom = rec = None
    try:
        cfg = _prometheus_config(tmp_path, metrics_port)
        with open(log, "w") as out:
            prom = subprocess.Popen(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                     f"--web.listen-address=127.0.0.1:{prom_port}"],
                                    cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not _scraping(url):  # ready is not enough: the first scrape comes ~5 s later, by when a
            # short sim run has done most of its fallbacks, and rate() sees no rise (the flake this fixed)
            assert prom.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        rec = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "-q", "--out", str(tmp_path / "r.jsonl"), *RUN,
                                "--metrics-port", str(metrics_port), "--metrics-linger", "10"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "record.err", "w"))
        firing: set[str] = set()
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and "C2tuiFallbackCollapse" not in firing:
            assert prom.poll() is None, log.read_text()[-2000:]
            time.sleep(0.5)
            firing |= _firing(url)
        assert "C2tuiFallbackCollapse" in firing, (firing, rec.poll(), (tmp_path / "record.err").read_text()[-1500:],
                                                   _api(url, "query?query=c2tui_fallbacks_total")[-400:],
                                                   _api(url, "query?query=c2tui_partitions_total")[-600:],
                                                   _api(url, "targets")[-300:])
        assert "C2tuiProofFailed" not in firing  # every sim proof verifies
    finally:
        for p in (prom, rec):
            if p is not None and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
