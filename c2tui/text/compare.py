"""`c2tui compare` as text: the runs named, their figures side by side with the ratio to the
first, the windowed rate of each at the same times after the anchor, and each run's segment
table (starts relative to its anchor). Tables fit the width like the summary's."""
from __future__ import annotations

from typing import Any, Callable

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text

from c2tui.text.experiment import experiment_parts
from c2tui.text.fit_table import fit_tables
from c2tui.text.segments import segment_tables
from prover import Comparison, ComparedRun
from prover import on_off
from prover import Summary

ANCHOR_WORDS = {"start": "its start", "first-gpu": "its first GPU section (first lock acquired)",
                "steady": "its first verified partition"}


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _run_line(r: ComparedRun) -> Text:
    sm = r.summary
    kind = "SIMULATED" if sm.simulated else "native"
    return Text.assemble((f"{r.label}  ", "bold"), f"{r.file}: {sm.backend} ({kind}), profile {sm.profile}, proved "
                         f"2^{sm.proved_log2}, modelled 2^{sm.modelled_log2}, {len(sm.gpus)} GPU(s), {knob_words(sm)}; "
                         f"anchor at {r.anchor_t:.1f} s of {r.end_t:.1f} s")


MAIN_KNOBS = ("lock_mode", "mem_sync", "workers_per_gpu")


def knob_words(sm: Summary) -> str:
    """"knobs lock_mode=two-lock, ..." where they never changed; else "knobs at the start ...,
    at the end ... (N changes)": the end's alone read as the run's knobs."""
    def main(knobs: dict) -> str:
        return ", ".join(f"{k}={on_off(knobs[k])}" for k in MAIN_KNOBS if k in knobs)

    start = sm.knobs_at_start or sm.knobs
    changes = sum(1 for sg in sm.segments if sg.change)
    if not changes and main(start) == main(sm.knobs):
        return f"knobs {main(sm.knobs)}"
    return f"knobs at the start {main(start)}, at the end {main(sm.knobs)} ({changes} change{'s' if changes != 1 else ''})"


def _said(s: Summary) -> bool:
    """The recording says its OOMs' outcomes (one from before issue 36 only counts them)."""
    return bool(s.ooms_retried or s.ooms_failed or not s.ooms)


def _count(x: float | None) -> str:
    return "not said" if x is None else f"{x:.0f}"


_FIGURES: list[tuple[str, Callable[[Summary], float | None], Callable[[float | None], str]]] = [
    ("verified/min steady", lambda s: s.steady_throughput_per_min, _rate),
    ("verified/min last window", lambda s: s.windowed_throughput_per_min, _rate),
    ("verified/min mean since start", lambda s: s.throughput_per_min, _rate),
    ("verified partitions", lambda s: float(s.partitions_ok), lambda x: f"{x:.0f}"),
    ("fallbacks", lambda s: float(s.fallbacks), lambda x: f"{x:.0f}"),
    ("OOMs", lambda s: float(s.ooms), lambda x: f"{x:.0f}"),
    ("OOMs retried", lambda s: float(s.ooms_retried) if _said(s) else None, lambda x: _count(x)),
    ("OOMs failed", lambda s: float(s.ooms_failed) if _said(s) else None, lambda x: _count(x)),
    ("device sync total (s)", lambda s: sum(g.device_sync_s for g in s.segments) if s.device_syncs_recorded else None,
     lambda x: "not recorded" if x is None else f"{x:.2f}"),
    ("segments", lambda s: float(len(s.segments)), lambda x: f"{x:.0f}"),
]


def _figures(cmp: Comparison, width: int) -> list[Any]:
    runs = cmp.runs
    cols = ["", *(r.label for r in runs), *(f"{r.label}/{runs[0].label}" for r in runs[1:])]
    rows = []
    for name, get, fmt in _FIGURES:
        vals = [get(r.summary) for r in runs]
        base = vals[0]
        ratios = [f"{v / base:.2f}x" if v is not None and base else "-" for v in vals[1:]]
        rows.append([name, *(fmt(v) for v in vals), *ratios])
    return fit_tables("side by side (whole runs)", cols, rows, width)


def _aligned(cmp: Comparison, width: int) -> list[Any]:
    runs = cmp.runs
    cols = [f"after {cmp.align}", *(f"{r.label} t" for r in runs), *(f"{r.label} /min" for r in runs)]
    rows = [[f"{row.after:+.0f} s", *("-" if t is None else f"{t:.1f} s" for t in row.t),
             *(_rate_ci(x, n, ci) for x, n, ci in zip(row.windowed_per_min, row.proofs or [None] * len(runs),
                                                      row.ci or [None] * len(runs)))] for row in cmp.rows]
    return fit_tables(f"aligned: verified/min over the last {cmp.rate_window_s:g} s at the same time after "
                      f"each one's {cmp.align}, [95% interval] (proofs) (t: the run's own clock; -: ended)",
                      cols, rows, width)


def _rate_ci(x: float | None, n: int | None, ci: tuple[float, float] | None) -> str:
    """"823.4 [700-960] (412)": the rate, its 95% interval and the proofs it rests on."""
    if x is None or n is None:
        return _rate(x)
    return f"{_rate(x)} [{ci[0]:.0f}-{ci[1]:.0f}] ({n})" if ci else f"{_rate(x)} ({n})"


def build(cmp: Comparison, width: int) -> list[Any]:
    head = Text(f"c2tui compare: {len(cmp.runs)} recordings aligned at {cmp.align} "
                f"(0 s = {ANCHOR_WORDS.get(cmp.align, cmp.align)})", style="bold")
    parts: list[Any] = [head, *(_run_line(r) for r in cmp.runs), *_figures(cmp, width), *_aligned(cmp, width)]
    for r in cmp.runs:
        parts += segment_tables(r.summary.segments, width, origin=r.anchor_t,
                                title=f"{r.label} segments (from: after its {cmp.align}; ratio to the segment before)")
        parts += experiment_parts(r.summary.experiments, prefix=f"{r.label} ")
    return parts


class CompareView:
    def __init__(self, cmp: Comparison) -> None:
        self.cmp = cmp

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Group(*build(self.cmp, options.max_width))
