"""The fleet's controller: the one-host Controller's interface, with a target.

    fc.set_lock_mode("two-lock", source="key")                  # every host
    fc.set_mem_sync("stream", source="switch", target="h1")     # one host
    fc.set_prestage(False, target="gpu3")                       # one GPU (its fleet number)
    fc.apply("h1:workers_per_gpu=2", source="switch")           # TARGET:SPEC in the text form
    fc.job("cordon", "gpu3", source="key")                       # no new work on gpu3 (the scheduler)

A change is checked here (prover.knobs: the same errors as on one host), then sent to each
targeted host's engine, whose Controller emits the ModeChange (tagged with the host, and the
GPU for a one-GPU change), so every change is recorded where it took effect. Calls to the
actors are fire-and-forget: the driver never waits on a host for a key press.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from prover.knob_set import parse_knob_set
from prover.knobs import KNOBS
from prover.pipeline.control.controller import Knobs
from prover.pipeline.control.knob_facade import KnobFacade
from prover.pipeline.queue.jobs import ACTIONS as JOB_ACTIONS
from prover.placement import Placement


class Fleet(Protocol):
    """What the controller steers (prover/fleet/driver.py's FleetEngine): named here, so the
    driver imports its controller and not the other way round."""

    knob_lock: Any  # an RLock: knob changes, spawns and joins in one order

    def send_control(self, knob: str, value: Any, source: str, target: str | None) -> None: ...

    def place(self, pl: Placement, source: str) -> bool: ...

    def submit_sector(self, partitions: int | None, source: str = "controller") -> int: ...

    def request_stop(self, reason: str) -> None: ...

    def cordon(self, gpu: int, on: bool, source: str) -> str: ...


def split_target(spec: str) -> tuple[str | None, str]:
    """'h1:two-lock' -> ('h1', 'two-lock'); 'gpu3:prestage=off' -> ('gpu3', ...); 'single' -> (None, 'single')."""
    head, sep, rest = spec.partition(":")
    if sep and "=" not in head and (head.startswith(("h", "gpu")) or head == "fleet"):
        return (None if head == "fleet" else head), rest
    return None, spec


class FleetController(KnobFacade):
    def __init__(self, fleet: Fleet, knobs: Knobs) -> None:
        self._fleet = fleet
        self._knobs = knobs  # the fleet-wide values (what a late joiner starts with)

    def snapshot(self, gpu: int | None = None) -> Knobs:
        return self._knobs

    @property
    def knobs(self) -> Knobs:
        return self._knobs

    def preset(self, knob: str, value: Any) -> None:
        """The fleet-wide value before any host starts (a resolved "auto"): nothing is sent."""
        self._knobs = replace(self._knobs, **{knob: KNOBS[knob].check(value)})

    def set(self, knob: str, value: Any, source: str = "controller", target: str | None = None) -> bool:
        """Set one knob on the fleet (target None or 'fleet'), a host ('h1') or a GPU ('gpu3');
        True if the fleet-wide value changed (a host or GPU target: True)."""
        if knob not in KNOBS:
            raise ValueError(f"unknown knob {knob!r}; known: {', '.join(KNOBS)}")
        value = KNOBS[knob].check(value)
        target = None if target == "fleet" else target
        if knob == "class_gpus":  # the driver places: its scheduler takes it, fleet-wide numbers
            if target is not None:
                raise ValueError("class_gpus applies to the whole fleet (fleet-wide GPU numbers), not one host or GPU")
            return self.place(value, source)
        with self._fleet.knob_lock:  # sent and made the fleet's value with no host spawned or joined between
            self._fleet.send_control(knob, value, source, target)
            if target is not None:
                return True
            changed = getattr(self._knobs, knob) != value
            self._knobs = replace(self._knobs, **{knob: value})
        return changed

    def place(self, value: str, source: str) -> bool:
        """Placement for the fleet's scheduler (prover/placement.py), checked against the GPUs
        of the hosts joined now; recorded as a ModeChange of the driver. True if it changed."""
        from prover.placement import parse

        pl = parse(value)
        changed = self._fleet.place(pl, source)  # ValueError naming the fleet's GPUs: nothing set
        self._knobs = replace(self._knobs, class_gpus=pl.spec())
        return changed

    def submit_sector(self, partitions: int | None = None, source: str = "controller") -> int:
        return self._fleet.submit_sector(partitions, source=source)

    def stop(self, source: str = "controller") -> None:
        self._fleet.request_stop(f"stopped ({source})")

    def job(self, action: str, target: str, source: str = "controller") -> str:
        """cordon / uncordon a GPU by its fleet-wide number (gpu3 or 3): the driver's scheduler
        places nothing new there and what is pending there finishes (prover/fleet/scheduler.py);
        recorded as JobAction. cancel / requeue are refused on a fleet: its hosts refuse them
        (the driver owns the queue) and the driver does not do them yet."""
        from prover.pipeline.queue.jobs import ACTIONS, parse_target

        if action not in ACTIONS:
            raise ValueError(f"unknown job action {action!r}; use {', '.join(ACTIONS)}")
        if action not in ("cordon", "uncordon"):
            raise ValueError(f"{action} on a fleet: not yet (cordon and uncordon a GPU are)")
        _, gpu = parse_target(action, target)
        return self._fleet.cordon(gpu, action == "cordon", source)

    def apply(self, spec: str, source: str = "switch", target: str | None = None) -> bool:
        """A knob set ('single' | 'KNOB=VALUE[,KNOB=VALUE...]', prover/knob_set.py), optionally prefixed 'h1:' / 'gpu3:' / 'fleet:' (see split_target);
        'cordon=gpu3' / 'uncordon=3' (a job action, fleet-wide GPU number)."""
        name, _, value = spec.partition("=")
        if name.strip().lower() in JOB_ACTIONS:  # a bare "cordon" is told it needs a GPU
            self.job(name.strip().lower(), value, source)
            return True
        t, rest = split_target(spec)
        knobs = parse_knob_set(rest)  # every value checked before any is sent
        with self._fleet.knob_lock:  # the set's knobs go out together, no host spawned or joined between
            changed = [self.set(k, v, source, target if t is None else t) for k, v in knobs.items()]
        return any(changed)
