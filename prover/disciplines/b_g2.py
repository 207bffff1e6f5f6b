"""Where the `b_g2` knob's values run B over G2 (the G2 MSM), registered by name (as the
disciplines are):

    cpu   after the GPU section, on the worker's CPU, beside the next holder's kernels
          (SupraSeal's and cuzk's Phase 12 placement)
    gpu   inside the compute section, after the G1 MSMs, on the worker's stream

The knob's values are `names()`; a value with no placement here cannot run (config
validation, the controller and `--switch` refuse it). `auto`, the default, is resolved to one
of these at the run's start (prover/pipeline/engine.py: gpu where the kernels load).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Placement:
    name: str
    in_compute: bool  # run inside the compute section (else after the GPU section, on the CPU)
    summary: str


CPU = Placement("cpu", False, "after the GPU section, on the CPU")
GPU = Placement("gpu", True, "inside the compute section, after the G1 MSMs")

_REGISTRY: dict[str, Placement] = {}


def register(p: Placement) -> Placement:
    if p.name in _REGISTRY and _REGISTRY[p.name] != p:
        raise ValueError(f"two b_g2 placements named {p.name!r}")
    _REGISTRY[p.name] = p
    return p


for _p in (CPU, GPU):
    register(_p)


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


AUTO = "auto"  # the knob's default: resolved to a placement at the run's start


def get(name: str) -> Placement:
    """The placement of a b_g2 value. `auto` left unresolved (a flow driven without an engine,
    as some tests do) runs on the CPU, as it always has."""
    if name == AUTO:
        return CPU
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"b_g2 {name!r} has no placement; registered: {', '.join(_REGISTRY)}") from None
