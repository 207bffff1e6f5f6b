"""The queues by proof class (winning > window > c2): how many partitions wait and for how
long, how many are in flight, deadlines missed and sectors overdue now, and why each class
waits (QueueWait). One line, shown once a sector of a class other than c2 has been submitted,
a deadline was missed or a class waits for more than busy workers (cordons, a pause,
class_gpus); a C2-only run keeps its partitions table's own queue count."""
from __future__ import annotations

from c2tui.widgets.common import Line, StateView, fmt_secs
from prover import DashboardState

STYLE = {"winning": "fail", "window": "warn", "c2": "info"}


def busy_only(w) -> bool:
    """A class that waits only because every worker is busy: the usual case, not worth a row."""
    return w.reason.startswith("every worker")


def render_queues(st: DashboardState, pal, width: int) -> list[Line]:
    q = st.queues
    ln = Line(no_wrap=True, overflow="ellipsis")
    ln.append("queues ", style="bold")
    for name, c in q.classes.items():
        if name != "c2" and not (c.queued or c.in_flight or c.done or c.missed):
            continue
        ln.append(f"{name} ", style="bold " + pal[STYLE.get(name, "info")])
        if name in st.keys.classes:  # its circuit's size (recordings from before sizes: none)
            ln.append(f"2^{st.keys.classes[name]} ", style=pal["dim"])
        ln.append(f"{len(c.queued)} queued")
        if c.queued:
            ln.append(f" ({fmt_secs(c.oldest(st.t))})", style=pal["dim"])
        ln.append(f" {len(c.in_flight)} running" + (f" {c.done} done" if c.done else ""), style=pal["dim"])
        if c.missed:
            ln.append(f" {c.missed} missed", style="bold " + pal["fail"])
        ln.append("  ")
    for name, w in st.ops.waits.items():  # why it waits (QueueWait: placement, cordons, pause, busy workers)
        ln.append(f"{name} waits: ", style="bold " + pal[STYLE.get(name, "info")])
        ln.append(f"{w.reason}  ", style=pal["warn"] if not busy_only(w) else pal["dim"])
    over = q.overdue(st.t)
    if over:
        ln.append("OVERDUE " + ", ".join(f"s{n} {c} +{fmt_secs(late)}" for n, c, late in over),
                  style="bold " + pal["fail"])
    ln.truncate(width, overflow="ellipsis")
    return [ln]


class QueueBar(StateView):
    DEFAULT_CSS = "QueueBar { height: 1; padding: 0 1; }"

    def wanted_height(self, st: DashboardState) -> int:
        q = st.queues
        shown = q.classed or any(c.missed for c in q.classes.values()) or not all(map(busy_only, st.ops.waits.values()))
        self.display = shown
        return 1 if shown else 0

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        return render_queues(st, self.palette, width)
