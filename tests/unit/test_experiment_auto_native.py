"""benchmarks/experiment_auto_native.py (issue 42's native check, written before it runs): what
it expects of each experiment, judged from the result's JSON as measured."""
from __future__ import annotations

from experiment_auto_native import EXPERIMENTS, WITHIN, checks


def _arm(label: str, rate: float, lo: float, hi: float, verdict: str = "baseline") -> dict:
    return {"label": label, "per_min": rate, "per_min_ci": [lo, hi], "verdict": verdict}


def test_an_a_a_experiment_is_met_only_by_no_difference() -> None:
    base = _arm("a", 200, 180, 220)
    assert checks("aa", {"arms": [base, _arm("b", 205, 185, 226, "no difference detected")]})["met"]
    assert not checks("aa", {"arms": [base, _arm("b", 260, 240, 280, "faster")]})["met"]
    assert not checks("aa", None)["met"]


def test_both_arms_intervals_must_lie_within_15_percent() -> None:
    ok = checks("within", {"arms": [_arm("narrow", 200, 172, 228), _arm("two-lock", 214, 190, 240)]})
    assert ok["met"] and WITHIN == 0.15
    wide = checks("within", {"arms": [_arm("narrow", 197.9, 159, 247), _arm("two-lock", 213.7, 188, 241)]})
    assert not wide["met"] and [r["met"] for r in wide["arms"]] == [False, True]  # the H100's 30 s holds


def test_the_two_experiments_are_the_issue_s() -> None:
    (aa, aa_arms, aa_kind), (nt, nt_arms, nt_kind) = EXPERIMENTS
    assert aa_kind == "aa" and aa_arms[0][1] == aa_arms[1][1]  # two identical arms
    assert nt_kind == "within" and [a for a, _ in nt_arms] == ["narrow", "two-lock + stream"]
