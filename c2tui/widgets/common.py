"""Shared pieces of the dashboard widgets: formatting, worker colours, the state-view base.

Every widget renders from a *snapshot* of DashboardState handed to it by the app (`show`),
never from the live fold, and computes its Rich Text lazily in `render()` at the size it
really has. A tick that brings a new snapshot costs one `refresh()` per visible widget; a
widget's height is set explicitly when it must change, so most ticks trigger no layout.
"""
from __future__ import annotations

import math

import re
import zlib
from typing import TYPE_CHECKING

from rich.cells import cell_len as _cell_len
from rich.cells import get_character_cell_size as _char_cells
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from prover import SUB_PHASES, Phase

if TYPE_CHECKING:
    from prover import DashboardState
    from themes import Palette

# the phase bar's segments: a sub-phase (r1cs) is drawn inside its parent's (prestage), not its own
PHASES: tuple[str, ...] = tuple(p.value for p in Phase if p not in SUB_PHASES)
PHASE_SHORT = {
    "synthesis": "synth", "prep_msm": "prep", "prestage": "stage", "ntt_h": "ntt",
    "msm": "msm", "b_g2_msm": "bg2", "assemble": "asm", "verify": "vrfy",
}
SUB_PHASE_OF = {"r1cs": "prestage"}  # the segment a sub-phase ends: its last cell (a/b/c made on the GPU)
TRUE = {"1", "true", "on", "yes", "y"}
SPARK = "▁▂▃▄▅▆▇█"
# pause: U+23F8 (⏸) is missing from DejaVu Sans Mono, the PNG screenshots' face (an empty box)
PAUSE = "‖"
GiB = float(1 << 30)

_DIGITS = re.compile(r"(\d+)\D*$")


def truthy(v: object) -> bool:
    return str(v).strip().lower() in TRUE


def worker_index(name: str) -> int:
    """A stable colour index for a worker id: its trailing number, else a hash."""
    m = _DIGITS.search(name)
    if m:
        return int(m.group(1))
    return zlib.crc32(name.encode()) & 0xFF


def gib(n: float) -> str:
    v = n / GiB
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.1f}"


def fmt_bytes(n: float) -> str:
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.0f} MiB"
    return f"{n / 1024:.0f} KiB"


def fmt_secs(s: float) -> str:
    if s < 0:
        s = 0.0
    if s < 10:
        return f"{s:.2f}s"
    if s < 100:
        return f"{s:.1f}s"
    if s < 3600:
        return f"{int(s) // 60}m{int(s) % 60:02d}s"
    return f"{int(s) // 3600}h{(int(s) % 3600) // 60:02d}m"


def fmt_clock(s: float) -> str:
    s = max(0.0, s)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{int(h)}:{int(m):02d}:{sec:04.1f}"
    return f"{int(m):02d}:{sec:04.1f}"


def sparkline(values, width: int) -> str:
    """Shares 0..1 as bars; a value outside (or not a number: NaN, inf) is drawn at the nearer
    end or blank, never an error (the reader bounds them, a renderer does not assume it)."""
    vals = list(values)[-width:] if width > 0 else []
    return "".join(SPARK[int(min(1.0, max(0.0, v)) * 7.999)] if math.isfinite(v) else " " for v in vals)


