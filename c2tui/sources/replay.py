"""Where the dashboard's state comes from: the live prover or a recording, behind one face.

    version, state = source.snapshot()   # the latest whole snapshot, read-only for the UI
    source.tick()                        # replay: advance its clock; live: nothing
    source.controller                    # live: the engine's Controller; replay: None

LiveSource (memray's live-TUI pattern): the engine's sink only appends each event to a
deque (cheap, lock-free under the GIL, never blocks the prover); a fold thread drains the
deque into one DashboardState and, at most `snapshot_hz` times a second, publishes the
fold's view of it (`DashboardState.view()`: a bounded copy the fold itself makes; reference swap). The UI thread reads the latest snapshot at its own
rate; the prover never waits for the UI, and the UI never reads a state being folded.

ReplaySource folds a recording up to a cursor time. Playing moves the cursor by wall time x
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
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

from prover import events as ev
from prover import DashboardState
from c2tui.sources import seek_points
from c2tui.sources.event_store import EventStore
from c2tui.sources.seek_points import SeekPoints

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


class Source(Protocol):
    kind: str

    @property
    def controller(self) -> Any: ...  # read-only: a source's controller is fixed at its start

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def tick(self) -> None: ...
    def snapshot(self) -> tuple[int, DashboardState]: ...


# --- live -----------------------------------------------------------------------------------

class LiveSource:
    """Folds an engine's events on a background thread; hands the UI whole snapshots."""

    kind = "live"

    def __init__(self, engine: Any = None, snapshot_hz: float = 20.0, label: str = "LIVE") -> None:
        # snapshots are made on demand: the UI's read asks for the next one, so no copy is
        # made that no frame will show (and at most snapshot_hz of them a second)
        self.engine = engine
        self.label = label
        self.state = DashboardState()
        self._q: deque = deque()
        self._snap: DashboardState = self.state.view()
        self._version = 0
        self._period = 1.0 / snapshot_hz
        self._stop = threading.Event()
        self._want = True
        self._thread: threading.Thread | None = None
        self.folded = 0
        if engine is not None:
            engine.add_sink(self.sink)

    @property
    def controller(self) -> Any:
        return getattr(self.engine, "controller", None)

    def sink(self, e: ev.Event) -> None:
        """Called from prover threads: O(1), never blocks."""
        self._q.append(e)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="c2tui-fold", daemon=True)
            self._thread.start()
        if self.engine is not None and hasattr(self.engine, "start"):
            self.engine.start()

    def stop(self, timeout: float = 10.0) -> None:
        if self.engine is not None and hasattr(self.engine, "stop"):
            try:
                self.engine.stop(timeout=timeout)
            except TypeError:
                self.engine.stop()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def drain(self) -> int:
        n = 0
        q, apply = self._q, self.state.apply
        while q:
            apply(q.popleft())
            n += 1
        self.folded += n
        return n

    def publish(self) -> None:
        self._want = False
        self._snap = self.state.view()
        self._version += 1

    def _run(self) -> None:
        dirty = False
        last = 0.0
        while not self._stop.is_set():
            if self.drain():
                dirty = True
            now = time.monotonic()
            if dirty and self._want and now - last >= self._period:
                self.publish()
                dirty, last = False, now
            self._stop.wait(0.01)
        if self.drain():
            self.publish()

    def tick(self) -> None:
        pass

    def snapshot(self) -> tuple[int, DashboardState]:
        self._want = True
        return self._version, self._snap


# --- attached -------------------------------------------------------------------------------

class AttachSource(LiveSource):
    """The dashboard over a prover served by `--listen` elsewhere: the same fold as LiveSource,
    fed by the attach client's reader thread; controls go to a RemoteController. Stopping
    detaches; the prover goes on."""

    kind = "attach"

    def __init__(self, address: str, name: str | None = None, token_file: str | None = None,
                 snapshot_hz: float = 20.0, readonly: bool = False) -> None:
        from prover import AttachClient, RemoteController

        self.client = AttachClient(address, name=name, token_file=token_file, readonly=readonly)
        a = self.client.address
        where = f"{a.host}:{a.port}" if a.tcp else Path(a.path or "").name  # short: the header is one line
        super().__init__(None, snapshot_hz=snapshot_hz, label=f"ATTACHED{' READ-ONLY' if readonly else ''} {where}")
        self._remote = RemoteController(self.client)

    @property
    def controller(self) -> Any:
        return self._remote

    @property
    def readonly(self) -> bool:
        """Asked for (--readonly) or given by the server (the read-only token)."""
        w = self.client.welcome
        return self.client.readonly or bool(w is not None and w.readonly)

    def connect(self) -> Any:
        """Handshake now (raises AttachRefused / AttachError), so a refusal is told before the UI starts."""
        welcome = self.client.connect()
        if welcome.readonly and "READ-ONLY" not in self.label:  # the read-only token: the server says so
            self.label = self.label.replace("ATTACHED", "ATTACHED READ-ONLY", 1)
        return welcome

    def start(self) -> None:
        if self.client.welcome is None:
            self.connect()
        self.client.start(self.sink, self._ended)
        super().start()

    def _ended(self, reason: str) -> None:
        self.sink(ev.Note(t=self.state.t, level="warn", text=f"detached from {self.client.address}: {reason}"))

    def stop(self, timeout: float = 10.0) -> None:
        self.client.close()
        super().stop(timeout)


# --- replay ---------------------------------------------------------------------------------

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
