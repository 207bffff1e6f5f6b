"""The terminal tables of `experiment` and `tune` (what a person reads) from result models."""
from __future__ import annotations

import io

from rich.console import Console

from c2tui.text.experiment import print_experiment, print_tune
from prover.stats.experiment import HoldCount, analyse
from prover.experiment.tune import Step, TuneResult


def _console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=200, color_system=None), buf


def _result():
    holds = [HoldCount(arm=a, cycle=c, window_s=15.0, verified=10 + 8 * a + c % 2) for c in range(4) for a in range(2)]
    return analyse(holds, ["lock_mode=single", "lock_mode=two-lock,mem_sync=stream"])


def test_the_experiment_table_names_what_it_measured_and_the_verdict() -> None:
    c, buf = _console()
    print_experiment(_result(), "SIMULATED sim rtx5070ti-16g, proved 2^8, modelled 2^27, time scale 0.25", "2 arms x 4",
                     console=c)
    out = buf.getvalue()
    assert "SIMULATED" in out and "lock_mode=two-lock,mem_sync=stream" in out and "faster" in out
    assert "interval excludes 1" in out and "1.728x" in out


def test_a_narrow_terminal_wraps_the_arms_rather_than_cutting_them() -> None:
    buf = io.StringIO()
    print_experiment(_result(), "sim", "2 arms", console=Console(file=buf, width=80, color_system=None))
    assert "mem_sync=stream" in buf.getvalue().replace("\n", "").replace("│", "").replace(" ", "")


def test_the_tune_table_says_what_changed_and_how_to_run_with_it() -> None:
    c, buf = _console()
    res = TuneResult(start={"workers_per_gpu": "3"}, best={"workers_per_gpu": "2"}, found={"workers_per_gpu": "2"},
                     steps=[Step(knob="workers_per_gpu", values=["3", "1", "2"], rounds=4, leader="2", adopted=True,
                                 dropped={"1": "slower than 2: x0.55 [0.5, 0.6]"}, ratio=1.7, ratio_ci=(1.5, 1.9))],
                     confirm=_result(), ratio=1.6, ratio_ci=(1.4, 1.8), verdict="faster", seconds=300)
    print_tune(res, "native cuda native, proved 2^22, modelled 2^22, time scale 1.0", console=c)
    out = buf.getvalue()
    assert "best: workers_per_gpu=2: 1.60x [1.40, 1.80] against the start, confirmed on fresh holds" in out
    assert "--workers-per-gpu 2" in out


def _not_confirmed() -> TuneResult:
    return TuneResult(start={"lock_mode": "two-lock"}, best={"lock_mode": "two-lock"}, found={"lock_mode": "reserved"},
                      steps=[Step(knob="lock_mode", values=["two-lock", "reserved"], rounds=3, leader="reserved",
                                  adopted=True, ratio=2.38, ratio_ci=(1.78, 3.20))],
                      confirm=_result(), ratio=1.21, ratio_ci=(0.6, 2.44), verdict="not confirmed", seconds=240,
                      budget_s=240, confirm_needs_s=520)


def test_a_leader_the_confirmation_did_not_confirm_is_said_exactly_never_no_change() -> None:
    """Issue 42: the race found reserved 2.38x [1.78, 3.20]; the confirmation could not confirm
    it. Said so, with the time a confirmation that could tell needs: never "no change found"."""
    c, buf = _console()
    print_tune(_not_confirmed(), "SIMULATED sim", console=c)
    out = buf.getvalue()
    assert ("found lock_mode=reserved: 2.38x [1.78, 3.20] in its race; not confirmed on fresh holds (1.21x [0.60, 2.44]"
            in out)
    assert "the start is kept; run with --time 520 to confirm" in out
    assert "no change found" not in out and "to run with it" not in out


def test_piped_tables_keep_every_column_and_never_cut_a_number(monkeypatch) -> None:
    """Piped (not a TTY, no COLUMNS), the tables are 140 wide: nothing cut; squeezed to 50
    columns, a cell folds onto the next line, never ends in an ellipsis."""
    from c2tui.text.experiment import out_console

    monkeypatch.delenv("COLUMNS", raising=False)
    c = out_console()
    assert c.width == 140
    for width in (140, 50):
        buf = io.StringIO()
        print_tune(_not_confirmed(), "SIMULATED sim", console=Console(file=buf, width=width, color_system=None))
        out = buf.getvalue()
        assert "…" not in out and "#0" in out and "#1" in out and "verdic" in out
        if width == 140:
            r = _result().arms[1]
            assert f"{r.ratio:.3f}x" in out and f"[{r.ratio_ci[0]:.3f}, {r.ratio_ci[1]:.3f}]" in out


def test_finish_says_why_and_exits_3_when_not_finished(capsys) -> None:
    import json

    import pytest

    from c2tui.cli.experiment_session import Session, finish

    s = Session()
    with pytest.raises(SystemExit) as ex:
        finish(s, "interrupted", {"command": "experiment", "arms": []}, True, lambda: None)
    assert ex.value.code == 3
    out, err = capsys.readouterr()
    assert json.loads(out)["error"] == "interrupted" and "error: interrupted" in err
    s.failures.proofs = 1
    with pytest.raises(SystemExit) as ex:
        finish(s, None, {}, True, lambda: None)
    assert ex.value.code == 1 and "1 proof(s) failed" in capsys.readouterr().err
    s.failures.proofs = 0
    finish(s, None, {}, False, lambda: print("table"))  # 0: returns
    assert capsys.readouterr().out == "table\n"
