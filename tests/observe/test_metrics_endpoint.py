"""`record --metrics-port`: scrape /metrics over real HTTP during a sim run, parse it with
prometheus-client's parser, and check the final scrape against the recording's own summary."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from prover.record import read_recording
from prover.fold.apply import fold
from prover.fold.summary import summarize

ROOT = Path(__file__).resolve().parents[2]
RUN = ["--backend", "sim", "--profile", "rtx5070ti-16g", "--constraints-log2", "8", "--time-scale", "0.08",
       "--gpus", "2", "--workers-per-gpu", "3", "--partitions", "8", "--sectors", "1", "--vram-budget", "24GiB",
       "--mem-sync", "device", "--switch", "0.6:stream"]


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    """Every sample as {(name, sorted labels): value}."""
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "simulated")))] = s.value
    return out


def pick(samples: dict, name: str, **labels: str) -> float:
    """Sum of the samples of `name` whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, lv), v in samples.items() if n == name and want <= set(lv))


def _port(proc: subprocess.Popen, lines: list[str]) -> int:
    for line in proc.stderr:  # the first stderr line names the bound port
        lines.append(line)
        m = re.search(r"metrics: http://127\.0\.0\.1:(\d+)/metrics", line)
        if m:
            threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
            return int(m.group(1))
    raise AssertionError("no metrics line: " + "".join(lines))


@pytest.mark.timeout(120)
def test_record_metrics_match_summary(tmp_path):
    out = tmp_path / "m.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "c2tui", "record", "-q", "--out", str(out), *RUN,
                             "--metrics-port", "0", "--metrics-linger", "2"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        url = f"http://127.0.0.1:{_port(proc, lines)}/metrics"
        scrapes = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            s = scrape(url)
            scrapes.append(s)
            if pick(s, "c2tui_run_ended") == 1:
                break
            time.sleep(0.05)
        final = scrapes[-1]
        assert proc.wait(timeout=30) == 0, "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert pick(final, "c2tui_run_ended") == 1
    during = [s for s in scrapes if pick(s, "c2tui_run_ended") == 0 and pick(s, "c2tui_events_total") > 0]
    assert len(during) >= 3, "too few scrapes while the run was going"
    for s in during:  # the lock gauges live: at most one holder, never more waiters than workers
        for gpu in ("0", "1"):
            for lock in ("mem", "compute"):
                assert pick(s, "c2tui_lock_holders", gpu=gpu, lock=lock) in (0, 1)
                assert 0 <= pick(s, "c2tui_lock_waiters", gpu=gpu, lock=lock) <= 3
    assert any(pick(s, "c2tui_lock_holders") > 0 for s in during), "no scrape saw a lock held"
    assert any(pick(s, "c2tui_vram_live_bytes") > 0 for s in during), "no scrape saw a live buffer"
    for a, b in zip(during, during[1:]):  # counters never go back
        assert pick(b, "c2tui_lock_wait_seconds_count") >= pick(a, "c2tui_lock_wait_seconds_count")
        assert pick(b, "c2tui_partitions_total") >= pick(a, "c2tui_partitions_total")

    rec = read_recording(out)
    assert rec.error is None
    sm = summarize(fold(rec.events))
    assert sm.partitions_ok == 8 and sm.ended
    assert pick(final, "c2tui_events_total") == sm.events
    assert pick(final, "c2tui_exporter_errors_total") == 0
    for g in sm.gpus:
        gpu = str(g.gpu)
        assert pick(final, "c2tui_fallbacks_total", gpu=gpu) == g.fallbacks
        assert pick(final, "c2tui_ooms_total", gpu=gpu) == g.ooms
        assert pick(final, "c2tui_partitions_total", gpu=gpu) == g.partitions_done
        assert pick(final, "c2tui_vram_budget_bytes", gpu=gpu) == g.budget
        assert pick(final, "c2tui_vram_live_bytes", gpu=gpu) == 0  # every buffer freed at the end
        assert ("c2tui_vram_live_bytes", (("buffer", "d_bc"), ("gpu", gpu))) in final
        for lock, ls in (("mem", g.mem), ("compute", g.compute)):
            assert pick(final, "c2tui_lock_holders", gpu=gpu, lock=lock) == 0
            assert pick(final, "c2tui_lock_waiters", gpu=gpu, lock=lock) == 0
            assert pick(final, "c2tui_lock_wait_seconds_count", gpu=gpu, lock=lock) == ls.acquisitions
            assert pick(final, "c2tui_lock_wait_seconds_bucket", gpu=gpu, lock=lock, le="+Inf") == ls.acquisitions
            assert pick(final, "c2tui_lock_hold_seconds_count", gpu=gpu, lock=lock) == ls.acquisitions
            assert pick(final, "c2tui_lock_wait_seconds_sum", gpu=gpu, lock=lock) == pytest.approx(ls.wait_total)
            assert pick(final, "c2tui_lock_hold_seconds_sum", gpu=gpu, lock=lock) == pytest.approx(ls.hold_total)
    assert sum(g.fallbacks for g in sm.gpus) == sm.fallbacks
    assert pick(final, "c2tui_partitions_total", outcome="ok") == sm.partitions_ok
    assert pick(final, "c2tui_partitions_total", outcome="failed") == sm.partitions_failed
    assert pick(final, "c2tui_proofs_total", outcome="verified") == sm.proofs_ok
    assert pick(final, "c2tui_proofs_total", outcome="failed") == sm.proofs_failed
    assert pick(final, "c2tui_mode_changes_total") == sm.mode_changes == 1
    assert pick(final, "c2tui_knob_info", knob="mem_sync", value="stream") == 1
    assert pick(final, "c2tui_stalls_total") == sm.stalls
    for phase, ps in sm.phases.items():
        assert pick(final, "c2tui_phase_duration_seconds_count", phase=phase) == ps.count
        assert pick(final, "c2tui_phase_duration_seconds_sum", phase=phase) == pytest.approx(ps.total)
    assert pick(final, "c2tui_phase_duration_seconds_count", phase="ntt_h", impl="sim") == sm.phases["ntt_h"].count


def test_metrics_port_in_use_is_clear(tmp_path):
    import socket

    from click.testing import CliRunner

    from c2tui.commands import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = CliRunner().invoke(main, ["record", "-q", "--out", str(tmp_path / "x.jsonl"), "--backend", "sim",
                                      "--metrics-port", str(port)])
    assert r.exit_code == 2 and f"cannot serve metrics on 127.0.0.1:{port}" in r.output
    assert not (tmp_path / "x.jsonl").exists()


def test_run_takes_the_metrics_options():
    from click.testing import CliRunner

    from c2tui.commands import main

    out = CliRunner().invoke(main, ["run", "--help"]).output
    assert "--metrics-port" in out and "--metrics-addr" in out


def test_start_and_stop_metrics_around_an_engine():
    """What `run` does around the app: attach, serve, stop (the port is closed after)."""
    from c2tui.cli.metrics_options import start_metrics, stop_metrics
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.pipeline.nullphases import NullPhases

    cfg = load_config(None, backend="sim", profile="tiny", partitions=4, sectors=1, workers_per_gpu=2)
    eng = Engine(cfg, phases=NullPhases())
    exp = start_metrics(eng, 0, "127.0.0.1")
    url = f"http://127.0.0.1:{exp.port}/metrics"
    eng.start()
    assert eng.wait(60)
    s = scrape(url)
    assert pick(s, "c2tui_run_ended") == 1 and pick(s, "c2tui_partitions_total", outcome="ok") == 4
    stop_metrics(exp)
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)
