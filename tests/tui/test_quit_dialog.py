"""`q` with partitions in flight asks: drain then quit, quit now (each in-flight partition
recorded as abandoned), or cancel. Ctrl-C quits at once, with the same record. A real sim
Engine and the recording writer `c2tui run --record` uses."""
from __future__ import annotations

import asyncio

import pytest

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.live import LiveSource
from c2tui.widgets.quit_dialog import QuitDialog, in_flight
from prover import events as ev
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.record import RecordingWriter, read_recording

from tests.helpers.pilot_wait import until as _until


async def until(pilot, cond, timeout: float = 30.0) -> None:
    await _until(pilot, cond, timeout)


pytestmark = pytest.mark.timeout(120)


def _app(tmp_path):
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=0.5, partitions=6, workers_per_gpu=2)
    engine = Engine(cfg)
    writer = RecordingWriter(tmp_path / "run.jsonl")
    engine.add_sink(writer.write)
    return DashboardApp(LiveSource(engine)), engine, writer



def _notes(path):
    return [e.text for e in read_recording(path).events if isinstance(e, ev.Note) and e.text.endswith("(quit now)")]


@pytest.mark.slow
@pytest.mark.parametrize("key", ["x", "ctrl+c"])
def test_quit_now_records_each_abandoned_partition(tmp_path, key):
    app, engine, writer = _app(tmp_path)

    async def drive():
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: len(in_flight(app.source.snapshot()[1])) >= 2)
            if key == "x":
                await pilot.press("q")
                await until(pilot, lambda: isinstance(app.screen, QuitDialog))
                await pilot.press("escape")  # cancel: still running
                await until(pilot, lambda: not isinstance(app.screen, QuitDialog))
                assert not engine.finished
                await pilot.press("q")
                await until(pilot, lambda: isinstance(app.screen, QuitDialog))
            await pilot.press(key)
            await pilot.pause(0.2)

    asyncio.run(drive())
    assert engine.finished
    writer.close()
    notes = _notes(writer.path)
    assert len(notes) >= 2 and all(n.startswith("partition s") for n in notes)
    assert "quit now" in app.quit_how and app.interrupted  # the command exits 3
    assert isinstance(read_recording(writer.path).events[-1], ev.RunEnded)


def test_drain_then_quit_finishes_in_flight_work(tmp_path):
    app, engine, writer = _app(tmp_path)
    parts: list[str] = []

    async def drive():
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: len(in_flight(app.source.snapshot()[1])) >= 2)
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, QuitDialog))
            parts.extend(app.screen.parts)
            await pilot.press("d")
            await until(pilot, lambda: engine.finished, timeout=60)
            await pilot.pause(0.2)

    asyncio.run(drive())
    writer.close()
    rec = read_recording(writer.path)
    done = {e.part for e in rec.events if isinstance(e, ev.PartitionDone)}
    assert set(parts) <= done  # every partition in flight at q finished
    assert not _notes(writer.path)
    assert app.quit_how == "drained" and not app.interrupted
    assert rec.events[-1].reason == "done (drained)"


def test_q_without_work_in_flight_quits_at_once(tmp_path):
    app, engine, writer = _app(tmp_path)

    async def drive():
        async with app.run_test(size=(120, 40)) as pilot:
            app.source.controller.pause(source="test")
            await until(pilot, lambda: app.state is not None and app.state.started)
            engine.stop(timeout=30)
            await pilot.press("q")
            await pilot.pause(0.2)
            assert not isinstance(app.screen, QuitDialog)

    asyncio.run(drive())
    assert not app.interrupted
    writer.close()


def test_the_run_commands_exit_status_follows_the_session():
    """c2tui run: 3 for a recording not written or an interrupted session, 1 for a failed
    proof or partition, else 0 (docs/exit-codes.md, "The dashboard")."""
    from types import SimpleNamespace as NS

    from c2tui.commands.run import exit_status

    ok, bad = NS(proofs_failed=0, partitions_failed=0), NS(proofs_failed=1, partitions_failed=0)
    assert [exit_status(ok, False, None), exit_status(ok, True, None), exit_status(bad, False, None),
            exit_status(bad, True, None), exit_status(ok, False, "ENOSPC")] == [0, 3, 1, 1, 3]
