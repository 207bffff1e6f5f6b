"""The switch's before and after at every size (issue 44): below 200 columns the Segments panel
showed only the running segment, empty right after a switch, and at 80x24 no segment at all. Now
the panel keeps at least the segment before and the one running from 120 columns, and below
120, where the panel has no room, the header gives the segment before's rate beside the rate
since the change."""
from __future__ import annotations

from pathlib import Path

import pytest

from c2tui.dashboard import layout
from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.header_bar import header_items
from c2tui.widgets.common import flow
from c2tui.widgets.segment_panel import render_segments
from prover.fold.apply import fold
from prover.record import read_recording

SWITCH = Path(__file__).parent / "recordings" / "switch_device_stream.jsonl.gz"  # device -> stream at 8.05 s
AFTER = 10.0  # 2 s after the switch: the new segment has no proof yet


def _pal():
    import themes

    return themes.load("dark").palette


@pytest.mark.parametrize("ngpu,lanes", [(1, 3), (2, 3), (4, 3)])
@pytest.mark.parametrize("used", [6, 7, 8, 9])  # header, replay bar, host RAM, queues, footer
def test_the_layout_keeps_the_segment_before_and_the_running_one_at_120x40(ngpu, lanes, used):
    for segments in (2, 3, 8):
        pl = layout.plan(120, 40 - used, ngpu=ngpu, lanes=lanes, segments=segments)
        assert pl.segments_h >= 2 + 1 + 2, (segments, pl)  # border, header, two rows


def test_two_rows_are_the_segment_before_and_the_one_running():
    st = fold(e for e in read_recording(SWITCH).events if e.t <= AFTER)
    st.segments.append(type(st.segments[-1])(index=2, t0=AFTER, knobs=dict(st.segments[-1].knobs), change="b_g2: cpu -> gpu (key)"))
    st.segments[-2].t1 = AFTER
    lines = [ln.plain for ln in render_segments(st, _pal(), 118, 3)]
    assert [ln.split()[0] for ln in lines[1:]] == ["1", "2"]  # no "+1 earlier" line in place of the before
    st.segments.append(type(st.segments[-1])(index=3, t0=AFTER, knobs=dict(st.segments[-1].knobs), change="b_g2: gpu -> cpu (key)"))
    st.segments[-2].t1 = AFTER
    lines = [ln.plain for ln in render_segments(st, _pal(), 118, 4)]  # three rows for four segments
    assert lines[1].startswith("+2 earlier") and [ln.split()[0] for ln in lines[2:]] == ["2", "3"]


@pytest.mark.parametrize("width", [80, 100])
def test_below_120_columns_the_header_says_before_and_since(width):
    st = fold(e for e in read_recording(SWITCH).events if e.t <= AFTER)
    text = "\n".join(ln.plain for ln in flow(header_items(st, _pal(), compact=True), width - 2))
    assert "before 105.3/min" in text and "since mem_sync→stream" in text
    assert text.index("before ") < text.index("since mem_sync")
    assert "settling 1 of 10 proofs" in text  # what settling means, as a count (1 proof since the switch)


def test_from_120_columns_the_segments_panel_has_the_before_not_the_header():
    st = fold(e for e in read_recording(SWITCH).events if e.t <= AFTER)
    text = " ".join(ln.plain for ln in header_items(st, _pal(), compact=False))
    assert "before" not in text and "since mem_sync→stream" in text
    rows = [ln.plain for ln in render_segments(st, _pal(), 118, 3)]
    assert rows[1].split()[:2] == ["0", "8.05s"] and "mem_sync→stream" in rows[2]


def _app() -> DashboardApp:
    return DashboardApp(ReplaySource.from_file(SWITCH, at=AFTER, playing=False), theme="dark")


def test_right_after_a_switch_at_200x60(snap_compare):
    """200x60, 2 s after device -> stream: both segments in the panel; since the switch in the header."""
    assert snap_compare(_app(), terminal_size=(200, 60))


def test_right_after_a_switch_at_120x40(snap_compare):
    """120x40: the Segments panel holds the segment before and the one running."""
    assert snap_compare(_app(), terminal_size=(120, 40))


def test_right_after_a_switch_at_80x24(snap_compare):
    """80x24: no room for the Segments panel; the header's line says before 98/min, then since
    the switch, settling 0 of 10 proofs."""
    assert snap_compare(_app(), terminal_size=(80, 24))