class Line:
    """One screen line as (text, style) runs: the small part of rich.Text the widgets use,
    without its per-append overhead, and turned straight into a Textual Strip (the Line API)
    instead of going through Text -> Content conversion and wrapping every frame."""

    __slots__ = ("parts", "cell_len", "base")

    def __init__(self, text: str = "", style: str = "", **_ignored: object) -> None:
        self.parts: list[tuple[str, str]] = []
        self.cell_len = 0
        self.base = style if not text else ""
        if text:
            self.parts.append((text, style))
            self.cell_len = _cell_len(text)

    @classmethod
    def assemble(cls, *items: "str | tuple[str, str] | Line") -> "Line":
        ln = cls()
        for it in items:
            if isinstance(it, Line):
                ln.append_text(it)
            elif isinstance(it, tuple):
                ln.append(it[0], it[1])
            else:
                ln.append(it)
        return ln

    def append(self, text: str, style: str = "") -> "Line":
        if text:
            self.parts.append((text, f"{self.base} {style}" if self.base else style))
            self.cell_len += len(text) if text.isascii() else _cell_len(text)
        return self

    def append_text(self, other: "Line") -> "Line":
        if other.base:
            self.parts.extend((t, f"{other.base} {st}") for t, st in other.parts)
        else:
            self.parts.extend(other.parts)
        self.cell_len += other.cell_len
        return self

    @property
    def plain(self) -> str:
        return "".join(t for t, _ in self.parts)

    def __str__(self) -> str:
        return self.plain

    def truncate(self, width: int, overflow: str = "crop") -> "Line":
        if self.cell_len <= width:
            return self
        out: list[tuple[str, str]] = []
        room = width - (1 if overflow == "ellipsis" else 0)
        used = 0
        for t, st in self.parts:
            n = _cell_len(t)
            if used + n <= room:
                out.append((t, st))
                used += n
                continue
            cut = cut_cells(t, room - used)
            if cut:
                out.append((cut, st))
                used += _cell_len(cut)
            break
        if overflow == "ellipsis" and width > 0:
            out.append(("…", out[-1][1] if out else ""))
            used += 1
        self.parts, self.cell_len = out, used
        return self

    def overlay(self, at: int, text: str, style: str) -> "Line":
        """A copy with `text` over the cells from `at` (cells are one wide here: lanes, axes)."""
        out, pos, end = Line(), 0, at + len(text)
        for t, st in self.parts:
            for ch in t:
                if pos == at:
                    out.append(text, style)
                if not at <= pos < end:
                    out.append(ch, st)
                pos += 1
        if pos <= at:
            out.append(" " * (at - pos) + text, style)
        return out

    def strip(self, styles: "StyleCache", width: int, base: Style | None = None) -> Strip:
        """One Strip of exactly `width` cells (cropped or padded), the base style under all."""
        ln = self if self.cell_len <= width else Line().append_text(self).truncate(width)
        get = styles.combined
        segs = [Segment(t, get(base, st)) for t, st in ln.parts]
        n = ln.cell_len
        if n < width:
            segs.append(Segment(" " * (width - n), base))
        return Strip(segs, width)


def cut_cells(text: str, room: int) -> str:
    """The longest start of `text` that fits `room` cells, in time linear in `room`, not in
    the text (a 1 MB part name once cut a character at a time: minutes a frame, issue 35)."""
    if room <= 0:
        return ""
    cut = text[:room]  # no character is narrower than a cell
    if cut.isascii() or _cell_len(cut) <= room:
        return cut
    used = 0  # wide characters: one pass (dropping one at a time and measuring again was
    for i, ch in enumerate(cut):  # room x room: ~0.1 s a line of 8 KB of CJK at width 1000)
        used += _char_cells(ch)
        if used > room:
            return cut[:i]
    return cut


class StyleCache(dict):
    """style string -> rich Style, parsed once; and (base, style string) -> base + style."""

    def __init__(self) -> None:
        super().__init__()
        self._combined: dict = {}

    def combined(self, base: Style | None, key: str) -> Style | None:
        k = (base, key)
        st = self._combined.get(k)
        if st is None:
            own = self[key]
            st = own if base is None else (base + own if own is not None else base)
            if len(self._combined) > 20000:
                self._combined.clear()
            self._combined[k] = st
        return st

    def __missing__(self, key: str) -> Style | None:
        st = Style.parse(key) if key.strip() else None
        self[key] = st
        return st

    def get(self, key: str) -> Style | None:  # type: ignore[override]
        try:
            return self[key]
        except KeyError:  # pragma: no cover - __missing__ handles it
            return None


STYLES = StyleCache()


def fit(line: Line, options: list[Line], width: int, gap: str = "  ", gap_style: str | None = None) -> bool:
    """Append the first of `options` that fits whole within `width` after `gap` (in the
    option's own style unless `gap_style`): a line drops a part that has no room instead of
    ending mid-word. False when none fits."""
    for opt in options:
        if line.cell_len + len(gap) + opt.cell_len <= width:
            style = gap_style if gap_style is not None else (opt.parts[0][1] if opt.parts else "")
            line.append(gap, style).append_text(opt)
            return True
    return False


def flow(items: list[Line], width: int, sep: str = "  ") -> list[Line]:
    """Pack items left to right into lines no wider than `width` (items never split)."""
    lines: list[Line] = []
    cur = Line()
    for it in items:
        if cur.cell_len and cur.cell_len + len(sep) + it.cell_len > width:
            lines.append(cur)
            cur = Line()
        if cur.cell_len:
            cur.append(sep)
        cur.append_text(it)
    if cur.cell_len or not lines:
        lines.append(cur)
    for ln in lines:
        ln.truncate(width, overflow="ellipsis")
    return lines


