"""One fleet host: an engine fed from an Inbox, its events tagged and batched for the driver.

`HostRuntime` is a plain class (so it runs, and is tested, without Ray); the fleet wraps it
as a Ray actor pinned to one node (prover.fleet.cluster). The driver calls, all cheap:

    start() -> HostInfo              build + start the engine (its GPUs, workers, LockSets)
    assign([Assignment, ...])        put partitions on this host's per-GPU queues
    poll() -> list[Event]            every event since the last poll, in one batch
    control(knob, value, source, gpu)  a knob change on this host's engine (or one of its GPUs)
    stop(drain) -> list[Event]       stop the engine; the last batch (ends with HostLeft)

Events leave here already in fleet terms: `host` set, `t` on the driver's clock (both on one
wall clock: the fleet assumes hosts' clocks agree to within a frame), GPU numbers shifted by
the host's gpu_offset and worker names renamed to match (g0w1 on a host at offset 4 is g4w1),
so one fold keys every GPU and lane without knowing about hosts; a note's text is prefixed
with the host and its "gpuN" renumbered the same way. The host's own RunStarted is
dropped (the driver's HostJoined says the same) and its RunEnded becomes HostLeft.
"""
from __future__ import annotations

import re
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict

from prover import events as ev
from prover.config import RunConfig


class Assignment(BaseModel):
    """One partition placed by the driver's scheduler on one GPU (fleet-wide number)."""

    model_config = ConfigDict(frozen=True)
    part: str
    sector: int
    index: int
    instance: int
    gpu: int


class HostInfo(BaseModel):
    host: str
    node: str
    gpus: int
    gpu_offset: int
    workers_per_gpu: int
    budget: int
    pid: int
    cuda_device: str | None = None  # the GPU a local cuda cluster's host pinned (CUDA_VISIBLE_DEVICES)
    pci_bus_id: str | None = None  # the GPU its CUDA device 0 turned out to be (cuda backend)


_GPU_WORD = re.compile(r"\bgpu(\d+)\b")


def rename_worker(name: str, offset: int) -> str:
    """g{local}w{n} -> g{local+offset}w{n}; other names unchanged."""
    if offset and name.startswith("g"):
        i = name.find("w", 1)
        if i > 1 and name[1:i].isdigit():
            return f"g{int(name[1:i]) + offset}{name[i:]}"
    return name


def tag(e: Any, host: str, offset: int, shift: float) -> Any:
    """The event in fleet terms (see the module docstring)."""
    upd: dict[str, Any] = {"host": host, "t": max(0.0, e.t + shift)}
    d = e.__dict__
    g = d.get("gpu")
    if g is not None:
        upd["gpu"] = g + offset
    for f in ("worker", "owner", "behind_worker"):
        w = d.get(f)
        if w is not None:
            upd[f] = rename_worker(w, offset)
    if isinstance(d.get("owners"), dict):  # VramMark: live bytes by owner
        upd["owners"] = {rename_worker(w, offset): n for w, n in d["owners"].items()}
    if isinstance(e, ev.Note):  # the engine's own words say gpu0 on every host: name the host, number fleet-wide
        upd["text"] = f"{host}: " + _GPU_WORD.sub(lambda m: f"gpu{int(m[1]) + offset}", e.text)
    return e.model_copy(update=upd)


class HostRuntime:
    def __init__(self, host: str, node: str, config: dict[str, Any], gpu_offset: int, t0_wall: float,
                 phases: Any = None, cuda_device: str | None = None) -> None:
        if cuda_device is not None:  # before anything in this (fresh actor) process touches CUDA
            from prover.fleet.gpus import pin

            pin(cuda_device)
        self.cuda_device = cuda_device
        from prover.pipeline.engine import Engine

        cfg = RunConfig.model_validate({**config, "sectors": None})
        self.host, self.node, self.offset, self.t0_wall = host, node, gpu_offset, t0_wall
        self._buf: list[Any] = []
        self._lock = threading.Lock()
        self._shift = 0.0
        self.engine = Engine(cfg, sinks=[self._sink], phases=phases, external=True)
        self.inbox = self.engine.inbox
        self.config = cfg

    def _sink(self, e: Any) -> None:
        if e.kind == "run_started":
            return
        if e.kind == "run_ended":
            e = ev.HostLeft(t=e.t, reason=e.reason)
        tagged = tag(e, self.host, self.offset, self._shift)
        with self._lock:
            self._buf.append(tagged)

    # --- the driver's calls -------------------------------------------------------------
    def start(self) -> HostInfo:
        import os

        self._shift = time.time() - self.t0_wall  # engine t=0 is now, on the driver's clock
        self.engine.start()
        c, eng = self.config, self.engine
        # a scenario ("card") in bytes; native "card" is the device's memory, unknown until it opens
        nbytes = eng.sizing.bytes(c.vram_budget) or eng.profile.card_bytes
        pci = None
        if eng.backend == "cuda":
            from prover.fleet.gpus import pci_bus_id

            pci = pci_bus_id()
        return HostInfo(host=self.host, node=self.node, gpus=c.n_gpus, gpu_offset=self.offset,
                        workers_per_gpu=c.workers_per_gpu, budget=nbytes, pid=os.getpid(),
                        cuda_device=os.environ.get("CUDA_VISIBLE_DEVICES") if self.cuda_device else None,
                        pci_bus_id=pci)

    def assign(self, parts: list[Assignment]) -> int:
        from prover.pipeline.queue.part import Partition

        for a in parts:
            self.inbox.put(a.gpu - self.offset, Partition(id=a.part, sector=a.sector, index=a.index,
                                                          instance=a.instance, queued_t=self.engine.clock()))
        return len(parts)

    def poll(self) -> list[Any]:
        with self._lock:
            out, self._buf = self._buf, []
        return out

    def control(self, knob: str, value: Any, source: str, gpu: int | None = None) -> bool:
        """A knob change on this host (`gpu`: this host's own number for one GPU)."""
        return self.engine.controller.set(knob, value, source, gpu=gpu)

    def stop(self, timeout: float = 30.0) -> list[Any]:
        self.engine.stop(timeout=timeout, reason="fleet stopped")
        self.engine.wait(timeout)
        return self.poll()
