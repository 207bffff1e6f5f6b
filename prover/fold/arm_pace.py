"""What set each GPU's pace in each arm of an experiment: the pace read at the end of every
complete hold, over the hold's counted part (its settle dropped; at most the pace's window),
gathered by arm.

Why: a run's pace is read over the whole run, so in an experiment it mixes the arms. Natively at
2^26 (H100, 2026-12-08) the run-wide line said "GPU-bound ... another discipline will not help"
(kernels 86% of the holds over both arms), while two-lock + stream proved 1.44x single: single's
own holds were ~70% kernels and two-lock's ~100%. Read arm by arm the line says which is which.

`ArmPace` watches the events beside the fold (a sink after `DashboardState.apply`: the
summary reads a recording folded as it is read) and reads the fold's own pace state, so it
counts nothing twice."""
from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.pace import window_pace
from prover.fold.pace_verdict import Pace


class ArmPaceRow(BaseModel):
    """One arm of one experiment on one GPU: its holds' paces, in brief."""

    experiment: int
    name: str
    arm: int
    label: str
    gpu: int
    holds: int = Field(description="complete holds read")
    headline: str = Field(description="the most common verdict over its holds (GPU-bound, host-bound: synthesis, ...)")
    compute_share: float = Field(description="mean share of the counted part the compute lock was held")
    kernels_of_hold: float = Field(description="mean share of the compute holds the kernels filled")
    why: str = Field(description="what an operator can do, as the last hold with that verdict said it")

    def sentence(self) -> str:
        return (f"{self.label}: {self.headline}; GPU busy {self.compute_share:.0%}, kernels {self.kernels_of_hold:.0%} "
                f"of the hold ({self.holds} holds): {self.why}")


class ArmPace:
    """A sink beside the fold: at every complete HoldEnded, each GPU's pace over that hold."""

    def __init__(self, state: Any) -> None:
        self.state = state  # the DashboardState the same events are folded into (first)
        self.names: dict[int, tuple[str, list[str]]] = {}  # experiment -> (name, arm labels)
        self.starts: dict[tuple[int, int], tuple[float, float]] = {}  # (experiment, hold) -> (t, settle_s)
        self.read: list[tuple[int, int, int, Pace]] = []  # (experiment, arm, gpu, pace)

    def __call__(self, e: Any) -> None:
        if isinstance(e, ev.ExperimentStarted):
            self.names[e.experiment] = (e.name, list(e.arms))
        elif isinstance(e, ev.HoldStarted):
            self.starts[(e.experiment, e.hold)] = (e.t, e.settle_s)
        elif isinstance(e, ev.HoldEnded) and e.complete:
            self._hold_ended(e)

    def _hold_ended(self, e: Any) -> None:
        start = self.starts.pop((e.experiment, e.hold), None)
        if start is None:
            return
        pace = self.state.pace
        counted = e.t - (start[0] + start[1])  # the hold after its settle
        window = min(counted, pace.window_s)  # the buckets the pace keeps reach back this far
        if window <= 0:
            return
        for gpu, g in sorted(pace.gpus.items()):
            if g.first_compute_t is None:
                continue
            p = window_pace(g, gpu, e.t, window, pace.host, pace.modelled_host)
            if p.bound != "settling":
                self.read.append((e.experiment, e.arm, gpu, p))

    def rows(self) -> list[ArmPaceRow]:
        """Each (experiment, arm, GPU) read, in that order."""
        groups: dict[tuple[int, int, int], list[Pace]] = {}
        for x, arm, gpu, p in self.read:
            groups.setdefault((x, arm, gpu), []).append(p)
        out = []
        for (x, arm, gpu), ps in sorted(groups.items()):
            name, labels = self.names.get(x, ("experiment", []))
            head = Counter(p.headline() for p in ps).most_common(1)[0][0]
            last = next(p for p in reversed(ps) if p.headline() == head)
            out.append(ArmPaceRow(
                experiment=x, name=name, arm=arm, label=labels[arm] if arm < len(labels) else f"arm {arm}", gpu=gpu,
                holds=len(ps), headline=head, compute_share=sum(p.compute_share for p in ps) / len(ps),
                kernels_of_hold=sum(p.kernel_share / max(p.compute_share, 1e-9) for p in ps) / len(ps),
                why=last.why()))
        return out
