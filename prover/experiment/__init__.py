"""Experiments on a live prover: arms (knob sets) held in turn, each counted from its settle's
end, with intervals (`c2tui experiment`), and a tuner built on them (`c2tui tune`).
docs/experiment.md. Names load on first use (like prover/__init__.py)."""
from __future__ import annotations

from importlib import import_module
from typing import Any

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prover.experiment' has no attribute {name!r}")
    return getattr(import_module(module if "." in module else f"prover.experiment.{module}"), name)
