"""Whose VRAM a GPU section found no room in: the words an OOM is explained with.

A switch no longer causes one (pipeline/gpu/room.py keeps the old and new knobs' sections
apart, and takes a partition's room whole). An OOM that still happens (injected, a leak, a
budget below what is held, or a bug in that protocol) is retried by the flow, and its Note
names the holders: their sections, the knobs those began under, the locks they hold, so an
operator can tell a switch's section from a leak. The Oom event's `cause` says which it was.
"""
from __future__ import annotations

from dataclasses import dataclass

from prover.device.budget import gib
from prover.disciplines import COMPUTE


@dataclass(frozen=True)
class Holder:
    """A worker holding VRAM when another's allocation was refused."""

    worker: str
    nbytes: int
    part: str | None  # the partition of the GPU section it is in (None: not in one)
    mode: str | None  # the lock_mode that section runs under
    locks: tuple[str, ...]  # the locks it holds now


def _section(h: Holder, mode: str, now: str) -> str:
    """The holder's section against this one's (`mode`) and the discipline in force (`now`):
    a switch either way (reserved -> single or single -> reserved) is named the way it went."""
    if h.mode is None:
        return "outside a GPU section"
    if h.mode == mode:
        return f"a {h.mode} section"
    if h.mode != now:
        return f"a {h.mode} section begun before the switch to {now}"
    return f"a {h.mode} section begun after the switch from {mode}"


def _one(h: Holder, mode: str, now: str) -> str:
    where = f"{h.worker} {h.part}" if h.part else h.worker
    section = _section(h, mode, now)
    locks = "holding " + " and ".join(h.locks) if h.locks else "holding no lock"
    return f"{gib(h.nbytes)} held by {where} ({section}, {locks})"


def explain(mode: str, my_locks: tuple[str, ...], holders: list[Holder], now: str | None = None) -> str:
    """One clause for an OomError: who held the budget, and why this section cannot wait for
    them (they free it only after `compute`, which it holds). `mode`: this section's lock_mode;
    `now`: the one in force (default: the same). Empty when nobody else held any (an
    injected OOM, or the room was taken and given back in between)."""
    held = [h for h in holders if h.nbytes > 0]
    if not held:
        return ""
    text = "; ".join(_one(h, mode, now or mode) for h in held)
    if COMPUTE in my_locks and not any(COMPUTE in h.locks for h in held):
        text += f": freed only after {COMPUTE}, which this section holds, so it lets go"
    return text
