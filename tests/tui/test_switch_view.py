"""The switch view's drawing functions over a real device -> stream recording (sim engine,
committed: switch_device_stream.jsonl.gz), folded to fixed times: the header's rates, the
history's mark, the segment rows, the device-sync cause; and compare's one clock."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

import themes
from c2tui.dashboard.compare_app import AlignedClock, compare_app
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.common import as_text
from c2tui.widgets.header_bar import header_items
from c2tui.widgets.history_view import render_history
from c2tui.widgets.lock_lanes import render_locks
from c2tui.widgets.partition_table import render_rows
from c2tui.widgets.segment_panel import render_segments
from c2tui.widgets.timeline import render_timeline

RECORDINGS = Path(__file__).parent / "recordings"
SWITCH = RECORDINGS / "switch_device_stream.jsonl.gz"
PAL = themes.load("dark").palette


@pytest.fixture(scope="module")
def replay() -> ReplaySource:
    return ReplaySource.from_file(SWITCH, at=0.0, playing=False)


def at(src: ReplaySource, t: float):
    src.seek(t)
    return src.snapshot()[1]


def text(lines) -> str:
    return as_text(lines).plain


def test_header_names_the_window_the_change_and_the_mean(replay):
    st = at(replay, 14.0)
    head = " ".join(ln.plain for ln in header_items(st, PAL))
    assert re.search(r"verified/min \[\d+–\d+\] \d+ proofs \(30 s\)", head), head  # its proofs and 95% interval
    assert "since mem_sync→stream 6 s ago" in head and "mean since start" in head


def test_header_says_settling_until_the_window_holds_enough(replay):
    early = " ".join(ln.plain for ln in header_items(at(replay, 2.0), PAL))
    assert re.search(r"settling \d of 10 proofs", early), early  # not a bare rate from 2 proofs
    just_after = " ".join(ln.plain for ln in header_items(at(replay, 8.5), PAL))
    assert re.search(r"since mem_sync→stream \d s ago settling \d of 10 proofs", just_after), just_after
    late = " ".join(ln.plain for ln in header_items(at(replay, 14.0), PAL))
    assert "settling" not in late.split("since")[0]


def test_history_marks_the_switch_on_every_series(replay):
    st = at(replay, 14.0)
    lines = render_history(st, PAL, 80, 12)
    assert "▼" in lines[0].plain and "mem_sync→stream" in lines[0].plain
    mark = lines[0].plain.index("▼")
    rows = [ln for ln in lines[1:-1]]
    assert len(rows) == 7  # verified, util, VRAM, cached, fallbacks, OOMs, held
    for ln in rows:  # the mark's column carries the mark's background on every series
        styles = [st_ for t, st_ in ln.parts for _ in t]
        assert PAL["free"] in styles[mark]
    # before the switch there is no mark, and a short panel folds to fewer rows
    assert "▼" not in text(render_history(at(replay, 7.0), PAL, 80, 12))
    assert len(render_history(st, PAL, 80, 5)) == 5


def test_segment_rows_and_ratio(replay):
    st = at(replay, 16.0)
    out = text(render_segments(st, PAL, 150, 6))
    seg0, seg1 = out.splitlines()[1:3]
    assert seg0.split()[0] == "0" and "start" in seg0 and "two-lock/device" in seg0
    assert "mem_sync→stream" in seg1 and "two-lock/stream" in seg1
    assert seg1.split()[-1] == "–"  # no device sync after the fix
    ratio = next(w for w in seg1.split() if w.endswith("x"))
    assert float(ratio[:-1]) > 1.5  # stream is faster than device here (the fold's figure)
    narrow = text(render_segments(st, PAL, 60, 2)).splitlines()  # 60 columns, one row: the latest
    assert "verified/min" in narrow[0] and len(narrow) == 2 and narrow[1].split()[0] == "1"


def test_device_sync_cause_in_lane_timeline_and_row(replay):
    st = at(replay, 1.2)
    g = st.gpus[0]
    mem = render_locks(g, st.t, PAL, 150)[0].plain
    assert mem.startswith("mem") and "g0w0" in mem and "device sync behind g0w1 s0p1" in mem
    lanes = text(render_timeline(g, st.t, PAL, 100, 10.0))
    assert "device sync behind g0w1 s0p1" in lanes
    rows = text(render_rows(st, PAL, 200, 12))
    row = next(ln for ln in rows.splitlines() if ln.startswith("s0p3"))
    assert "sync" in row and "device sync behind g0w1 s0p1" in row


def test_aligned_clock_puts_each_run_at_its_offset():
    a = ReplaySource.from_file(SWITCH, playing=False)
    b = ReplaySource.from_file(RECORDINGS / "two_gpus.jsonl", playing=False)
    clock = AlignedClock([a, b], [1.0, 3.0], at=2.0)
    assert (a.position, b.position) == (3.0, 5.0)
    clock.seek(-10.0)  # before both: each at its own start; the clock stops at the earliest
    assert clock.position == -3.0 and a.position == 0.0 and b.position == 0.0
    clock.seek(1e9)
    assert a.position == a.end_t and b.position == b.end_t


def test_compare_keys_move_every_column_together():
    files = [SWITCH, RECORDINGS / "two_gpus.jsonl"]
    app = compare_app(files, [0.5, 2.0], at=4.0)

    async def go() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.press("right")
            srcs = app.aligned.sources
            assert (srcs[0].position, srcs[1].position) == (9.5, 11.0)
            await pilot.press("home")
            assert app.aligned.position == app.aligned.start

    asyncio.run(go())
