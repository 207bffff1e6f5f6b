"""docs/alerts/c2tui.rules.yml, generated from the one definition (prover/observe/thresholds.py).

    python -m prover.observe.alert_rules > docs/alerts/c2tui.rules.yml

tests/observe/test_alert_rules.py compares the committed file with `render()` and runs promtool
on it. Strings are written JSON-quoted (valid YAML double-quoted scalars), so the templates'
braces and quotes need no care.
"""
from __future__ import annotations

import json
import sys

from prover.observe.thresholds import FIGURES, RULES, SEVERITY, Cond, Rule

HEADER = """\
# Prometheus alerting rules for c2tui (`record`/`run` with --metrics-port; docs/metrics.md).
# GENERATED from prover/observe/thresholds.py (the screen's thresholds are the same numbers):
#   python -m prover.observe.alert_rules > docs/alerts/c2tui.rules.yml
# Load with `rule_files: [c2tui.rules.yml]`. Checked by `promtool check rules` and
# `promtool test rules tests/observe/alerts_test.yml` (tests/observe/test_alert_rules.py), and
# against a real Prometheus scraping a sim run (tests/observe/test_prometheus_live.py).
# Amber rules are severity warning, red ones critical; an amber rule is quiet where its red twin
# (same alert name) fires. Thresholds are starting points: a 2^27 fallback partition holds
# `compute` ~100 s by itself.
"""


def _num(v: float) -> str:
    return f"{v:g}"


def _cond(c: Cond) -> str:
    return f"{FIGURES[c.figure].promql} {c.op} {_num(c.value)}"


def expr(r: Rule) -> str:
    """The rule's PromQL: its conditions or-ed, quiet where its red twin fires, and its guard."""
    e = " or ".join(_cond(c) for c in r.conds)
    if r.unless is not None:
        e = f"{e} unless {_cond(r.unless)}"
    if r.guard:
        e = f"({e}) and {r.guard}" if len(r.conds) > 1 else f"{e} and {r.guard}"
    return e


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _rule(r: Rule) -> list[str]:
    out = [f"      - alert: {r.alert}", f"        expr: {_q(expr(r))}"]
    if r.for_:
        out.append(f"        for: {r.for_}")
    out.append(f"        labels: {{severity: {SEVERITY[r.level]}}}")
    out.append("        annotations:")
    out.append(f"          summary: {_q(r.summary)}")
    if r.description:
        out.append(f"          description: {_q(r.description)}")
    return out


def render() -> str:
    lines = [HEADER.rstrip("\n"), "groups:", "  - name: c2tui", "    rules:"]
    for i, r in enumerate(RULES):
        if i:
            lines.append("")
        lines += _rule(r)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - the generator's command line
    sys.stdout.write(render())
