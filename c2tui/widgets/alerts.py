"""The alert thresholds on screen (prover.screen: the same definition as
docs/alerts/c2tui.rules.yml): the header's badge with the worst rule met and why, a panel's
level as a CSS class (-amber / -red, themes/c2tui.tcss colours its border or background),
its reason in a panel's title, and OOMs said as retried and failed, never one "failed" count."""
from __future__ import annotations

from rich.text import Text

from c2tui.widgets.common import Line, fmt_bytes
from prover import screen
from prover import DashboardState

MARK = {"amber": "▲", "red": "■"}
STYLE = {"amber": "warn", "red": "fail"}


def alert_items(st: DashboardState, pal, compact: bool = False) -> list[Line]:
    """The header's badge: the worst rule the run meets now and why, with how many more."""
    got = screen.verdicts(st)
    if not got:
        return []
    v = got[0]
    reason = v.reason if not compact or len(v.reason) <= 40 else v.reason[:39] + "…"
    ln = Line(f" {MARK[v.level]} {v.level.upper()} {reason} ", style=f"bold reverse {pal[STYLE[v.level]]}")
    if len(got) > 1:
        ln.append(f" +{len(got) - 1}", style="bold " + pal[STYLE[got[1].level]])
    return [ln]


def set_level(widget, level: str) -> None:
    """The widget's class for its level (-amber, -red; none when ok), changed only when it changes."""
    for name in ("amber", "red"):
        on = level == name
        if widget.has_class(f"-{name}") != on:
            widget.set_class(on, f"-{name}")


def growth_words(st: DashboardState, gpu: int) -> str:
    """The fastest VRAM growth in force on a GPU, its owner named: "g0w1 +16 MiB/partition"."""
    grow = st.ops.growing(gpu)
    if not grow:
        return ""
    f = grow[0]
    left = st.ops.partitions_left(gpu)
    return f"VRAM of {f.owner} +{fmt_bytes(f.slope)}/partition" + (f", budget in {left:.0f}" if left is not None else "")


def mark_panel(panel, st: DashboardState, title: Text, pal) -> None:
    """A GPU panel's level from the rules on its own figures: its class, and why in its title."""
    v = screen.gpu_verdict(st, panel.gpu)
    set_level(panel, v.level)
    if v.level == "ok":
        return
    why = growth_words(st, panel.gpu) if v.alert == "C2tuiVramGrowing" else ""
    title.append(f" {MARK[v.level]} {why or v.reason}", style="bold " + pal[STYLE[v.level]])


def oom_parts(st: DashboardState, gpu: int | None = None) -> tuple[int, int, int]:
    """(all, retried, failed) OOMs of the run or a GPU; an OOM whose outcome a recording does not
    say (before issue 36) is in `all` only."""
    o = st.ops
    n = st.ooms if gpu is None else st.gpus[gpu].ooms
    return n, o.oom_count("retried", gpu), o.oom_count("failed", gpu) - o.unsaid_count(gpu)


def oom_line(st: DashboardState, pal, gpu: int | None = None, compact: bool = False, lead: str = "") -> Line:
    """"OOM 0", or "OOM 3 (2 retried, 1 failed)": a retried one is never called failed."""
    n, retried, failed = oom_parts(st, gpu)
    unsaid = n - retried - failed  # older recordings: shown as OOMs always were (red)
    ln = Line.assemble((lead + "OOM ", pal["dim"]), (str(n), "bold " + (pal["fail"] if failed or unsaid else pal["warn"] if n else "")))
    if retried or failed:
        r, f = ("↻", "✗") if compact else (" retried", " failed")
        ln.append(" (", pal["dim"]).append(f"{retried}{r}", pal["warn"] if retried else pal["dim"])
        ln.append(" ", pal["dim"]).append(f"{failed}{f}", ("bold " + pal["fail"]) if failed else pal["dim"])
        ln.append(")", pal["dim"])
    return ln


def oom_words(n: int, retried: int, failed: int, compact: bool = False) -> str:
    """As plain text: "3", "3 (2↻ 1✗)" or "3 (2 retried, 1 failed)"; an older recording's
    OOMs (outcome not said) are only counted, never guessed."""
    if not (retried or failed):
        return str(n)
    return f"{n} ({retried}↻ {failed}✗)" if compact else f"{n} ({retried} retried, {failed} failed)"


def oom_cell(n: int, retried: int, failed: int, pal) -> Line:
    """"OOM 3 ", "OOM 3 (2↻ 1✗) ": red with a failed (or unsaid) one, amber with retried ones only."""
    key = "fail" if failed or n > retried else "warn" if n else "dim"
    return Line(f"OOM {oom_words(n, retried, failed, compact=True)} ", style=pal[key])


def oom_text(st: DashboardState, gpu: int, pal, lead: str = "") -> Text:
    """oom_line as a rich Text (a panel's subtitle), in its compact form."""
    out = Text(no_wrap=True)
    for t, style in oom_line(st, pal, gpu, compact=True, lead=lead).parts:
        out.append(t, style=style or None)
    return out
