"""Rich tables that fit a width without wrapping a value.

Rich shrinks a table that is too wide by wrapping cells ("verifie…", "139.8" / "GiB" on two
rows when piped). Here a table's columns are instead spread over as many tables as the width
needs, each repeating the key column(s), with every cell no_wrap: the same numbers, a
narrower layout. Widths are known exactly because every cell is plain text. The console they
print on has the terminal's width, else COLUMNS, else 140 (summary_console).
"""
from __future__ import annotations

import os
import sys
from typing import Any, Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

_CELL_EXTRA = 3  # one space of padding each side and one border line (rich's default box)


def _widths(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max([cell_len(h)] + [cell_len(r[i]) for r in rows]) + _CELL_EXTRA for i, h in enumerate(columns)]


def column_groups(columns: Sequence[str], rows: Sequence[Sequence[str]], width: int, keys: int = 1) -> list[list[int]]:
    """The column indexes of each table (the key columns first in every one), so that each
    table is at most `width` wide; a column wider than that alone gets a table of its own."""
    w = _widths(columns, rows)
    base = 1 + sum(w[:keys])
    groups: list[list[int]] = []
    cur: list[int] = []
    used = base
    for i in range(keys, len(columns)):
        if cur and used + w[i] > width:
            groups.append(cur)
            cur, used = [], base
        cur.append(i)
        used += w[i]
    groups.append(cur)
    return [list(range(keys)) + g for g in groups]


def fit_tables(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], width: int, *, keys: int = 1,
               left: set[int] | None = None, bold_last: bool = False) -> list[Text | Table]:
    """One table when it fits in `width`, else several with the columns split between them."""
    left = {0} if left is None else left
    groups = column_groups(columns, rows, width, keys)
    out: list[Text | Table] = []
    for n, cols in enumerate(groups):
        # the title as its own line: a table's title wraps at the table's width, often narrow
        out.append(Text(title if n == 0 else f"{title.split(' (')[0]}, continued", style="italic"))
        t = Table()
        for i in cols:
            t.add_column(columns[i], justify="left" if i in left else "right", no_wrap=True)
        for k, r in enumerate(rows):
            t.add_row(*(Text(r[i]) for i in cols), style="bold" if bold_last and k == len(rows) - 1 else None)
        out.append(t)
    return out


def summary_console(**kw: Any) -> Console:
    """The console summaries print on: the terminal's width on a TTY, else COLUMNS when set,
    else 140 (logs, pipes). The tables fold to that width (summary, compare, experiment)."""
    cols = os.environ.get("COLUMNS", "")
    return Console(width=None if sys.stdout.isatty() or cols.isdigit() else 140, **kw)
