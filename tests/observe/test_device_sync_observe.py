"""The device-global sync and the windowed rate reach metrics and the Perfetto export, from
the committed switch recording (sim, mem_sync device then stream; schema 3)."""
from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from prover.observe.metrics import MetricsExporter
from prover.observe.trace import to_trace
from prover.observe.trace_check import validate
from prover.record import read_recording
from prover.fold.apply import fold

REC = Path(__file__).resolve().parents[1] / "tui" / "recordings" / "switch_device_stream.jsonl.gz"


def test_metrics_carry_device_syncs_and_the_windowed_rate() -> None:
    rec = read_recording(REC)
    exp = MetricsExporter()
    for e in rec.events:
        exp.sink(e)
    got = {}
    for fam in text_string_to_metric_families(generate_latest(exp.registry).decode()):
        for s in fam.samples:
            assert s.labels.get("simulated") == "true", s  # a sim run's every series says so (issue 35)
            got[(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "simulated")))] = s.value
    st = fold(rec.events)
    g = st.gpus[0]
    assert got[("c2tui_device_sync_seconds_count", (("gpu", "0"),))] == g.device_syncs > 0
    assert got[("c2tui_device_sync_seconds_sum", (("gpu", "0"),))] == pytest.approx(g.device_sync_total)
    assert got[("c2tui_device_sync_wait_seconds", (("gpu", "0"),))] == 0.0  # none in progress at the end
    r = st.rates()
    assert got[("c2tui_verified_per_minute", (("over", "window"),))] == pytest.approx(r.windowed_per_min)
    assert got[("c2tui_verified_per_minute", (("over", "since_change"),))] == pytest.approx(r.since_change_per_min)
    assert got[("c2tui_verified_per_minute", (("over", "since_start"),))] == pytest.approx(r.mean_per_min)
    assert got[("c2tui_rate_window_seconds", ())] == 30.0


def test_trace_nests_each_device_sync_in_its_prestage() -> None:
    rec = read_recording(REC)
    trace = to_trace(rec)
    assert validate(trace) == []
    syncs = [e for e in trace["traceEvents"] if e.get("cat") == "device_sync"]
    assert len(syncs) == fold(rec.events).gpus[0].device_syncs
    assert all(e["name"].startswith("device sync behind ") and e["args"]["wait_s"] >= 0 for e in syncs)
    assert any(e["args"]["behind_worker"] for e in syncs)
