"""The footer at every width (issue 36): never a word cut, the way out and `?` always there,
and every key reachable: shown (the keys that go together as one item, short words where
needed) or named by "? all keys", whose screen lists them all. The header's height does not
change at a switch. Snapshots of the live footer at 80 and 120 columns."""
from __future__ import annotations

import asyncio

import pytest

from c2tui.dashboard.app import LIVE_ACTIONS, REPLAY_ACTIONS, DashboardApp
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.footer_plan import MORE, Item, plan
from c2tui.widgets.key_footer import KeyFooter
from tests.tui.test_snapshots import SWITCH


class LiveKeys(DashboardApp):
    """The dashboard with a live run's keys (a recording's data, so the frame is fixed)."""

    def __init__(self, *a, **k) -> None:
        super().__init__(*a, **k)
        self.replay = False

    def compose(self):
        self.replay = True  # the replay bar stays in the layout of the recording's screens...
        yield from super().compose()
        self.replay = False  # ...the keys are a live run's

    def check_action(self, action, parameters):
        if action in LIVE_ACTIONS:
            return True
        if action in REPLAY_ACTIONS:
            return False
        return super().check_action(action, parameters)


def live_app() -> LiveKeys:
    return LiveKeys(ReplaySource.from_file(SWITCH, at=14.0, playing=False))


def test_the_plan_never_cuts_and_names_help_for_what_it_leaves_out():
    items = [Item("q", "q", "quit", "quit", 0), Item("?", "question_mark", "help", "help", 0),
             *(Item(k, k, f"a{k}", "lock mode", 1) for k in "lmnopr"), Item("t", "t", "theme", "theme", 6)]
    for width in range(20, 200):
        shown, left = plan(items, width)
        words = {i.action: i.words for i in shown}
        assert {"quit", "help"} <= set(words)  # the way out and the help, always
        if left:
            assert words["help"] == MORE and len(shown) + left == len(items)
        if sum(i.width() for i in shown) > width:
            assert [i.action for i in shown] == ["quit", "help"]  # the floor: nothing else left to drop
    full, _ = plan(items, 500)
    assert [i.words for i in full][2] == "lock mode"  # room enough: the whole words


WANTED = {"lock_mode", "mem_sync", "workers_up", "prestage", "b_g2", "pause", "submit", "submit_winning", "job",
          "events", "history", "cycle_theme", "partitions"}


@pytest.mark.timeout(120)
def test_every_key_reachable_and_none_cut_at_every_width():
    async def drive() -> dict[int, list]:
        out = {}
        app = live_app()
        async with app.run_test(size=(80, 40)) as pilot:
            for width in (80, 100, 120, 140, 160, 220):
                await pilot.resize_terminal(width, 40)
                for _ in range(4):
                    await pilot.pause()
                out[width] = [(k.key_display, k.description, k.action, k.region) for k in app.query_one(KeyFooter).shown()]
        return out

    for width, keys in asyncio.run(drive()).items():
        assert all(r.right <= width for *_, r in keys), (width, keys)  # every item whole on screen
        shown = {a.split("(")[0] for _, _, a, _ in keys}
        assert {"quit", "help"} <= shown
        missing = WANTED - shown
        help_words = next(d for _, d, a, _ in keys if a == "help")
        assert not missing or help_words == MORE, (width, missing, help_words)
        if width >= 160:
            assert not missing, width  # wide: every key in the footer itself


@pytest.mark.timeout(120)
def test_the_header_keeps_its_height_across_a_switch():
    """The switches' "since" item has its room kept: the header does not grow at any of them."""
    from prover import fold_events as fold, read_recording
    from c2tui.widgets.header_bar import HeaderBar

    events = read_recording(SWITCH).events
    switches = [i for i, e in enumerate(events) if e.kind == "mode_change"]
    cuts = [switches[0] - 1, *(i + 1 for i in switches)]
    app = DashboardApp(ReplaySource.from_file(SWITCH, at=1.0, playing=False))

    async def drive(width: int) -> list[int]:
        async with app.run_test(size=(width, 40)) as pilot:
            await pilot.pause()
            bar = app.query_one(HeaderBar)
            return [bar.wanted_height(fold(events[:n])) for n in cuts]

    for width in (80, 120, 160):
        heights = asyncio.run(drive(width))
        assert len(set(heights)) == 1, (width, heights)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_live_footer(snap_compare, size):
    """The live footer: at 80 the way out, `? all keys` and the controls an operator turns most;
    at 120 short words and more of them."""
    assert snap_compare(live_app(), terminal_size=size)


def _measured(f: KeyFooter) -> tuple[int, int, int | None]:
    """(predicted, where the last item ends with its right margin, planned_for)."""
    end = max(c.region.right + c.styles.margin.right for c in f.children) - f.region.x
    return f.textual_width(), end, f.planned_for


@pytest.mark.timeout(120)
@pytest.mark.parametrize("live", [False, True])
def test_the_width_is_known_before_drawing(live):
    """The footer chooses between Textual's layout and its plan before anything is drawn, from
    the CSS's arithmetic: it agrees with what Textual lays out."""

    async def drive() -> list:
        app = live_app() if live else DashboardApp(ReplaySource.from_file(SWITCH, at=14.0, playing=False))
        out = []
        async with app.run_test(size=(320, 40)) as pilot:
            for _ in range(4):
                await pilot.pause()
            out.append(_measured(app.query_one(KeyFooter)))
            await pilot.press("e")  # a screen with keys of its own
            for _ in range(4):
                await pilot.pause()
            out.append(_measured(app.screen.query_one(KeyFooter)))
        return out

    for predicted, laid_out, planned in asyncio.run(drive()):
        assert planned is None and predicted == laid_out
