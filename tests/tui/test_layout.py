"""The screen plan (c2tui/dashboard/layout.py) at the four sizes the issue names, one to eight GPUs:
every row used and none twice, the GPU panels fit or are told to scroll, and what must be
seen at each size is there."""
from __future__ import annotations

import pytest

from c2tui.dashboard.layout import PANEL_MIN, plan

SIZES = [(80, 24), (120, 40), (160, 48), (220, 60)]
CHROME = 4  # header (2), replay bar, footer


def used(p) -> int:
    return p.top_h + p.segments_h + p.side_h + (0 if p.wide else p.events_h)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("ngpu", [1, 2, 4, 8])
@pytest.mark.parametrize("lanes", [2, 8])
def test_every_row_is_used_once(size, ngpu, lanes):
    w, h = size
    p = plan(w, h - CHROME, ngpu=ngpu, lanes=lanes, segments=3)
    assert used(p) == h - CHROME
    assert p.panel_h >= PANEL_MIN and p.side_h >= 7
    rows = -(-ngpu // p.gpu_cols)
    if rows * p.panel_h > p.gpus_h:  # they scroll: then they are at their least
        assert p.panel_h == PANEL_MIN


def test_one_gpu_panel_fits_80x24_with_a_lane():
    p = plan(80, 24 - 5, ngpu=1, lanes=8, segments=1)  # a 3-line header at 80 columns
    assert p.gpus_h == p.panel_h >= PANEL_MIN + 1  # the panel whole, with room for its axis


def test_wide_sizes_show_history_and_segments_beside_and_below():
    for w, h in SIZES[2:]:
        p = plan(w, h - CHROME, ngpu=1, lanes=8, segments=2)
        assert p.wide and p.history_h == p.gpus_h and p.segments_h == 5 and p.events_h == p.side_h
        assert p.side_h >= 20  # no ~25 blank rows: partitions and events take what is left


def test_four_gpus_fit_at_160x48_without_scrolling():
    p = plan(160, 48 - CHROME, ngpu=4, lanes=2, segments=1)
    assert 4 * p.panel_h <= p.gpus_h and p.history_h > 0


def test_h_puts_the_history_in_the_partitions_place_at_80x24():
    plain = plan(80, 24 - 5, ngpu=1, lanes=3, segments=2)
    asked = plan(80, 24 - 5, ngpu=1, lanes=3, segments=2, history_first=True)
    assert plain.history_h == 0 and plain.side_h > 0
    assert asked.history_h >= 9 and asked.side_h == 0 and asked.events_h == 0
    assert used(asked) == 24 - 5
    assert plan(160, 44, ngpu=1, lanes=3, segments=2, history_first=True) == plan(160, 44, ngpu=1, lanes=3, segments=2)
