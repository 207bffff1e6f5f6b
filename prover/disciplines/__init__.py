"""The lock disciplines, one strategy per module, registered by name.

The `lock_mode` knob's values are `names()`; a value with no strategy here cannot run
(config validation refuses it). The locks every discipline declares, merged in one global
order (`lock_order()`), are what the LockSet makes, the events carry and the dashboard,
trace export, metrics and invariant checks show. A new discipline is a module here, a
`register` line below and its test.
"""
from __future__ import annotations

from typing import Callable

from prover.disciplines.base import Discipline, Regime
from prover.disciplines.blocks import Section, Work
from prover.disciplines.narrow import Narrow
from prover.disciplines.reserved import Reserved
from prover.disciplines.single import Single
from prover.disciplines.two_lock import TwoLock

__all__ = ["COMPUTE", "Discipline", "Regime", "Section", "Work", "create", "get", "lock_order", "names", "regime",
           "register"]

COMPUTE = "compute"  # the lock whose holder's kernels own the GPU: at most one holder per GPU

_REGISTRY: dict[str, type[Discipline]] = {}


def register(cls: type[Discipline]) -> type[Discipline]:
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"two disciplines named {cls.name!r}")
    _REGISTRY[cls.name] = cls
    return cls


for _cls in (Single, Narrow, TwoLock, Reserved):
    register(_cls)


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def get(name: str) -> type[Discipline]:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"lock_mode {name!r} has no discipline; registered: {', '.join(_REGISTRY)}") from None


def regime(value: Callable[[str], object]) -> Regime:
    """The regime of the knobs `value(name)` reads (Discipline.regime of their lock_mode's
    discipline): what the GPU's room keys its epochs by and the fold its drains. A lock_mode
    this build has no discipline for (an older or newer recording) is its lock_mode alone."""
    mode = str(value("lock_mode"))
    try:
        return get(mode).regime(value)
    except ValueError:
        return (("lock_mode", mode),)


def create() -> dict[str, Discipline]:
    """One instance of every discipline (per engine: a discipline may keep per-GPU state)."""
    return {n: cls() for n, cls in _REGISTRY.items()}


def lock_order() -> tuple[str, ...]:
    """Every declared lock, in the one global order all disciplines agree on (each one's
    `locks` is a sub-sequence of it); ValueError if two disciplines disagree."""
    order: list[str] = []
    for cls in _REGISTRY.values():
        pos = -1
        for name in cls.locks:
            if name in order:
                i = order.index(name)
                if i < pos:
                    raise ValueError(f"discipline {cls.name!r} takes {name!r} out of the global lock order {order}")
                pos = i
            else:
                pos += 1
                order.insert(pos, name)
    return tuple(order)


def summaries() -> dict[str, str]:
    return {n: cls.summary for n, cls in _REGISTRY.items()}
