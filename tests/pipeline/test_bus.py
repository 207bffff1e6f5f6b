"""The event bus (prover/events/bus.py): a sink that raises never takes the engine down,
and is no longer silent (issue 35): each failure is counted and logged at debug with its
traceback; the other sinks still get every event."""
from __future__ import annotations

import itertools
import logging

import pytest

from prover import events as ev
from prover.events.bus import EventBus


def test_a_failing_sink_is_counted_and_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    got: list = []

    def broken(e) -> None:  # type: ignore[no-untyped-def]
        raise OSError("disk gone")

    clock = itertools.count().__next__
    bus = EventBus([broken, got.append], lambda: float(clock()))
    with caplog.at_level(logging.DEBUG, logger="prover.bus"):
        bus.emit(ev.Note, text="one")
        bus.emit(ev.Note, text="two")
    assert [e.text for e in got] == ["one", "two"]
    assert bus.sink_failures == 2
    records = [r for r in caplog.records if r.name == "prover.bus"]
    assert len(records) == 2 and records[0].levelno == logging.DEBUG
    assert records[0].exc_info is not None and "disk gone" in caplog.text and "note" in records[0].getMessage()
