"""Experiments on a live prover: arms (knob sets) held in turn, each counted from its settle's
end, with intervals (`c2tui experiment`), and a tuner built on them (`c2tui tune`).
docs/experiment.md. Names load on first use, and the door says its surface twice as prover's own
does: the table __getattr__ reads and the imports type checkers read."""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Arm": "design", "Design": "design", "parse_arm": "design", "arm_of": "design", "ORDERS": "design",
    "PRECISION": "design",
    # the figures and the counting live below the engine (a leaf, and the fold): named here too
    "HoldCount": "prover.stats.experiment", "ArmResult": "prover.stats.experiment",
    "ExperimentResult": "prover.stats.experiment", "analyse": "prover.stats.experiment",
    "t_quantile": "prover.stats.intervals", "Tally": "prover.fold.tally", "HANDLERS": "prover.fold.tally",
    "Link": "link", "EmbeddedLink": "link", "AttachLink": "link",
    "Runner": "runner", "ExperimentError": "runner", "run_experiment": "runner",
    "Tuner": "tune", "Space": "tune", "TunePlan": "tune", "TuneResult": "tune", "ORDER": "tune", "TooShort": "tune",
    "not_confirmed": "tune", "HoldPlan": "prover.stats.plan",
    "sim_defaults": "defaults", "SIM_DEFAULTS": "defaults",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the same surface for type checkers (tests/unit/test_door.py keeps the two in step)
    from prover.experiment.design import Arm as Arm
    from prover.experiment.design import Design as Design
    from prover.experiment.design import parse_arm as parse_arm
    from prover.experiment.design import arm_of as arm_of
    from prover.experiment.design import ORDERS as ORDERS
    from prover.experiment.design import PRECISION as PRECISION
    from prover.stats.experiment import HoldCount as HoldCount
    from prover.stats.experiment import ArmResult as ArmResult
    from prover.stats.experiment import ExperimentResult as ExperimentResult
    from prover.stats.experiment import analyse as analyse
    from prover.stats.intervals import t_quantile as t_quantile
    from prover.fold.tally import Tally as Tally
    from prover.fold.tally import HANDLERS as HANDLERS
    from prover.experiment.link import Link as Link
    from prover.experiment.link import EmbeddedLink as EmbeddedLink
    from prover.experiment.link import AttachLink as AttachLink
    from prover.experiment.runner import Runner as Runner
    from prover.experiment.runner import ExperimentError as ExperimentError
    from prover.experiment.runner import run_experiment as run_experiment
    from prover.experiment.tune import Tuner as Tuner
    from prover.experiment.tune import Space as Space
    from prover.experiment.tune import TunePlan as TunePlan
    from prover.experiment.tune import TuneResult as TuneResult
    from prover.experiment.tune import ORDER as ORDER
    from prover.experiment.tune import TooShort as TooShort
    from prover.experiment.tune import not_confirmed as not_confirmed
    from prover.stats.plan import HoldPlan as HoldPlan
    from prover.experiment.defaults import sim_defaults as sim_defaults
    from prover.experiment.defaults import SIM_DEFAULTS as SIM_DEFAULTS


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prover.experiment' has no attribute {name!r}")
    return getattr(import_module(module if "." in module else f"prover.experiment.{module}"), name)
