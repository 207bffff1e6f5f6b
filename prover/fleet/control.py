"""The fleet's controller: the one-host Controller's interface, with a target.

    fc.set_lock_mode("two-lock", source="key")                 # every host
    fc.set_mem_sync("stream", source="switch", target="h1")    # one host
    fc.set_prestage(False, target="gpu3")                      # one GPU (fleet number)
    fc.apply("h1:workers_per_gpu=2", source="switch")          # TARGET:SPEC in the text form

A change is validated here (the same errors as on one host), then sent to each targeted
host's engine, whose Controller emits the ModeChange (tagged with the host, and the GPU for a
per-GPU change), so every change is recorded where it took effect. Knob calls are
fire-and-forget to the actors: the driver never waits on a host for a key press.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prover.pipeline.controller import Knobs, parse_switch

if TYPE_CHECKING:  # pragma: no cover
    from prover.fleet.driver import FleetEngine

_METHOD = {"lock_mode": "set_lock_mode", "mem_sync": "set_mem_sync", "workers_per_gpu": "set_workers_per_gpu",
           "prestage": "set_prestage", "b_g2": "set_b_g2"}


def split_target(spec: str) -> tuple[str | None, str]:
    """'h1:two-lock' -> ('h1', 'two-lock'); 'gpu3:prestage=off' -> ('gpu3', ...); 'single' -> (None, 'single')."""
    head, sep, rest = spec.partition(":")
    if sep and "=" not in head and (head.startswith("h") or head.startswith("gpu") or head == "fleet"):
        return (None if head == "fleet" else head), rest
    return None, spec


class FleetController:
    def __init__(self, fleet: "FleetEngine", knobs: Knobs) -> None:
        self._fleet = fleet
        self._knobs = knobs

    def snapshot(self) -> Knobs:
        return self._knobs

    @property
    def knobs(self) -> Knobs:
        return self._knobs

    def _send(self, knob: str, value: Any, source: str, target: str | None) -> bool:
        args = [value]
        method = _METHOD.get(knob)
        if knob == "paused":
            method, args = ("pause" if value else "resume"), []
        assert method is not None
        self._fleet.send_control(method, args, source, target)
        changed = getattr(self._knobs, knob) != value
        if target is None:
            from dataclasses import replace

            self._knobs = replace(self._knobs, **{knob: value})
        return changed

    def _checked(self, knob: str, value: Any, source: str, target: str | None) -> bool:
        text = f"{knob}={'on' if value is True else 'off' if value is False else value}"
        k, v = parse_switch(text)  # the one-host validation, same messages
        return self._send(k, v, source, target)

    def set_lock_mode(self, mode: str, source: str = "controller", target: str | None = None) -> bool:
        return self._checked("lock_mode", mode, source, target)

    def set_mem_sync(self, v: str, source: str = "controller", target: str | None = None) -> bool:
        return self._checked("mem_sync", v, source, target)

    def set_workers_per_gpu(self, n: int, source: str = "controller", target: str | None = None) -> bool:
        if isinstance(n, bool) or not isinstance(n, int):
            raise ValueError(f"workers_per_gpu must be an integer 1..16, got {n!r}")
        return self._checked("workers_per_gpu", n, source, target)

    def set_prestage(self, on: bool, source: str = "controller", target: str | None = None) -> bool:
        return self._checked("prestage", bool(on), source, target)

    def set_b_g2(self, placement: str, source: str = "controller", target: str | None = None) -> bool:
        return self._checked("b_g2", placement, source, target)

    def pause(self, source: str = "controller", target: str | None = None) -> bool:
        return self._send("paused", True, source, target)

    def resume(self, source: str = "controller", target: str | None = None) -> bool:
        return self._send("paused", False, source, target)

    def toggle_pause(self, source: str = "controller", target: str | None = None) -> bool:
        return self.resume(source, target) if self._knobs.paused else self.pause(source, target)

    def submit_sector(self, partitions: int | None = None, source: str = "controller") -> int:
        return self._fleet.submit_sector(partitions, source=source)

    def stop(self, source: str = "controller") -> None:
        self._fleet.request_stop(f"stopped ({source})")

    def apply(self, spec: str, source: str = "switch", target: str | None = None) -> bool:
        """'single' | 'KNOB=VALUE', optionally prefixed 'h1:' / 'gpu3:' / 'fleet:' (see split_target)."""
        t, rest = split_target(spec)
        knob, value = parse_switch(rest)
        return self._send(knob, value, source, target if t is None else t)
