"""Row actions (issue 36): a partition row selected (partitions focused, ↓) and a key (`c` cancel,
`x` its sector, `r` requeue, `o` cordon its GPU) asks first, naming what it will do, and `y` sends
the job action through the controller (source key); only what exists now is offered; cordoning
the last GPU that takes work warns. A cordon is a History mark and a segment boundary. Sector rows
(`v`): `c` / `x` cancel the sector, `r` / `o` say why not. A GPU (its panel focused, or its line
on the overview): `o` cordons or uncordons it."""
from __future__ import annotations

from pathlib import Path

from c2tui.dashboard.app import DashboardApp
from c2tui.widgets.row_actions import RowAction, gpu_action, prompt_forms, row_action, sector_action
from c2tui.widgets.confirm_action import ConfirmAction
from c2tui.widgets.gpu_panel import GpuPanel
from c2tui.widgets.sector_rows import render_sector_rows, sector_rows
from prover.fold.apply import fold
from prover.record import read_recording
from tests.tui.test_controls import sync, until

CORDON = Path(__file__).parent / "recordings" / "cordon.jsonl"  # 2 GPUs; gpu1 cordoned at 1.5 s


def _state(at: float):
    return fold(e for e in read_recording(CORDON).events if e.t <= at)


class Controller:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def apply(self, spec: str, source: str = "") -> None:
        self.calls.append((spec, source))


class FrozenLive:
    """A live source frozen at one state (a fold of the recording), with a controller that
    records what it is asked: the dashboard steers it as it steers the embedded prover."""

    label, kind, readonly = "LIVE", "live", False

    def __init__(self, st) -> None:
        self.st, self.controller = st, Controller()

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def tick(self) -> None: ...

    def snapshot(self):
        return 1, self.st


def test_what_each_key_offers_exists_now_and_the_last_gpu_warns():
    st = _state(1.0)
    part = next(p for p in st.partitions.values() if p.done_t is None and p.phases)
    got = {k: row_action(st, part.part, k) for k in "cxro"}
    assert all(isinstance(a, RowAction) for a in got.values())
    assert got["c"].spec == f"cancel={part.part}" and got["x"].spec == f"cancel=s{part.sector}"
    assert got["o"].spec == f"cordon={part.gpu}" and not got["o"].warn  # the other GPU still takes work
    later = _state(4.5)  # gpu1 cordoned: gpu0 is the last one
    on0 = next(p for p in later.partitions.values() if p.gpu == 0)
    last = row_action(later, on0.part, "o")
    assert isinstance(last, RowAction) and "last GPU" in last.warn
    on1 = next(p for p in later.partitions.values() if p.gpu == 1)
    assert row_action(later, on1.part, "o").spec == "uncordon=1"
    done = next(p for p in later.partitions.values() if p.done_t is not None)
    assert isinstance(row_action(later, done.part, "c"), str)  # finished: nothing to cancel, said in words
    assert "uncordon 1" in prompt_forms(later) and "cordon 0" in prompt_forms(later)


def test_a_sector_row_cancels_its_unfinished_partitions_and_says_why_not_otherwise():
    st = _state(4.5).view()  # s0 part done, s1 cancelled whole, s2 s3 queued
    rows = sector_rows(st)
    assert [r.sector for r in rows] == [0, 2, 3, 1]  # unfinished first, then the latest finished
    assert rows[0].counts() == dict(done=4, running=2, queued=0, failed=0, cancelled=0) and rows[0].cls == "c2"
    got = {k: sector_action(st, 0, k) for k in "cxro"}
    assert got["c"] == got["x"] and got["c"].spec == "cancel=s0" and "(s0p4, s0p5)" in got["c"].words
    assert "requeue acts on a partition" in got["r"] and "cordon acts on a GPU" in got["o"]
    assert "finished: nothing left to cancel" in sector_action(st, 1, "c")
    st.queues.sectors[0].deadline_t, st.queues.sectors[2].deadline_t = st.t - 1.5, st.t + 2.0
    lines = [ln.plain for ln in render_sector_rows(st, _pal(), 100, 10, selected=0)]
    assert lines[0].split() == ["sector", "class", "partitions", "age", "deadline"]
    assert lines[1].startswith("s0      c2       ■■■■▶▶ 4 done 2 run") and lines[1].rstrip().endswith("OVERDUE 1.50s")
    assert lines[2].rstrip().endswith("due in 2.00s")
    assert lines[-1].startswith("s1") and "6 cancel" in lines[-1] and "took 1.30s" in lines[-1]
    assert rows[-1].cls == "c2" and "met" not in lines[-1]  # a finished sector keeps its class; no deadline, none met


