"""Placement: which GPUs a proof class may run on (the `class_gpus` knob).

    class_gpus = "winning=1"        winning runs on GPU 1 only, and GPU 1 runs nothing else
                                    (a dedicated card: a WinningPoSt never waits behind C2 there)
    class_gpus = "winning=1:1"      winning runs on GPU 1 only; one worker of GPU 1 is kept for
                                    it (a reserved share), the others take any class, urgent first
    class_gpus = "winning=1+2,window=2:1"   several GPUs, several classes
    class_gpus = "off" (or "")      no placement: every class on every GPU (the default)

A class without a pin runs on every GPU no class is dedicated to. GPUs are numbered as in
the run's events (0..n-1 on one host; fleet-wide numbers in a fleet, whose driver places).
Pure: the queue (prover/pipeline/queue/work_queue.py), the fleet's scheduler and the UI call it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from prover.classes import BY_PRIORITY, CLASSES

ACCEPTS = "CLASS=GPU[+GPU...][:N],...|off"
_ENTRY = re.compile(r"^([a-z0-9_]+)=((?:gpu)?\d+(?:\+(?:gpu)?\d+)*)(?::(\d+))?$")


@dataclass(frozen=True)
class Pin:
    cls: str
    gpus: frozenset[int]
    reserve: int | None = None  # None: the GPUs are dedicated to their pinned classes; N: N workers kept


@dataclass(frozen=True)
class Placement:
    pins: tuple[Pin, ...] = ()
    _by_cls: dict[str, Pin] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_cls.update({p.cls: p for p in self.pins})

    def __bool__(self) -> bool:
        return bool(self.pins)

    def pin(self, cls: str) -> Pin | None:
        return self._by_cls.get(cls)

    def dedicated(self, gpu: int) -> frozenset[str]:
        """The classes a GPU is dedicated to (empty: it is not)."""
        return frozenset(p.cls for p in self.pins if p.reserve is None and gpu in p.gpus)

    def reserved(self, gpu: int) -> dict[str, int]:
        """class -> workers kept for it on `gpu`."""
        return {p.cls: p.reserve for p in self.pins if p.reserve is not None and gpu in p.gpus}

    def allowed(self, cls: str, gpu: int) -> bool:
        """May a partition of `cls` run on `gpu` at all?"""
        p = self.pin(cls)
        if p is not None:
            return gpu in p.gpus
        return not self.dedicated(gpu)

    def gpus_for(self, cls: str, gpus: list[int] | range) -> list[int]:
        return [g for g in gpus if self.allowed(cls, g)]

    def may_take(self, cls: str, gpu: int, workers: int, busy_by_cls: dict[str, int]) -> bool:
        """May a free worker of `gpu` (of `workers`, with `busy_by_cls` partitions in flight
        there by class) take a partition of `cls` now? A class with no share kept on this GPU
        leaves the kept workers free: it takes one only while the kept shares stay free."""
        if not self.allowed(cls, gpu):
            return False
        kept = self.reserved(gpu)
        if not kept or cls in kept:
            return True
        owed = sum(max(0, n - busy_by_cls.get(c, 0)) for c, n in kept.items())  # kept workers not in use by their class
        busy = sum(busy_by_cls.values())
        return workers - busy > owed

    def spec(self) -> str:
        return ",".join(f"{p.cls}={'+'.join(str(g) for g in sorted(p.gpus))}"
                        + ("" if p.reserve is None else f":{p.reserve}") for p in self.pins)

    def check(self, gpus: list[int] | range, workers: int | None = None) -> None:
        """ValueError unless every pinned GPU exists, every class has a GPU, and a kept share
        leaves a worker (with `workers` per GPU) or is the GPU's whole."""
        have = set(gpus)
        for p in self.pins:
            missing = sorted(p.gpus - have)
            if missing:
                names = ", ".join(f"gpu{g}" for g in sorted(have)) or "none"
                raise ValueError(f"class_gpus: {p.cls} pinned to gpu{missing[0]}, which this run does not have ({names})")
            if p.reserve is not None and workers is not None and p.reserve > workers:
                raise ValueError(f"class_gpus: {p.cls} keeps {p.reserve} workers, more than the {workers} a GPU has")
        for cls in BY_PRIORITY:
            if not self.gpus_for(cls, sorted(have)):
                raise ValueError(f"class_gpus: {cls} would have no GPU to run on (every GPU is dedicated to another class)")


NONE = Placement()


@lru_cache(maxsize=64)
def parse(text: str) -> Placement:
    """A Placement from its text (see the module's doc); ValueError naming class_gpus."""
    t = str(text).strip().lower().replace(" ", "")
    if t in ("", "off", "none"):
        return NONE
    pins: list[Pin] = []
    for entry in re.split(r"[,;]", t):
        m = _ENTRY.match(entry)
        if not m:
            raise ValueError(f"class_gpus: {entry!r} is not CLASS=GPU[+GPU...][:N] (e.g. winning=1 or winning=1:1)")
        cls, gpus, reserve = m.group(1), m.group(2), m.group(3)
        if cls not in CLASSES:
            raise ValueError(f"class_gpus: unknown proof class {cls!r}; known: {', '.join(BY_PRIORITY)}")
        if any(p.cls == cls for p in pins):
            raise ValueError(f"class_gpus: {cls} pinned twice")
        n = None if reserve is None else int(reserve)
        if n == 0:
            raise ValueError(f"class_gpus: {cls} keeps 0 workers; leave ':N' out for a dedicated GPU, or keep 1 or more")
        pins.append(Pin(cls, frozenset(int(g.removeprefix("gpu")) for g in gpus.split("+")), n))
    pins.sort(key=lambda p: BY_PRIORITY.index(p.cls))
    return Placement(tuple(pins))


def parse_spec(value: object) -> str:
    """The knob's one parse: its canonical text ("" for none); ValueError naming class_gpus."""
    if not isinstance(value, str):
        raise ValueError(f"class_gpus must be text like winning=1, got {value!r}")
    return parse(value).spec()


def show(value: object) -> str:
    return str(value) or "off"
