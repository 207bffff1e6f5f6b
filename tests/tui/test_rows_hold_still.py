"""Rows that hold still under the cursor (issue 44, c2tui/widgets/row_hold.py): at full speed the
table re-sorted every frame, so `c` after ↑ ×4 landed on a partition that had just finished. Now
a selection follows its partition by id, the rows keep their order while the table has focus and
a row is selected (the title says so), the action acts on the id its confirmation named, and a
row that finishes while selected stays where it was."""
from __future__ import annotations

import pytest

from c2tui.widgets.confirm_action import ConfirmAction
from c2tui.widgets.partition_table import render_rows
from c2tui.widgets.row_hold import HELD, RowHold
from prover import events as ev
from tests.tui.test_controls import make, sync, until


def _rows(table) -> list[str]:
    """The partition ids of the table's rows as drawn, top to bottom."""
    return [ln.plain.split()[0] for ln in (table._lines or [])[1:] if ln.plain[:1] == "s" and ln.plain[1:2].isdigit()]


@pytest.mark.slow
@pytest.mark.timeout(180)
@sync
async def test_the_partition_selected_is_the_one_cancelled_while_the_run_goes_on():
    """8 workers on one GPU, never paused: a partition finishes every ~0.9 s and new ones start,
    so the live order changes under the cursor many times in 3 s. The newest running partition
    is selected, the run goes on 3 s of its own time with at least two others finishing, the row
    stays on its line, and `c` `y` cancels exactly it."""
    app, eng, rec = make(workers_per_gpu=8, time_scale=0.15, partitions=10)
    async with app.run_test(size=(120, 40)) as pilot:
        st = lambda: app.state  # noqa: E731
        await until(pilot, lambda: st() is not None and sum(1 for p in st().partitions.values()
                                                            if p.phases and p.done_t is None) >= 8, 60)
        await until(pilot, lambda: st().partitions_done >= 1, 60)  # the first have finished: rows churn
        table = app.query_one("#partitions")
        table.focus()
        await pilot.pause()
        live = [p.part for p in table.view.select(st()) if p.done_t is None and p.phases]
        target = max(live, key=lambda n: min(s[0] for s in st().partitions[n].phases.values() if s[0] is not None))
        for _ in range(40):  # ↓ until the newest running partition is selected
            if table.selected == target:
                break
            await pilot.press("down")
        assert table.selected == target and HELD in str(table.border_title)
        await until(pilot, lambda: target in _rows(table))
        line, t0, done0 = _rows(table).index(target), st().t, st().partitions_done
        seen_lines = set()

        def waited() -> bool:  # 3 s of the run's own time, two partitions finished meanwhile
            seen_lines.add(_rows(table).index(target) if target in _rows(table) else -1)
            return st().t >= t0 + 3.0 and st().partitions_done >= done0 + 2

        await until(pilot, waited, 60)
        assert seen_lines == {line}, "the selected row moved"
        assert st().partitions[target].done_t is None, "the test's partition finished before c (slow machine?)"
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmAction))
        assert f"cancel partition {target} " in app.screen.words
        await pilot.press("y")
        await until(pilot, lambda: any(isinstance(e, ev.PartitionCancelled) for e in rec.events), 30)
    acts = [e for e in rec.events if isinstance(e, ev.JobAction)]
    assert [(a.action, a.target, a.source) for a in acts] == [("cancel", target, "key")]
    assert [e.part for e in rec.events if isinstance(e, ev.PartitionCancelled)] == [target]
    eng.stop(timeout=30)


class _P:
    def __init__(self, part: str, done_t: float | None = None) -> None:
        self.part, self.done_t = part, done_t


def test_a_held_order_keeps_finished_rows_in_place_and_adds_new_ones_below():
    hold = RowHold(lambda p: p.part)
    a, b, c = _P("s0p0"), _P("s0p1"), _P("s0p2")
    hold.hold([a, b, c])
    later_live = [_P("s0p2"), _P("s0p3"), _P("s0p0", 5.0)]  # s0p1 gone from the view, s0p0 finished
    got = hold.order(later_live)
    assert [p.part for p in got] == ["s0p0", "s0p1", "s0p2", "s0p3"]
    assert got[0].done_t == 5.0 and got[1] is b  # as it is now; as last seen once the view drops it
    hold.release()
    assert hold.order(later_live) == later_live


def test_the_window_moves_only_when_the_selected_row_would_leave_it():
    hold = RowHold(lambda p: p.part)
    rows = [_P(f"s0p{i}") for i in range(10)]
    assert hold.window(rows, "s0p2", 4) == 0
    assert hold.window(rows, "s0p5", 4) == 2  # just enough to show it
    assert hold.window(rows, "s0p3", 4) == 2  # inside: the window stays
    assert hold.window(rows, "s0p1", 4) == 1
    assert hold.window(rows, None, 4) == 0


class _Moving:
    """A live source frozen at one state until `go(later)` hands it a later one (the cordon
    recording's fold): a row selected in the first is seen finished in the second."""

    label, kind, readonly = "LIVE", "live", False

    def __init__(self, st) -> None:
        from tests.tui.test_row_actions import Controller

        self.st, self.version, self.controller = st, 1, Controller()

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def tick(self) -> None: ...

    def go(self, st) -> None:
        self.st, self.version = st, self.version + 1

    def snapshot(self):
        return self.version, self.st


def test_a_selected_row_that_finished_stays_on_its_line(snap_compare):
    """2 GPUs: s0p2 selected while it runs (2.0 s), then the run at 4.5 s, when it has finished and
    s0p4, s0p5 started: live, the finished row would have gone below the running ones; held, it
    stays on its line, highlighted, showing done ✓ ok, and the title says the order is held."""
    from c2tui.dashboard.app import DashboardApp
    from tests.tui.test_row_actions import _state

    src = _Moving(_state(2.0).view())
    later = _state(4.5).view()

    async def before(pilot) -> None:
        table = pilot.app.query_one("#partitions")
        table.focus()
        await pilot.press("down", "down", "down")
        assert table.selected == "s0p2"
        src.go(later)
        await until(pilot, lambda: pilot.app.state is later)
        await pilot.pause()

    assert snap_compare(DashboardApp(src), run_before=before, terminal_size=(160, 48))


def test_live_the_finished_row_moves_held_it_does_not():
    """The same two states drawn without and with the hold (what the snapshot shows, in text)."""
    import themes
    from tests.tui.test_row_actions import _state

    pal = themes.load("dark").palette
    first, later = _state(2.0).view(), _state(4.5).view()
    ids = lambda lines: [ln.plain.split()[0] for ln in lines[1:] if ln.plain.startswith("s")]  # noqa: E731
    live = ids(render_rows(later, pal, 110, 10))
    hold = RowHold(lambda p: p.part)
    hold.hold(list(first.partitions[n] for n in ids(render_rows(first, pal, 110, 10))))
    held = ids(render_rows(later, pal, 110, 10, selected="s0p2", hold=hold))
    assert live.index("s0p2") != 2 and held.index("s0p2") == 2
    assert held[:4] == ["s0p0", "s0p1", "s0p2", "s0p3"] and {"s0p4", "s0p5"} <= set(held[4:])
