"""A cordon shown on every line that names the GPU (issue 44): its overview line, its panel's
title and a fleet host's line; the focused GPU's footer says `o uncordon` while it is cordoned
(it said `o cordon`)."""
from __future__ import annotations

from pathlib import Path

from c2tui.dashboard.app import DashboardApp
from c2tui.widgets.fleet_overview import live_cells
from c2tui.widgets.gpu_overview import overview_line
from c2tui.widgets.gpu_panel import GpuPanel
from c2tui.widgets.key_footer import KeyFooter
from prover import events as ev
from prover.fold.apply import fold
from prover.record import read_recording
from tests.tui.test_controls import sync, until
from tests.tui.test_row_actions import FrozenLive, _pal

EIGHT = Path(__file__).parent / "recordings" / "eight_gpus.jsonl"


def _eight(at: float = 6.0, cordoned: tuple[int, ...] = (3,)):
    st = fold(e for e in read_recording(EIGHT).events if e.t <= at)
    for g in cordoned:
        st.apply(ev.JobAction(t=at, action="cordon", target=f"gpu{g}", source="key"))
    return st.view()


def test_the_overview_line_and_a_fleet_host_line_name_the_cordon():
    st, pal = _eight(), _pal()
    for width in (78, 118, 198):
        line = overview_line(st.gpus[3], pal, width, "shown", st).plain
        assert line.startswith("GPU3") and ("CORDONED" in line or "cordoned" in line), line
        assert "ordoned" not in overview_line(st.gpus[2], pal, width, "shown", st).plain
    cells = live_cells([st.gpus[i] for i in range(8)], pal, st.jobs.cordoned).plain
    assert cells[3] == "⊘" and "cordoned GPU3" in cells


def _footer(app) -> str:
    return " ".join(f"{k.key_display} {k.description}" for k in app.query_one(KeyFooter).shown())


@sync
async def test_the_focused_gpus_footer_says_uncordon_while_it_is_cordoned():
    app = DashboardApp(FrozenLive(_eight()))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: len(app.query(GpuPanel)) == 8)
        panels = {p.gpu: p for p in app.query(GpuPanel)}
        panels[3].focus()
        await until(pilot, lambda: "o uncordon" in _footer(app))
        panels[2].focus()
        await until(pilot, lambda: "o cordon" in _footer(app) and "uncordon" not in _footer(app))
        await pilot.press("o")
        await until(pilot, lambda: "cordon gpu2" in str(getattr(app.screen, "words", "")))
        await pilot.press("escape")
        panels[3].focus()
        await until(pilot, lambda: "o uncordon" in _footer(app))
        await pilot.press("o")
        await until(pilot, lambda: "uncordon gpu3" in str(getattr(app.screen, "words", "")))


def test_a_cordoned_gpu_in_the_eight_gpu_overview_at_80x24(snap_compare):
    """8 GPUs at 80x24 (the overview lines GPU0-2, "+5 more"), GPU1 cordoned: its line says so;
    the overview focused and GPU1 selected (↓ ↓), the footer says `o uncordon`."""
    async def before(pilot) -> None:
        pilot.app.query_one("#overview").focus()
        await pilot.press("down", "down")
        assert pilot.app.query_one("#overview").selected == 1
        await until(pilot, lambda: "o uncordon" in _footer(pilot.app))

    assert snap_compare(DashboardApp(FrozenLive(_eight(cordoned=(1,)))), run_before=before, terminal_size=(80, 24))
