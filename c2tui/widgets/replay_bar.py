"""The replay bar: play/pause, speed, the position in the recording (click to seek)."""
from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

from c2tui.widgets.common import PAUSE, fmt_clock

PREFIX_W = 16


class ReplayBar(Widget):
    DEFAULT_CSS = "ReplayBar { height: 1; }"

    class Seek(Message):
        def __init__(self, t: float) -> None:
            super().__init__()
            self.t = t

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.position = 0.0
        self.end = 0.0
        self.start = 0.0
        self.playing = False
        self.speed = 1.0
        self._bar = (0, 0)  # (x0, width) of the track, for clicks
        self.clock_label = ""  # what the clock counts, where it is not run time ("after first GPU section")

    def show(self, position: float, start: float, end: float, playing: bool, speed: float) -> None:
        new = (position, start, end, playing, speed)
        if new != (self.position, self.start, self.end, self.playing, self.speed):
            self.position, self.start, self.end, self.playing, self.speed = new
            self.refresh()

    def render(self) -> Text:
        pal = self.app.palette  # type: ignore[attr-defined]
        width = self.content_size.width or self.app.size.width
        line = Text(no_wrap=True, overflow="crop")
        state = " ▶ PLAY  " if self.playing else f" {PAUSE} PAUSED"
        line.append(state, style="bold reverse " + (pal["ok"] if self.playing else pal["warn"]))
        sp = f"{self.speed:g}x"
        line.append(f" {sp:>5} ", style="bold")
        if self.clock_label:
            line.append(f"{self.clock_label} ", style=pal["dim"])
        # compare's aligned clock starts before 0 (a run's set-up before its alignment point)
        sign = "-" if self.position < 0 else ""
        pos_txt = f" {sign}{fmt_clock(abs(self.position))} / {fmt_clock(self.end)} "
        track_w = max(10, width - line.cell_len - len(pos_txt) - 1)
        self._bar = (line.cell_len, track_w)
        span = max(1e-9, self.end - self.start)
        frac = min(1.0, max(0.0, (self.position - self.start) / span))
        head = min(track_w - 1, int(frac * track_w))
        line.append("━" * head, style=pal["info"])
        line.append("●", style="bold " + pal["info"])
        line.append("─" * (track_w - head - 1), style=pal["dim"])
        line.append(pos_txt, style="bold")
        return line

    def on_click(self, event: events.Click) -> None:
        x0, w = self._bar
        off = event.get_content_offset(self)
        if off is None:
            return
        if w and x0 <= off.x < x0 + w:
            frac = (off.x - x0) / max(1, w - 1)
            self.post_message(self.Seek(self.start + frac * (self.end - self.start)))
