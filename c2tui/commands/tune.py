"""`c2tui tune [--search KNOB,...] [--workers LO..HI] [--time auto|S] [--hold S --settle S]
[run options | --attach ADDRESS [--apply]] [--out FILE] [--json]`

Searches the live knobs (workers per GPU over a range, lock_mode, mem_sync, b_g2, prestage)
for the highest verified/min within the run's budgets, in the time given (start-up not
counted), with experiments: one race per knob, then the start against the best, interleaved
(docs/experiment.md). `--time auto` (the default) is the least the space needs (3 rounds a
knob and a full confirmation), said before it starts; less is refused with the time needed. The budgets are the run's (--vram-budget, --host-ram-budget: the engine
never exceeds them, a worker waits), and a setting with an OOM or a failed partition in its
counted windows is dropped. `--apply` leaves the best in force on the attached prover; without
it the knobs go back to the start.

Exit status: as `c2tui experiment` (0 done, 1 a proof failed, 2 bad input, 3 not finished).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from c2tui.commands.experiment import AutoOr
from c2tui.cli.experiment_session import Session, finish, run_line, session_options
from c2tui.cli.options import FiniteRange, run_options


def parse_workers(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    lo, sep, hi = value.partition("..")
    try:
        r = (int(lo), int(hi)) if sep else (int(lo), int(lo))
    except ValueError:
        raise click.BadParameter(f"{value!r}: use LO..HI, e.g. 2..8", param_hint="--workers") from None
    if not 1 <= r[0] <= r[1] <= 16:
        raise click.BadParameter(f"{value!r}: LO..HI with 1 <= LO <= HI <= 16", param_hint="--workers")
    return r


def parse_search(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    from prover import experiment

    names = tuple(dict.fromkeys(x.strip().replace("-", "_") for x in value.split(",") if x.strip()))
    bad = [n for n in names if n not in experiment.ORDER]
    if bad or not names:
        raise click.BadParameter(f"{bad[0] if bad else value!r}: tunable knobs are {', '.join(experiment.ORDER)}",
                                 param_hint="--search")
    return names


def parse_values(ctx: click.Context, param: click.Parameter, specs: tuple[str, ...]) -> dict[str, list[str]]:
    from prover import KNOBS

    out: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, vals = spec.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not vals.strip():
            raise click.BadParameter(f"{spec!r}: use KNOB=V1/V2, e.g. lock_mode=two-lock/reserved", param_hint="--values")
        texts = [v.strip() for v in vals.replace("|", "/").split("/") if v.strip()]
        if name not in KNOBS:
            raise click.BadParameter(f"{spec!r}: unknown knob {name!r}", param_hint="--values")
        try:
            for v in texts:
                KNOBS[name].parse(v)
        except ValueError as exc:
            raise click.BadParameter(f"{spec!r}: {exc}", param_hint="--values") from None
        out[name] = texts
    return out


@click.command("tune")
@click.option("--search", default="lock_mode,mem_sync,workers_per_gpu,b_g2,prestage", show_default=True,
              callback=parse_search, help="the knobs to search, comma separated")
@click.option("--workers", "workers", default=None, callback=parse_workers, metavar="LO..HI",
              help="workers per GPU to try  [default: the start's -2..+2]")
@click.option("--values", "values", multiple=True, callback=parse_values, metavar="KNOB=V1/V2...",
              help="only these values of a searched knob (repeat), e.g. lock_mode=two-lock/reserved")
@click.option("--time", "time_s", type=AutoOr(min=1.0, max=7 * 86400.0), default="auto", show_default=True,
              help="seconds the search may take, start-up not counted; auto: the least the space needs")
@click.option("--hold", "hold_s", type=FiniteRange(min=0.5, max=86400.0), default=20.0, show_default=True,
              help="seconds each hold lasts (the settle included)")
@click.option("--settle", "settle_s", type=FiniteRange(min=0.0, max=86400.0), default=5.0, show_default=True,
              help="seconds dropped after every switch before counting")
@click.option("--confirm-cycles", type=click.IntRange(3, 100), default=4, show_default=True,
              help="cycles of the final start-against-best experiment")
@click.option("--apply", "apply_best", is_flag=True, help="with --attach: leave the best setting in force")
@run_options
@session_options
def command(search: tuple[str, ...], workers: tuple[int, int] | None, values: dict[str, list[str]], time_s: float | None,
            hold_s: float, settle_s: float,
            confirm_cycles: int, apply_best: bool, out: Path | None, force: bool, as_json: bool, attach: str | None,
            token_file: str | None, name: str, quiet: bool, **kwargs: Any) -> None:
    """Find the fastest knob setting on this machine, with experiments."""
    from prover import experiment
    from c2tui.text.experiment import Progress

    if apply_best and attach is None:
        raise click.UsageError("--apply needs --attach: a headless tune's prover ends with it (its best is "
                               "printed as the flags to run with)")
    if settle_s >= hold_s:
        raise click.BadParameter(f"{settle_s:g} must be shorter than --hold {hold_s:g}", param_hint="--settle")
    plan = experiment.TunePlan(time_s=time_s, hold_s=hold_s, settle_s=settle_s, confirm_cycles=confirm_cycles,
                               seed=kwargs.get("seed") or 0)
    session = Session.open(kwargs, attach, token_file, name, out, force)
    say = (lambda text: click.echo(text, err=True)) if not quiet else None
    if session.engine is not None:  # the space and the time checked before the prover starts
        try:
            space = experiment.Tuner.check(plan, {k: getattr(session.engine.config, k) for k in search}, workers,
                                           search, values)
        except ValueError as exc:
            session.close(discard=True)
            raise click.UsageError(str(exc)) from None
        if say is not None:
            say(budget_line(plan, space))
    progress = Progress(sys.stderr.isatty() and not quiet)
    result, failure = None, None
    try:
        session.start()
        tuner = experiment.Tuner(session.link, plan, workers=workers, search=search, values=values,
                                 stop=session.stop, progress=progress, say=say)
        result = tuner.run(apply=apply_best)
    except ValueError as exc:  # the space or the time cannot be (said before any change is made)
        progress.stop()
        session.close(discard=True)
        raise click.UsageError(str(exc)) from None
    except experiment.ExperimentError as exc:
        failure = str(exc)
    except KeyboardInterrupt:
        failure = "interrupted"
    finally:
        progress.stop()
        failure = session.close(reason="interrupted" if failure == "interrupted" else "experiment over") or failure
        failure = failure or ("interrupted" if session.interrupted else None)
    _report(result, session, failure, as_json, out)


def budget_line(plan: Any, space: Any) -> str:
    """What the tune will take, said before it starts."""
    need = plan.least_time(space)
    knobs = ", ".join(f"{k} ({len(v)})" for k, v in space.knobs.items() if len(v) > 1)
    took = f"--time {plan.time_s:g} s" if plan.time_s is not None else f"--time auto: {need:.0f} s"
    return (f"tune: {took} from the first GPU section ({knobs}; holds of {plan.hold_s:g} s, settle {plan.settle_s:g} s; "
            f"at least {need:.0f} s: 3 rounds a knob and a {plan.confirm_cycles}-cycle confirmation)")


def _report(result: Any, session: Session, failure: str | None, as_json: bool, out: Path | None) -> None:
    from c2tui.text.experiment import print_tune

    info = session.run_info()
    doc = {"command": "tune", "run": info, **(result.model_dump(mode="json") if result is not None else {}),
           "recording": str(out) if out else None}
    finish(session, failure, doc, as_json, lambda: print_tune(result, run_line(info)) if result is not None else None)
