"""`c2tui compare A B [C ...]`: recordings side by side, each aligned at its anchor
(prover.fold.align), as data: every run's summary (with its segments), and the windowed rate of
each at the same times after the anchors. c2tui.text.compare renders it; --json dumps it."""
from __future__ import annotations

from typing import Any, Sequence

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.align import Alignment, nice_step, sample_rates
from prover.fold.apply import fold
from prover.fold.model import DashboardState
from prover.fold.summary import Summary, summarize


class ComparedRun(BaseModel):
    label: str = Field(description="A, B, C, ... in the order given")
    file: str
    anchor_t: float = Field(description="the anchor's time in this recording's own clock")
    end_t: float
    summary: Summary


class AlignedRow(BaseModel):
    after: float = Field(description="seconds after the anchor (the common clock)")
    t: list[float | None] = Field(description="each run's own time then (None: before its start or after its end)")
    windowed_per_min: list[float | None] = Field(description="each run's verified/min over the rate window then")
    proofs: list[int | None] = Field(default_factory=list, description="the proofs each rate rests on")
    ci: list[tuple[float, float] | None] = Field(default_factory=list, description="each rate's 95% interval")


def _aligned_row(after: float, points: list[tuple[float | None, Any]]) -> AlignedRow:
    """One moment of the common clock: each run's (own time, Rates or None) there."""
    rates = [r for _, r in points]
    return AlignedRow(after=after, t=[t for t, _ in points],
                      windowed_per_min=[None if r is None else r.windowed_per_min for r in rates],
                      proofs=[None if r is None else r.window_proofs for r in rates],
                      ci=[None if r is None else r.window_ci for r in rates])


class Comparison(BaseModel):
    align: str
    rate_window_s: float
    runs: list[ComparedRun]
    rows: list[AlignedRow]


def compare(runs: Sequence[tuple[str, Sequence[ev.Event]]], align: str = "first-gpu", window_s: float = 30.0,
            step: float | None = None) -> Comparison:
    """Summaries of `runs` ((file, events) each) and their windowed rates on one clock.
    ValueError if a run never reaches the anchor."""
    al = Alignment.of([evs for _, evs in runs], align)
    step = step or nice_step(al.hi)
    after = [k * step for k in range(int(al.hi / step) + 1)]
    cols = []
    for (_, evs), a, end in zip(runs, al.anchors, al.ends):
        own = [a + c for c in after]
        inside = [0.0 <= t <= end for t in own]
        rates = sample_rates(evs, [t for t, ok in zip(own, inside) if ok], window_s)
        it = iter(rates)
        cols.append([(t, next(it)) if ok else (None, None) for t, ok in zip(own, inside)])
    rows = [_aligned_row(c, [col[k] for col in cols]) for k, c in enumerate(after)]
    out = []
    for n, ((file, evs), a, end) in enumerate(zip(runs, al.anchors, al.ends)):
        sm = summarize(fold(evs, DashboardState(rate_window_s=window_s)))
        out.append(ComparedRun(label=chr(ord("A") + n), file=file, anchor_t=a, end_t=end, summary=sm))
    return Comparison(align=align, rate_window_s=window_s, runs=out, rows=rows)
