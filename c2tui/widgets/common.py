"""Shared pieces of the dashboard widgets: formatting, worker colours, the state-view base.

Every widget renders from a *snapshot* of DashboardState handed to it by the app (`show`),
never from the live fold, and computes its Rich Text lazily in `render()` at the size it
really has. A tick that brings a new snapshot costs one `refresh()` per visible widget; a
widget's height is set explicitly when it must change, so most ticks trigger no layout.
"""
from __future__ import annotations

import re
import zlib
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widget import Widget

from prover.events import Phase

if TYPE_CHECKING:
    from prover.state import DashboardState
    from themes import Palette

PHASES: tuple[str, ...] = tuple(p.value for p in Phase)
PHASE_SHORT = {
    "synthesis": "synth", "prep_msm": "prep", "prestage": "stage", "ntt_h": "ntt",
    "msm": "msm", "b_g2_msm": "bg2", "assemble": "asm", "verify": "vrfy",
}
GPU_LABELS = ("prestage", "ntt_h", "msm")
TRUE = {"1", "true", "on", "yes", "y"}
SPARK = "▁▂▃▄▅▆▇█"
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
    vals = list(values)[-width:] if width > 0 else []
    return "".join(SPARK[min(7, max(0, int(v * 7.999)))] for v in vals)


def flow(items: list[Text], width: int, sep: str = "  ") -> list[Text]:
    """Pack items left to right into lines no wider than `width` (items never split)."""
    lines: list[Text] = []
    cur = Text()
    for it in items:
        if cur.cell_len and cur.cell_len + len(sep) + it.cell_len > width:
            lines.append(cur)
            cur = Text()
        if cur.cell_len:
            cur.append(sep)
        cur.append_text(it)
    if cur.cell_len or not lines:
        lines.append(cur)
    for ln in lines:
        ln.truncate(width, overflow="ellipsis")
    return lines


def join_lines(lines: list[Text]) -> Text:
    out = Text(no_wrap=True, overflow="crop", end="")
    for i, ln in enumerate(lines):
        if i:
            out.append("\n")
        out.append_text(ln)
    return out


class StateView(Widget):
    """A widget that draws itself from the latest snapshot (set by `show`)."""

    DEFAULT_CSS = "StateView { height: auto; }"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.state: DashboardState | None = None

    @property
    def palette(self) -> "Palette":
        return self.app.palette  # type: ignore[attr-defined]

    def show(self, state: "DashboardState") -> None:
        self.state = state
        lines = self.wanted_height(state)
        if lines is not None and self.styles.height is not None and self.styles.height.value != lines:
            self.styles.height = lines
        elif lines is not None and self.styles.height is None:
            self.styles.height = lines
        self.refresh()

    def wanted_height(self, state: "DashboardState") -> int | None:
        return None

    def content_width(self) -> int:
        w = self.content_size.width
        return w if w > 0 else max(20, self.app.size.width - 4)

    def content_height(self) -> int:
        h = self.content_size.height
        return h if h > 0 else 10

    def render(self) -> Text:
        if self.state is None:
            return Text("")
        return self.draw(self.state, self.content_width(), self.content_height())

    def draw(self, state: "DashboardState", width: int, height: int) -> Text:  # pragma: no cover
        raise NotImplementedError
