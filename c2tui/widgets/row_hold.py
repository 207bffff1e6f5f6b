"""Rows that hold still under the cursor (issue 44). A table re-sorted every frame moved its rows
under a focused cursor: `c` after ↑ ×4 landed on a partition that had just finished. While a
table has focus and a row is selected, its rows keep the order they had when the row was
selected (the table's title says "order held"): a row that finishes stays where it was, as it
is now or, once the view no longer carries it, as it was last seen; rows that came since are
added below. The window of rows shown moves only when the selected row would leave it. Esc, or
the focus leaving, gives the live order back. One hold per kind of row (partitions, sectors),
keyed by the row's id, so a selection follows its row and an action names that id."""
from __future__ import annotations

from typing import Any, Callable, Generic, Hashable, TypeVar

R = TypeVar("R")

HELD = "order held (esc: live)"  # what the title says while rows hold still


class RowHold(Generic[R]):
    def __init__(self, key: Callable[[R], Hashable]) -> None:
        self.key = key
        self.ids: list[Hashable] | None = None  # the held order; None: live
        self.last: dict[Hashable, R] = {}  # each held row as last seen
        self.top = 0  # the first row shown

    @property
    def held(self) -> bool:
        return self.ids is not None

    def hold(self, rows: list[R]) -> None:
        """Hold `rows`' order (what is on screen now: no row moves when the hold begins)."""
        self.ids = [self.key(r) for r in rows]
        self.last = {self.key(r): r for r in rows}

    def release(self) -> None:
        self.ids, self.last, self.top = None, {}, 0

    def order(self, live: list[R], lookup: Callable[[Any], R | None] = lambda k: None) -> list[R]:
        """The rows to draw: live order, or the held rows in their order (each as it is now:
        from `live`, else `lookup`, else as last seen), then the rows that came since."""
        if self.ids is None:
            return live
        now = {self.key(r): r for r in live}
        out: list[R] = []
        for k in self.ids:
            r = now.get(k)
            if r is None:
                r = lookup(k)
            if r is None:
                r = self.last.get(k)
            if r is not None:
                self.last[k] = r
                out.append(r)
        held = set(self.ids)
        return out + [r for r in live if self.key(r) not in held]

    def window(self, rows: list[R], selected: Any, room: int) -> int:
        """The first row shown: the selected row stays in view, and the window moves only when
        it would leave it (no selection: the top)."""
        keys = [self.key(r) for r in rows]
        if selected not in keys or room <= 0 or len(rows) <= room:
            self.top = 0
            return 0
        i = keys.index(selected)
        if i < self.top:
            self.top = i
        elif i >= self.top + room:
            self.top = i - room + 1
        self.top = max(0, min(self.top, len(rows) - room))
        return self.top
