"""The experiment as a concept of the one fold (prover/fold/experiments.py): `replay`, `summary`
and `compare` count a recording's arms exactly as the live runner did, the view says where a
running experiment is, and a run without one pays nothing and shows nothing."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prover import events as ev
from prover.experiment.design import Design, parse_arm
from prover.experiment.runner import Runner
from prover.fold.apply import fold
from prover.fold.concept import names
from prover.fold.model import DashboardState
from prover.fold.summary import summarize
from prover.record import read_recording
from tests.helpers.experiment_fake import FakeProver

N22 = Path(__file__).resolve().parents[2] / "benchmarks" / "recordings" / "h200" / "experiment" / "n22_experiment.jsonl.gz"
START = {"lock_mode": "two-lock", "mem_sync": "device", "workers_per_gpu": 3}
RATES = {"single": 60.0, "narrow": 110.0, "two-lock": 100.0, "reserved": 100.0}


@pytest.fixture(scope="module")
def n22() -> list[Any]:
    return read_recording(N22).events


def _fake_run(cycles: int = 3) -> tuple[Any, list[Any]]:
    fp = FakeProver(lambda k: RATES[k["lock_mode"]], START, seed=5, regular=True)
    seen: list[Any] = []
    fp.add_sink(seen.append)
    d = Design(arms=[parse_arm("single"), parse_arm("narrow")], cycles=cycles, hold_s=20.0, settle_s=5.0)
    return Runner(fp, d, sleep=fp.sleep).run(), seen


def test_the_concept_is_registered() -> None:
    assert "experiments" in names()


def _same(a: Any, b: Any) -> bool:
    """Equal figures (a mean lag summed in another order may differ in its last bit)."""
    def dump(r: Any) -> Any:
        d = r.model_dump(mode="json")
        for arm in d["arms"]:
            arm["lag_s"] = None if arm["lag_s"] is None else round(arm["lag_s"], 9)
        return d
    return dump(a) == dump(b)


def test_the_fold_counts_as_the_live_runner(n22: list[Any]) -> None:
    res, seen = _fake_run()
    sm = summarize(fold(seen))
    assert len(sm.experiments) == 1 and _same(sm.experiments[0].result, res)
    # the native 2^22 recording (made under the old rule, issue 42): counted again by the fold's
    # own section rule, every partition begun in a hold followed to its end in the recording
    x = summarize(fold(n22)).experiments[0]
    assert x.name == "disciplines 2^22" and x.holds_complete == 28 and x.ended == "done"
    assert [a.verdict for a in x.result.arms] == ["baseline"] + ["faster"] * 6
    assert sum(a.verified for a in x.result.arms) == 710 and all(a.pending == 0 for a in x.result.arms)


def test_the_view_says_where_a_running_experiment_is(n22: list[Any]) -> None:
    s = DashboardState()
    t_mid = 50.0
    for e in n22:
        if e.t > t_mid:
            break
        s.apply(e)
    (x,) = s.view().experiments.views(s.t)
    assert x.running and x.now is not None and x.arms[0] == "single"
    assert 0 < x.holds_done < x.holds_planned == 28
    assert x.now.elapsed_s <= x.now.hold_s + 0.5
    assert x.result is not None and len(x.result.arms) == 7
    assert any("experiment 'disciplines 2^22' started" in text for _, _, text, _ in s.log)


def test_figures_are_worked_out_again_only_when_a_hold_ends(n22: list[Any]) -> None:
    s = fold(n22[: len(n22) // 2])
    first = s.view().experiments.views(s.t)[0].result
    assert s.view().experiments.views(s.t)[0].result is first  # no hold ended between: the same figures, shared


def test_a_run_without_an_experiment_shows_none() -> None:
    _, seen = _fake_run(cycles=1)
    s = fold([e for e in seen if e.kind not in ("experiment_started", "hold_started", "hold_ended", "experiment_ended")])
    assert s.view().experiments.views(s.t) == () and summarize(s).experiments == []


def test_two_experiments_numbered_alike_stay_apart() -> None:
    """Each `c2tui experiment --attach` against one long-lived prover numbers its experiment 0
    (as experiment_native.py's experiment and then its tune do): a recording of the prover holds
    both, and the fold keeps them apart."""
    res, seen = _fake_run(cycles=2)
    shift = seen[-1].t + 1.0
    again = [e.model_copy(update={"t": e.t + shift}) for e in seen]
    sm = summarize(fold(seen + again))
    assert len(sm.experiments) == 2 and [x.holds_complete for x in sm.experiments] == [4, 4]
    assert _same(sm.experiments[0].result, res) and _same(sm.experiments[1].result, res)
