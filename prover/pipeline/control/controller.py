"""The live controller: thread-safe knobs a UI, a CLI `--switch` or a test can turn mid-run.

Every change emits ModeChange(knob, old, new, source) at once; workers read a consistent
`Knobs` snapshot when they enter their next GPU section, so a switch applies there (a section
already running finishes under the knobs it started with). The knobs and their allowed values
are prover.knobs' table; the controller reaches the engine only through `EngineHooks`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

from prover import events as ev
from prover.knob_set import parse_knob_set
from prover.knobs import KNOBS, parse_switch
from prover.pipeline.queue.jobs import ACTIONS as JOB_ACTIONS
from prover.pipeline.control.knob_facade import KnobFacade

__all__ = ["Controller", "EngineHooks", "Knobs", "parse_switch"]


@dataclass(frozen=True)
class Knobs:
    lock_mode: str
    mem_sync: str
    workers_per_gpu: int
    prestage: bool
    b_g2: str
    vram_budget: int | str
    paused: bool
    host_ram_budget: int = 0
    class_gpus: str = ""  # placement (prover/placement.py): "" every class on every GPU
    host_threads: int = 0  # a partition's host threads (prover/host/threads.py): 0 auto
    abc: str = "auto"  # where a/b/c are made (set at start, resolved: host | gpu)

    @classmethod
    def from_config(cls, config: Any) -> "Knobs":
        return cls(**{name: getattr(config, name) for name in KNOBS})


class EngineHooks(Protocol):
    """What the controller may ask of the engine it steers (the engine implements it)."""

    def resize_workers(self, n: int) -> None: ...

    def submit_sector(self, partitions: int | None = None, source: str = "controller", cls: str | None = None) -> int: ...

    def request_stop(self, reason: str) -> None: ...

    def job_action(self, action: str, target: str, source: str) -> str: ...

    def set_vram_budget(self, spec: int | str) -> tuple[int, int]: ...

    def check_host_ram_budget(self, value: int) -> None: ...

    def check_class_gpus(self, value: str) -> None: ...


GPU_KNOBS = ("lock_mode", "mem_sync", "prestage", "b_g2")  # read per GPU section, so settable per GPU


def _live(knob: str) -> None:
    """ValueError for a knob set at start only (prover/knobs.py `live=False`)."""
    k = KNOBS[knob]
    if not k.live:
        raise ValueError(f"{knob} is set when a run starts ({k.flag}), not while it runs")


def _s(v: Any) -> str:
    return str(v)  # the same spelling RunStarted.config gets in the fold (True/False for booleans)


class Controller(KnobFacade):
    def __init__(self, knobs: Knobs, emit: Callable[..., Any], engine: EngineHooks | None = None) -> None:
        self._knobs = knobs
        self._emit = emit
        self._engine = engine
        self._lock = threading.Lock()
        self._per_gpu: dict[int, Knobs] = {}  # GPUs whose GPU-section knobs differ from the host's
        self._resume = threading.Event()
        if not knobs.paused:
            self._resume.set()

    # --- reading --------------------------------------------------------------------------
    def snapshot(self, gpu: int | None = None) -> Knobs:
        """The knobs in force (for one GPU: with its own settings, where it has any)."""
        with self._lock:
            return self._knobs if gpu is None else self._per_gpu.get(gpu, self._knobs)

    def snapshot_then(self, gpu: int, then: Callable[[Knobs], Any]) -> Knobs:
        """The GPU's knobs and `then(knobs)` in one step under the lock every ModeChange is
        emitted under: an event `then` emits is ordered exactly against the changes (a GPU
        section's SectionBegan, issue 33)."""
        with self._lock:
            k = self._per_gpu.get(gpu, self._knobs)
            then(k)
            return k

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
    def set(self, knob: str, value: Any, source: str = "controller", **where: Any) -> bool:
        """Set one knob (checked against prover.knobs); True if it changed. With `gpu=N`, only
        that GPU's sections (GPU_KNOBS only); without, the host's and every GPU's."""
        gpu: int | None = where.pop("gpu", None)
        if where:
            raise TypeError(f"Controller.set takes gpu=, not {', '.join(where)}")
        if knob not in KNOBS:
            raise ValueError(f"unknown knob {knob!r}; known: {', '.join(KNOBS)}")
        _live(knob)
        value = KNOBS[knob].check(value)
        self._guard(knob, value)
        if gpu is not None:
            return self._set_gpu(knob, value, source, gpu)
        if KNOBS[knob].hook is not None:
            return self._set_by_engine(knob, value, source)
        return self._set_plain({knob: value}, source)

    def set_many(self, knobs: dict[str, Any], source: str = "controller") -> bool:
        """Several knobs as one change (a knob set, prover/knob_set.py): every value checked
        before any is set, the plain ones swapped under one hold of the lock, so no GPU section
        begins between them under half the set; their ModeChanges come out together (the fold
        opens one segment for them). True if any changed."""
        for k in knobs:
            if k not in KNOBS:
                raise ValueError(f"unknown knob {k!r}; known: {', '.join(KNOBS)}")
            _live(k)
        checked = {k: KNOBS[k].check(v) for k, v in knobs.items()}
        for k, v in checked.items():
            self._guard(k, v)
        changed = self._set_plain({k: v for k, v in checked.items() if KNOBS[k].hook is None}, source)
        for k, v in checked.items():
            if KNOBS[k].hook is not None:
                changed = self._set_by_engine(k, v, source) or changed
        return changed

    def _set_plain(self, knobs: dict[str, Any], source: str) -> bool:
        """Checked knobs the controller holds itself, in one step under the lock."""
        changed: list[str] = []
        with self._lock:
            for knob, value in knobs.items():
                self._per_gpu = {g: replace(k, **{knob: value}) for g, k in self._per_gpu.items()}
                old = getattr(self._knobs, knob)
                if old != value:
                    self._knobs = replace(self._knobs, **{knob: value})
                    self._emit(ev.ModeChange, knob=knob, old=_s(old), new=_s(value), source=source)
                    changed.append(knob)
        if "paused" in knobs:
            (self._resume.clear if knobs["paused"] else self._resume.set)()
        if "workers_per_gpu" in changed and self._engine is not None:
            self._engine.resize_workers(knobs["workers_per_gpu"])
        return bool(changed)

    def _guard(self, knob: str, value: Any) -> None:
        """The engine's refusal of a value the run cannot go on under (host_ram_budget below
        the key in use beside one worker), said on the dashboard too, then raised."""
        guard = KNOBS[knob].guard
        if guard is None or self._engine is None or not hasattr(self._engine, guard):
            return
        try:
            getattr(self._engine, guard)(value)
        except ValueError as exc:
            self._emit(ev.Note, level="warn", text=f"{knob} change refused: {exc}")
            raise

    def _set_gpu(self, knob: str, value: Any, source: str, gpu: int) -> bool:
        if knob not in GPU_KNOBS:
            raise ValueError(f"{knob} applies to a whole host, not one GPU (per GPU: {', '.join(GPU_KNOBS)})")
        with self._lock:
            base = self._per_gpu.get(gpu, self._knobs)
            old = getattr(base, knob)
            if old == value:
                return False
            self._per_gpu[gpu] = replace(base, **{knob: value})
            self._emit(ev.ModeChange, knob=knob, old=_s(old), new=_s(value), source=source, gpu=gpu)
        return True

    def _set_by_engine(self, knob: str, value: Any, source: str) -> bool:
        """A knob the engine applies (vram_budget: every device's budget, seen by the next
        reservation); the engine's refusal (too small for a partition, with the numbers) is
        said on the dashboard too, then raised."""
        k = KNOBS[knob]
        if self._engine is None:
            raise RuntimeError("controller is not attached to an engine")
        with self._lock:
            try:
                old, new = getattr(self._engine, k.hook or "")(value)
            except ValueError as exc:
                self._emit(ev.Note, level="warn", text=f"{knob} change refused: {exc}")
                raise
            self._knobs = replace(self._knobs, **{knob: value})
            self._per_gpu = {g: replace(kn, **{knob: value}) for g, kn in self._per_gpu.items()}
            if old == new:
                return False
            self._emit(ev.ModeChange, knob=knob, old=k.show(old), new=k.show(new), source=source)
        return True

    def submit_sector(self, partitions: int | None = None, source: str = "controller", cls: str | None = None) -> int:
        """Queue one more sector (of proof class `cls`: winning, window, c2); returns its number."""
        if self._engine is None:
            raise RuntimeError("controller is not attached to an engine")
        if cls is None:
            return self._engine.submit_sector(partitions, source=source)
        from prover.classes import proof_class

        return self._engine.submit_sector(partitions, source=source, cls=proof_class(cls).name)

    def job(self, action: str, target: str, source: str = "controller") -> str:
        """cancel s3p2 | cancel s3 | requeue s3p2 | cordon gpu1 | uncordon gpu1 (prover/pipeline/
        jobs.py); recorded as JobAction with its source. ValueError when there is nothing to act on."""
        if self._engine is None:
            raise RuntimeError("controller is not attached to an engine")
        from prover.pipeline.queue.jobs import parse_target

        kind, key = parse_target(action, target)
        detail = self._engine.job_action(action, target, source)
        self._emit(ev.JobAction, action=action, target=f"gpu{key}" if kind == "gpu" else target.strip().lower(),
                   source=source, detail=detail)
        return detail

    def stop(self, source: str = "controller") -> None:
        if self._engine is not None:
            self._engine.request_stop(f"stopped ({source})")

    def apply(self, spec: str, source: str = "switch") -> bool:
        """Apply a knob set ('single' | 'two-lock' | 'KNOB=VALUE[,KNOB=VALUE...]': prover/knob_set.py,
        e.g. 'lock_mode=two-lock,mem_sync=device', as one change) | 'submit[=CLASS]' |
        'cancel|requeue|cordon|uncordon=TARGET'."""
        name, _, value = spec.partition("=")
        if name.strip().lower() in JOB_ACTIONS:  # cancel=s3p2, ...; a bare "cancel" is told it needs a target
            self.job(name.strip().lower(), value, source)
            return True
        if name.strip().lower() == "submit":  # 'submit' | 'submit=winning': a sector of that class
            self.submit_sector(source=source, cls=value.strip() or None)
            return True
        return self.set_many(parse_knob_set(spec), source)
