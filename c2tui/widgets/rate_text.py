"""The header's rates, each with what it rests on (issue 33): verified/min over the named
window with its proofs and 95% interval, "settling (n proofs)" while the window holds fewer
than the fold's SETTLE_PROOFS; since the last knob change the same; the mean since start
labelled as such. The interval method: docs/figures.md."""
from __future__ import annotations

from c2tui.widgets.common import Line


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


def window_item(r, pal, compact: bool) -> Line:
    unit = "/min" if compact else " verified/min"
    if r.settling:
        return Line.assemble((f"settling ({_proofs(r.window_proofs)})", "bold " + pal["warn"]),
                             (f" {r.windowed_per_min:.1f}{unit} [{ci_text(r.window_ci) or '–'}] ({r.window_s:g} s)",
                              pal["dim"]))
    return Line.assemble((f"{r.windowed_per_min:.1f}", "bold"),
                         (f"{unit} [{ci_text(r.window_ci)}] {_proofs(r.window_proofs)} ({r.window_s:g} s)", pal["dim"]))


def since_item(r, pal) -> Line:
    head = (("since ", pal["dim"]), (short_change(r.change), "bold " + pal["info"]),
            (f" {r.since_change_s:.0f} s ago ", pal["dim"]))
    if r.since_change_settling:
        return Line.assemble(*head, (f"settling ({_proofs(r.since_change_proofs)})", "bold " + pal["warn"]),
                             (f" {r.since_change_per_min:.1f}/min", pal["dim"]))
    return Line.assemble(*head, (f"{r.since_change_per_min:.1f}/min", "bold"),
                         (f" [{ci_text(r.since_change_ci)}] {_proofs(r.since_change_proofs)}", pal["dim"]))


# the widest "since" item, kept in the header's height so a switch does not move the panels
WIDEST_SINCE = "since lock_mode→two-lock 9999 s ago 9999.9/min [9999–9999] 9999 proofs"


def rate_items(st, pal, compact: bool = False) -> list[Line]:
    """What a switch did: verified/min over the recent window (named), since the last knob
    change, and the mean since start, labelled as such (it carries warm-up and set-up)."""
    r = st.rates()
    items = [window_item(r, pal, compact)]
    if r.since_change_per_min is not None and r.since_change_s is not None:
        items.append(since_item(r, pal))
    items.append(Line.assemble(("mean since start " if not compact else "mean ", pal["dim"]),
                               (f"{r.mean_per_min:.1f}/min", "")))
    return items
