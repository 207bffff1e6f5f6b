"""Keys of several sizes in the fold (prover/pipeline/keys/key_ring.py): each size's state (cold,
loading with its progress, hot), bytes, loads and evictions, the proof classes that use it,
and the workers waiting for a key. The state's `keys` is one of these (its concept: CONCEPT
below). Recordings from before the ring have none (their one key is
in the host-RAM owners as `key`)."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.world import World

COLD, LOADING, HOT = "cold", "loading", "hot"
# recordings from before KeyLoad.device_bytes said a resident key's bytes only in the detail
_RESIDENT = re.compile(r"([0-9.]+) GiB resident on the GPU")


@dataclass
class KeyInfo:
    log2: int
    modelled_log2: int
    state: str = COLD
    bytes: int = 0  # host bytes it holds (or will hold: counted from the load's start)
    device_bytes: int = 0  # bytes resident on a device (key_resident), from the last load
    setup_steps: dict[str, float] = field(default_factory=dict)  # the last set-up's seconds a step
    frac: float = 0.0  # the load's progress
    detail: str = ""
    load_t0: float | None = None  # the load in progress began
    worker: str | None = None  # whose partition needed it (None: start-up)
    loads: int = 0
    load_seconds: float = 0.0  # all loads together
    load_max: float = 0.0
    evictions: int = 0
    failed: int = 0  # loads that failed or were refused (did not fit the budget)
    error: str = ""  # the last failure, in words


@dataclass
class KeysState:
    keys: dict[int, KeyInfo] = field(default_factory=dict)  # by proved log2
    classes: dict[str, int] = field(default_factory=dict)  # proof class -> the size its sectors prove
    waiters: dict[str, tuple[int, float, str]] = field(default_factory=dict)  # worker -> (log2, since, why)
    waits: int = 0
    wait_total: float = 0.0
    wait_max: float = 0.0

    def by_state(self, state: str) -> list[KeyInfo]:
        return [k for _, k in sorted(self.keys.items(), reverse=True) if k.state == state]

    @property
    def loading(self) -> list[KeyInfo]:
        return self.by_state(LOADING)

    def classes_of(self, log2: int) -> list[str]:
        return [c for c, k in self.classes.items() if k == log2]


def _key(ks: KeysState, log2: int, modelled: int) -> KeyInfo:
    k = ks.keys.get(log2)
    if k is None:
        k = ks.keys[log2] = KeyInfo(log2, modelled)
    return k


def key_load(ks: KeysState, e: ev.KeyLoad, w: World) -> None:
    k = _key(ks, e.log2, e.modelled_log2)
    if e.state == "start":
        k.state, k.load_t0, k.worker, k.frac, k.bytes = LOADING, e.t, e.worker, 0.0, e.bytes
    k.detail = e.detail or k.detail
    if e.state == "start":
        k.setup_steps = {}
    if e.state == "progress":
        k.frac = e.frac
        if e.step and e.step_s is not None:  # fixed_base_g1 runs once a G1 query: summed
            k.setup_steps[e.step] = k.setup_steps.get(e.step, 0.0) + e.step_s
    if e.state != "end":
        return
    k.load_t0, k.bytes = None, e.bytes or k.bytes
    if e.ok:
        k.state, k.frac, k.loads = HOT, 1.0, k.loads + 1
        k.device_bytes = e.device_bytes or _resident_in(e.detail)
        k.load_seconds += e.seconds or 0.0
        k.load_max = max(k.load_max, e.seconds or 0.0)
        if e.worker:  # the start-up step notes the run's own key
            w.note("info", f"key 2^{e.log2} hot: {e.detail} in {e.seconds or 0:.2f}s (for {e.worker})", e)
    else:
        k.state, k.frac = COLD, 0.0
        if e.detail == "stopped":  # the run stopped under the load: neither a failure nor news
            return
        k.failed, k.error = k.failed + 1, e.detail
        w.note("error", f"key 2^{e.log2}: {e.detail}", e)


def _resident_in(detail: str) -> int:
    m = _RESIDENT.search(detail or "")
    return int(float(m.group(1)) * 2**30) if m else 0


def key_evicted(ks: KeysState, e: ev.KeyEvicted, w: World) -> None:
    k = ks.keys.get(e.log2)
    if k is not None:
        k.state, k.evictions, k.frac = COLD, k.evictions + 1, 0.0
    w.note("info", f"key 2^{e.log2} evicted ({e.bytes >> 20} MiB): {e.reason}", e)


def key_wait(ks: KeysState, e: ev.KeyWait, w: World) -> None:
    if e.state == "start":
        ks.waiters[e.worker] = (e.log2, e.t, e.why)
        ks.waits += 1
        return
    ks.waiters.pop(e.worker, None)
    ks.wait_total += e.wait
    ks.wait_max = max(ks.wait_max, e.wait)


def sector_sizes(ks: KeysState, e: ev.SectorSubmitted, w: World) -> None:
    if e.log2 is not None:
        ks.classes[e.proof_class] = e.log2


CONCEPT = Concept("keys", KeysState, {ev.KeyLoad: key_load, ev.KeyEvicted: key_evicted, ev.KeyWait: key_wait,
                                      ev.SectorSubmitted: sector_sizes},
                  view=lambda ks, now: copy.deepcopy(ks))


class KeySummary(BaseModel):
    log2: int
    modelled_log2: int
    bytes: int = Field(description="host bytes of the key (modelled in sim)")
    device_bytes: int = Field(0, description="bytes resident on a device (key_resident; modelled in sim)")
    setup_steps: dict[str, float] = Field(default_factory=dict,
                                          description="the last set-up's seconds a step (lagrange .. fixed_base_g2)")
    classes: list[str] = Field(default_factory=list, description="proof classes whose sectors it proves")
    state_at_end: str
    loads: int
    load_mean_s: float
    load_max_s: float
    evictions: int
    failed: int = Field(description="loads failed or refused (did not fit the budget)")
    error: str = ""


class KeysSummary(BaseModel):
    """Keys by size over the run (`summary`): loads, evictions, and the waits for them."""

    sizes: list[KeySummary] = Field(description="largest first")
    loads: int
    evictions: int
    waits: int = Field(description="times a partition waited for its key")
    wait_total: float
    wait_max: float


def summarize_keys(k: KeysState) -> KeysSummary | None:
    if not k.keys:
        return None  # a recording from before the key ring
    sizes = [KeySummary(log2=i.log2, modelled_log2=i.modelled_log2, bytes=i.bytes, device_bytes=i.device_bytes,
                        setup_steps=dict(i.setup_steps), classes=k.classes_of(i.log2),
                        state_at_end=i.state, loads=i.loads, load_mean_s=i.load_seconds / i.loads if i.loads else 0.0,
                        load_max_s=i.load_max, evictions=i.evictions, failed=i.failed, error=i.error)
             for _, i in sorted(k.keys.items(), reverse=True)]
    return KeysSummary(sizes=sizes, loads=sum(i.loads for i in sizes), evictions=sum(i.evictions for i in sizes),
                       waits=k.waits, wait_total=k.wait_total, wait_max=k.wait_max)
