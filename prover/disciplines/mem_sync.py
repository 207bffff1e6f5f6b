"""What the `mem_sync` knob's values do, one strategy each, registered by name (as the
disciplines are): what a pre-stage runs before its allocation and how it finds room.

    device   cudaDeviceSynchronize + pool trim (flow.device_sync: recorded, with whom it waited
             behind), then look once: the seed's serialisation under a two-lock `mem`
    stream   stream-ordered only, no device-global call: wait for room (bounded)

The knob's values are `names()`; a value with no strategy here cannot run (config validation,
the controller and `--switch` refuse it, prover/knobs.py `runs`). A new one is a class here
and a `register` line.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Protocol


class GpuFlow(Protocol):
    """What a strategy uses of the flow (a part of prover.disciplines.base.GpuFlow)."""

    def device_sync(self, s: Any) -> None: ...
    def prestage_wait_s(self) -> float: ...


Section = Any  # prover.disciplines.base.Section (its `dev`): base imports this module


class MemSync(ABC):
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for --help and docs

    @abstractmethod
    def inside(self, flow: GpuFlow, s: Section) -> None:
        """Before an upload under locks that exclude every other GPU section (single, narrow)."""

    @abstractmethod
    def room(self, flow: GpuFlow, s: Section, need: int) -> str:
        """Make or wait for room for a pre-stage of `need` bytes under `mem` (two-lock): ""
        when there is room, else why not (the fallback's reason)."""


class Device(MemSync):
    name = "device"
    summary = "device sync + pool trim inside mem (the seed)"

    def inside(self, flow: GpuFlow, s: Section) -> None:
        flow.device_sync(s)

    def room(self, flow: GpuFlow, s: Section, need: int) -> str:
        flow.device_sync(s)
        dev = s.dev
        if dev.free_room() >= need:
            return ""
        return (f"no room after device sync + pool trim: {dev.free_room() >> 20} MiB free "
                f"of {dev.budget >> 20} MiB budget, {need >> 20} MiB needed")


class Stream(MemSync):
    name = "stream"
    summary = "stream-ordered only"

    def inside(self, flow: GpuFlow, s: Section) -> None:
        pass

    def room(self, flow: GpuFlow, s: Section, need: int) -> str:
        if s.dev.wait_room(need, flow.prestage_wait_s()):
            return ""
        return f"no room within {flow.prestage_wait_s():g}s (stream-ordered wait)"


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
