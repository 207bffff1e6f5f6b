"""Recordings: the event stream as JSON lines, a header line first.

    with RecordingWriter(path, RecordingHeader(argv=sys.argv, config=cfg.public_dict())) as w:
        engine.add_sink(w.write)           # cheap: appends to a queue
    rec = read_recording(path)             # Recording(header, events, error, bad_line, count)
    rec = read_recording(path, sink=state.apply)   # streamed: each event handed on, none kept
    rec = read_recording(path, lines=store.add)    # each event with its line as read, none kept

The writer serialises and writes on its own thread, in batches, at least every ~100 ms and
on close, so a crash leaves a readable prefix. It never replaces an existing file unless
asked (`force=True`), and holds an exclusive lock (flock) on it so a second writer fails at
once instead of interleaving. A write error (no space, I/O error, the file or its directory
removed) is kept in `error` in the OS's words; the file is cut back to the last whole batch,
so what remains is a readable prefix.

Reading validates every line with pydantic (never eval/pickle) and bounds what it takes on a
file's word, by the bounds of prover/bounds.py: lines (MAX_LINE), events (MAX_EVENTS) and
bytes after gzip (MAX_DECOMPRESSED), counts (GPUs, hosts, workers) within the engine's own
limits, every number finite, times non-decreasing (within T_TOLERANCE), the header's nesting
bounded, and the schema version known. A truncated, corrupt, reordered or implausible file gives the valid
prefix plus the 1-based number of the first bad line; a file that is not a recording is a
clear error.
"""
from __future__ import annotations

from prover.record.format import MAGIC, RecordingError, RecordingHeader, _dump_line
from prover.record.reader import Recording, parse_header, read_recording
from prover.record.writer import RecordingWriter

__all__ = ["MAGIC", "Recording", "RecordingError", "RecordingHeader", "RecordingWriter", "_dump_line", "parse_header",
           "read_recording"]
