"""The controllers' convenience methods, defined once: `set_lock_mode(...)` ... `resume()`
over the one `set(knob, value, source, **where)` each controller face implements (the
engine's Controller, the fleet's FleetController with `target=`, attach's RemoteController),
and the `apply(spec, source)` each has, declared here so a caller holding any face may call it.
"""
from __future__ import annotations

from typing import Any


class KnobFacade:
    def set(self, knob: str, value: Any, source: str = "controller", **where: Any) -> bool:
        raise NotImplementedError  # pragma: no cover - every face has its own

    def apply(self, spec: str, source: str = "switch") -> bool:
        """A knob set, `submit` or a job action as one change (each face has its own)."""
        raise NotImplementedError  # pragma: no cover

    def set_lock_mode(self, mode: str, source: str = "controller", **where: Any) -> bool:
        return self.set("lock_mode", mode, source, **where)

    def set_mem_sync(self, v: str, source: str = "controller", **where: Any) -> bool:
        return self.set("mem_sync", v, source, **where)

    def set_workers_per_gpu(self, n: int, source: str = "controller", **where: Any) -> bool:
        return self.set("workers_per_gpu", n, source, **where)

    def set_prestage(self, on: bool, source: str = "controller", **where: Any) -> bool:
        return self.set("prestage", bool(on), source, **where)

    def set_b_g2(self, placement: str, source: str = "controller", **where: Any) -> bool:
        return self.set("b_g2", placement, source, **where)

    def set_vram_budget(self, spec: int | str, source: str = "controller", **where: Any) -> bool:
        """A size ('20GiB', bytes) or a scenario (card, two-prestage) per GPU."""
        return self.set("vram_budget", spec, source, **where)

    def pause(self, source: str = "controller", **where: Any) -> bool:
        return self.set("paused", True, source, **where)

    def resume(self, source: str = "controller", **where: Any) -> bool:
        return self.set("paused", False, source, **where)
