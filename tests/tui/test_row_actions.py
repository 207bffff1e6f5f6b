"""Row actions (issue 36): a partition row selected (partitions focused, ↓) and a key (`c` cancel,
`x` its sector, `r` requeue, `o` cordon its GPU) asks first, naming what it will do, and `y` sends
the job action through the controller (source key); only what exists now is offered; cordoning
the last GPU that takes work warns. A cordon is a History mark and a segment boundary."""
from __future__ import annotations

from pathlib import Path

from c2tui.app import DashboardApp
from c2tui.row_actions import RowAction, prompt_forms, row_action
from c2tui.widgets.confirm_action import ConfirmAction
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


def test_a_selected_row_with_its_confirmation(snap_compare):
    """2 GPUs at 1 s, the second partition row selected, `o`: the confirmation names the GPU and
    what a cordon does."""
    assert snap_compare(DashboardApp(FrozenLive(_state(1.0).view())), press=["down", "down", "o"],
                        run_before=lambda pilot: pilot.app.query_one("#partitions").focus(), terminal_size=(120, 40))
