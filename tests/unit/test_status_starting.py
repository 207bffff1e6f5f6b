"""`c2tui status` during start-up (issue 33): "starting: STEP, N s" and exit 4, never
"healthy" with GPU ?; once the GPUs registered and no step runs, 0; the rates with their proofs."""
from __future__ import annotations

from c2tui.commands.status import exit_of, rate_line, starting_line
from c2tui.cli.exits import OK, STARTING
from prover import events as ev
from prover.fold.apply import fold
from prover.fold.status import status_of


def _run() -> list:
    return [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8, gpus=1,
                          config={}),
            ev.Startup(t=0.1, step="host kernels", state="start", detail="numba"),
            ev.Startup(t=12.4, step="host kernels", state="progress", frac=0.5)]


def test_status_during_start_up_says_the_step_and_exits_4():
    r = status_of(fold(_run()))
    assert not r.started and r.starting == ["host kernels"] and exit_of(r) == STARTING
    assert starting_line(r) == "starting: host kernels, 12 s"


def test_status_after_start_up_is_healthy_and_names_its_rate_basis():
    evs = _run() + [ev.Startup(t=13.0, step="host kernels", state="end", seconds=12.9),
                    ev.GpuInfo(t=13.1, gpu=0, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 30, simulated=True)]
    r = status_of(fold(evs))
    assert r.started and exit_of(r) == OK
    assert r.rate_window is not None and r.rate_window.settling and r.rate_window.proofs == 0
    assert "settling (0 of 10 proofs): 0.0/min" in rate_line(r) and "on 0 proofs" in rate_line(r)
