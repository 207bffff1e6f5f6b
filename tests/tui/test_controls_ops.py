"""Pilot tests of the operators' keys (issue 26): `W` submits a WinningPoSt sector through
the controller (recorded with source key) and the queue line shows the class."""
from __future__ import annotations

import pytest

from c2tui.widgets.queue_bar import QueueBar
from prover import events as ev
from tests.tui.test_controls import make, running, sync, until

pytestmark = pytest.mark.timeout(120)


@sync
async def test_w_submits_a_winning_sector_and_the_queue_line_shows_it():
    app, eng, rec = make(sectors=1, partitions=4)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))
        await pilot.press("W")
        await until(pilot, lambda: any(isinstance(e, ev.SectorSubmitted) and e.proof_class == "winning"
                                       for e in rec.events))
        sub = next(e for e in rec.events if isinstance(e, ev.SectorSubmitted) and e.proof_class == "winning")
        assert sub.source == "key" and sub.partitions == 1
        await until(pilot, lambda: "winning" in app.query_one(QueueBar).render().plain)
