"""A concept of the fold: one figure's state, how it is made, the events that change it and
the copy of it the UI reads, declared once and registered (as the lock disciplines are,
prover/disciplines/).

    Concept(name, make, handlers, view, tick)

`name` is the state's attribute that holds the concept's sub-state; `make()` makes it for a
new state; `handlers[EventType](own, event, world)` folds one event into it, `own` being the
sub-state and `world` the small surface of the rest of the fold (prover/fold/world.py);
`view(own, now)` is the copy the UI may keep while the fold goes on (share what never changes
once made, copy the rest); `tick(own, t, world)` runs before the handlers of an event at t
once it is due, and returns the next time it is (history closes its buckets there). A concept with no sub-state of its own (`make` None)
gets the world as `own`.

The registry keeps the dispatch table the model's `apply` reads: for each event type, every
registered concept's handler for it, in registration order (prover/fold/__init__.py says
the order and why). Leaf module: it imports nothing of the fold.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

Handler = Callable[[Any, Any, Any], None]  # (own sub-state, event, world)
View = Callable[[Any, float], Any]  # (own sub-state, the fold's time) -> the UI's copy
Tick = Callable[[Any, float, Any], float]  # (own sub-state, the event's time, world) -> when next due

CORE = ""  # the name of the core concept: its sub-state is the model's own fields (the state itself)


@dataclass(frozen=True)
class Concept:
    name: str
    make: Callable[[], Any] | None
    handlers: Mapping[type, Handler] = field(default_factory=dict)
    view: View | None = None  # None only where `make` is None (nothing of its own to copy)
    tick: Tick | None = None


_REGISTRY: dict[str, Concept] = {}
# event type -> ((the state's attribute holding the handler's own sub-state, CORE for the state
# itself), handler), ...): mutated in place, so the model's reference stays live
DISPATCH: dict[type, tuple[tuple[str, Handler], ...]] = {}
TICKS: list[tuple[str, Tick]] = []


def register(c: Concept) -> Concept:
    """Add a concept (a second one of the same name is refused); its handlers run after those
    registered before it."""
    if c.name in _REGISTRY and _REGISTRY[c.name] is not c:
        raise ValueError(f"two fold concepts named {c.name!r}")
    if c.make is not None and c.view is None:
        raise ValueError(f"fold concept {c.name!r} keeps a sub-state but says no way to copy it for the view")
    _REGISTRY[c.name] = c
    _rebuild()
    return c


def unregister(name: str) -> None:
    """Remove a concept (tests that register a probe take it out again)."""
    _REGISTRY.pop(name, None)
    _rebuild()


def _rebuild() -> None:
    table: dict[type, list[tuple[str, Handler]]] = {}
    for c in _REGISTRY.values():
        for t, h in c.handlers.items():
            table.setdefault(t, []).append((_own(c), h))
    DISPATCH.clear()
    DISPATCH.update({t: tuple(hs) for t, hs in table.items()})
    TICKS[:] = [(_own(c), c.tick) for c in _REGISTRY.values() if c.tick is not None]


def _own(c: Concept) -> str:
    return c.name if c.make is not None else CORE


def concepts() -> tuple[Concept, ...]:
    return tuple(_REGISTRY.values())


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)
