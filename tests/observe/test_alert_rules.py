"""docs/alerts/c2tui.rules.yml: promtool checks the rules and runs their unit tests
(tests/observe/alerts_test.yml), and every metric the rules name is one the exporter serves."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from prover.observe.metrics import MetricsFold, families

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "alerts" / "c2tui.rules.yml"
needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None,
                                    reason="promtool not installed (Debian package prometheus; .ci/run installs it)")


@needs_promtool
def test_promtool_checks_and_tests_the_rules():
    for args in (["check", "rules", str(RULES)], ["test", "rules", str(ROOT / "tests/observe/alerts_test.yml")]):
        r = subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr


def rule_metric_names() -> set[str]:
    """c2tui_* names in the rules' expressions, with a histogram/counter suffix folded to the family."""
    doc = yaml.safe_load(RULES.read_text())
    exprs = [r["expr"] for g in doc["groups"] for r in g["rules"]]
    return {n for e in exprs for n in re.findall(r"\bc2tui_[a-z0-9_]+", e)}


def test_rules_name_only_metrics_the_exporter_serves():
    fold = MetricsFold()
    served = set()
    for m in families(fold):
        served.add(m.name)
        suffixes = {"counter": ("_total",), "info": ("_info",), "histogram": ("_sum", "_count", "_bucket")}
        served.update(m.name + x for x in suffixes.get(m.type, ()))
    missing = rule_metric_names() - served
    assert not missing, f"the rules name metrics the exporter does not serve: {sorted(missing)}"


def test_lock_ages_follow_the_fold():
    from prover import events as ev

    f = MetricsFold()
    for e in (ev.RunStarted(t=0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=27, gpus=1),
              ev.LockRequested(t=1.0, gpu=0, lock="compute", worker="w0"),
              ev.LockAcquired(t=1.5, gpu=0, lock="compute", worker="w0", wait=0.5),
              ev.LockRequested(t=2.0, gpu=0, lock="compute", worker="w1"),
              ev.LockRequested(t=3.0, gpu=0, lock="compute", worker="w2"),
              ev.VramSample(t=9.5, gpu=0, budget=1, pool_reserved=0, pool_used=0)):
        f.apply(e)
    got = {(m.name, tuple(v for k, v in s.labels.items() if k != "simulated")): s.value for m in families(f) for s in m.samples
           if m.name in ("c2tui_lock_held_seconds", "c2tui_lock_oldest_wait_seconds")}
    assert got[("c2tui_lock_held_seconds", ("0", "compute"))] == 8.0
    assert got[("c2tui_lock_oldest_wait_seconds", ("0", "compute"))] == 7.5
    assert got[("c2tui_lock_held_seconds", ("0", "mem"))] == 0.0
    assert got[("c2tui_lock_oldest_wait_seconds", ("0", "mem"))] == 0.0


def test_the_committed_rules_are_the_generated_ones():
    """docs/alerts/c2tui.rules.yml comes from prover/observe/thresholds.py (one definition):
    regenerate with `python -m prover.observe.alert_rules > docs/alerts/c2tui.rules.yml`."""
    from prover.observe.alert_rules import render

    assert RULES.read_text() == render(), "stale: python -m prover.observe.alert_rules > docs/alerts/c2tui.rules.yml"


def _screen_figures(r, nudge: float) -> dict:
    c = r.conds[0]
    return {c.figure: c.value + (nudge if c.op == ">" else -nudge)}


def test_the_screen_and_the_alerts_judge_with_the_same_numbers():
    """For every rule: the YAML's expression holds its threshold, and the screen's judge fires
    that alert at that level just past it and stays quiet just short of it (an amber rule is
    quiet where its red twin fires, on screen as in PromQL)."""
    from prover.observe.thresholds import FIGURES, RULES as DEFS, SEVERITY, judge

    doc = yaml.safe_load(RULES.read_text())
    rules = doc["groups"][0]["rules"]
    assert [(r["alert"], r["labels"]["severity"]) for r in rules] == [(d.alert, SEVERITY[d.level]) for d in DEFS]
    for d, y in zip(DEFS, rules):
        for c in d.conds:
            assert f"{FIGURES[c.figure].promql} {c.op} {c.value:g}" in y["expr"], d.alert
        past = judge(_screen_figures(d, 1e-6))
        assert (d.alert, d.level) in {(v.alert, v.level) for v in past}, d.alert
        short = judge(_screen_figures(d, -1e-6))
        assert (d.alert, d.level) not in {(v.alert, v.level) for v in short}, d.alert
        if d.unless is not None:  # past the red twin: only red
            beyond = {d.unless.figure: d.unless.value + (1 if d.unless.op == ">" else -1)}
            assert {v.level for v in judge(beyond) if v.alert == d.alert} == {"red"}


def test_a_verdict_says_why_in_the_figure_s_words():
    from prover.observe.thresholds import worst

    assert worst({}).level == "ok"
    v = worst({"fallbacks_per_min": 3.2, "lock_held_s": 200.0})
    assert v.level == "amber" and v.reason in ("fallbacks 3.2/min > 1/min", "lock held 200 s > 120 s")
    red = worst({"lock_held_s": 400.0, "ooms_retried_per_min": 2.0})
    assert (red.level, red.alert, red.reason) == ("red", "C2tuiLockStalled", "lock held 400 s > 300 s")
    assert worst({"vram_growth": 256.0 * 2**20}).reason == "VRAM growing 256 MiB/partition > 0 MiB/partition"
