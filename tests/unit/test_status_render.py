"""`c2tui status` as text: one line a GPU at 100 columns even with 8 workers busy and every
lock held and waited on (a native recording folded to its middle); the lock cells say holder,
partition, seconds held and waiters; "on it" counts the workers a phase."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console

from c2tui.commands.status import _gpu_table, _render
from prover import DashboardState, read_recording, status_of

REC = Path(__file__).resolve().parents[2] / "benchmarks" / "recordings" / "h200" / "disciplines" / "n22_stream_card.jsonl.gz"


def _report_mid_run():
    events = read_recording(REC).events
    s = DashboardState()
    for e in events[: len(events) // 2]:
        s.apply(e)
    return status_of(s)


def test_the_status_table_keeps_a_gpu_on_one_line_at_100_columns():
    r = _report_mid_run()
    g = r.gpus[0]
    assert len(g.current) >= 6  # a busy moment: most of the 8 workers on something
    console = Console(width=100, record=True, color_system=None)
    console.print(_gpu_table(r))
    lines = console.export_text().splitlines()
    text = "\n".join(lines)
    rows = [ln for ln in lines if ln.strip().startswith("0 ")]
    assert len(rows) == 1 and "…" not in text, text  # the GPU's row on one line, nothing cut
    assert " s" in rows[0] and "+" in rows[0], text  # a lock held and waited on
    workers = next(ln for ln in lines if ln.startswith(f"gpu0 {g.name}: "))  # the name whole, on its own line
    assert sum(int(p.split()[0]) for p in workers.removeprefix(f"gpu0 {g.name}: ").split(", ")) == len(g.current)
    assert max(len(ln.rstrip()) for ln in lines) <= 100
    console.print(_render(r))  # the whole report renders


def test_lock_cells_name_holder_part_time_and_waiters():
    from c2tui.commands.status import _lock_cell, _on_it
    from types import SimpleNamespace as NS

    assert _lock_cell(NS(holder="g0w3", part="s0p2", held_s=0.04, waiters=["w1", "w2"]), 0) == "w3 s0p2 0.0s +2"
    assert _lock_cell(NS(holder="g1w3", part=None, held_s=1.25, waiters=[])) == "g1w3 1.2s"
    assert _lock_cell(NS(holder=None, part=None, held_s=0.0, waiters=["w1"])) == "free +1"
    assert _on_it([NS(phase="msm"), NS(phase="synthesis"), NS(phase="synthesis")]) == "2 synthesis, 1 msm"
    assert _on_it([]) == "-"
