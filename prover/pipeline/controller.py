"""The live controller: thread-safe knobs a UI, a CLI `--switch` or a test can turn mid-run.

Every change emits ModeChange(knob, old, new, source) at once; workers read a consistent
`Knobs` snapshot when they enter their next GPU section, so a switch applies there (a section
already running finishes under the knobs it started with).
Knob names: lock_mode, mem_sync, workers_per_gpu, prestage, b_g2, paused.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

from prover import events as ev

LOCK_MODES = ("single", "two-lock")
MEM_SYNCS = ("device", "stream")
PLACEMENTS = ("cpu", "gpu")


@dataclass(frozen=True)
class Knobs:
    lock_mode: str
    mem_sync: str
    workers_per_gpu: int
    prestage: bool
    b_g2: str
    paused: bool


class EngineHooks(Protocol):
    """What the controller may ask of the engine it steers (the engine implements it)."""

    def resize_workers(self, n: int) -> None: ...

    def submit_sector(self, partitions: int | None = None, source: str = "controller") -> int: ...

    def request_stop(self, reason: str) -> None: ...


def _s(v: Any) -> str:
    return str(v)  # the same spelling RunStarted.config gets in the fold (True/False for booleans)


class Controller:
    def __init__(self, knobs: Knobs, emit: Callable[..., Any], engine: EngineHooks | None = None) -> None:
        self._knobs = knobs
        self._emit = emit
        self._engine = engine
        self._lock = threading.Lock()
        self._resume = threading.Event()
        if not knobs.paused:
            self._resume.set()

    # --- reading --------------------------------------------------------------------------
    def snapshot(self) -> Knobs:
        with self._lock:
            return self._knobs

    @property
    def knobs(self) -> Knobs:
        return self.snapshot()

    def wait_unpaused(self, stop: threading.Event, poll: float = 0.1) -> bool:
        """Block while paused; False if the engine is stopping."""
        while not self._resume.wait(poll):
            if stop.is_set():
                return False
        return not stop.is_set()

    # --- changing ---------------------------------------------------------------------------
    def _set(self, knob: str, value: Any, source: str) -> bool:
        with self._lock:
            old = getattr(self._knobs, knob)
            if old == value:
                return False
            self._knobs = replace(self._knobs, **{knob: value})
            self._emit(ev.ModeChange, knob=knob, old=_s(old), new=_s(value), source=source)
        return True

    def set_lock_mode(self, mode: str, source: str = "controller") -> bool:
        if mode not in LOCK_MODES:
            raise ValueError(f"lock_mode must be one of {', '.join(LOCK_MODES)}, got {mode!r}")
        return self._set("lock_mode", mode, source)

    def set_mem_sync(self, v: str, source: str = "controller") -> bool:
        if v not in MEM_SYNCS:
            raise ValueError(f"mem_sync must be one of {', '.join(MEM_SYNCS)}, got {v!r}")
        return self._set("mem_sync", v, source)

    def set_workers_per_gpu(self, n: int, source: str = "controller") -> bool:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 16:
            raise ValueError(f"workers_per_gpu must be an integer 1..16, got {n!r}")
        changed = self._set("workers_per_gpu", n, source)
        if changed and self._engine is not None:
            self._engine.resize_workers(n)
        return changed

    def set_prestage(self, on: bool, source: str = "controller") -> bool:
        return self._set("prestage", bool(on), source)

    def set_b_g2(self, placement: str, source: str = "controller") -> bool:
        if placement not in PLACEMENTS:
            raise ValueError(f"b_g2 must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
        return self._set("b_g2", placement, source)

    def pause(self, source: str = "controller") -> bool:
        changed = self._set("paused", True, source)
        self._resume.clear()
        return changed

    def resume(self, source: str = "controller") -> bool:
        changed = self._set("paused", False, source)
        self._resume.set()
        return changed

    def toggle_pause(self, source: str = "controller") -> bool:
        return self.resume(source) if self.snapshot().paused else self.pause(source)

    def submit_sector(self, partitions: int | None = None, source: str = "controller") -> int:
        """Queue one more sector; returns its number."""
        if self._engine is None:
            raise RuntimeError("controller is not attached to an engine")
        return self._engine.submit_sector(partitions, source=source)

    def stop(self, source: str = "controller") -> None:
        if self._engine is not None:
            self._engine.request_stop(f"stopped ({source})")

    # --- one textual form for --switch and key bindings ------------------------------------
    def apply(self, spec: str, source: str = "switch") -> bool:
        """Apply 'single' | 'two-lock' | 'KNOB=VALUE' (see parse_switch)."""
        knob, value = parse_switch(spec)
        if knob == "lock_mode":
            return self.set_lock_mode(value, source)
        if knob == "mem_sync":
            return self.set_mem_sync(value, source)
        if knob == "workers_per_gpu":
            return self.set_workers_per_gpu(value, source)
        if knob == "prestage":
            return self.set_prestage(value, source)
        if knob == "b_g2":
            return self.set_b_g2(value, source)
        if knob == "paused":
            return self.pause(source) if value else self.resume(source)
        raise ValueError(knob)  # pragma: no cover


_BOOL = {"on": True, "true": True, "1": True, "yes": True, "off": False, "false": False, "0": False, "no": False}
SWITCH_HELP = ("single | two-lock | stream | device | pause | resume | lock_mode=single|two-lock | "
               "mem_sync=device|stream | workers_per_gpu=N | prestage=on|off | b_g2=cpu|gpu | paused=on|off")


def parse_switch(spec: str) -> tuple[str, Any]:
    """'two-lock' -> ('lock_mode','two-lock'); 'mem_sync=stream' -> ('mem_sync','stream'); ...

    Raises ValueError naming the allowed values."""
    s = spec.strip()
    low = s.lower()
    if low in LOCK_MODES:
        return "lock_mode", low
    if low in MEM_SYNCS:
        return "mem_sync", low
    if low in ("pause", "resume"):
        return "paused", low == "pause"
    if "=" not in s:
        raise ValueError(f"unknown switch {spec!r}; use {SWITCH_HELP}")
    k, v = (x.strip() for x in s.split("=", 1))
    k = k.replace("-", "_").lower()
    v_low = v.lower()
    if k in ("lock_mode", "mode"):
        if v_low not in LOCK_MODES:
            raise ValueError(f"lock_mode must be one of {', '.join(LOCK_MODES)}, got {v!r}")
        return "lock_mode", v_low
    if k == "mem_sync":
        if v_low not in MEM_SYNCS:
            raise ValueError(f"mem_sync must be one of {', '.join(MEM_SYNCS)}, got {v!r}")
        return "mem_sync", v_low
    if k in ("workers_per_gpu", "workers"):
        try:
            n = int(v)
        except ValueError:
            raise ValueError(f"workers_per_gpu must be an integer 1..16, got {v!r}") from None
        if not 1 <= n <= 16:
            raise ValueError(f"workers_per_gpu must be an integer 1..16, got {v!r}")
        return "workers_per_gpu", n
    if k in ("prestage", "paused"):
        if v_low not in _BOOL:
            raise ValueError(f"{k} must be on or off, got {v!r}")
        return k, _BOOL[v_low]
    if k == "b_g2":
        if v_low not in PLACEMENTS:
            raise ValueError(f"b_g2 must be one of {', '.join(PLACEMENTS)}, got {v!r}")
        return "b_g2", v_low
    raise ValueError(f"unknown knob {k!r}; use {SWITCH_HELP}")
