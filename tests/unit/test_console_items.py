"""Issue 44's smaller console items, a test each: summary and compare say the knobs at the start
and at the end (and the changes between); the alert badge rounds; `status` says key and circuits
apart and never wraps `stalls` at 120 columns; README's exit-status paragraph has every code; the
experiment panel's empty text says `n` works where it does; `make run` installs no test tool."""
from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from c2tui.commands import main
from c2tui.commands import status as status_cmd
from c2tui.widgets.experiment_panel import render_experiments
from prover import DashboardState, events as ev, status_of
from prover.observe.thresholds import judge

ROOT = Path(__file__).resolve().parents[2]
REC = ROOT / "tests" / "tui" / "recordings"


def _out(*args: str) -> str:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False, terminal_width=200)
    assert r.exit_code in (0, 1), r.output
    return r.output


def test_summary_says_the_knobs_at_the_start_the_changes_and_the_end():
    text = " ".join(_out("summary", str(REC / "two_gpus.jsonl")).split())  # device -> stream at 8 s
    assert "knobs at the start: lock_mode=two-lock, mem_sync=device," in text
    assert "changes (1): 8.0 s mem_sync: device -> stream (switch)" in text
    assert re.search(r"knobs at the end: lock_mode=two-lock, mem_sync=stream,.* \(changed: mem_sync\)", text)
    assert "\nknobs: " not in _out("summary", str(REC / "two_gpus.jsonl"))  # the end's alone, unsaid
    doc = json.loads(_out("summary", str(REC / "two_gpus.jsonl"), "--json"))
    assert doc["knobs_at_start"]["mem_sync"] == "device" and doc["knobs"]["mem_sync"] == "stream"
    same = " ".join(_out("summary", str(REC / "four_gpus.jsonl")).split())
    assert "knobs (unchanged through the run): lock_mode=" in same and "knobs at the start" not in same


def test_compare_says_each_runs_knobs_at_the_start_and_at_the_end():
    text = " ".join(_out("compare", str(REC / "two_gpus.jsonl"), str(REC / "four_gpus.jsonl"), "--text").split())
    assert ("knobs at the start lock_mode=two-lock, mem_sync=device, workers_per_gpu=3, at the end lock_mode=two-lock, "
            "mem_sync=stream, workers_per_gpu=3 (1 change)") in text
    assert re.search(r"four_gpus\.jsonl: .* knobs lock_mode=\S+, mem_sync=\S+, workers_per_gpu=\d+;", text)


def test_the_alert_badge_rounds_its_figures():
    [v] = [v for v in judge({"fallbacks_per_min": 4.04823}) if v.alert == "C2tuiFallbacks"]
    assert v.reason == "fallbacks 4.0/min > 1/min"


def _status_state() -> DashboardState:
    s = DashboardState()
    s.apply(ev.RunStarted(t=0, backend="sim", simulated=True, profile="rtx5070ti-16g", proved_log2=10, modelled_log2=27,
                          gpus=1, config={"lock_mode": "two-lock", "mem_sync": "device", "workers_per_gpu": 3}))
    s.apply(ev.GpuInfo(t=0, gpu=0, name="RTX", total_bytes=16 << 30, budget_bytes=16 << 30, simulated=True))
    s.apply(ev.HostRam(t=1, owner="key 2^10", name="key", bytes=int(69.3 * 2**30)))
    s.apply(ev.HostRam(t=1, owner="key 2^10", name="circuit", bytes=int(8.5 * 2**30)))
    return s


def test_status_says_key_and_circuits_apart_and_keeps_stalls_whole_at_120_columns():
    report = status_of(_status_state())
    assert report.host_ram is not None and report.host_ram.circuits == int(8.5 * 2**30)
    c = Console(width=120, record=True, color_system=None)
    c.print(status_cmd._render(report))
    lines = c.export_text().splitlines()
    assert any("key 69.3 + circuits 8.5 GiB" in ln for ln in lines), lines
    assert not any("key 77.8" in ln for ln in lines)
    [stalls] = [ln for ln in lines if "stalls" in ln]
    assert re.search(r"stalls \d+$", stalls.rstrip()), stalls  # the count on its line, not the next


def test_readme_exit_status_paragraph_names_every_code():
    from c2tui.cli import exits

    para = Path(ROOT / "README.md").read_text().split("Exit status, the same for every command")[1].split("\n\n")[0]
    for code in (exits.OK, exits.INVALID, exits.USAGE, exits.RUN, exits.STARTING):
        assert f"**{code}**" in para, code
    assert "`status` only" in para


def test_the_experiment_panels_empty_text_says_n_where_it_works():
    import themes

    pal = themes.load("dark").palette
    here = render_experiments([], pal, 120, 5, can_start=True)[0].plain
    assert "n starts one here" in here
    replay = render_experiments([], pal, 120, 5, can_start=False)[0].plain
    assert "n starts" not in replay and "c2tui experiment --arm" in replay


def test_make_run_installs_the_run_time_dependencies_only():
    """`make run` has its own venv, made with `pip install -e .` (no extra); `make test` and
    `make venv` the test extra. From a fresh clone (issue 44's report): .venv-run 340 MB, no
    pytest; .venv 798 MB."""
    mk = (ROOT / "Makefile").read_text()
    rule = mk.split("$(RPY): pyproject.toml")[1].split("\n\n")[0]
    assert "pip install -q -e .\n" in rule + "\n" and "[test]" not in rule
    assert re.search(r"^run: \$\(RPY\)$", mk, re.M) and re.search(r"^test: \$\(VPY\)$", mk, re.M)
    assert "-e '.[test]'" in mk.split("$(VPY): pyproject.toml")[1].split("\n\n")[0]
    assert ".venv-run/" in (ROOT / ".gitignore").read_text()
