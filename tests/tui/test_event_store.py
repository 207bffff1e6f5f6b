"""A replay keeps a recording's validated lines, not its event models (issue 35's follow-up: a
recording at the event bound, 1M events, took 2.45 GB to draw as models). Counted, not timed:
the bytes the store holds an event, and the event models alive after loading and seeking."""
from __future__ import annotations

import gc
from pathlib import Path

from c2tui.sources.event_store import CHUNK, EventStore
from c2tui.sources.replay import ReplaySource, load_recording
from prover import events as ev
from prover import read_recording
from prover.events.base import _Ev

HEAD = ('{"kind":"c2tui-recording","schema_version":3}\n'
        '{"kind":"run_started","t":0,"backend":"sim","simulated":true,"profile":"p","proved_log2":8,'
        '"modelled_log2":27,"gpus":1}\n'
        '{"kind":"gpu_info","t":0.1,"gpu":0,"name":"g","total_bytes":17179869184,"budget_bytes":17179869184,'
        '"simulated":true}\n')


def alloc_lines(n: int, back: int | None = None) -> str:
    """n `alloc` events 1 ms apart; with `back`, that one stamped 20 ms early (within the
    reader's tolerance: the replay orders it by time)."""
    def t(i: int) -> float:
        return 0.2 + i * 1e-3 - (0.02 if i == back else 0.0)
    return "".join('{"kind":"alloc","t":%.4f,"gpu":0,"owner":"g0w%d","name":"d_%d","bytes":1}\n' % (t(i), i % 16, i)
                   for i in range(n))


def live_events() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, _Ev))


def test_a_loaded_recording_holds_compressed_lines_and_parses_only_what_the_fold_passes(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(HEAD + alloc_lines(20_000))
    before = live_events()
    rec = load_recording(path)
    store = rec.events
    assert isinstance(store, EventStore) and len(store) == 20_002 and rec.error is None
    assert store.stored_bytes < 32 * len(store)  # a few bytes an event (a model was ~1.2 KB of RSS)
    assert live_events() - before <= 2  # validated and dropped: no model kept
    src = ReplaySource(store, at=store.times[3000], playing=False)  # folds 3001 events, parsing each
    assert src._state.events == 3001
    assert live_events() - before <= CHUNK  # what the state keeps of them, never the recording


def test_the_store_reads_back_the_readers_events_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(HEAD + alloc_lines(2 * CHUNK + 7, back=CHUNK + 3))  # across chunks, one early
    models = sorted(read_recording(path).events, key=lambda e: e.t)  # the replay's order: stable by time
    store = load_recording(path).events
    assert list(store) == models and list(store.times) == [e.t for e in models]
    assert store[-1] == models[-1] and store[CHUNK - 1: CHUNK + 2] == models[CHUNK - 1: CHUNK + 2]
    assert isinstance(store[5], ev.Alloc)
    at = models[CHUNK + 10].t
    a, b = ReplaySource(store, at=at, playing=False), ReplaySource(models, at=at, playing=False)
    for s in (a, b):
        s.seek(0.5)  # back: from the start, folding on
    assert a._idx == b._idx and a._state.events == b._state.events
