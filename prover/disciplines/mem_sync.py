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
    def room(self, s: Any, wait_s: float | None) -> Any: ...  # the GPU's admission authority (.ok, .why)


Section = Any  # prover.disciplines.base.Section (its `dev`): base imports this module


class MemSync(ABC):
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for --help and docs

    @abstractmethod
    def inside(self, flow: GpuFlow, s: Section) -> None:
        """Before an upload under locks that exclude every other GPU section (single, narrow)."""

    @abstractmethod
    def room(self, flow: GpuFlow, s: Section) -> str:
        """Make or wait for a partition's room for a pre-stage under `mem` (two-lock), as the GPU's
        admission authority grants it: "" when there is room, else why not (the fallback's reason)."""


class Device(MemSync):
    name = "device"
    summary = "device sync + pool trim inside mem (the seed)"

    def inside(self, flow: GpuFlow, s: Section) -> None:
        flow.device_sync(s)

    def room(self, flow: GpuFlow, s: Section) -> str:
        flow.device_sync(s)
        room = flow.room(s, None)  # looked at once
        return "" if room.ok else f"no room after device sync + pool trim: {room.why}"


class Stream(MemSync):
    name = "stream"
    summary = "stream-ordered only"

    def inside(self, flow: GpuFlow, s: Section) -> None:
        pass

    def room(self, flow: GpuFlow, s: Section) -> str:
        room = flow.room(s, flow.prestage_wait_s())
        return "" if room.ok else f"no room within {flow.prestage_wait_s():g}s (stream-ordered wait): {room.why}"


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
