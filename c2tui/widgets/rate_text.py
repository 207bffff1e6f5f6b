"""The header's rates, each with what it rests on (issue 33): verified/min over the named
window with its proofs and 95% interval, "settling 4 of 10 proofs (30 s)" while
the window the header names holds fewer than the fold's SETTLE_PROOFS (said as a count, issue
44: "settling (4 proofs)" read like warm-up for most of a default sim run); the segment before
the last knob change ("before 98.1/min") beside the rate since it, so a switch's before
and after stand together below 120 columns, where the Segments panel has no room (from 120 it
keeps the segment before and the one running); the mean since start labelled as such. The
interval method: docs/figures.md."""
from __future__ import annotations

from c2tui.widgets.common import Line
from prover import DashboardState


def ci_text(ci: tuple[float, float] | None) -> str:
    """"700–960" (per minute), "" without one."""
    if ci is None:
        return ""
    lo, hi = ci
    return f"{lo:.0f}–{hi:.0f}" if hi >= 10 else f"{lo:.1f}–{hi:.1f}"


def _proofs(n: int) -> str:
    return f"{n} proof{'s' if n != 1 else ''}"


def short_change(change: str | None) -> str:
    """"mem_sync: device -> stream (switch)" -> "mem_sync→stream" (several: the last)."""
    if not change:
        return ""
    last = change.split(", ")[-1]
    knob, _, rest = last.partition(": ")
    new = rest.split(" -> ")[-1].split(" (")[0] if " -> " in rest else rest
    return f"{knob.replace('workers_per_gpu', 'workers')}→{new}"


def settling_text(n: int, of: int) -> str:
    """"settling 4 of 10 proofs": how far a rate is from meaning much, as a count."""
    return f"settling {n} of {of} proofs"


def window_item(r, pal, compact: bool) -> Line:
    unit = "/min" if compact else " verified/min"
    if r.settling:  # the window named as the settled rate names it: "(30 s)"
        return Line.assemble((settling_text(r.window_proofs, r.settle_proofs), "bold " + pal["warn"]),
                             (f" ({r.window_s:g} s) {r.windowed_per_min:.1f}{unit} [{ci_text(r.window_ci) or '–'}]",
                              pal["dim"]))
    return Line.assemble((f"{r.windowed_per_min:.1f}", "bold"),
                         (f"{unit} [{ci_text(r.window_ci)}] {_proofs(r.window_proofs)} ({r.window_s:g} s)", pal["dim"]))


def since_item(r, pal) -> Line:
    head = (("since ", pal["dim"]), (short_change(r.change), "bold " + pal["info"]),
            (f" {r.since_change_s:.0f} s ago ", pal["dim"]))
    if r.since_change_settling:
        return Line.assemble(*head, (settling_text(r.since_change_proofs, r.settle_proofs), "bold " + pal["warn"]),
                             (f" {r.since_change_per_min:.1f}/min", pal["dim"]))
    return Line.assemble(*head, (f"{r.since_change_per_min:.1f}/min", "bold"),
                         (f" [{ci_text(r.since_change_ci)}] {_proofs(r.since_change_proofs)}", pal["dim"]))


def before_item(r, pal) -> Line:
    """The segment before the last change, its steady rate as the Segments panel shows it (its
    interval there, and in `summary`: 80 columns have room for the rate alone)."""
    return Line.assemble(("before ", pal["dim"]), (f"{r.before_per_min:.1f}/min", "bold"))


# the widest "before" and "since" items, kept in the header's height so a switch does not move the panels
WIDEST_SINCE = "since lock_mode→two-lock 9999 s ago 9999.9/min [9999–9999] 9999 proofs"
WIDEST_BEFORE = "before 9999.9/min"


def rate_items(st: DashboardState, pal, compact: bool = False) -> list[Line]:
    """What a switch did: verified/min over the recent window (named), the segment before the
    last knob change (below 120 columns) and since it, and the mean since start, labelled as
    such (it carries warm-up and set-up)."""
    r = st.rates()
    items = [window_item(r, pal, compact)]
    since = r.since_change_per_min is not None and r.since_change_s is not None
    # below 120 columns there is no room for the Segments panel: the segment before the switch is
    # said here (from 120 columns the panel keeps it and the running one, c2tui/dashboard/layout.py)
    before = compact and since and r.before_per_min is not None
    if before:  # before, then since: the switch reads left to right
        items.append(before_item(r, pal))
    if since:
        items.append(since_item(r, pal))
    items.append(Line.assemble(("mean since start " if not compact else "mean ", pal["dim"]),
                               (f"{r.mean_per_min:.1f}/min", "")))
    return items


def stand_ins(st: DashboardState, compact: bool = False) -> list[Line]:
    """The widest "before" and "since" a switch would bring, where there are none yet: the header
    counts their room so a switch does not change its height and move every panel (a pause,
    stalls or the end may still add a line, once; the height never shrinks at a width)."""
    r = st.rates()
    since = r.since_change_per_min is not None and r.since_change_s is not None
    out = [Line(WIDEST_BEFORE)] if compact and not (since and r.before_per_min is not None) else []
    return out + ([Line(WIDEST_SINCE)] if not since else [])
