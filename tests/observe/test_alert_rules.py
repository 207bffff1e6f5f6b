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
