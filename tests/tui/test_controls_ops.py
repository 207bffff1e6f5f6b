"""Pilot test of the operators' keys (issue 26), one app: `W` submits a WinningPoSt sector
through the controller (recorded with source key) and the queue line shows the class; `a`
opens the job prompt, and `cordon 0` (asked first: the one GPU is the last taking work) /
`uncordon 0` go through the controller to the fold."""
from __future__ import annotations

import pytest

from c2tui.widgets.queue_bar import QueueBar
from prover import events as ev
from tests.tui.test_controls import make, running, sync, until

pytestmark = pytest.mark.timeout(120)


async def type_job(app, pilot, text: str) -> None:
    """`a`, then the prompt's text (set on its Input: space is a dashboard key), then enter."""
    from textual.widgets import Input

    await pilot.press("a")
    await until(pilot, lambda: bool(app.screen.query(Input)) and app.screen.query_one(Input).has_focus)
    app.screen.query_one(Input).value = text
    await pilot.pause()
    await pilot.press("enter")


@pytest.mark.slow
@sync
async def test_shift_w_submits_winning_and_a_cordons_through_the_controller():
    app, eng, rec = make(sectors=3, partitions=10)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))
        await pilot.press("W")
        await until(pilot, lambda: any(isinstance(e, ev.SectorSubmitted) and e.proof_class == "winning"
                                       for e in rec.events))
        sub = next(e for e in rec.events if isinstance(e, ev.SectorSubmitted) and e.proof_class == "winning")
        assert sub.source == "key" and sub.partitions == 1
        await until(pilot, lambda: "winning" in app.query_one(QueueBar).render().plain)
        await type_job(app, pilot, "cordon 0")  # the one GPU: the last taking work, so it asks first (issue 44)
        from c2tui.widgets.confirm_action import ConfirmAction

        await until(pilot, lambda: isinstance(app.screen, ConfirmAction))
        assert "last GPU taking work" in app.screen.warn
        await pilot.press("y")
        await until(pilot, lambda: any(isinstance(e, ev.JobAction) for e in rec.events))
        act = next(e for e in rec.events if isinstance(e, ev.JobAction))
        assert (act.action, act.target, act.source) == ("cordon", "gpu0", "key")
        await until(pilot, lambda: 0 in app.state.jobs.cordoned)
        await type_job(app, pilot, "uncordon 0")
        await until(pilot, lambda: 0 not in app.state.jobs.cordoned)


@pytest.mark.slow
@sync
async def test_the_job_prompt_takes_job_actions_and_knob_sets_and_names_a_refusal():
    """The prompt went through the controller's apply: 'cancel' alone was answered "unknown
    switch 'cancel'; use single | narrow | ...", and a refusal read "the prover refused the
    apply change". Now it checks its text, names both forms, and takes a knob set in the one
    syntax `--switch`, arms and `attach --send` take (issue 44): both knobs in one change."""
    app, eng, rec = make(sectors=3, partitions=10)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: running(app))
        await type_job(app, pilot, "lock_mode=reserved,mem_sync=stream")
        await until(pilot, lambda: app.state.knobs.get("mem_sync") == "stream")
        got = [e for e in rec.events if isinstance(e, ev.ModeChange)]
        assert [(e.knob, e.new, e.source) for e in got] == [("lock_mode", "reserved", "key"), ("mem_sync", "stream", "key")]
        assert len(app.state.segments) == 2 and "lock_mode" in app.state.segments[-1].change \
            and "mem_sync" in app.state.segments[-1].change  # one change: one segment
        for text, said in (("cancel", "job action 'cancel': type one of cancel s3p2"),
                           ("frobnicate s1", "'frobnicate s1': type a job action (cancel s3p2"),
                           ("lock_mode=two-lock,mem_sync=often", "mem_sync must be one of device, stream")):
            await type_job(app, pilot, text)
            await until(pilot, lambda: any(said in n.message for n in app._notifications))
        await type_job(app, pilot, "cancel s999p0")
        said = "the prover refused the job action: cancel: no partition s999p0 queued or in flight"
        await until(pilot, lambda: any(n.message == said for n in app._notifications))
        assert eng.controller.knobs.lock_mode == "reserved" and len(rec.changes("lock_mode")) == 1
        assert not any(isinstance(e, ev.JobAction) for e in rec.events)
