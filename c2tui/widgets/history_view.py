"""History: the last minutes of the run and of each GPU as sparklines, one cell per history
step (the fold's `History`, prover/fold/history.py), with a mark on every series where a
knob changed and the change named above them. It follows the state's clock, so a replay
shows the history up to the replay cursor and no further.

Rows, most important first, per GPU: verified/min, utilisation, VRAM (live / pool-cached
against the budget), fallbacks and OOMs per minute (each per-minute row over the fold's
sliding rate window, named in the title; OOMs as retried ↻ and failed ✗ where the recording
says which, a cell red with a failed one in its window), compute-held share; the run's own rows
come first when there is more than one GPU. Where the height is short, GPUs drop to fewer
rows and then to "+N more GPUs"."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from c2tui.widgets.common import SPARK, GiB, Line, StateView
from prover import DashboardState, HistoryPoint

LABEL_W, VALUE_W = 13, 10
NO_DATA = "·"


@dataclass(frozen=True)
class Series:
    """One history row: its label, how to read a point, its scale, how to print the last value."""

    key: str
    label: str
    value: Callable[[HistoryPoint], float | None]
    top: Callable[[list[float | None]], float]  # the value drawn as a full cell
    text: Callable[[HistoryPoint], str]
    colour: str  # palette key
    cell: Callable[[HistoryPoint], str | None] = lambda p: None  # a point's own palette key (None: colour)


def _max(vals: list[float | None], floor: float) -> float:
    return max([floor, *(v for v in vals if v is not None)])


def _oom_rate(p: HistoryPoint) -> str:
    """"0.0/min" where no outcome is said (an older recording), else "2↻ 1✗" (retried, failed /min)."""
    r, f = p.ooms_retried_per_min, p.ooms_failed_per_min
    if not (r or f):
        return f"{p.ooms_per_min:.1f}/min"
    return f"{r:.1f}".removesuffix(".0") + "↻ " + f"{f:.1f}".removesuffix(".0") + "✗"


def _oom_cell(p: HistoryPoint) -> str | None:
    """A cell with a failed OOM in its window is red, one with retried ones only amber."""
    return "fail" if p.ooms_failed_per_min else "warn" if p.ooms_retried_per_min else None


def _gib(b: float) -> str:
    return f"{b / GiB:.1f}G"


SERIES: dict[str, Series] = {s.key: s for s in (
    Series("rate", "verified", lambda p: p.verified_per_min, lambda v: _max(v, 1.0),
           lambda p: f"{p.verified_per_min:.0f}/min", "ok"),
    Series("util", "util", lambda p: p.util, lambda v: 1.0,
           lambda p: "–" if p.util is None else f"{p.util * 100:.0f}%", "ntt_h"),
    Series("vram", "VRAM live", lambda p: float(p.vram_live), lambda v: 1.0,
           lambda p: f"{p.vram_live / GiB:.1f}/{p.budget / GiB:.0f}G" if p.budget else _gib(p.vram_live), "prestage"),
    Series("cached", "pool-cached", lambda p: float(p.vram_cached), lambda v: 1.0,
           lambda p: _gib(p.vram_cached), "pool"),
    Series("fb", "fallbacks", lambda p: p.fallbacks_per_min, lambda v: _max(v, 1.0),
           lambda p: f"{p.fallbacks_per_min:.1f}/min", "warn"),
    Series("oom", "OOMs", lambda p: p.ooms_per_min, lambda v: _max(v, 1.0),
           _oom_rate, "fail", _oom_cell),
    Series("held", "held", lambda p: p.compute_held, lambda v: 1.0,
           lambda p: f"{p.compute_held * 100:.0f}%", "wait:compute"),
)}
# what a GPU shows, by how much room there is
GPU_ROWS = (("rate", "util", "vram", "cached", "fb", "oom", "held"), ("rate", "util", "vram", "fb", "oom", "held"),
            ("rate", "util", "vram", "fb", "held"), ("rate", "util", "fb", "held"), ("rate", "util", "fb"),
            ("rate", "util"), ("rate",))
RUN_ROWS = (("rate", "fb", "oom", "held"), ("rate", "fb"), ("rate",))


def short_mark(m) -> str:
    """A knob change as a few cells: "mem_sync→stream", "gpu1 lock_mode→single"; the changes of
    one column (a knob set: `--switch 5:lock_mode=two-lock,mem_sync=device`) joined by commas."""
    if isinstance(m, tuple):
        return ",".join(short_mark(x) for x in m)
    knob = m.knob.replace("workers_per_gpu", "workers")
    new = {"True": "on", "False": "off"}.get(str(m.new), str(m.new))
    return f"{'' if m.gpu is None else f'gpu{m.gpu} '}{knob}→{new}"


def mark_columns(shown: list, marks, cols: int) -> dict[int, object]:
    """The chart column of each knob change inside the shown points (right-aligned in `cols`):
    a point closes the bucket (t - step, t], so a change marks the first point at or after it;
    several in one column make a tuple."""
    pad = cols - len(shown)
    out: dict[int, object] = {}
    if not shown:
        return out
    for m in marks:
        if m.t > shown[-1].t or m.t <= shown[0].t - (shown[1].t - shown[0].t if len(shown) > 1 else 0):
            continue  # after the last closed bucket, or before the span shown
        i = next(k for k, p in enumerate(shown) if p.t >= m.t)
        had = out.get(pad + i)  # a column's changes are all named (a set's knobs), not the last alone
        out[pad + i] = m if had is None else (*(had if isinstance(had, tuple) else (had,)), m)
    return out


def spark_row(label: str, s: Series, points: list, cols: int, marks: dict[int, object], pal, width: int) -> Line:
    shown = points[-cols:]
    vals = [s.value(p) for p in shown]
    if s.key in ("vram", "cached"):
        budget = max([p.budget for p in shown] + [1])
        top = float(max([budget, *(v or 0 for v in vals)]))  # no points yet: the budget alone
    else:
        top = s.top(vals)
    ln = Line()
    ln.append(f"{label[:LABEL_W - 1]:<{LABEL_W}}", "bold")
    ln.append(f"{(s.text(shown[-1]) if shown else '–')[:VALUE_W - 1]:>{VALUE_W - 1}} ", "bold")
    pad = cols - len(shown)
    if pad > 0:
        ln.append(" " * pad)
    for i, (p, v) in enumerate(zip(shown, vals)):
        ch = NO_DATA if v is None else (" " if v <= 0 else SPARK[min(7, max(0, int(v / top * 7.999)))])
        if pad + i in marks:
            ln.append("┃" if ch == " " else ch, "bold " + pal["info"] + " on " + pal["free"])
        else:
            ln.append(ch, pal[s.cell(p) or s.colour] if v is not None else pal["dim"])
    return ln.truncate(width)


def marks_row(marks: dict[int, object], cols: int, pal, width: int) -> Line:
    """The changes named above the chart: "▼mem_sync→stream" at its column (or ending there
    when it would run past the right edge or into the next one); a name with room on neither
    side is left out and the mark stays ("▼"): cut, close changes read "l▼lock_m▼b_g2→g▼pa"."""
    cells = [" "] * cols
    taken = [False] * cols
    for c in sorted(marks):
        text = short_mark(marks[c])
        nxt = min([k for k in marks if k > c], default=cols)
        room = nxt - c - 1
        if len(text) <= room:
            seg, start = "▼" + text, c
        elif len(text) <= c and not any(taken[c - len(text):c]):
            seg, start = text + "▼", c - len(text)
        else:
            seg, start = "▼", c
        for j, ch in enumerate(seg):
            if 0 <= start + j < cols and not taken[start + j]:
                cells[start + j] = ch
                taken[start + j] = True
    ln = Line(" " * (LABEL_W + VALUE_W))
    ln.append("".join(cells), "bold " + pal["info"])
    return ln.truncate(width)


def axis_row(points: list, cols: int, pal, width: int) -> Line:
    step = points[1].t - points[0].t if len(points) > 1 else 2.0
    span = cols * step
    tick = 30.0 if span <= 240 else 60.0
    cells = [" "] * cols
    k = 1
    while k * tick < span:
        c = cols - 1 - int(k * tick / step)
        txt = f"-{int(k * tick // 60)}m" if (k * tick) % 60 == 0 else f"-{int(k * tick)}s"
        if c >= 0 and c + len(txt) < cols - 4:
            cells[c] = "╵"
            for j, ch in enumerate(txt):
                cells[c + 1 + j] = ch
        k += 1
    for j, ch in enumerate("now"):
        cells[cols - 3 + j] = ch
    head = f"{step:g}s/cell"
    return Line(f"{head:<{LABEL_W + VALUE_W}}"[:LABEL_W + VALUE_W] + "".join(cells), style=pal["dim"]).truncate(width)


def plan_rows(ngpu: int, room: int) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """(run rows, per-GPU rows, GPUs shown) that fit `room` lines (marks and axis excluded)."""
    run_opts = RUN_ROWS if ngpu > 1 else ((),)
    for gpu_rows in GPU_ROWS:
        for run_rows in run_opts:
            if len(run_rows) + ngpu * len(gpu_rows) <= room:
                return run_rows, gpu_rows, ngpu
    run_rows = run_opts[-1]
    fit = max(0, (room - len(run_rows) - 1) // len(GPU_ROWS[-1]))
    return run_rows, GPU_ROWS[-1], min(ngpu, fit)


def render_history(st: DashboardState, pal, width: int, height: int) -> list[Line]:
    h = st.history
    gpus = sorted(st.gpus)
    cols = max(8, width - LABEL_W - VALUE_W)
    run = h.series()
    if not run:
        return [Line(f"no history yet: a point every {h.step_s:g} s of run time", style=pal["dim"])]
    marks = mark_columns(run[-cols:], h.marks, cols)
    # the changes' names take a line only when one is in the span shown
    run_rows, gpu_rows, shown = plan_rows(len(gpus), max(1, height - (2 if marks else 1)))
    lines = [marks_row(marks, cols, pal, width)] if marks else []
    for key in run_rows:
        lines.append(spark_row("run " + SERIES[key].label, SERIES[key], run, cols, marks, pal, width))
    for i in gpus[:shown]:
        pts = h.series(i)
        for key in gpu_rows:
            label = f"g{i} {SERIES[key].label}" if len(gpus) > 1 else SERIES[key].label
            lines.append(spark_row(label, SERIES[key], pts, cols, marks, pal, width))
    if shown < len(gpus):
        lines.append(Line(f"+{len(gpus) - shown} more GPUs (taller terminal for their rows)", style=pal["warn"]).truncate(width))
    lines.append(axis_row(run, cols, pal, width))
    return lines[:max(1, height)] if len(lines) > height else lines


class HistoryView(StateView):
    """The history panel; its height is the app's (layout.py), its rows fit in it."""

    DEFAULT_CSS = "HistoryView { height: 10; }"

    def show(self, st: DashboardState) -> None:
        h = st.history
        n = len(h.marks)
        self.set_titles("History", f"{len(h.run) * h.step_s / 60:.1f} min · /min over a sliding {h.window_s:g} s"
                                   f" · {n} knob change{'s' if n != 1 else ''}")
        super().show(st)

    def wanted_height(self, st: DashboardState) -> int | None:
        return None

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        return render_history(st, self.palette, width, height)
