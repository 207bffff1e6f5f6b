"""The view carries whole sectors (issue 44): it keeps every partition in flight and then the
latest done, up to its bound, and a sector cut at that bound read "6 of 10" in its sector row;
now every partition of a sector it shows comes with it."""
from __future__ import annotations

from c2tui.widgets.sector_rows import sector_rows
from prover import events as ev
from prover.fold.model import DashboardState


def test_a_finished_sector_row_shows_all_its_partitions():
    st = DashboardState()
    t = 0.0
    for s in range(14):  # 140 partitions, done one after another: the view's 96 cut s4 in two
        st.apply(ev.SectorSubmitted(t=t, sector=s, partitions=10))
        for i in range(10):
            part = f"s{s}p{i}"
            st.apply(ev.PartitionQueued(t=t, part=part, sector=s, index=i))
            st.apply(ev.PhaseStart(t=t, part=part, phase="synthesis", worker="g0w0", gpu=0))
            t += 0.01
            st.apply(ev.PartitionDone(t=t, part=part, ok=True, seconds=0.01))
    view = st.view()
    rows = sector_rows(view)
    assert [len(r.parts) for r in rows] == [10] * len(rows) and len(rows) == 10
    assert rows[-1].counts()["done"] == 10
    assert len(view.partitions) <= 2 * 96