def test_a_gpu_cordons_or_uncordons_by_its_id_and_the_last_one_warns():
    early, later = _state(1.0).view(), _state(4.5).view()
    assert gpu_action(early, 1) == RowAction("cordon=1", gpu_action(early, 1).words) and not gpu_action(early, 0).warn
    assert gpu_action(later, 1).spec == "uncordon=1"  # cordoned at 1.5 s
    assert "last GPU" in gpu_action(later, 0).warn
    assert "no such GPU" in gpu_action(later, 7)


def _pal():
    import themes

    return themes.load("dark").palette


def test_a_cordon_is_a_history_mark_and_a_segment_boundary():
    st = _state(9.0)
    assert [m.knob for m in st.history.marks] == ["cordon"]
    assert [sg.change for sg in st.segments][1].startswith("cordon")


async def _select(pilot) -> None:
    pilot.app.query_one("#partitions").focus()
    await pilot.press("down", "down")


@sync
async def test_y_sends_the_action_and_n_sends_nothing():
    src = FrozenLive(_state(1.0).view())
    app = DashboardApp(src)
    async with app.run_test(size=(120, 40)) as pilot:
        await _select(pilot)
        sel = app.query_one("#partitions").selected
        assert sel is not None
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmAction))
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmAction))
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmAction))
        await pilot.press("y")
        await until(pilot, lambda: bool(src.controller.calls))
    assert src.controller.calls == [(f"requeue={sel}", "key")]


@sync
async def test_a_sector_row_and_a_gpu_send_through_the_controller():
    """`v` sector rows, ↓ selects s0, `x` asks, `n` sends nothing, `c` `y` cancels it; then a GPU
    panel focused, `o` `y` cordons it; at 80x24 the overview's line of GPU1, ↓ ↓ `o` `y`, the
    same (the frozen state never shows the first cordon)."""
    src = FrozenLive(_state(1.0).view())
    app = DashboardApp(src)
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one("#partitions")
        table.focus()
        await pilot.press("v", "down")
        assert table.sectors and table.selected_sector == 0 and "Sectors" in str(table.border_title)
        for key, answer in (("x", "n"), ("c", "y")):
            await pilot.press(key)
            await until(pilot, lambda: isinstance(app.screen, ConfirmAction))
            await pilot.press(answer)
            await until(pilot, lambda: not isinstance(app.screen, ConfirmAction))
        await until(pilot, lambda: bool(src.controller.calls))
        panel = next(p for p in app.query(GpuPanel) if p.gpu == 1)
        await until(pilot, lambda: app.screen is app.screen_stack[0])
        await pilot.pause()  # the dismissed dialog hands the focus back first
        panel.focus()
        await until(pilot, lambda: app.focused is panel)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, ConfirmAction))
        await pilot.press("y")
        await until(pilot, lambda: len(src.controller.calls) == 2)
        await pilot.resize_terminal(80, 24)  # the panels do not fit: the overview's lines are GPU rows
        overview = app.query_one("#overview")
        await pilot.pause()
        app.redraw()  # a frozen source sends no new frame after the resize: lay out again as one would
        await until(pilot, lambda: overview.display)
        overview.focus()
        await pilot.press("down", "down")  # gpu0, then gpu1 (its panel brought into view)
        assert overview.selected == 1 and overview.lines()[1].parts[0][1].startswith("reverse")
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, ConfirmAction))
        await pilot.press("y")
        await until(pilot, lambda: len(src.controller.calls) == 3)
    assert src.controller.calls == [("cancel=s0", "key"), ("cordon=1", "key"), ("cordon=1", "key")]


def test_a_selected_row_with_its_confirmation(snap_compare):
    """2 GPUs at 1 s, the second partition row selected, `o`: the confirmation names the GPU and
    what a cordon does."""
    assert snap_compare(DashboardApp(FrozenLive(_state(1.0).view())), press=["down", "down", "o"],
                        run_before=lambda pilot: pilot.app.query_one("#partitions").focus(), terminal_size=(120, 40))


def test_a_selected_sector_row_with_its_confirmation(snap_compare):
    """2 GPUs at 4.5 s, `v` sector rows, s0 selected (4 done, 2 running), `x`: the confirmation
    names its unfinished partitions."""
    assert snap_compare(DashboardApp(FrozenLive(_state(4.5).view())), press=["v", "down", "x"],
                        run_before=lambda pilot: pilot.app.query_one("#partitions").focus(), terminal_size=(120, 40))


def test_a_focused_gpu_panel_with_its_cordon_confirmation(snap_compare):
    """2 GPUs at 4.5 s (gpu1 cordoned), gpu0's panel focused (its heavy border), `o`: cordoning
    the last GPU taking work warns that it idles the run."""
    def before(pilot):
        next(p for p in pilot.app.query(GpuPanel) if p.gpu == 0).focus()

    assert snap_compare(DashboardApp(FrozenLive(_state(4.5).view())), press=["o"], run_before=before,
                        terminal_size=(120, 40))
