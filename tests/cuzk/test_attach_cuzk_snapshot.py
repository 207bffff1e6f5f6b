"""The dashboard drawn from a watched cuzk daemon (the fake's recording, as `c2tui attach
--cuzk --record` writes it), replayed and paused: mid-way (partition 0 on the GPU, 1 done
with synthesis) and at the end."""
from __future__ import annotations

from pathlib import Path

from tests.tui.test_snapshots import make_app

REC = Path(__file__).with_name("recordings") / "cuzk_watch.jsonl"


def test_cuzk_daemon_mid_proof(snap_compare):
    assert snap_compare(make_app(REC, at=1.2), terminal_size=(120, 36))


def test_cuzk_daemon_at_the_end(snap_compare):
    assert snap_compare(make_app(REC, at=2.51), terminal_size=(120, 36))
