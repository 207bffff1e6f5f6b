"""`c2tui experiment --arm KNOBS --arm KNOBS [--arm ...] [--cycles N --hold S --settle S
--design abab|blocks] [run options | --attach ADDRESS] [--out FILE] [--json]`

Holds each arm (a knob set, e.g. lock_mode=two-lock,mem_sync=stream) in turn on one live
prover, drops the settle after every switch, and reports each arm's verified/min with a 95%
interval and each arm against the first as a ratio with a 95% interval paired over cycles
(docs/experiment.md). Headless like `record` (the prover starts and stops with it), or on a
prover running with `--listen` (`--attach`: its knobs are set back as they were at the end).
The recording (--out) carries the experiment as events.

Exit status (c2tui/exits.py): 0 done; 1 a proof or partition failed during it; 2 bad input
(one line naming it); 3 it could not finish (interrupted, the run ended, a knob refused, the
recording could not be written): what was counted is still printed.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from c2tui.experiment_session import Session, finish, run_line, session_options
from c2tui.options import FiniteRange, run_options

DESIGN_HELP = "abab: the arms in the order given, every cycle; blocks: each cycle's order drawn from --seed (drift cannot favour an arm)"


def parse_arms(ctx: click.Context, param: click.Parameter, specs: tuple[str, ...]) -> list[Any]:
    from prover import experiment

    if len(specs) < 2:
        raise click.BadParameter("give at least two arms to compare (the first is the baseline)", param_hint="--arm")
    arms: list[Any] = []
    for spec in specs:
        try:
            arm = experiment.parse_arm(spec)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--arm") from None
        same = next((i for i, a in enumerate(arms) if a.knobs == arm.knobs), None)
        if same is not None:  # it would be held and counted as if it were a setting of its own
            raise click.BadParameter(f"arm {len(arms) + 1} ({spec}) sets the same knobs as arm {same + 1} "
                                     f"({arms[same].label}): give each setting once", param_hint="--arm")
        arms.append(arm)
    return arms


@click.command("experiment")
@click.option("--arm", "arms", multiple=True, callback=parse_arms, metavar="KNOB=VALUE[,KNOB=VALUE...]",
              help="an arm: the knobs it sets (repeat; the first is the baseline), e.g. lock_mode=two-lock,mem_sync=stream")
@click.option("--cycles", type=click.IntRange(1, 1000), default=4, show_default=True, help="times every arm is held")
@click.option("--hold", "hold_s", type=FiniteRange(min=0.5, max=86400.0), default=30.0, show_default=True,
              help="seconds each hold lasts (the settle included)")
@click.option("--settle", "settle_s", type=FiniteRange(min=0.0, max=86400.0), default=5.0, show_default=True,
              help="seconds dropped after every switch before counting")
@click.option("--design", "order", type=click.Choice(["abab", "blocks"]), default="blocks", show_default=True,
              help=DESIGN_HELP)
@run_options
@session_options
def command(arms: list[Any], cycles: int, hold_s: float, settle_s: float, order: str, out: Path | None,
            force: bool, as_json: bool, attach: str | None, token_file: str | None, name: str, quiet: bool,
            **kwargs: Any) -> None:
    """Compare knob settings on one live prover, with intervals."""
    from prover import experiment
    from c2tui.experiment_view import Progress

    try:
        design = experiment.Design(arms=arms, cycles=cycles, hold_s=hold_s, settle_s=settle_s, order=order,
                                   seed=kwargs.get("seed") or 0)
    except ValueError as exc:
        raise click.UsageError(_first_error(exc)) from None
    session = Session.open(kwargs, attach, token_file, name, out, force)
    progress = Progress(sys.stderr.isatty() and not quiet)
    runner = experiment.Runner(session.link, design, stop=session.stop, progress=progress)
    result, failure = None, None
    try:
        session.start()
        result = runner.run()
    except experiment.ExperimentError as exc:
        failure, result = str(exc), exc.result
    except KeyboardInterrupt:
        failure = "interrupted"
        result = runner.result()
    finally:
        progress.stop()
        failure = session.close(reason="interrupted" if failure == "interrupted" else "experiment over") or failure
        failure = failure or ("interrupted" if session.interrupted else None)
    _report(result, design, session, failure, out, as_json)


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        e = errors()[0]
        msg = str(e.get("msg", exc)).removeprefix("Value error, ")
        loc = ".".join(str(x) for x in e.get("loc", ()))
        return f"{loc}: {msg}" if loc else msg
    return str(exc)


def _report(result: Any, design: Any, session: Session, failure: str | None, out: Path | None, as_json: bool) -> None:
    from c2tui.experiment_view import print_experiment

    info = session.run_info()
    what = (f"{len(design.arms)} arms x {design.cycles} cycle(s), hold {design.hold_s:g} s, settle "
            f"{design.settle_s:g} s, design {design.order}" + (f" (seed {design.seed})" if design.order == "blocks" else ""))
    doc = {"command": "experiment", "run": info, "design": design.model_dump(mode="json"),
           **(result.model_dump(mode="json") if result is not None else {"arms": []}), "recording": str(out) if out else None}
    finish(session, failure, doc, as_json,
           lambda: print_experiment(result, run_line(info), what) if result is not None else None)
