"""`c2tui experiment --arm KNOBS --arm KNOBS [--arm ...] [--cycles N --hold auto|S --settle S
--precision P --design abab|blocks] [run options | --attach ADDRESS] [--out FILE] [--json]`

Holds each arm (a knob set, e.g. lock_mode=two-lock,mem_sync=stream) in turn on one live
prover, drops the settle after every switch, and reports each arm's verified/min with a 95%
interval and each arm against the first as a ratio with a 95% interval paired over cycles
(docs/experiment.md). `--hold auto` (the default) sizes the holds from a pilot of each arm for
a ratio within +-P (`--precision`), and prints the plan with its duration before the holds.
Headless like `record` (the prover starts and stops with it), or on a prover running with
`--listen` (`--attach`: its knobs are set back as they were at the end).
The recording (--out) carries the experiment as events.

Exit status (c2tui/cli/exits.py): 0 done; 1 a proof or partition failed during it; 2 bad input
(one line naming it); 3 it could not finish (interrupted, the run ended, a knob refused, the
recording could not be written): what was counted is still printed.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from c2tui.cli.experiment_session import Session, finish, run_line, session_options
from c2tui.cli.options import FiniteRange, run_options

DESIGN_HELP = "abab: the arms in the order given, every cycle; blocks: each cycle's order drawn from --seed (drift cannot favour an arm)"
SETTLE_GIVEN_HOLD = 5.0  # --settle's value with --hold S and no --settle (as before --hold auto)


class AutoOr(FiniteRange):
    """'auto' (None) or a finite number in range."""

    name = "auto or seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
            return None
        return super().convert(value, param, ctx)


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
@click.option("--hold", "hold_s", type=AutoOr(min=0.5, max=86400.0), default="auto", show_default=True,
              help="seconds each hold lasts (the settle included), or auto: sized from a pilot of each arm for --precision")
@click.option("--settle", "settle_s", type=FiniteRange(min=0.0, max=86400.0), default=None,
              help="seconds dropped after every switch before counting  [default: 1.5 lags with --hold auto "
                   "(a given one is its floor), else 5]")
@click.option("--precision", type=FiniteRange(min=0.01, max=5.0), default=0.2, show_default=True,
              help="--hold auto: the ratio's 95% interval within +-this share (0.2: +-20%)")
@click.option("--design", "order", type=click.Choice(["abab", "blocks"]), default="blocks", show_default=True,
              help=DESIGN_HELP)
@run_options
@session_options
def command(arms: list[Any], cycles: int, hold_s: float | None, settle_s: float | None, precision: float, order: str,
            out: Path | None, force: bool, as_json: bool, attach: str | None, token_file: str | None, name: str,
            quiet: bool, **kwargs: Any) -> None:
    """Compare knob settings on one live prover, with intervals."""
    from prover import experiment
    from c2tui.text.experiment import Progress

    if hold_s is not None and settle_s is None:
        settle_s = min(SETTLE_GIVEN_HOLD, hold_s / 2)
    try:
        design = experiment.Design(arms=arms, cycles=cycles, hold_s=hold_s, settle_s=settle_s, precision=precision,
                                   order=order, seed=kwargs.get("seed") or 0)
    except ValueError as exc:
        raise click.UsageError(_first_error(exc)) from None
    session = Session.open(kwargs, attach, token_file, name, out, force)
    progress = Progress(sys.stderr.isatty() and not quiet)
    say = (lambda text: click.echo(text, err=True)) if not quiet else None
    runner = experiment.Runner(session.link, design, stop=session.stop, progress=progress, say=say)
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
    _report(result, runner.design, session, failure, out, as_json, runner.plan)


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        e = errors()[0]
        msg = str(e.get("msg", exc)).removeprefix("Value error, ")
        loc = ".".join(str(x) for x in e.get("loc", ()))
        return f"{loc}: {msg}" if loc else msg
    return str(exc)


def _report(result: Any, design: Any, session: Session, failure: str | None, out: Path | None, as_json: bool,
            plan: Any = None) -> None:
    from c2tui.text.experiment import print_experiment

    info = session.run_info()
    hold = "auto (no pilot finished)" if design.hold_s is None else f"{design.hold_s:g} s"
    settle = "auto" if design.settle_s is None else f"{design.settle_s:g} s"
    what = (f"{len(design.arms)} arms x {design.cycles} cycle(s), hold {hold}{' (planned)' if plan else ''}, settle "
            f"{settle}, design {design.order}" + (f" (seed {design.seed})" if design.order == "blocks" else ""))
    doc = {"command": "experiment", "run": info, "design": design.model_dump(mode="json"),
           "plan": plan.model_dump(mode="json") if plan is not None else None,
           **(result.model_dump(mode="json") if result is not None else {"arms": []}), "recording": str(out) if out else None}
    finish(session, failure, doc, as_json,
           lambda: print_experiment(result, run_line(info), what) if result is not None else None)
