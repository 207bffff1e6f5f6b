"""Issues 16 and 24: every subcommand, driven with generated bad arguments, configs, proof
files and recordings, hostile output targets and crafted recordings, plus probes of the
attach server, the metrics endpoint and serve's websocket guard (benchmarks/fuzz_cli.py and
fuzz_cases.py build the cases), ends with a documented exit status (the expected one where
the case has one), no traceback, an error line, no hang and nothing written outside its
target. Bounded: 90 cases, about 45 s under two workers on two cores (hypothesis picks the class
and the random stream; the full run, benchmarks/fuzz_cli.py, draws 1,600).
The stdout full / closed / dead-pipe class (a subprocess a case) is left to the full run and
tests/unit/test_exit_paths.py; issue 44's heavy classes (signals to real processes, dripping
clients) to the full run and to the fixed cases below."""
from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]

import fuzz_cli  # noqa: E402

import fuzz_adversarial  # noqa: E402

COMMANDS = [c for c in fuzz_cli.COMMANDS if c != "stdout" and c not in fuzz_adversarial.HEAVY]


@pytest.fixture(scope="module")
def goods(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes, Path]:
    base = tmp_path_factory.mktemp("fuzz")
    proof, rec = fuzz_cli.fixtures(base)
    return proof, rec, base


@pytest.mark.slow
@pytest.mark.timeout(300)
@settings(max_examples=90, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(cmd=st.sampled_from(COMMANDS), seed=st.integers(0, 2**32 - 1))
def test_every_subcommand_fails_cleanly_on_bad_input(goods: tuple[Path, bytes, Path], cmd: str, seed: int) -> None:
    proof, rec, base = goods
    w = base / f"case-{cmd}-{seed}"
    shutil.rmtree(w, ignore_errors=True)
    (w / "target").mkdir(parents=True)
    (w / "home").mkdir()
    (w / "file").write_text("x")
    rng = random.Random(seed)
    res = fuzz_cli.run_any(fuzz_cli.make_case(cmd, rng, w, proof, rec), w, 30.0, rng)
    shutil.rmtree(w, ignore_errors=True)
    assert not fuzz_cli.judge(res), res


def test_the_fuzz_leaves_the_app_as_it_found_it(goods: tuple[Path, bytes, Path]) -> None:
    """Issue 35: the fuzz replaced DashboardApp.run for the whole test process, so the snapshot
    tests that ran after it in one pytest process failed (CI passed only by file order)."""
    from c2tui.dashboard.app import DashboardApp
    from textual.app import App

    proof, rec, base = goods
    w = base / "case-order"
    (w / "target").mkdir(parents=True)
    (w / "home").mkdir()
    good = w / "good.jsonl"
    good.write_bytes(rec)
    res = fuzz_cli.run_any({"kind": "cli", "cmd": "replay", "args": ["replay", str(good)], "expect": 0}, w, 60.0)
    assert res["code"] == 0, res
    assert "run" not in DashboardApp.__dict__ and DashboardApp.run is App.run


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", [
    {"cmd": "signals", "target": "replay", "sig": "TERM"}, {"cmd": "signals", "target": "compare --tui", "sig": "HUP"},
    {"cmd": "signals", "target": "record", "sig": "INT INT"}, {"cmd": "signals", "target": "status --watch", "sig": "TERM HUP"},
    {"cmd": "drip_probe"}, {"cmd": "attached"}], ids=lambda c: f"{c['cmd']}-{c.get('target', '')}-{c.get('sig', '')}")
def test_issue_44s_heavy_classes_on_fixed_cases(goods: tuple[Path, bytes, Path], case: dict) -> None:
    """One case each of the classes the hypothesis run leaves out: a dashboard and a recording run
    signalled (3, the terminal put back, run_ended), clients that drip, an attached experiment
    that must leave the live prover's knobs as it found them."""
    proof, rec, base = goods
    w = base / f"case-heavy-{case['cmd']}-{case.get('target', '')}-{case.get('sig', '')}".replace(" ", "_")
    shutil.rmtree(w, ignore_errors=True)
    (w / "target").mkdir(parents=True)
    (w / "home").mkdir()
    rng = random.Random(44)
    if case["cmd"] == "signals":
        c = {"kind": "adv", "cmd": "signals", "args": [case["target"], case["sig"]], "target": case["target"],
             "sig": case["sig"], "rec": fuzz_adversarial.inside_good_recording(w / "target"), "expect": 3}
    elif case["cmd"] == "attached":
        c = fuzz_adversarial.attached_case(rng, w, "experiment")
    else:
        c = {"kind": "probe", "cmd": "drip_probe", "args": ["drip_probe"], "expect": 0}
    res = fuzz_cli.run_any(c, w, 60.0, rng)
    shutil.rmtree(w, ignore_errors=True)
    assert not fuzz_cli.judge(res), res
