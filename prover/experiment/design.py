"""An experiment's design: the arms (knob sets in prover/knobs.py's vocabulary), how many
cycles, how long each hold and the settle dropped after every switch, and the order the holds
run in.

    arms = [parse_arm("lock_mode=single"), parse_arm("lock_mode=two-lock,mem_sync=stream")]
    d = Design(arms=arms, cycles=4, hold_s=20, settle_s=5, order="blocks", seed=0)
    d.schedule()   # [(cycle, arm), ...]: every cycle holds every arm once
    Design(arms=arms)   # hold_s None: `--hold auto`, sized from a pilot (prover/stats/plan.py)

`abab` holds the arms in the order given, every cycle; `blocks` (randomised complete blocks)
draws each cycle's order from the seed, so a drift of the machine (warming, a neighbour's
load) cannot favour the arm that always comes second (docs/experiment.md).
"""
from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prover.knob_set import knob_set_text, parse_knob_set, show as shown
from prover.knobs import KNOBS

Order = Literal["abab", "blocks"]
ORDERS: tuple[str, ...] = ("abab", "blocks")
# knobs an arm may not set: pausing holds no rate to measure
NOT_ARM_KNOBS = frozenset({"paused"})
MAX_CYCLES = 1000
MAX_HOLD_S = 86400.0
PRECISION = 0.2  # --precision's default: a ratio within +-20% at 95% (docs/experiment.md says why)


class Arm(BaseModel):
    """One arm: its label (as given) and the knobs it sets, typed and checked."""

    model_config = ConfigDict(frozen=True)
    label: str
    knobs: dict[str, Any]

    def text(self) -> dict[str, str]:
        """The knobs as events spell them (str of the value, as ModeChange and the fold do)."""
        return {k: str(v) for k, v in self.knobs.items()}


def parse_arm(spec: str) -> Arm:
    """'lock_mode=two-lock,mem_sync=stream' (or bare values: 'two-lock,stream') -> Arm: a knob
    set in the one syntax every surface reads (prover/knob_set.py). ValueError naming the bad
    knob or value and what it accepts."""
    if not spec.strip(" ,"):
        raise ValueError(f"arm {spec!r} sets no knob; use KNOB=VALUE[,KNOB=VALUE...], e.g. lock_mode=two-lock,mem_sync=stream")
    knobs = parse_knob_set(spec)
    for name in knobs:
        if name in NOT_ARM_KNOBS:
            raise ValueError(f"arm {spec!r}: {name} is not a setting to compare (an arm must run)")
    return Arm(label=knob_set_text(knobs), knobs=knobs)


def arm_of(knobs: dict[str, Any]) -> Arm:
    """An arm from typed knobs (the tuner's candidates), checked like a parsed one."""
    checked = {k: KNOBS[k].check(v) for k, v in knobs.items()}
    return Arm(label=knob_set_text(checked), knobs=checked)


class Design(BaseModel):
    model_config = ConfigDict(frozen=True)
    arms: list[Arm] = Field(min_length=2, description="the first is the baseline every ratio is against")
    cycles: int = Field(4, ge=1, le=MAX_CYCLES)
    hold_s: float | None = Field(None, gt=0.0, le=MAX_HOLD_S, allow_inf_nan=False,
                                 description="None: auto, sized from a pilot for `precision`")
    settle_s: float | None = Field(None, ge=0.0, le=MAX_HOLD_S, allow_inf_nan=False,
                                   description="None: auto (1.5 lags); with an auto hold, a given one is a floor")
    precision: float = Field(PRECISION, gt=0.0, le=5.0, allow_inf_nan=False,
                             description="auto holds: the target half-width of the ratio's 95% interval")
    max_s: float | None = Field(None, gt=0.0, allow_inf_nan=False,
                                description="auto holds: the holds' time limit (the plan widens the precision to fit)")
    order: Order = "blocks"
    seed: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _settle_inside_hold(self) -> "Design":
        if self.hold_s is not None and self.settle_s is None:
            raise ValueError("a hold given in seconds needs its settle in seconds too (or --hold auto)")
        if self.hold_s is not None and self.settle_s is not None and self.settle_s >= self.hold_s:
            raise ValueError(f"settle ({self.settle_s:g} s) must be shorter than the hold ({self.hold_s:g} s): "
                             "nothing of the hold would be counted")
        return self

    def schedule(self) -> list[tuple[int, int]]:
        """(cycle, arm) for every hold, in the order they run."""
        return schedule(len(self.arms), self.cycles, self.order, self.seed)

    def knob_names(self) -> list[str]:
        """Every knob any arm sets, in the order they first appear."""
        return list(dict.fromkeys(k for a in self.arms for k in a.knobs))

    def resolved(self, start: dict[str, Any]) -> list[dict[str, Any]]:
        """Each arm's full assignment over knob_names(): a knob an arm leaves alone keeps the
        value it had when the experiment started (so arm 'lock_mode=single' beside arm
        'mem_sync=stream' runs single with the starting mem_sync, not the other arm's)."""
        return resolve(self.arms, start)

    @property
    def auto(self) -> bool:
        return self.hold_s is None

    @property
    def seconds(self) -> float | None:
        """The holds' whole time (None: auto, not known before the pilot)."""
        return None if self.hold_s is None else self.cycles * len(self.arms) * self.hold_s


def schedule(n_arms: int, cycles: int, order: str, seed: int = 0) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    out: list[tuple[int, int]] = []
    for c in range(cycles):
        arms = list(range(n_arms))
        if order == "blocks":
            rng.shuffle(arms)
        elif order != "abab":
            raise ValueError(f"design must be one of {', '.join(ORDERS)}, got {order!r}")
        out += [(c, a) for a in arms]
    return out


def resolve(arms: list[Arm], start: dict[str, Any]) -> list[dict[str, Any]]:
    names = list(dict.fromkeys(k for a in arms for k in a.knobs))
    missing = [k for k in names if k not in start]
    if missing:
        raise ValueError(f"the prover's starting value of {', '.join(missing)} is unknown")
    return [{k: a.knobs.get(k, start[k]) for k in names} for a in arms]
