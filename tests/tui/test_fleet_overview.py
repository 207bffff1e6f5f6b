"""The overview at fleet sizes (issue 27): 8 hosts x 8 GPUs is a line per host, not 64 lines
over the whole screen; more hosts than fit are counted; the panels keep their room."""
from __future__ import annotations

import asyncio

from tests.helpers.fleet_synth import fleet_stream

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.common import SPARK
from c2tui.widgets.fleet_overview import host_lines
from c2tui.widgets.gpu_overview import GpuOverview
from c2tui.widgets.gpu_panel import GpuPanel
from prover import events as ev
from prover.fold.apply import fold

class _Pal(dict):
    def __missing__(self, key: str) -> str:  # a style is the palette entry's own name: readable in asserts
        return key


PAL = _Pal()


def test_host_lines_sum_each_hosts_gpus_and_count_the_rest():
    st = fold(fleet_stream(3, 6.0, distinct=1))
    st.apply(ev.HostLeft(t=6.0, host="h2", reason="actor died", lost=True, requeued=["h2.s0p1"]))
    lines = [ln.plain for ln in host_lines(st, PAL, 120, 2, {"h0": "shown"})]
    assert len(lines) == 2
    assert lines[0].split()[:2] == ["h0", "GPU0-7"] and lines[0].rstrip().endswith("shown")
    done = sum(st.gpus[i].done for i in range(8))
    assert f"done {done} " in lines[0] and "compute " in lines[0]
    assert lines[1] == "+2 more hosts (h1…h2, 16 GPUs)"
    st.jobs.cordoned.add(1)  # a cordoned GPU's cell is ⊘ in the warn colour, and the line names it
    first = host_lines(st, PAL, 160, 3, {})[0]
    cells = [(ch, style) for text, style in first.parts for ch in text if ch in SPARK + "·⊘"]  # a run may hold several
    assert len(cells) == 8 and cells[1] == ("⊘", "bold warn") and "warn" not in cells[0][1] + cells[2][1]
    assert "cordoned GPU1 " in first.plain
    lost = host_lines(st, PAL, 160, 3, {})[2].plain
    assert " ".join(lost.split()[:8]) == "h2 GPU16-23 lost (actor died); 1 requeued done"


def test_eight_hosts_by_eight_gpus_leave_the_screen_to_the_panels():
    st = fold(fleet_stream(8, 8.0, distinct=2)).view()

    async def go():
        app = DashboardApp(ReplaySource([], playing=False), fps=0.2)
        async with app.run_test(size=(200, 60)) as pilot:
            app.draw(st)
            for _ in range(3):
                await pilot.pause()
            ov = app.query_one(GpuOverview)
            shown = [p for p in app.query(GpuPanel) if p.region.height > 0 and p.region.y < 60]
            return ov.display, ov.region.height, [ln.plain for ln in ov._lines or []], len(shown)

    display, height, lines, panels = asyncio.run(go())
    assert display and height == 8  # a line per host, not 64 lines of the 60
    assert [ln[:3].strip() for ln in lines] == [f"h{i}" for i in range(8)]
    assert panels >= 4  # before: the overview's 60 lines pushed every panel off screen


def test_snapshot_shares_closed_timeline_segments_and_later_folding_leaves_it_alone():
    evs = fleet_stream(2, 8.0, distinct=1)
    cut = len(evs) // 2
    st = fold(evs[:cut])
    snap = st.view()
    before = {i: [(s.worker, s.label, s.t0, s.t1) for s in g.timeline] for i, g in snap.gpus.items()}
    open_ = [s for g in snap.gpus.values() for s in g.timeline if s.t1 is None]
    assert open_ and all(s is not o for s in open_ for g in st.gpus.values() for o in g.timeline)
    fold(evs[cut:], st)  # closes the open ones in the fold's own state
    assert {i: [(s.worker, s.label, s.t0, s.t1) for s in g.timeline] for i, g in snap.gpus.items()} == before
