"""Where the dashboard's state comes from: the live prover, an attached one or a
recording (replay.py), behind one face (Source).

    version, state = source.snapshot()   # the latest whole snapshot, read-only for the UI
    source.tick()                        # replay: advance its clock; live: nothing
    source.controller                    # live: the engine's Controller; replay: None

LiveSource (memray's live-TUI pattern): the engine's sink only appends each event to a
deque (cheap, lock-free under the GIL, never blocks the prover); a fold thread drains the
deque into one DashboardState and, at most `snapshot_hz` times a second, publishes the
fold's view of it (`DashboardState.view()`: a bounded copy the fold itself makes; reference swap). The UI thread reads the latest snapshot at its own
rate; the prover never waits for the UI, and the UI never reads a state being folded.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from prover import events as ev
from prover import DashboardState, EngineHandle, KnobFacade


class Source(Protocol):
    kind: str

    @property
    def controller(self) -> KnobFacade | None: ...  # read-only: a source's controller is fixed at its start

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def tick(self) -> None: ...
    def snapshot(self) -> tuple[int, DashboardState]: ...


# --- live -----------------------------------------------------------------------------------

class LiveSource:
    """Folds an engine's events on a background thread; hands the UI whole snapshots."""

    kind = "live"

    def __init__(self, engine: EngineHandle | None = None, snapshot_hz: float = 20.0, label: str = "LIVE") -> None:
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
    def controller(self) -> KnobFacade | None:
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
    def controller(self) -> KnobFacade | None:
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
