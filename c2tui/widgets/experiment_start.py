"""An experiment started from the dashboard (the experiment panel's `n`; `s` stops it): the same
Runner as `c2tui experiment` (prover/experiment/runner.py), on the prover this dashboard runs
embedded, in a thread of its own. Its events go into the engine's stream like the command's, so
the panel, the recording and `summary` show it the same way; at its end the knobs go back.

The prompt takes `c2tui experiment`'s own words: `--arm KNOBS --arm KNOBS [--arm ...] [--cycles
N] [--hold auto|S] [--settle S] [--precision P] [--design abab|blocks] [--seed N]`, and the same
plan: `--hold auto` (the default) holds each arm briefly first and sizes the holds from what it
saw (prover/stats/plan.py), the plan said in the event log before the first hold. A bad one is
refused in one line (the design's and the knobs' own messages) and nothing starts. Attached or replaying, nothing
starts here: `c2tui experiment --attach ADDRESS` runs one against a `--listen` prover."""
from __future__ import annotations

import argparse
import shlex
import threading
from typing import Any

from pydantic import ValidationError
from prover import EngineHandle

EXAMPLE = "--arm lock_mode=two-lock,mem_sync=stream --arm lock_mode=reserved --cycles 4 --hold auto --precision 0.2"
SETTLE_GIVEN_HOLD = 5.0  # --settle with --hold S and no --settle (the command's)


class BadExperiment(ValueError):
    """The prompt's text does not make an experiment (the message says why, in one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # never exit the dashboard
        raise BadExperiment(message)


def design_of(text: str) -> Any:
    """The Design the prompt's text asks for; BadExperiment naming what is wrong."""
    from prover import experiment

    p = _Parser(prog="experiment", add_help=False)
    p.add_argument("--arm", action="append", default=[])
    p.add_argument("--cycles", type=int, default=4)
    p.add_argument("--hold", type=_hold, default=None)
    p.add_argument("--settle", type=float, default=None)
    p.add_argument("--precision", type=float, default=experiment.PRECISION)
    p.add_argument("--design", default="blocks")
    p.add_argument("--seed", type=int, default=0)
    try:
        a = p.parse_args(shlex.split(text))
        arms = [experiment.parse_arm(s) for s in a.arm]
        if len(arms) < 2:
            raise BadExperiment("an experiment needs at least two arms (--arm KNOBS --arm KNOBS)")
        settle = a.settle if a.hold is None or a.settle is not None else min(SETTLE_GIVEN_HOLD, a.hold / 2)
        return experiment.Design(arms=arms, cycles=a.cycles, hold_s=a.hold, settle_s=settle, precision=a.precision,
                                 order=a.design, seed=a.seed)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ()))
        raise BadExperiment(f"{where + ': ' if where else ''}{err.get('msg', exc)}") from None
    except BadExperiment:
        raise
    except ValueError as exc:  # a bad arm, an unbalanced quote
        raise BadExperiment(str(exc)) from None


def _hold(text: str) -> float | None:
    """--hold auto (None) or seconds."""
    return None if text.strip().lower() == "auto" else float(text)


class DashboardExperiment:
    """At most one experiment at a time on one engine; `outcome` says how the last one ended."""

    def __init__(self, engine: EngineHandle) -> None:
        self.engine = engine
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.outcome: str | None = None
        self.design: Any = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self, design: Any, state: Any = None) -> None:
        """Begin (RuntimeError if one is running). `state`: the dashboard's, to know that
        start-up is over (the link, made now, missed the first GPU section)."""
        from prover import experiment

        if self.running:
            raise RuntimeError("an experiment is running (s stops it)")
        link = experiment.EmbeddedLink(self.engine)
        began = state is not None and any(g.first_compute_t is not None for g in state.gpus.values())
        link.prime({}, ready=began)
        self.stop = threading.Event()
        self.outcome = None
        self.design = design
        runner = experiment.Runner(link, design, name="dashboard", stop=self.stop)
        self.thread = threading.Thread(target=self._run, args=(runner,), name="experiment", daemon=True)
        self.thread.start()

    def _run(self, runner: Any) -> None:
        from prover import experiment

        try:
            runner.run()
            self.outcome = "done"
        except experiment.ExperimentError as exc:
            self.outcome = str(exc)
        except Exception as exc:  # noqa: BLE001 - a dying engine at quit: said, never raised into the UI
            self.outcome = f"{type(exc).__name__}: {exc}"


def control_of(app: Any) -> DashboardExperiment | None:
    """The app's experiment control, made on first use; None where no engine runs here
    (replay, attached, or the run is over)."""
    engine = app._engine() if hasattr(app, "_engine") else None
    if engine is None:
        return None
    ctl = getattr(app, "experiment_control", None)
    if ctl is None or ctl.engine is not engine:
        ctl = DashboardExperiment(engine)
        app.experiment_control = ctl
    return ctl
