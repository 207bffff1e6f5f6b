"""The event log: what matters in a run (mode changes, fallbacks, OOMs, failures, stalls),
newest at the bottom, coloured by level; times are run time from the state."""
from __future__ import annotations


from c2tui.widgets.common import Line, StateView

LEVEL = {"info": ("info", "info"), "warn": ("warn", "warn"), "error": ("fail", "ERR ")}


class EventLog(StateView):
    DEFAULT_CSS = "EventLog { height: 8; }"

    def show(self, st) -> None:
        sub = f"{st.mode_changes} mode changes · {len(st.log)} notes"
        self.set_titles("Events", sub)
        super().show(st)

    def draw(self, st, width: int, height: int) -> list[Line]:
        pal = self.palette
        entries = list(st.log)[-max(1, height):]
        lines = []
        for t, level, text in entries:
            key, tag = LEVEL.get(level, ("dim", level[:4]))
            ln = Line(no_wrap=True, overflow="ellipsis")
            ln.append(f"{t:8.2f}s ", style=pal["dim"])
            ln.append(f"{tag:<5}", style="bold " + pal[key])
            ln.append(text, style=pal["fail"] if level == "error" else "")
            ln.truncate(width, overflow="ellipsis")
            lines.append(ln)
        if not lines:
            lines.append(Line("nothing yet", style=pal["dim"]))
        return lines
