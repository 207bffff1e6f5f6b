"""OOMs split into retried and failed everywhere (issue 36): one retried OOM on GPU 0 and one
failed on GPU 1, folded once, read by the segments (fold, panel, summary table), History (fold
and its row), the GPU and fleet overview cells and compare's rows. An older recording's OOMs
(outcome not said) are counted as before and never called either."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from rich.console import Console

import themes
from c2tui.text.compare import _figures
from c2tui.text.segments import segment_row
from c2tui.widgets.fleet_overview import host_line
from c2tui.widgets.gpu_overview import overview_line
from c2tui.widgets.history_view import SERIES
from c2tui.widgets.segment_panel import COLS
from prover import events as ev
from prover.fold.apply import fold
from prover.fold.compare import compare
from prover.fold.model import DashboardState
from prover.fold.segments import segment_rows

PAL = themes.load("dark").palette


def _run(said: bool) -> list:
    out = ("retried", "failed") if said else (None, None)
    evs: list = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8,
                               gpus=2, config={})]
    evs += [ev.GpuInfo(t=0.0, gpu=g, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 30, simulated=True)
            for g in (0, 1)]
    evs += [ev.Oom(t=3.0, gpu=0, part="s0p0", worker="g0w0", requested=1 << 20, free=0, outcome=out[0], cause="budget"),
            ev.Oom(t=3.5, gpu=1, part="s0p1", worker="g1w0", requested=1 << 20, free=0, outcome=out[1], cause="leak"),
            ev.Note(t=9.0, text="end")]
    return evs


@pytest.fixture(scope="module")
def said():
    return fold(_run(True), DashboardState(rate_window_s=30.0))


@pytest.fixture(scope="module")
def old():
    return fold(_run(False), DashboardState(rate_window_s=30.0))


def _oom_col(row) -> str:
    return next(c for c in COLS if c.head == "OOM").cell(row)


def test_segments(said, old):
    row = segment_rows(said)[-1]
    assert (row.ooms, row.ooms_retried, row.ooms_failed) == (2, 1, 1)
    assert _oom_col(row) == "1↻1✗"
    assert "2 (1 retried, 1 failed)" in segment_row(row, [])
    row = segment_rows(old)[-1]
    assert (row.ooms, row.ooms_retried, row.ooms_failed) == (2, 0, 0)
    assert _oom_col(row) == "2" and "2" in segment_row(row, []) and "retried" not in " ".join(segment_row(row, []))


def test_history(said, old):
    p = said.history.series()[-1]
    assert p.ooms_retried_per_min == pytest.approx(60.0 / 8) == p.ooms_failed_per_min  # one each over 8 s so far
    assert p.ooms_per_min == pytest.approx(120.0 / 8)
    assert SERIES["oom"].text(p) == "7.5↻ 7.5✗" and SERIES["oom"].cell(p) == "fail"
    g0 = said.history.series(0)[-1]
    assert (g0.ooms_failed_per_min, SERIES["oom"].cell(g0)) == (0.0, "warn")  # retried only: amber, not red
    p = old.history.series()[-1]
    assert (p.ooms_retried_per_min, p.ooms_failed_per_min) == (0.0, 0.0) and p.ooms_per_min > 0
    assert SERIES["oom"].text(p) == "15.0/min" and SERIES["oom"].cell(p) is None


def test_overview_cells(said, old):
    assert "OOM 1 (1↻ 0✗)" in overview_line(said.gpus[0], PAL, 160, "shown", said).plain
    assert "OOM 1 (0↻ 1✗)" in overview_line(said.gpus[1], PAL, 160, "shown", said).plain
    assert "OOM 1 " in overview_line(old.gpus[0], PAL, 160, "shown", old).plain
    assert "↻" not in overview_line(old.gpus[0], PAL, 160, "shown", old).plain
    host = SimpleNamespace(host="h0", gpus=[0, 1], alive=True, lost=False, reason=None, requeued=0)
    assert "OOM 2 (1↻ 1✗)" in host_line(host, said, PAL, 200).plain
    assert "OOM 2 " in host_line(host, old, PAL, 200).plain and "↻" not in host_line(host, old, PAL, 200).plain


def test_compare_rows():
    cmp = compare([("new.jsonl", _run(True)), ("old.jsonl", _run(False))], align="start")
    con = Console(width=200, record=True)
    for t in _figures(cmp, 200):
        con.print(t)
    lines = {ln.split("│")[1].strip() if "│" in ln else "": ln for ln in con.export_text().splitlines()}
    cells = {k: [c.strip() for c in v.split("│")[2:-1]] for k, v in lines.items() if k.startswith("OOMs")}
    assert cells["OOMs"][:2] == ["2", "2"]
    assert cells["OOMs retried"][:2] == ["1", "not said"]
    assert cells["OOMs failed"][:2] == ["1", "not said"]


def test_transitional_ooms_are_split_too():
    """A section begun before a switch OOMs after it (retried): the later segment's transitional column."""
    evs = _run(True)[:3] + [ev.LockRequested(t=1.0, gpu=0, lock="mem", worker="g0w0", part="s0p0"),
                            ev.ModeChange(t=2.0, knob="lock_mode", old="two-lock", new="reserved", source="key"),
                            ev.Oom(t=2.5, gpu=0, part="s0p0", worker="g0w0", requested=1, free=0, outcome="retried"),
                            ev.Note(t=3.0, text="end")]
    a, b = segment_rows(fold(evs))
    assert (a.ooms, a.ooms_retried, a.ooms_failed) == (1, 1, 0)
    t = b.transitional
    assert (t.ooms, t.ooms_retried, t.ooms_failed) == (1, 1, 0)
    assert "1 OOM (1↻ 0✗)" in segment_row(b, [])[-1]
    assert "1↻0✗ OOM" in next(c for c in COLS if c.head == "transitional").cell(b)


def test_summary_per_gpu_table(said, old):
    """The summary's per-GPU OOM column: "1 (1↻ 0✗)" on GPU 0, "1 (0↻ 1✗)" on GPU 1; a plain count
    for a recording that does not say the outcome."""
    from c2tui.text.summary import build
    from prover.fold.summary import summarize

    def text(st) -> str:
        con = Console(width=240, record=True, file=open("/dev/null", "w"))
        for part in build(summarize(st), 240):
            con.print(part)
        return con.export_text()

    out = text(said)
    assert "1 (1↻ 0✗)" in out and "1 (0↻ 1✗)" in out
    assert "↻" not in text(old).split("per GPU")[1].split("per phase")[0]
