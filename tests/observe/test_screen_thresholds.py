"""The thresholds on screen are the alert rules' (issue 36): every rule in the committed
docs/alerts/c2tui.rules.yml is read back (its figures' PromQL, operators and numbers), and the
screen's judge (prover.screen over the fold) fires exactly that alert at that severity just
past each number and stays quiet just before it; the screen computes every figure a rule names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from prover import events as ev
from prover.fold.apply import fold
from prover.observe import screen
from prover.observe.thresholds import FIGURES, SEVERITY, judge

RULES = Path(__file__).resolve().parents[2] / "docs" / "alerts" / "c2tui.rules.yml"
LEVEL = {v: k for k, v in SEVERITY.items()}


def file_rules() -> list[tuple[str, str, list[tuple[str, str, float]]]]:
    """(alert, level, [(figure, op, number), ...]) from the YAML: each condition's PromQL mapped
    back to the figure whose PromQL it is (an `unless` twin and a guard are not conditions)."""
    by_promql = sorted(((f.promql, n) for n, f in FIGURES.items()), key=lambda x: -len(x[0]))
    out = []
    for r in yaml.safe_load(RULES.read_text())["groups"][0]["rules"]:
        expr = re.split(r" unless | and c2tui_", r["expr"].strip("()"))[0].strip("()")
        conds = []
        for part in expr.split(" or "):
            m = re.fullmatch(r"(.*) ([<>]) ([0-9.e+-]+)", part.strip())
            assert m, part
            name = next((n for q, n in by_promql if q == m.group(1)), None)
            assert name is not None, f"{r['alert']}: no figure has the PromQL {m.group(1)!r}"
            conds.append((name, m.group(2), float(m.group(3))))
        out.append((r["alert"], LEVEL[r["labels"]["severity"]], conds))
    return out


CASES = [(a, lvl, c) for a, lvl, conds in file_rules() for c in conds]


@pytest.mark.parametrize("alert,level,cond", CASES, ids=[f"{a}-{lvl}-{c[0]}" for a, lvl, c in CASES])
def test_the_screen_fires_each_rule_of_the_file_at_its_number(alert, level, cond):
    name, op, value = cond
    step = max(abs(value) * 0.01, 1e-3)
    past, before = (value + step, value - step) if op == ">" else (value - step, value + step)
    hit = {(v.alert, v.level) for v in judge({name: past})}
    assert (alert, level) in hit, f"{name}={past} should fire {alert} ({level}) on screen"
    assert (alert, level) not in {(v.alert, v.level) for v in judge({name: before})}


def test_the_screen_computes_every_figure_a_rule_names():
    s = fold([ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8,
                            gpus=1, config={})])
    have = set(screen.run_figures(s))
    named = {c[0] for _, _, conds in file_rules() for c in conds}
    assert named <= have, named - have
    assert set(screen.GPU_FIGURES) | set(screen.HOST_FIGURES) <= set(FIGURES)


def _oom(t: float, outcome: str | None, cause: str | None = "contention") -> ev.Oom:
    return ev.Oom(t=t, gpu=0, part="s0p0", worker="g0w0", requested=1 << 30, free=0, outcome=outcome, cause=cause)


def _start() -> list:
    return [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8,
                          gpus=1, config={})]


def test_a_retried_oom_is_never_called_failed_and_a_failed_one_turns_the_header_red():
    retried = fold(_start() + [ev.PhaseEnd(t=1.0, part="s0p0", phase=ev.Phase.prestage, worker="g0w0", gpu=0,
                                           duration=0.1, ok=False, error="OomError: out of VRAM budget"),
                               _oom(1.0, "retried", "switch")])
    errors = [text for _, level, text, _ in retried.log if level == "error"]
    assert errors == [] and retried.ops.oom_count("retried") == 1 and retried.ops.oom_count("failed") == 0
    assert screen.run_verdict(retried).level == "amber"  # an OOM after a switch: C2tuiOomFromSwitch
    failed = fold(_start() + [_oom(1.0, "failed")])
    assert [t for _, lv, t, _ in failed.log if lv == "error"] and screen.run_verdict(failed).level == "red"
    old = fold(_start() + [_oom(1.0, None, None)])  # a recording from before outcomes: counted, not judged
    assert old.ooms == 1 and screen.run_verdict(old).level == "ok"
