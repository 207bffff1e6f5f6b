"""`c2tui attach --cuzk` over a fake cuzk daemon (its stubbed fields as cuzk sends them): the
polls become our events, the one fold draws GPUs, workers, partitions with their phases; a
cancel says plainly that the daemon did not act; the recording of it replays to the same state."""
from __future__ import annotations

from pathlib import Path

import pytest

from c2tui.sources.cuzk import CuzkSource
from prover import DashboardState, RecordingHeader, RecordingWriter, read_recording
from prover import fold_events
from tests.cuzk.fake_daemon import SCRIPT, FakeDaemon


@pytest.fixture
def daemon(tmp_path: Path):
    d = FakeDaemon(str(tmp_path / "cuzk.sock")).start()
    yield d
    d.stop()


def test_watching_a_cuzk_daemon_folds_and_records_and_replays(daemon, tmp_path: Path) -> None:
    rec = tmp_path / "watched.jsonl"
    writer = RecordingWriter(rec, RecordingHeader(argv=["test"], config={"source": "cuzk"}))
    src = CuzkSource(daemon.address, daemon.status_url, steer=True, writer=writer)
    assert src.connect().gpus[0].name.startswith("NVIDIA")
    for _ in SCRIPT:
        src.poller.poll_once()
        daemon.fake.advance()
    with pytest.raises(ValueError, match="did not act"):
        src.controller.apply("cancel=s0", source="key")
    assert daemon.fake.cancels == ["curio-42"]
    src.drain()
    st = src.state
    src.stop()
    assert st.gpus[0].name == "NVIDIA GeForce RTX 5070 Ti" and st.gpus[0].total == 16 << 30
    assert st.partitions["s0p0"].phases["msm"][1] is not None and st.partitions["s0p1"].done_t is not None
    assert st.partitions_unchecked == 2  # cuzk's proofs, not verified here: never counted as verified
    notes = [text for _, _, text, _ in st.log]
    assert any("HOT with size 0" in n for n in notes) and any("did not act" in n for n in notes)
    replayed = fold_events(read_recording(rec).events)
    assert replayed.partitions.keys() == st.partitions.keys() and replayed.gpus[0].name == st.gpus[0].name


def test_read_only_by_default(daemon) -> None:
    src = CuzkSource(daemon.address, daemon.status_url)
    assert src.readonly and src.controller is None
    src.stop()