def as_text(lines: list[Line]) -> Text:
    """The lines as one rich Text (for tests and exports, not for frames)."""
    out = Text(no_wrap=True, overflow="crop", end="")
    for i, ln in enumerate(lines):
        if i:
            out.append("\n")
        for t, st in ln.parts:
            out.append(t, style=st or None)
    return out


class StateView(Widget):
    """A widget that draws itself from the latest snapshot (set by `show`), through Textual's
    Line API: `draw` makes a list of Lines once per new snapshot (or size / theme change),
    and `render_line(y)` hands out Strips built from them on demand."""

    DEFAULT_CSS = "StateView { height: auto; }"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.state: DashboardState | None = None
        self._lines: list[Line] | None = None
        self._strips: dict[int, Strip] = {}
        self._key: tuple = ()
        self._base: Style | None = None
        self._titles: tuple = (None, None)

    def set_titles(self, title: "str | Text", subtitle: "str | Text") -> None:
        """Border title and subtitle, set only when they change: setting one repaints the
        whole widget."""
        if (title, subtitle) == self._titles:
            return
        if title != self._titles[0]:
            self.border_title = title
        if subtitle != self._titles[1]:
            self.border_subtitle = subtitle
        self._titles = (title, subtitle)

    @property
    def palette(self) -> "Palette":
        return self.app.palette  # type: ignore[attr-defined]

    def show(self, state: "DashboardState") -> None:
        """Take a new snapshot: redraw the lines now and repaint only the lines that changed
        (a partial refresh: Textual re-renders and re-composes just those regions)."""
        self.state = state
        h = self.wanted_height(state)
        if h is not None and (self.styles.height is None or self.styles.height.value != h):
            self.styles.height = h  # a layout follows; draw at the new size when it comes
            self._lines = None
            self.refresh()
            return
        size = self.content_size
        key = (size, id(self.palette))
        old = self._lines
        if size.width <= 0 or size.height <= 0 or old is None or key != self._key:
            self._lines = None
            self.refresh()
            return
        new = self.draw(state, size.width, size.height)
        if len(new) != len(old):
            self._lines, self._strips = new, {}
            self.refresh()
            return
        self._lines = new
        strips = self._strips
        run = -1  # first line of the current run of changed lines
        for y, (a, b) in enumerate(zip(old, new)):
            if a.parts != b.parts:
                strips.pop(y, None)
                if run < 0:
                    run = y
            elif run >= 0:
                self.refresh(Region(0, run, size.width, y - run))
                run = -1
        if run >= 0:
            self.refresh(Region(0, run, size.width, len(new) - run))

    def wanted_height(self, state: "DashboardState") -> int | None:
        return None

    def get_line_filters(self):
        """Our lines carry truecolor styles only (theme palettes are hex), so the ANSI ->
        truecolor filter has nothing to do here; skipping it saves ~20% of a line's repaint.
        Other filters (NO_COLOR's monochrome, ...) still apply."""
        return [f for f in self.app.get_line_filters() if type(f).__name__ != "ANSIToTruecolor"]

    def content_width(self) -> int:
        w = self.content_size.width
        return w if w > 0 else max(20, self.app.size.width - 4)

    def content_height(self) -> int:
        h = self.content_size.height
        return h if h > 0 else 10

    def lines(self) -> list[Line]:
        size = self.content_size
        key = (size, id(self.palette))
        if self._lines is None or key != self._key:
            self._key = key
            self._strips = {}
            self._base = self.rich_style  # the widget's colours under every run
            if self.state is None or size.width <= 0 or size.height <= 0:
                self._lines = None  # not laid out yet: draw when there is a size
                return []
            self._lines = self.draw(self.state, size.width, size.height)
        return self._lines

    def on_resize(self, event) -> None:
        # lines and strips were made for the old size: make them again, all of them
        self._lines = None
        self._strips = {}
        self.refresh()

    def render_line(self, y: int) -> Strip:
        strip = self._strips.get(y)
        if strip is not None and self._lines is not None:
            return strip
        lines = self.lines()
        width = self._key[0].width
        if y < len(lines):
            strip = lines[y].strip(STYLES, width, self._base)
            self._strips[y] = strip
            return strip
        return Strip.blank(width, self._base)

    def render(self) -> Text:
        """The whole content as one rich Text (tests read `.plain`); frames use render_line."""
        return as_text(self.lines())

    def draw(self, state: "DashboardState", width: int, height: int) -> list[Line]:  # pragma: no cover
        raise NotImplementedError
