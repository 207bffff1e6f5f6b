"""A GPU panel's pace line: what sets this GPU's pace now (the fold's pace concept), its busy
share (compute held), the phase that bounds it with its seconds a partition, and in a few
words whether more workers, host threads or another discipline can help:

    pace    host-bound: synthesis 11.7s · GPU busy 25% · cores 18%: more host_threads may help
    pace    GPU-bound · GPU busy 99% · 0.08s/part, ≤ 715/min · host work won't help
"""
from __future__ import annotations

from c2tui.widgets.common import Line, fmt_secs

LABEL = "pace    "


def _style(bound: str, pal) -> str:
    if bound == "gpu":
        return "bold " + pal["ok"]
    return pal["dim"] if bound == "settling" else "bold " + pal["warn"]


def pace_line(pace, pal, width: int) -> Line:
    """The line for one GPU's Pace (None: no worker seen on it yet); the seconds a partition
    are left out first where the line is too long, then it is cut."""
    if pace is None or pace.bound == "settling":
        return Line.assemble((LABEL, "bold"), ("settling (read from the first GPU section on)", pal["dim"])).truncate(width)
    per = pace.per_partition_s.get(pace.what) if pace.what else None
    seconds, gpu_s = (f" {fmt_secs(per)}" if per is not None else ""), ""
    if pace.bound == "gpu" and pace.gpu_section_s:
        gpu_s = f" · {fmt_secs(pace.gpu_section_s)}/part, ≤ {pace.gpu_per_min:.0f}/min"
    short = pace.short_why()
    for extra, tail in ((seconds, gpu_s), ("", "")):
        line = Line.assemble((LABEL, "bold"), (pace.headline(), _style(pace.bound, pal)), (extra, "bold"),
                             (" · GPU busy ", pal["dim"]), (f"{pace.compute_share:.0%}", "bold"), (tail, pal["dim"]))
        if short:
            line.append(" · " + short, pal["dim"])
        if line.cell_len <= width:
            return line
    return line.truncate(width, "ellipsis")
