"""Preferences kept between sessions (theme, layout) in the user's config dir, and what
`c2tui run` says when it quits: one line by default, the full report with --summary full or
in a file (issue 36)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from c2tui.dashboard import prefs
from c2tui.text.quit_report import quit_line, report_text, write_report

REC = Path(__file__).parent / "recordings" / "two_gpus.jsonl"


def test_prefs_round_trip_in_a_temp_dir(tmp_path):
    assert prefs.load(tmp_path) == prefs.Prefs()  # nothing saved yet: the defaults
    assert prefs.save(prefs.Prefs(theme="light", history_first=True), tmp_path / "c2tui")
    assert prefs.load(tmp_path / "c2tui") == prefs.Prefs(theme="light", history_first=True)
    (tmp_path / "c2tui" / "prefs.json").write_text('{"theme": "no-such-theme"}')
    assert prefs.load(tmp_path / "c2tui").theme == "dark"  # a theme that is gone: the default
    (tmp_path / "c2tui" / "prefs.json").write_text("{not json")
    assert prefs.load(tmp_path / "c2tui") == prefs.Prefs()  # a broken file never stops the dashboard
    blocked = tmp_path / "file"
    blocked.write_text("x")
    assert prefs.save(prefs.Prefs(), blocked / "sub") is False  # cannot be written: quietly not kept


def test_the_config_dir_is_the_user_s_unless_overridden(monkeypatch, tmp_path):
    monkeypatch.delenv("C2TUI_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert prefs.config_dir() == tmp_path / "xdg" / "c2tui"
    monkeypatch.setenv("C2TUI_CONFIG_DIR", str(tmp_path / "mine"))
    assert prefs.config_dir() == tmp_path / "mine"


@pytest.mark.timeout(60)
def test_t_and_h_are_remembered(monkeypatch, tmp_path):
    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.replay import ReplaySource

    monkeypatch.setenv("C2TUI_CONFIG_DIR", str(tmp_path))
    app = DashboardApp(ReplaySource.from_file(REC, at=3.0, playing=False), prefs=prefs.load())

    async def drive() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("t")
            await pilot.press("h")
            await pilot.pause()

    asyncio.run(drive())
    saved = json.loads((tmp_path / "prefs.json").read_text())
    assert saved == {"theme": app.theme_name, "history_first": True} and app.theme_name != "dark"
    again = DashboardApp(ReplaySource.from_file(REC, at=3.0, playing=False), theme=prefs.load().theme,
                         prefs=prefs.load())
    assert again.theme_name == saved["theme"] and again.history_first


def _sm(ok=5, failed=0, proofs_failed=0):
    return NS(partitions_ok=ok, partitions_failed=failed, proofs_failed=proofs_failed)


def test_one_line_on_quit():
    w = NS(path=Path("runs/a.jsonl"), written=1234, error=None)
    assert quit_line(_sm(), "quit", False, w) == "c2tui: ok (quit): 5 partitions ok, 0 failed; recording: runs/a.jsonl (1234 events)"
    assert quit_line(_sm(), "quit now (3 in-flight partition(s) abandoned)", True, None) == \
        "c2tui: abandoned (quit now (3 in-flight partition(s) abandoned)): 5 partitions ok, 0 failed"
    assert quit_line(_sm(failed=1, proofs_failed=1), "drained", False, w).startswith(
        "c2tui: failed (drained): 5 partitions ok, 1 failed, 1 proof(s) FAILED verification; recording: runs/a.jsonl")
    bad = NS(path=Path("a.jsonl"), written=9, error="no space left on device")
    assert quit_line(_sm(), "quit", False, bad).startswith("c2tui: failed (quit)") and "no space" in quit_line(_sm(), "quit", False, bad)


def test_the_full_report_on_screen_or_in_a_file(tmp_path):
    from prover import fold_events as fold, read_recording, summarize

    sm = summarize(fold(read_recording(REC).events))
    text = report_text(sm)
    assert "throughput (verified partitions)" in text and len(text.splitlines()) > 10
    out = tmp_path / "report.txt"
    write_report(sm, out, force=False)
    assert out.read_text() == text
    with pytest.raises(SystemExit) as gone:  # exists, no --force: whole or not at all, exit 3
        write_report(sm, out, force=False)
    assert gone.value.code == 3


def test_run_says_one_line_unless_asked_for_more(capsys, tmp_path):
    from c2tui.commands.run import _say
    from prover import fold_events as fold, read_recording, summarize

    sm = summarize(fold(read_recording(REC).events))
    app = NS(quit_how="quit", interrupted=False)
    _say(sm, app, None, "line", None, False)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("c2tui: ")
    _say(sm, app, None, "full", tmp_path / "r.txt", False)
    full = capsys.readouterr().out.splitlines()
    assert len(full) > 10 and full[-1].startswith("c2tui: ") and (tmp_path / "r.txt").exists()


@pytest.mark.timeout(30)
def test_a_fifo_for_prefs_is_the_defaults_not_a_hang(tmp_path):
    """Issue 44: prefs.json as a FIFO (no writer) hung every dashboard at start."""
    import os

    os.mkfifo(tmp_path / "prefs.json")
    assert prefs.load(tmp_path) == prefs.Prefs()


@pytest.mark.timeout(60)
def test_a_theme_given_on_the_command_line_is_not_remembered(monkeypatch, tmp_path):
    """Issue 44: `replay --theme light` saved light as every later dashboard's theme; only `t` is kept."""
    from c2tui.dashboard.app import DashboardApp
    from c2tui.sources.replay import ReplaySource

    monkeypatch.setenv("C2TUI_CONFIG_DIR", str(tmp_path))
    app = DashboardApp(ReplaySource.from_file(REC, at=3.0, playing=False), theme="light", prefs=prefs.load())

    async def drive() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()

    asyncio.run(drive())
    assert app.theme_name == "light" and prefs.load().theme == "dark"
