"""Replay controls in the app (keys and mouse), and the replay / screenshot commands."""
from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from c2tui.dashboard.app import DashboardApp
from c2tui.commands import main
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.replay_bar import ReplayBar

pytestmark = pytest.mark.timeout(120)


def run(coro):
    return asyncio.run(coro)


def test_replay_keys(recording):
    async def body():
        src = ReplaySource.from_file(recording, at=6.0, playing=False)
        app = DashboardApp(src)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("right")
            assert src.position == pytest.approx(11.0)
            await pilot.press("left", "left")
            assert src.position == pytest.approx(1.0)
            await pilot.press("end")
            assert src.position == src.end_t
            await pilot.press("home")
            assert src.position == 0.0
            # the start shows the run as it began (run_started is a few µs in): it was an
            # empty dashboard headed "c2tui ? ?  lock ?  mem_sync ?"
            await pilot.pause()
            head = app.query_one("#header").render().plain
            assert "lock two-lock" in head and "?" not in head and "t 00:00.0" in head
            await pilot.press("right_square_bracket", "right_square_bracket")
            assert src.speed == 4.0
            await pilot.press("left_square_bracket")
            assert src.speed == 2.0
            await pilot.press("space")
            assert src.playing
            await pilot.pause(0.5)
            assert src.position > 0.5  # 2x for ~0.5 s of wall time
            await pilot.press("space")
            assert not src.playing
            # the header's clock is the cursor
            assert f"t 00:{src.position:04.1f}" in app.query_one("#header").render().plain
            # live controls do nothing in replay (and are not in the footer)
            await pilot.press("l")
            assert app.check_action("lock_mode", ()) is False
    run(body())


def test_click_on_replay_bar_seeks(recording):
    async def body():
        src = ReplaySource.from_file(recording, at=1.0, playing=False)
        app = DashboardApp(src)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            bar = app.query_one(ReplayBar)
            x0, w = bar._bar
            await pilot.click(ReplayBar, offset=(x0 + w - 1 + 1, 0))  # +1: the bar's left padding
            await pilot.pause()
            assert src.position > 0.9 * src.end_t
    run(body())


def test_screenshot_command(tmp_path, recording):
    out = tmp_path / "shot.svg"
    r = CliRunner().invoke(main, ["screenshot", str(recording), "--at", "6", "--size", "100x30", "--theme", "light",
                                  "-o", str(out)])
    assert r.exit_code == 0, r.output
    svg = out.read_text()
    assert svg.startswith("<svg") and "SIMULATED" in svg and "REPLAY" in svg


@pytest.mark.parametrize("args,msg", [
    (["--size", "12"], "WxH"),
    (["--theme", "neon"], "unknown theme"),
])
def test_screenshot_bad_options(tmp_path, recording, args, msg):
    r = CliRunner().invoke(main, ["screenshot", str(recording), "--at", "1", "-o", str(tmp_path / "x.svg"), *args])
    assert r.exit_code == 2 and msg in r.output


def test_replay_rejects_what_is_not_a_recording(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    r = CliRunner().invoke(main, ["replay", str(bad)])
    assert r.exit_code == 2 and "not a c2tui recording" in r.output  # unreadable input: 2 (c2tui/cli/exits.py)
    r = CliRunner().invoke(main, ["replay", str(bad), "--speed", "99"])
    assert r.exit_code == 2 and "speed" in r.output


def test_truncated_recording_replays_its_prefix(tmp_path, recording):
    data = recording.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) // 2])  # torn mid-line, like a crash
    out = tmp_path / "cut.svg"
    r = CliRunner().invoke(main, ["screenshot", str(cut), "--at", "2", "-o", str(out)])  # inside the valid prefix
    assert r.exit_code == 2 and "truncated" in r.output, r.output  # drawn, and failed like summary (issue 24)
    assert out.exists()


def test_a_damaged_recording_replays_only_when_asked(recording, tmp_path, monkeypatch):
    """Issue 35: 49 damaged-file replays exited 0. Without --allow-damaged: one line, exit 2;
    with it: said on stderr, and the valid prefix replayed."""
    bad = tmp_path / "damaged.jsonl"
    bad.write_text("".join(recording.read_text().splitlines(keepends=True)[:40]) + '{"kind": "note", "t": 1e308}\n')
    shown = []
    monkeypatch.setattr(DashboardApp, "run", lambda self, *a, **k: shown.append(len(self.source.events)))
    r = CliRunner().invoke(main, ["replay", str(bad)])
    assert r.exit_code == 2 and "--allow-damaged" in r.output.strip().splitlines()[-1] and not shown, r.output
    r = CliRunner().invoke(main, ["replay", str(bad), "--allow-damaged"])
    assert r.exit_code == 0 and "is damaged" in r.output and shown == [39], r.output
