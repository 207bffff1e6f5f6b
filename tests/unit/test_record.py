from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover import events as ev
from prover.events import SCHEMA_VERSION
from prover.record import RecordingError, RecordingHeader, RecordingWriter, read_recording


def sample_events(n: int = 50):
    out = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=27, gpus=1)]
    for i in range(n):
        out.append(ev.LockRequested(t=0.01 * i, gpu=0, lock="mem", worker="g0w0", part=f"s0p{i}"))
        out.append(ev.Alloc(t=0.01 * i, gpu=0, owner="g0w0", part=f"s0p{i}", name="d_a", bytes=4 << 30))
    out.append(ev.RunEnded(t=1.0, reason="done"))
    return out


def write(path, events, header=None):
    with RecordingWriter(path, header or RecordingHeader(argv=["x"], config={"a": 1})) as w:
        for e in events:
            w.write(e)
    return path


def test_round_trip(tmp_path):
    evs = sample_events()
    rec = read_recording(write(tmp_path / "r.jsonl", evs))
    assert rec.error is None and rec.bad_line is None
    assert rec.header.schema_version == SCHEMA_VERSION and rec.header.argv == ["x"]
    assert rec.events == evs


def test_gzipped_recording_reads_the_same(tmp_path):
    """`gzip r.jsonl` (any name): known by its magic bytes; a cut .gz keeps what came before."""
    import gzip

    evs = sample_events(99)
    plain = write(tmp_path / "r.jsonl", evs)
    gz = tmp_path / "r.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    rec = read_recording(gz)
    assert rec.error is None and rec.events == evs
    blob = gz.read_bytes()
    cut = tmp_path / "cut.gz"
    cut.write_bytes(blob[: len(blob) // 2])
    rec = read_recording(cut)
    assert rec.error is not None and ("gzip" in rec.error or "truncated" in rec.error)
    assert 0 < len(rec.events) < len(evs) and rec.events == evs[: len(rec.events)]
    junk = tmp_path / "junk.gz"
    junk.write_bytes(b"\x1f\x8b" + b"not deflate at all" * 10)
    rec = read_recording(junk)
    assert rec.header is None and "gzip" in rec.error


def test_truncated_file_gives_prefix_and_line(tmp_path):
    p = write(tmp_path / "r.jsonl", sample_events())
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 25])  # cut the last line in the middle
    rec = read_recording(p)
    assert rec.bad_line == len(data.splitlines())
    assert "truncated" in rec.error and f"line {rec.bad_line}" in rec.error
    assert len(rec.events) == len(sample_events()) - 1


def test_corrupt_line_named(tmp_path):
    p = write(tmp_path / "r.jsonl", sample_events(5))
    lines = p.read_text().splitlines()
    lines[4] = '{"kind": "lock_acquired", "t": -1}'
    p.write_text("\n".join(lines) + "\n")
    rec = read_recording(p)
    assert rec.bad_line == 5 and "line 5" in rec.error
    assert len(rec.events) == 3


def test_unknown_schema_and_not_a_recording(tmp_path):
    p = tmp_path / "v99.jsonl"
    p.write_text(json.dumps({"kind": "c2tui-recording", "schema_version": 99}) + "\n")
    rec = read_recording(p)
    assert rec.header is None and "schema version 99" in rec.error and rec.bad_line == 1
    q = tmp_path / "other.txt"
    q.write_text("hello world\n")
    assert "not a c2tui recording" in read_recording(q).error
    e = tmp_path / "empty"
    e.write_text("")
    assert read_recording(e).bad_line == 1
    with pytest.raises(RecordingError):
        read_recording(tmp_path / "missing.jsonl")


def test_unwritable_path_is_clear(tmp_path):
    with pytest.raises(RecordingError, match="cannot write"):
        RecordingWriter(tmp_path / "no" / "such" / "dir.jsonl")


def test_prefix_readable_before_close(tmp_path):
    """A crash leaves what was flushed: the writer flushes at least every ~100 ms."""
    p = tmp_path / "live.jsonl"
    w = RecordingWriter(p, RecordingHeader())
    evs = sample_events(10)
    for e in evs:
        w.write(e)
    time.sleep(0.35)
    rec = read_recording(p)  # not closed yet
    assert rec.error is None and rec.events == evs
    w.close()


def test_writer_from_many_threads(tmp_path):
    import threading

    p = tmp_path / "mt.jsonl"
    w = RecordingWriter(p, RecordingHeader())

    def burst(k):
        for i in range(2000):
            w.write(ev.Note(t=0.0, text=f"{k}:{i}"))  # one time: four threads interleave

    ts = [threading.Thread(target=burst, args=(k,)) for k in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    w.close()
    rec = read_recording(p)
    assert rec.error is None and len(rec.events) == 8000 and w.written == 8000


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_reader_never_crashes(tmp_path_factory, blob):
    p = tmp_path_factory.mktemp("fz") / "r.jsonl"
    good = write(p, sample_events(3)).read_bytes()
    lines = good.splitlines(keepends=True)
    p.write_bytes(b"".join(lines[:3]) + blob)
    rec = read_recording(p)
    assert rec.header is not None
    assert rec.error is None or rec.bad_line is not None
    assert len(rec.events) >= 2
