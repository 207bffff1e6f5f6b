"""Host memory in the fold: bytes by owner (the proving key, each worker's buffers), the
pinned share, the budget (the host_ram_budget knob) and the workers it holds back.

The state's `host_ram` is one of these (its concept: CONCEPT below)."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.world import World
from prover.knobs import KNOBS


@dataclass
class HostRamState:
    total: int = 0  # the host's physical memory (0: not told)
    modelled: bool = True  # sizes scaled to the modelled size (sim), or the real arrays
    log2: int = 0
    owners: dict[str, dict[str, int]] = field(default_factory=dict)  # owner -> name -> bytes
    pinned: dict[tuple[str, str], int] = field(default_factory=dict)  # (owner, name) -> page-locked bytes
    waiters: dict[str, tuple[float, int]] = field(default_factory=dict)  # worker -> (since, bytes needed)
    waits: int = 0  # times a worker was held back
    wait_total: float = 0.0
    max_wait: float = 0.0
    peak: int = 0

    @property
    def used(self) -> int:
        return sum(sum(n.values()) for n in self.owners.values())

    @property
    def pinned_bytes(self) -> int:
        return sum(self.pinned.values())

    def keys(self) -> dict[str, int]:
        """Key owner ("key 2^N"; "key" in older recordings) -> bytes, largest key first."""
        held = {o: sum(n.values()) for o, n in self.owners.items() if is_key(o)}
        return dict(sorted(held.items(), key=lambda kv: -kv[1]))

    def circuits(self) -> int:
        """The circuits' bytes (each held by its key's owner under the name `circuit`)."""
        return sum(n.get("circuit", 0) for o, n in self.owners.items() if is_key(o))

    def by_kind(self) -> dict[str, int]:
        """key (every size together), workers (their buffers together), in that order; for the bar."""
        key = sum(self.keys().values())
        return {"key": key, "workers": self.used - key}

    def workers_held(self) -> int:
        return sum(1 for o in self.owners if not is_key(o) and any(self.owners[o].values()))


def is_key(owner: str) -> bool:
    """A proving key's owner: "key 2^N" (the key ring), or "key" (recordings from before it)."""
    return owner == "key" or owner.startswith("key ")


def budget_of(knobs: dict[str, str]) -> int:
    """The budget from the fold's knob text (bytes, as RunStarted and ModeChange write it),
    read by the knob's one parse; 0 (none) where a recording has something else."""
    try:
        return KNOBS["host_ram_budget"].parse(knobs.get("host_ram_budget", "0"))
    except ValueError:
        return 0


def host_ram_info(h: HostRamState, e: ev.HostRamInfo, w: World) -> None:
    h.total, h.modelled, h.log2 = e.total_bytes, e.modelled, e.log2


def host_ram(h: HostRamState, e: ev.HostRam, w: World) -> None:
    names = h.owners.setdefault(e.owner, {})
    if e.bytes:
        names[e.name] = e.bytes
    else:
        names.pop(e.name, None)
        if not names:
            del h.owners[e.owner]
    if e.pinned and e.bytes:
        h.pinned[(e.owner, e.name)] = e.bytes
    else:
        h.pinned.pop((e.owner, e.name), None)
    h.peak = max(h.peak, h.used)


def host_ram_wait(h: HostRamState, e: ev.HostRamWait, w: World) -> None:
    h.waiters[e.worker] = (e.t, e.need)
    h.waits += 1
    w.note("warn", f"{e.worker} held back: host RAM {e.need >> 20} MiB needed, {max(0, e.free) >> 20} MiB "
                   f"free of the {e.budget >> 20} MiB budget", e)


def host_ram_admit(h: HostRamState, e: ev.HostRamAdmit, w: World) -> None:
    h.waiters.pop(e.worker, None)
    h.wait_total += e.wait
    h.max_wait = max(h.max_wait, e.wait)


# bounded by what is in flight: copied whole for the view
CONCEPT = Concept("host_ram", HostRamState, {ev.HostRamInfo: host_ram_info, ev.HostRam: host_ram,
                                             ev.HostRamWait: host_ram_wait, ev.HostRamAdmit: host_ram_admit},
                  view=lambda h, now: copy.deepcopy(h))


class HostRamSummary(BaseModel):
    """Host memory over the run (`summary`): modelled or native, peak against the budget."""

    modelled: bool
    log2: int
    total: int = Field(description="the host's physical memory")
    budget: int = Field(description="host_ram_budget at the end (0: none)")
    peak: int = Field(description="most bytes held at once (key + workers' buffers)")
    key: int = Field(description="proving key host bytes at the end (every size hot then; circuits apart)")
    circuits: int = Field(0, description="the circuits' bytes at the end (their matrices)")
    pinned: int = Field(description="page-locked bytes at the end")
    waits: int = Field(description="times a worker was held back for host RAM")
    wait_total: float
    wait_max: float
    waiting_at_end: int


def summarize_host_ram(h: HostRamState, knobs: dict[str, str]) -> HostRamSummary | None:
    if not h.owners and not h.peak and not h.total:
        return None  # a recording from before host memory was recorded
    return HostRamSummary(modelled=h.modelled, log2=h.log2, total=h.total, budget=budget_of(knobs), peak=h.peak,
                          key=h.by_kind()["key"] - h.circuits(), circuits=h.circuits(), pinned=h.pinned_bytes,
                          waits=h.waits, wait_total=h.wait_total, wait_max=h.max_wait, waiting_at_end=len(h.waiters))
