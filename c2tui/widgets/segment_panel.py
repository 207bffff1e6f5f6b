"""Segments: the run split at every knob change (the fold's, prover/fold/segments.py), one
row each: when, what opened it, the knobs, verified/min steady within it and its ratio to the
segment before, fallbacks, OOMs, mem wait / hold, compute-held share, device-sync total.
Columns that do not fit the width go, least needed first; rows that do not fit the height go
oldest first ("+N earlier")."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Protocol

from c2tui.widgets.common import Line, StateView, fmt_secs
from c2tui.widgets.header_bar import short_change
from prover import DashboardState, SegmentSummary

if TYPE_CHECKING:
    from themes import Palette


class _Ooms(Protocol):
    """A segment's OOM counts, or its transitional sections' (the fold's Transitional)."""

    ooms: int
    ooms_retried: int
    ooms_failed: int


def knobs_text(k: dict) -> str:
    """"two-lock/device w8" (+ "prestage off", "b_g2 cpu", "paused" where they apply)."""
    bits = [f"{k.get('lock_mode', '?')}/{k.get('mem_sync', '?')} w{k.get('workers_per_gpu', '?')}"]
    if k.get("prestage") is False:
        bits.append("prestage off")
    if "b_g2" in k:
        bits.append(f"b_g2 {k['b_g2']}")
    if k.get("paused") is True:
        bits.append("paused")
    return " ".join(bits)


def _ms(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 10 else fmt_secs(s)


def _ratio(r: SegmentSummary) -> str:
    """"2.81x", "1.02x ns" (not significant: its 95% interval holds 1)."""
    return "" if r.ratio is None else f"{r.ratio:.2f}x" + (" ns" if r.ratio_significant is False else "")


def _ci(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"{ci[0]:.0f}–{ci[1]:.0f}" if ci[1] >= 10 else f"{ci[0]:.1f}–{ci[1]:.1f}"


def _ratio_ci(r: SegmentSummary) -> str:
    """"1.54–5.01", "0.80–1.30 not significant" while the interval holds 1."""
    if r.ratio_ci is None:
        return ""
    return f"{r.ratio_ci[0]:.2f}–{r.ratio_ci[1]:.2f}" + ("" if r.ratio_significant else " not significant")


def _transit(r: SegmentSummary) -> str:
    """What sections begun before the segment's switch did in it (not counted as its own)."""
    t = r.transitional
    if not (t.done or t.fallbacks or t.ooms or t.device_syncs):
        return "–"
    bits = [f"{t.verified} ok"] + ([f"{_ooms(t)} OOM"] if t.ooms else []) + ([f"{t.fallbacks} fb"] if t.fallbacks else [])
    return " ".join(bits + ([f"sync {_ms(t.device_sync_s)}"] if t.device_syncs else []))


def _ooms(r: _Ooms) -> str:
    """"3", or "2↻1✗" (retried, failed) where the recording says which: a retried one is not a failure."""
    return f"{r.ooms_retried}↻{r.ooms_failed}✗" if r.ooms_retried or r.ooms_failed else str(r.ooms)


@dataclass(frozen=True)
class Col:
    head: str
    width: int
    cell: Callable[[SegmentSummary], str]
    rank: int  # lower: kept longer when the width is short
    right: bool = True
    style: Callable[[SegmentSummary, Palette], str] = lambda r, pal: ""


COLS = (
    Col("#", 3, lambda r: str(r.index), 0),
    Col("from", 8, lambda r: fmt_secs(r.t0), 4),
    Col("for", 8, lambda r: fmt_secs(r.duration_s) + ("…" if r.open else ""), 1),
    Col("opened by", 18, lambda r: short_change(r.change) or "start", 2, right=False,
        style=lambda r, pal: "bold " + pal["info"] if r.change else pal["dim"]),
    Col("knobs", 26, lambda r: knobs_text(r.knobs), 3, right=False),
    Col("verified/min", 13, lambda r: "–" if r.verified_per_min is None else f"{r.verified_per_min:.1f}", 0,
        style=lambda r, pal: "bold"),
    Col("proofs", 7, lambda r: str(r.proofs), 1),
    Col("95% interval", 13, lambda r: _ci(r.per_min_ci), 2, style=lambda r, pal: pal["dim"]),
    Col("ratio", 9, _ratio, 0,
        style=lambda r, pal: "" if r.ratio is None else pal["dim"] if not r.ratio_significant
        else "bold " + (pal["ok"] if r.ratio >= 1 else pal["fail"])),
    Col("ratio 95%", 26, _ratio_ci, 4, right=False, style=lambda r, pal: pal["dim"]),
    Col("fallbk", 7, lambda r: str(r.fallbacks), 1, style=lambda r, pal: pal["warn"] if r.fallbacks else pal["dim"]),
    Col("OOM", 5, lambda r: _ooms(r), 1, style=lambda r, pal: pal["fail"] if r.ooms_failed or r.ooms > r.ooms_retried
        else pal["warn"] if r.ooms else pal["dim"]),
    Col("mem wait", 10, lambda r: _ms(r.mem_wait_mean), 5),
    Col("mem hold", 10, lambda r: _ms(r.mem_hold_mean), 5),
    Col("held", 6, lambda r: f"{r.compute_held_share * 100:.0f}%", 2),
    Col("dev sync", 10, lambda r: "–" if not r.device_syncs else _ms(r.device_sync_s), 2,
        style=lambda r, pal: "bold " + pal["device_sync"] if r.device_syncs else pal["dim"]),
    Col("transitional", 22, _transit, 4, right=False, style=lambda r, pal: pal["dim"]),
)


def columns(width: int) -> list[Col]:
    """The columns that fit, in table order, dropping the highest rank first; spare width
    goes to the knobs (then to what opened the segment), so neither ends in "…" when there is room."""
    cols = list(COLS)
    for rank in (5, 4, 3, 2, 1):
        if sum(c.width + 1 for c in cols) <= width:
            break
        cols = [c for c in cols if c.rank < rank]
    spare = width - sum(c.width + 1 for c in cols)
    for head, most in (("knobs", 20), ("opened by", 16)):
        i = next((k for k, c in enumerate(cols) if c.head == head), None)
        if i is not None and spare > 0:
            add = min(most, spare)
            cols[i], spare = replace(cols[i], width=cols[i].width + add), spare - add
    return cols


def _cell(c: Col, text: str) -> str:
    text = text if len(text) < c.width else text[:c.width - 2] + "…"
    return f"{text:>{c.width}} " if c.right else f"{text:<{c.width}} "


def render_segments(st: DashboardState, pal, width: int, height: int) -> list[Line]:
    from prover import segment_rows

    rows = segment_rows(st)
    cols = columns(width)
    if len(st.gpus) > 1:  # a sum over GPUs says so (a 39 s segment may hold 1m59s of sync over 8)
        cols = [replace(c, head="ΣGPU sync") if c.head == "dev sync" else c for c in cols]
    head = Line(style="bold " + pal["dim"])
    for c in cols:
        head.append(_cell(c, c.head))
    lines = [head.truncate(width)]
    room = max(1, height - 1)
    # too many: "+N earlier" and the latest ones; two rows: the segment before and the one
    # running (the title counts them all); one row: the running one alone
    shown = rows if len(rows) <= room else rows[-(room - 1 if room >= 3 else room):]
    if len(shown) < len(rows) and room >= 3:
        lines.append(Line(f"+{len(rows) - len(shown)} earlier segments (c2tui summary lists all)",
                          style=pal["dim"]).truncate(width))
    for r in shown:
        ln = Line()
        for c in cols:
            ln.append(_cell(c, c.cell(r)), c.style(r, pal))
        lines.append(ln.truncate(width, overflow="ellipsis"))
    return lines


class SegmentPanel(StateView):
    DEFAULT_CSS = "SegmentPanel { height: 5; }"

    def show(self, st: DashboardState) -> None:
        n = len(st.segments)
        self.set_titles("Segments", f"{n} segment{'s' if n != 1 else ''}: split at every knob change · "
                                    "sections counted under the knobs they began with · 95% intervals · ns: not significant")
        super().show(st)

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        return render_segments(st, self.palette, width, height)
