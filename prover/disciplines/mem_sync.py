"""What the `mem_sync` knob's values do, one strategy each, registered by name (as the
disciplines are): what a pre-stage runs before its allocation and how it finds room.

    device   cudaDeviceSynchronize + pool trim (Section.device_sync: recorded, with whom it waited
             behind), then look once: the seed's serialisation under a two-lock `mem`
    stream   stream-ordered only, no device-global call: wait for room (bounded)

The knob's values are `names()`; a value with no strategy here cannot run (config validation,
the controller and `--switch` refuse it, prover/knobs.py `runs`). A new one is a class here
and a `register` line.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from prover.disciplines.blocks import Section


class MemSync(ABC):
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for --help and docs

    @abstractmethod
    def inside(self, s: Section) -> None:
        """Before an upload under locks that exclude every other GPU section (single, narrow)."""

    @abstractmethod
    def room(self, s: Section) -> str:
        """Make or wait for a partition's room for a pre-stage under `mem` (two-lock), as the GPU's
        room grants it: "" when there is room, else why not (the fallback's reason)."""


class Device(MemSync):
    name = "device"
    summary = "device sync + pool trim inside mem (the seed)"

    def inside(self, s: Section) -> None:
        s.device_sync()

    def room(self, s: Section) -> str:
        s.device_sync()
        room = s.room(None)  # looked at once
        return "" if room.ok else f"no room after device sync + pool trim: {room.why}"


class Stream(MemSync):
    name = "stream"
    summary = "stream-ordered only"

    def inside(self, s: Section) -> None:
        pass

    def room(self, s: Section) -> str:
        room = s.room(s.prestage_wait_s)
        return "" if room.ok else f"no room within {s.prestage_wait_s:g}s (stream-ordered wait): {room.why}"


_REGISTRY: dict[str, MemSync] = {}


def register(m: MemSync) -> MemSync:
    if m.name in _REGISTRY and type(_REGISTRY[m.name]) is not type(m):
        raise ValueError(f"two mem_sync strategies named {m.name!r}")
    _REGISTRY[m.name] = m
    return m


for _m in (Device(), Stream()):
    register(_m)


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def get(name: str) -> MemSync:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"mem_sync {name!r} has no strategy; registered: {', '.join(_REGISTRY)}") from None


def summaries() -> dict[str, str]:
    return {n: m.summary for n, m in _REGISTRY.items()}
