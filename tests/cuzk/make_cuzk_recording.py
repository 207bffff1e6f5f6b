"""Make tests/cuzk/recordings/cuzk_watch.jsonl: what `c2tui attach --cuzk --record` writes of
the fake cuzk daemon (fake_daemon.py's script), polled every 0.5 s at fixed times so the
snapshot is the same every time: `python -m tests.cuzk.make_cuzk_recording`."""
from __future__ import annotations

from pathlib import Path

from prover import RecordingHeader, RecordingWriter
from prover.cuzk.watch import CuzkWatch
from tests.cuzk.fake_daemon import SCRIPT, FakeCuzk

OUT = Path(__file__).with_name("recordings") / "cuzk_watch.jsonl"


def main() -> None:
    fake, watch = FakeCuzk(), CuzkWatch("unix:///run/curio/cuzk.sock")
    w = RecordingWriter(OUT, RecordingHeader(argv=["c2tui", "attach", "--cuzk", "unix:///run/curio/cuzk.sock"],
                                             config={"source": "cuzk"}), force=True)
    for i in range(len(SCRIPT)):
        for e in watch.step(0.5 * i + 0.01, fake.get_status(None, None), fake.snapshot()):
            w.write(e)
        fake.advance()
    w.close()


if __name__ == "__main__":
    main()
