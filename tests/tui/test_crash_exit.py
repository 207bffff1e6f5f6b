"""A dashboard that stops on an internal error exits 3, never 0 (issue 35: the README's fleet
command died on DuplicateIds and exited 0, so scripts and CI took a crash for a clean run)."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource

RECORDING = Path(__file__).parent / "recordings" / "two_gpus.jsonl"


def test_a_crashed_dashboard_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    app = DashboardApp(ReplaySource.from_file(RECORDING, at=1.0, playing=False))

    def boom() -> None:
        raise RuntimeError("an internal error")

    async def drive() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            app.call_later(boom)
            await pilot.pause()

    with pytest.raises(RuntimeError, match="an internal error"):
        asyncio.run(drive())
    assert app.exit_code() == 3
    assert "stopped on an internal error" in capsys.readouterr().err
