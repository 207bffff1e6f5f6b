"""The metrics fold over committed recordings (no HTTP): what a scrape would say, against the
summary of the same events; and the Grafana dashboard only asks for metrics that exist."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from prover.observe.metrics import MetricsExporter, knob_number
from prover.record import read_recording
from prover.fold.apply import fold
from prover.fold.summary import summarize

ROOT = Path(__file__).resolve().parents[2]


def _scrape(path: Path, host: str | None = None) -> dict:
    exp = MetricsExporter(host=host)
    for e in read_recording(path).events:
        exp.sink(e)
    out: dict = {}
    for fam in text_string_to_metric_families(generate_latest(exp.registry).decode()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _sum(samples: dict, name: str, **labels: str) -> float:
    want = set(labels.items())
    return sum(v for (n, lv), v in samples.items() if n == name and want <= set(lv))


@pytest.mark.parametrize("name", ["h200/m_stream_2gpu.jsonl", "h200/m_switch.jsonl", "../../tests/tui/recordings/synth_failures.jsonl"])
def test_fold_matches_summary(name):
    path = ROOT / "benchmarks" / "recordings" / name
    s = _scrape(path)
    st = fold(read_recording(path).events)
    sm = summarize(st)
    assert _sum(s, "c2tui_partitions_total", outcome="ok") == sm.partitions_ok
    assert _sum(s, "c2tui_partitions_total", outcome="failed") == sm.partitions_failed
    assert _sum(s, "c2tui_proofs_total", outcome="failed") == sm.proofs_failed
    assert _sum(s, "c2tui_fallbacks_total") == sm.fallbacks and _sum(s, "c2tui_ooms_total") == sm.ooms
    assert _sum(s, "c2tui_mode_changes_total") == sm.mode_changes
    for g in sm.gpus:
        for lock, ls in (("mem", g.mem), ("compute", g.compute)):
            assert _sum(s, "c2tui_lock_wait_seconds_count", gpu=str(g.gpu), lock=lock) == ls.acquisitions
            assert _sum(s, "c2tui_lock_hold_seconds_sum", gpu=str(g.gpu), lock=lock) == pytest.approx(ls.hold_total)
    for phase, ps in sm.phases.items():
        assert _sum(s, "c2tui_phase_duration_seconds_count", phase=phase) == ps.count
        assert _sum(s, "c2tui_phase_failures_total", phase=phase) == ps.failed
    assert all(v == st.knobs[k] for (n, lv), _ in s.items() if n == "c2tui_knob_info"  # the fold's spelling
               for k, v in [(dict(lv)["knob"], dict(lv)["value"])])


def test_host_label_only_when_given():
    path = ROOT / "benchmarks" / "recordings" / "h200" / "m_stream.jsonl"
    assert not any("host" in dict(lv) for (_, lv) in _scrape(path))
    with_host = _scrape(path, host="node7")
    assert all(dict(lv).get("host") == "node7" for (_, lv) in with_host)


def test_knob_numbers():
    assert [knob_number(v) for v in ("True", "off", "3", "two-lock")] == [1.0, 0.0, 3.0, None]


def test_grafana_dashboard_asks_only_for_exported_metrics():
    dash = json.loads((ROOT / "docs" / "grafana-c2tui.json").read_text())
    text = json.dumps(dash)
    asked = set(re.findall(r"c2tui_[a-z_]+", text)) - {"c2tui_prover"}  # the dashboard's uid
    exported = {n for (n, _) in _scrape(ROOT / "benchmarks" / "recordings" / "h200" / "m_switch.jsonl")}
    missing = {a for a in asked if a not in exported}
    assert asked and not missing, missing


def test_an_event_that_breaks_the_fold_is_counted_not_raised():
    exp = MetricsExporter()
    exp.sink(object())  # not an event: the fold raises inside; the exporter must not
    exp.drain()
    text = generate_latest(exp.registry).decode()
    assert re.search(r'c2tui_exporter_errors_total\{simulated="(true|false)"\} 1\.0', text), text[-300:]


def test_every_series_of_a_simulated_run_says_so():
    """Issue 35: most series of a sim run did not say "simulated"; now every one has the label."""
    exp = MetricsExporter()
    for e in read_recording(ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl").events:
        exp.sink(e)
    exp.drain()
    samples = [s for fam in text_string_to_metric_families(generate_latest(exp.registry).decode()) for s in fam.samples]
    assert len(samples) > 100 and all(s.labels.get("simulated") == "true" for s in samples)
