"""The event log: what matters in a run (mode changes, fallbacks, OOMs, failures, stalls),
newest at the bottom, coloured by level; times are run time from the state.

It follows the newest note until you scroll (wheel, or ↑/↓/PgUp/PgDn when it has focus) or
select a line; `enter` (or a double click) opens the selected note's event with all its
fields; `/` filters by text and `v` by level; `esc` clears both and follows the tail again."""
from __future__ import annotations

from textual.binding import Binding

from c2tui.event_filter import matcher
from c2tui.widgets.common import Line, StateView

LEVEL = {"info": ("info", "info"), "warn": ("warn", "warn"), "error": ("fail", "ERR ")}
# level filters `v` cycles through: (name shown, levels kept)
LEVEL_FILTERS = (("all", None), ("warn+", {"warn", "error"}), ("errors", {"error"}))
_SELECT = Binding.Group("select")
_PAGE = Binding.Group("page")
SCROLL_KEYS = [
    Binding("up", "move(-1)", "select older", key_display="↑", group=_SELECT,
            tooltip="select an older / newer note (the wheel scrolls)"),
    Binding("down", "move(1)", "select newer", key_display="↓", group=_SELECT,
            tooltip="select an older / newer note (the wheel scrolls)"),
    Binding("pageup", "page(-1)", "page up", key_display="PgUp", group=_PAGE, tooltip="a page older / newer"),
    Binding("pagedown", "page(1)", "page down", key_display="PgDn", group=_PAGE, tooltip="a page older / newer"),
]


def entry_line(entry, pal, width: int, selected: bool = False) -> Line:
    t, level, text = entry[0], entry[1], entry[2]
    key, tag = LEVEL.get(level, ("dim", level[:4]))
    ln = Line(style="reverse" if selected else "")
    ln.append(f"{t:8.2f}s ", style=pal["dim"])
    ln.append(f"{tag:<5}", style="bold " + pal[key])
    ln.append(text, style=pal["fail"] if level == "error" else "")
    return ln.truncate(width, overflow="ellipsis")


