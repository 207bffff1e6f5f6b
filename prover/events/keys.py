"""The proving keys' events (pipeline/keys/key_ring.py): a key made hot, a partition waiting for its
key, a key made cold. Part of the one event union in prover/events/."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from prover.bounds import Text  # free text, cut at MAX_TEXT_LEN
from prover.events.base import _Ev


class KeyLoad(_Ev):
    """A key made hot (pipeline/keys/key_ring.py): start (bytes counted), progress, end (ok False: failed)."""

    kind: Literal["key_load"] = "key_load"
    log2: int = Field(description="the key's circuit size proved")
    modelled_log2: int
    state: Literal["start", "progress", "end"]
    bytes: int = Field(0, ge=0, description="host bytes the key holds (modelled in sim)")
    frac: float = Field(0.0, ge=0.0, le=1.0)
    detail: Text = ""
    seconds: float | None = Field(None, ge=0.0)
    ok: bool = True
    worker: str | None = Field(None, description="the worker whose partition needed it (None: start-up)")
    device_bytes: int = Field(0, ge=0, description="at end: bytes of the key resident on a device (key_resident)")
    step: str | None = Field(None, description="progress: the set-up step (lagrange .. fixed_base_g2) it is about")
    step_s: float | None = Field(None, ge=0.0, description="progress: that step's seconds, when it ended")


class KeyWait(_Ev):
    """A partition waits for its key (loading, or room being made): start, then end (`wait`)."""

    kind: Literal["key_wait"] = "key_wait"
    log2: int
    worker: str
    part: str | None = None
    state: Literal["start", "end"]
    why: Text = Field("", description="loading | loader busy | making room")
    wait: float = Field(0.0, ge=0.0)


class KeyEvicted(_Ev):
    """A hot key with no partition in flight made cold for room (host and device copies go)."""

    kind: Literal["key_evicted"] = "key_evicted"
    log2: int
    bytes: int = Field(ge=0)
    reason: Text = ""
