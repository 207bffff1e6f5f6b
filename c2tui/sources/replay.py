"""ReplaySource folds a recording up to a cursor time. Playing moves the cursor by wall time x
speed (the only place a clock is read, and only while playing); seeking forward folds on,
seeking back restores the nearest checkpoint and folds on from there. Checkpoints
(c2tui/sources/seek_points.py) are at most MAX_CHECKPOINTS whole states, pickled, taken on the
first pass every CHECKPOINT_EVERY events, the spacing doubling (every other one dropped)
whenever they would be more: memory stays flat in their count and the copying linear in the
recording (a deep copy every 2000 events took 47 s and 1.9 GB over 100k `alloc` events). A
file's events are kept as their validated lines (c2tui/sources/event_store.py), each parsed back as
the fold passes over it: a screenshot at the event bound took 2.45 GB with models. A
paused replay is fully deterministic - snapshot tests, `c2tui screenshot` and `--at` depend
on that.
"""
from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from prover import events as ev
from prover import DashboardState
from c2tui.sources import seek_points
from c2tui.sources.event_store import EventStore
from c2tui.sources.seek_points import SeekPoints

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)

@dataclass
class Recording:
    header: dict = field(default_factory=dict)
    events: Sequence[ev.Event] = field(default_factory=list)  # load_recording: an EventStore
    error: str | None = None


def check_at(at: float | None, events: Sequence[ev.Event]) -> None:
    """Raise ValueError unless `at` is a run time inside the recording (never clamp silently)."""
    if at is None:
        return
    end = events[-1].t if events else 0.0
    if not (0.0 <= at <= end):  # also false for nan
        raise ValueError(f"{at:g} s is outside the recording: it runs 0..{end:.1f} s "
                         f"({len(events)} events); give --at within that")


def load_recording(path: str | Path) -> Recording:
    """Read a recording with prover.record (pydantic-validated; a torn tail gives the valid
    prefix and an error naming the line), its events in an EventStore (in time order, parsed
    back only when read). Raises RecordingError if it is not a recording."""
    from prover import RecordingError, read_recording

    store = EventStore()
    rec = read_recording(path, lines=store.add)  # validated once here; kept as lines, not models
    if rec.header is None:
        raise RecordingError(rec.error or f"{path}: not a c2tui recording")
    return Recording(header=rec.header.model_dump(), events=store.finish(), error=rec.error)


class ReplaySource:
    """The dashboard over a recording: a cursor in run time, play/pause, speed, seek."""

    kind = "replay"
    controller = None

    def __init__(self, events: Iterable[ev.Event], *, at: float | None = None, speed: float = 1.0,
                 playing: bool = True, header: dict | None = None, label: str = "REPLAY") -> None:
        self.events: Sequence[ev.Event]
        self.times: Sequence[float]
        if isinstance(events, EventStore):  # a file's: in time order, each parsed as the fold reaches it
            self.events, self.times = events, events.times
        else:
            self.events = sorted(events, key=lambda e: e.t)  # stable: equal times keep file order
            self.times = [e.t for e in self.events]
        self.header = header or {}
        self.label = label
        self.start_t = 0.0
        self.end_t = self.times[-1] if self.times else 0.0
        self.speed = speed
        self.playing = playing
        self.position = 0.0
        self._state = DashboardState()
        self._idx = 0  # events[:_idx] are folded into _state
        self.checkpoints = SeekPoints(seek_points.CHECKPOINT_EVERY, seek_points.MAX_CHECKPOINTS)
        self._version = 0
        self._shown = (-1, -1.0)
        self._last_wall: float | None = None
        if at is not None:
            self.seek(at)
        else:
            self._fold_to(0.0)

    @classmethod
    def from_file(cls, path: str | Path, **kw) -> "ReplaySource":
        rec = load_recording(path)
        return cls(rec.events, header=rec.header, **kw)

    # --- controls -----------------------------------------------------------------------
    def start(self) -> None:
        self._last_wall = None

    def stop(self) -> None:
        self.playing = False

    def toggle(self) -> None:
        if not self.playing and self.position >= self.end_t:
            self.seek(self.start_t)
        self.playing = not self.playing
        self._last_wall = None
        self._version += 1

    def set_speed(self, speed: float) -> None:
        self.speed = min(SPEEDS[-1], max(SPEEDS[0], speed))
        self._version += 1

    def faster(self) -> None:
        i = bisect.bisect_right(SPEEDS, self.speed)
        self.set_speed(SPEEDS[min(i, len(SPEEDS) - 1)])

    def slower(self) -> None:
        i = bisect.bisect_left(SPEEDS, self.speed) - 1
        self.set_speed(SPEEDS[max(i, 0)])

    def seek(self, t: float) -> None:
        self._fold_to(min(self.end_t, max(self.start_t, t)))

    def seek_by(self, dt: float) -> None:
        self.seek(self.position + dt)

    # --- clock --------------------------------------------------------------------------
    def tick(self, now: float | None = None) -> None:
        if not self.playing:
            self._last_wall = None
            return
        now = time.monotonic() if now is None else now
        if self._last_wall is not None:
            self._fold_to(min(self.end_t, self.position + (now - self._last_wall) * self.speed))
            if self.position >= self.end_t:
                self.playing = False
                self._version += 1
        self._last_wall = now

    # --- the fold -----------------------------------------------------------------------
    def _fold_to(self, t: float) -> None:
        # the run's first event (run_started, a few µs in) is folded at the start too: home
        # and --at 0 showed an empty dashboard headed "c2tui ? ?  lock ?  mem_sync ?"
        upto = max(t, self.times[0]) if self.times else t
        if t < self.position or self._idx > bisect.bisect_right(self.times, upto):
            # back: restore the last checkpoint at or before t
            self._idx, self._state = self.checkpoints.restore(bisect.bisect_right(self.times, upto))
        events, times, st, points = self.events, self.times, self._state, self.checkpoints
        n = len(events)
        while self._idx < n and times[self._idx] <= upto:
            st.apply(events[self._idx])
            self._idx += 1
            if points.due(self._idx):
                points.take(self._idx, st)
        # the state's clock is the cursor: held-for / waited-for times advance between events
        st.t = max(st.t, t)
        if t < st.t:
            st.t = t
        self.position = t
        self._version += 1

    def snapshot(self) -> tuple[int, DashboardState]:
        return self._version, self._state