class EventLog(StateView, can_focus=True):
    DEFAULT_CSS = "EventLog { height: 8; }"
    BINDINGS = [
        *SCROLL_KEYS,
        Binding("enter", "detail", "details", key_display="⏎",
                tooltip="the selected note's event, every field (or double click)"),
        Binding("slash", "filter_text", "filter", key_display="/", tooltip="filter by text in the note"),
        Binding("v", "filter_level", "level", tooltip="level filter: all → warn+ → errors"),
        Binding("escape", "clear", "follow", key_display="esc", tooltip="clear the filters, follow the newest note"),
    ]

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.text_filter = ""
        self.level_filter = 0  # index into LEVEL_FILTERS
        self.selected: tuple | None = None  # the selected entry (entries are immutable tuples)
        self.top: int | None = None  # first line shown; None: follow the newest

    # --- what is shown ------------------------------------------------------------------
    def entries(self, st) -> list[tuple]:
        keep = LEVEL_FILTERS[self.level_filter][1]
        match = matcher(self.text_filter)  # a word or the event's kind (c2tui/event_filter.py)
        return [e for e in st.log if (keep is None or e[1] in keep) and match(e)]

    def window(self, n: int, height: int) -> int:
        """The first entry shown: the tail when following, else `top`, moved just enough to
        keep the selected line in view."""
        last = max(0, n - height)
        top = last if self.top is None else min(max(0, self.top), last)
        idx = self._index()
        if idx is not None:
            top = min(max(top, idx - height + 1), idx)
        return top

    def _index(self) -> int | None:
        if self.selected is None or self.state is None:
            return None
        try:
            return self.entries(self.state).index(self.selected)
        except ValueError:
            return None

    def show(self, st) -> None:
        self.state = st
        self._titles_for(st)
        super().show(st)

    def _titles_for(self, st) -> None:
        shown = self.entries(st)
        parts = [f"{st.mode_changes} mode changes · {len(st.log)} notes"]
        name = LEVEL_FILTERS[self.level_filter][0]
        if self.text_filter or name != "all":
            parts.insert(0, f"{len(shown)} shown" + (f" · /{self.text_filter}" if self.text_filter else "")
                         + (f" · {name}" if name != "all" else ""))
        h = self.content_height()
        below = len(shown) - (self.window(len(shown), h) + h)
        if below > 0:
            parts.insert(0, f"↓ {below} newer")
        self.set_titles("Events", " · ".join(parts))

    def draw(self, st, width: int, height: int) -> list[Line]:
        pal = self.palette
        shown = self.entries(st)
        top, sel = self.window(len(shown), max(1, height)), self._index()
        lines = [entry_line(e, pal, width, top + i == sel) for i, e in enumerate(shown[top:top + max(1, height)])]
        if not lines:
            lines.append(Line("nothing yet" if not st.log else "no note matches the filter", style=pal["dim"]))
        return lines

    def redraw(self) -> None:
        """Draw again from the same snapshot (a key or the wheel moved the view)."""
        if self.state is not None:
            self._titles_for(self.state)
        self._lines = None
        self.refresh()

    # --- keys and mouse -----------------------------------------------------------------
    def _move_to(self, idx: int) -> None:
        shown = self.entries(self.state) if self.state is not None else []
        if not shown:
            return
        idx = min(max(0, idx), len(shown) - 1)
        self.selected = shown[idx]
        if self.top is None:
            self.top = self.window(len(shown), self.content_height())
        self.redraw()

    def action_move(self, step: int) -> None:
        idx = self._index()
        if idx is None:  # first key: select the newest line shown
            shown = self.entries(self.state) if self.state is not None else []
            top = self.window(len(shown), self.content_height())
            idx = min(len(shown), top + self.content_height()) - 1 - step
        self._move_to(idx + step)

    def action_page(self, step: int) -> None:
        self.action_move(step * max(1, self.content_height() - 1))

    def scroll_lines(self, step: int) -> None:
        """The wheel scrolls the view (no selection); scrolling to the end follows again."""
        if self.state is None:
            return
        n, h = len(self.entries(self.state)), self.content_height()
        top = self.window(n, h) + step
        self.selected = None
        self.top = None if top >= n - h else max(0, top)
        self.redraw()

    def on_mouse_scroll_up(self, event) -> None:
        event.stop()
        self.scroll_lines(-3)

    def on_mouse_scroll_down(self, event) -> None:
        event.stop()
        self.scroll_lines(3)

    def on_click(self, event) -> None:
        if self.state is None:
            return
        shown = self.entries(self.state)
        y = event.y - self.gutter.top
        top = self.window(len(shown), self.content_height())
        if 0 <= y < self.content_height() and top + y < len(shown):
            self.top = top
            self._move_to(top + y)
            if event.chain >= 2:
                self.action_detail()

    def action_detail(self) -> None:
        from c2tui.widgets.event_detail import EventDetail

        if self.selected is None:
            self.action_move(0)
        if self.selected is not None:
            self.app.push_screen(EventDetail(self.selected))

    def action_filter_text(self) -> None:
        from c2tui.widgets.filter_prompt import FilterPrompt

        def done(text: str | None) -> None:
            if text is not None:
                self.text_filter = text.strip()
                self.selected, self.top = None, None
                self.redraw()

        self.app.push_screen(FilterPrompt("filter events (text in the note)", self.text_filter), done)

    def action_filter_level(self) -> None:
        self.level_filter = (self.level_filter + 1) % len(LEVEL_FILTERS)
        self.selected, self.top = None, None
        self.redraw()

    def action_clear(self) -> None:
        self.text_filter, self.level_filter = "", 0
        self.selected, self.top = None, None
        self.redraw()
