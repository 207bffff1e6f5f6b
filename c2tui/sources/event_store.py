"""A validated recording's events kept compactly: their JSON lines in zlib-compressed chunks,
their times in a float array; an event is parsed back into its model only when asked for.

    store = EventStore()
    rec = read_recording(path, lines=store.add)   # validated once, as read; no model kept
    store = store.finish()                        # in time order (stable), ready to read
    store.times[i], store[i], len(store), iter(store)

Why: a validated event model costs ~1.2 KB of RSS, so a recording at the event bound
(1,000,000 events) held 1.2 GB as models (`screenshot` held two copies: 2.45 GB); its lines,
zlib-compressed in chunks of CHUNK, take ~17 bytes an event, the times 8. A replay's fold passes over the
events in order (playing, or on from a seek checkpoint), so one decompressed chunk is cached
and each line is parsed as the fold reaches it; at most a chunk's lines and the event being
folded are alive, never the recording. Lines are only ever ones the reader validated (the
strict parse and its plausibility checks), so parsing one back cannot fail on a file's word.
"""
from __future__ import annotations

import zlib
from array import array
from typing import Any, Iterator, Sequence, overload

from prover import events as ev

CHUNK = 512  # lines a compressed chunk (~60-100 KB of JSON: compresses ~8x, one chunk cached)


class EventStore(Sequence[ev.Event]):
    """The events of one recording, in time order once finished: a read-only sequence."""

    def __init__(self) -> None:
        self.times = array("d")  # each event's t, for seeking (bisect) without parsing
        self._chunks: list[bytes] = []  # zlib of CHUNK lines joined by b"\n"
        self._open: list[bytes] = []  # the lines of the chunk being filled
        self._cached: tuple[int, list[bytes]] = (-1, [])  # (chunk index, its lines) of the last chunk read
        self.stored_bytes = 0  # compressed bytes held (the store's cost besides `times`)

    # --- filling (the reader's `lines` callback) -----------------------------------------------
    def add(self, e: ev.Event, raw: bytes) -> None:
        """One validated event and its line as read (the trailing newline dropped)."""
        self.times.append(e.t)
        self._open.append(raw.rstrip(b"\r\n"))
        if len(self._open) == CHUNK:
            self._seal()

    def _seal(self) -> None:
        if self._open:
            data = zlib.compress(b"\n".join(self._open), 1)
            self._chunks.append(data)
            self.stored_bytes += len(data)
            self._open = []

    def finish(self, in_time_order: bool = True) -> "EventStore":
        """The store in time order, stable (equal times keep file order, as the replay's sort
        did): itself when the file was in order, else a copy in order (the reader lets an event
        be stamped up to T_TOLERANCE before the one ahead of it). `in_time_order=False`: in the
        file's order, as read (export writes what the file says, in its order)."""
        self._seal()
        t = self.times
        if not in_time_order or all(t[i] <= t[i + 1] for i in range(len(t) - 1)):
            return self
        out = EventStore()
        for i in sorted(range(len(t)), key=t.__getitem__):
            out.times.append(t[i])
            out._open.append(self._line(i))
            if len(out._open) == CHUNK:
                out._seal()
        out._seal()
        return out

    # --- reading --------------------------------------------------------------------------------
    def _line(self, i: int) -> bytes:
        k, j = divmod(i, CHUNK)
        ck, lines = self._cached
        if ck != k:
            lines = zlib.decompress(self._chunks[k]).split(b"\n") if k < len(self._chunks) else self._open
            self._cached = (k, lines)
        return lines[j]

    def __len__(self) -> int:
        return len(self.times)

    @overload
    def __getitem__(self, i: int) -> ev.Event: ...
    @overload
    def __getitem__(self, i: slice) -> list[ev.Event]: ...

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self.times)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("event index out of range")
        return ev.parse_event(self._line(i))

    def __iter__(self) -> Iterator[ev.Event]:
        for i in range(len(self.times)):
            yield self[i]
