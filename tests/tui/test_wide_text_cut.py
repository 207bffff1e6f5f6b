"""Cutting wide text to a width is one pass (issue 35's audit of the widgets): a line of wide
characters was cut by dropping one character and measuring the rest again, room x room work
(~0.1 s a line for 8 KB of CJK, a note's bound, at width 1000: seconds a frame of the log)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from c2tui.widgets import common
from c2tui.widgets.common import Line, cut_cells


def test_a_wide_line_is_measured_once_not_once_a_character(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def counted(text: str) -> int:
        calls.append(len(text))
        return cell_len(text)

    monkeypatch.setattr(common, "_cell_len", counted)
    cut = cut_cells("界" * 8192, 999)
    assert cell_len(cut) == 998 and len(calls) <= 2, len(calls)  # before: ~500 measures of ~1000 characters
    calls.clear()
    Line("界" * 8192).truncate(999, "ellipsis")
    assert sum(calls) <= 4 * 8192, sum(calls)


@given(st.text(alphabet=st.sampled_from("ab界😀é"), max_size=40), st.integers(0, 50))
def test_the_cut_is_the_longest_start_that_fits(text: str, room: int) -> None:
    cut = cut_cells(text, room)
    assert text.startswith(cut) and cell_len(cut) <= room
    assert cut == text or cell_len(text[:len(cut) + 1]) > room
