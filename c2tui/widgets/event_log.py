"""The event log: what matters in a run (mode changes, fallbacks, OOMs, failures, stalls),
newest at the bottom, coloured by level; times are run time from the state.

It follows the newest note until you scroll (wheel, or ↑/↓/PgUp/PgDn when it has focus) or
select a line; `enter` (or a double click) opens the selected note's event with all its
fields; `/` filters by text and `v` by level; `esc` clears both and follows the tail again."""
from __future__ import annotations

from textual.binding import Binding

from c2tui.widgets.event_filter import matcher
from c2tui.widgets.common import Line, StateView
from prover import DashboardState

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


PREFIX_W = 15  # "   12.34s warn "
WRAP_MAX = 3  # lines an entry may take; a longer one ends in an ellipsis


def entry_lines(entry, pal, width: int, selected: bool = False, wrap: int = WRAP_MAX) -> list[Line]:
    """An entry wrapped at words into up to `wrap` lines, the rest indented under its text:
    a narrow log shows whole notes instead of cutting each at the panel's edge."""
    t, level, text = entry[0], entry[1], entry[2]
    key, tag = LEVEL.get(level, ("dim", level[:4]))
    style = pal["fail"] if level == "error" else ""
    room = max(8, width - PREFIX_W)
    chunks = wrap_words(text, room, wrap)
    first = Line(style="reverse" if selected else "")
    first.append(f"{t:8.2f}s ", style=pal["dim"])
    first.append(f"{tag:<5}", style="bold " + pal[key])
    first.append(chunks[0], style=style)
    out = [first.truncate(width, overflow="ellipsis")]
    for c in chunks[1:]:
        ln = Line(style="reverse" if selected else "")
        ln.append(" " * PREFIX_W)
        ln.append(c, style=style)
        out.append(ln.truncate(width, overflow="ellipsis"))
    return out


def wrap_words(text: str, room: int, most: int) -> list[str]:
    """`text` in pieces of at most `room` cells, broken at spaces where it can be; at most
    `most` pieces, the last cut with an ellipsis."""
    pieces: list[str] = []
    rest = text
    while rest and len(pieces) < most:
        if len(rest) <= room:
            pieces.append(rest)
            rest = ""
            break
        cut = rest.rfind(" ", 0, room + 1)
        cut = cut if cut > room // 2 else room
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces[-1] = pieces[-1][:max(0, room - 1)] + "…"
    return pieces or [""]


def rows_of(text: str, room: int) -> int:
    return len(wrap_words(text, room, WRAP_MAX))


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
    def entries(self, st: DashboardState) -> list[tuple]:
        keep = LEVEL_FILTERS[self.level_filter][1]
        match = matcher(self.text_filter)  # a word or the event's kind (c2tui/widgets/event_filter.py)
        return [e for e in st.log if (keep is None or e[1] in keep) and match(e)]

    def window(self, shown: list, height: int) -> int:
        """The first entry shown: the tail when following, else `top`, moved just enough to
        keep the selected entry in view (entries wrap, so an entry may take several lines)."""
        room = max(8, self.content_width() - PREFIX_W)
        sizes = [rows_of(e[2], room) for e in shown]
        last, used = len(shown), 0
        while last > 0 and used + sizes[last - 1] <= height:
            last -= 1
            used += sizes[last]
        top = last if self.top is None else min(max(0, self.top), last)
        idx = self._index()
        if idx is not None:
            top = min(top, idx)
            while top < idx and sum(sizes[top:idx + 1]) > height:
                top += 1
        return top

    def fitting(self, shown: list, top: int, height: int) -> int:
        """How many entries from `top` fit whole in `height` lines (at least one)."""
        room = max(8, self.content_width() - PREFIX_W)
        n, used = 0, 0
        for e in shown[top:]:
            used += rows_of(e[2], room)
            if used > height:
                break
            n += 1
        return max(1, n) if top < len(shown) else 0

    def _index(self) -> int | None:
        if self.selected is None or self.state is None:
            return None
        try:
            return self.entries(self.state).index(self.selected)
        except ValueError:
            return None

    def show(self, st: DashboardState) -> None:
        self.state = st
        self._titles_for(st)
        super().show(st)

    def _titles_for(self, st: DashboardState) -> None:
        shown = self.entries(st)
        parts = [f"{st.mode_changes} mode changes · {len(st.log)} notes"]
        name = LEVEL_FILTERS[self.level_filter][0]
        if self.text_filter or name != "all":
            parts.insert(0, f"{len(shown)} shown" + (f" · /{self.text_filter}" if self.text_filter else "")
                         + (f" · {name}" if name != "all" else ""))
        h = self.content_height()
        top = self.window(shown, h)
        below = len(shown) - (top + self.fitting(shown, top, h))
        if below > 0:
            parts.insert(0, f"↓ {below} newer")
        self.set_titles("Events", " · ".join(parts))

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        pal = self.palette
        shown = self.entries(st)
        height = max(1, height)
        top, sel = self.window(shown, height), self._index()
        lines: list[Line] = []
        self._line_entry: list[int] = []  # the entry index of each line (for clicks)
        for i in range(top, len(shown)):
            for ln in entry_lines(shown[i], pal, width, i == sel):
                if len(lines) >= height:
                    break
                lines.append(ln)
                self._line_entry.append(i)
            if len(lines) >= height:
                break
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
            self.top = self.window(shown, self.content_height())
        self.redraw()

    def action_move(self, step: int) -> None:
        idx = self._index()
        if idx is None:  # first key: select the newest line shown
            shown = self.entries(self.state) if self.state is not None else []
            top = self.window(shown, self.content_height())
            idx = top + self.fitting(shown, top, self.content_height()) - 1 - step
        self._move_to(idx + step)

    def action_page(self, step: int) -> None:
        self.action_move(step * max(1, self.content_height() - 1))

    def scroll_lines(self, step: int) -> None:
        """The wheel scrolls the view (no selection); scrolling to the end follows again."""
        if self.state is None:
            return
        shown, h = self.entries(self.state), self.content_height()
        self.selected = None
        top = self.window(shown, h) + step
        self.top = None
        last = self.window(shown, h)  # where following the tail starts
        self.top = None if top >= last else max(0, top)
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
        rows = getattr(self, "_line_entry", [])
        if 0 <= y < len(rows):
            self.top = self.window(shown, self.content_height())
            self._move_to(rows[y])
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
