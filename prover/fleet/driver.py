"""The fleet's driver: one scheduler and one event stream over many host engines on Ray.

    FleetEngine(config, cluster="local:3", sinks=[...]).start()

It has the one-host Engine's public face (start, controller, stop/drain/wait, finished,
add_sink/remove_sink), so `run`, `record`, the dashboard and the recorder take either. One
driver thread loops every `poll_s`:
  poll   every host's batch of events (one actor call per host per round, in parallel),
         merge them in time order, hand them to the sinks, and learn from them: PartitionDone
         frees the GPU's slot, VramSample gives the free budget, ModeChange the worker count
  place  waiting partitions on GPUs (prover.fleet.scheduler: free budget, queue depth, a
         bound on pending work per GPU) and send each host its batch
  watch  the nodes: a new node gets a host (a late joiner gets work at the next placing); a
         host whose actor died (RayActorError) or whose node is gone is dropped, its pending
         partitions queued again at the front (HostLeft lost=True, then PartitionQueued) and
         anything it may still report ignored, so nothing is lost or counted twice.
"""
from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from prover import events as ev
from prover.config import RunConfig
from prover.device.profiles import get_profile
from prover.fleet.control import FleetController
from prover.fleet.held import Held
from prover.fleet.host import Assignment, HostInfo
from prover.fleet.scheduler import Scheduler
from prover.fleet import knob_send
from prover.knobs import KNOBS
from prover.events.bus import EventBus, Sink
from prover.pipeline.control.controller import Knobs
from prover.pipeline.engine import resolve_auto_knobs
from prover.pipeline.run_handle import RunHandle
from prover.pipeline.queue.work_queue import LOOKAHEAD_SECTORS, sector_due
from prover.placement import Placement

NODE_CHECK_S = 1.0
START_TIMEOUT_S = 180.0


@dataclass
class Host:
    name: str
    node: str
    actor: Any
    info: HostInfo | None = None
    pending: list[tuple[str, Any, str]] = field(default_factory=list)  # knob changes made while it started


@dataclass
class _Part:
    part: str
    sector: int
    index: int
    instance: int


class FleetEngine(RunHandle):
    def __init__(self, config: RunConfig, cluster: str, sinks: list[Sink] | None = None, *,
                 depth: int = 1, poll_s: float = 0.05) -> None:
        from prover.fleet.cluster import Cluster

        self.config, self.spec, self.poll_s = config, cluster, poll_s
        self.bus = EventBus(sinks, time.monotonic, in_order=True)  # t = 0: the fleet's construction
        self._plock = threading.RLock()
        self.knob_lock = threading.RLock()  # knob changes, spawns and joins in one order (fleet/knob_send.py)
        self.sched = Scheduler(depth)
        self.hosts: dict[str, Host] = {}
        self._starting: dict[str, tuple[Any, Host, Any]] = {}  # name -> (start ref, host, node)
        self._nodes_seen: set[str] = set()
        self._next_gpu = 0
        self._parts: dict[str, _Part] = {}
        self._waiting: deque[str] = deque()
        self._done: set[str] = set()
        self._next_sector = self._next_instance = self._queued_total = 0
        self.requeued = 0
        self._bounded = config.sectors is not None
        self._sectors_left = config.sectors  # the run's sectors not queued yet; None: no end
        self._stop, self._draining, self._finished = threading.Event(), threading.Event(), threading.Event()
        self._stop_reason = "stopped"
        self._started = False
        # ray.init wants the main thread (signal handlers): the cluster starts (or is joined)
        # here, so a bad --cluster or a cluster that cannot start is a ClusterError at once
        self.cluster: Any = Cluster(cluster, config.backend)
        self.t0_wall = time.time()
        self.bus.restart_clock()
        self.profile = get_profile(config.profile)
        self.controller = FleetController(self, Knobs.from_config(config))
        self._thread: threading.Thread | None = None
        self.held = Held()  # what each host holds, closed in the stream when it is lost

    # --- events ------------------------------------------------------------------------------
    def now(self) -> float:
        return self.bus.now()

    def emit(self, cls: type, **fields: Any) -> Any:
        return self.bus.emit(cls, **fields)

    def _forward(self, events: list[Any]) -> None:
        self.bus.forward(events)

    @property
    def sink_failures(self) -> int:
        return self.bus.sink_failures

    def add_sink(self, fn: Sink) -> None:
        self.bus.add_sink(fn)

    def remove_sink(self, fn: Sink) -> None:
        self.bus.remove_sink(fn)

    # --- what a knob send reads (prover/fleet/knob_send.py) ------------------------------------
    def joined(self) -> dict[str, Host]:
        with self._plock:
            return dict(self.hosts)

    def starting(self) -> list[Host]:
        return [h for _, h, _ in list(self._starting.values())]

    # --- life cycle ----------------------------------------------------------------------------
    def start(self) -> "FleetEngine":
        if self._started:
            raise RuntimeError("fleet already started")
        self._started = True
        self.t0_wall = time.time()
        self.bus.restart_clock()
        self._thread = threading.Thread(target=self._run, name="fleet-driver", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float | None = 30.0, drain: bool = False, reason: str | None = None) -> bool:
        if not self._started:
            return True
        if drain:
            self._draining.set()
            self._finished.wait(timeout)
        self.request_stop(reason or ("done (drained)" if drain else "stopped"))
        return self._finished.wait(None if timeout is None else max(timeout, 60.0))

    def request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()

    # --- the driver thread -------------------------------------------------------------------
    def _run(self) -> None:
        reason = None
        try:
            self._start_hosts()
            self._top_up()
            last_check = time.monotonic()
            while not self._stop.is_set():
                self._poll_round()
                if time.monotonic() - last_check >= NODE_CHECK_S:
                    last_check = time.monotonic()
                    self._watch_nodes()
                self._check_starting()
                self._place()
                self._check_end()
                self._stop.wait(self.poll_s)
        except Exception as exc:
            reason = f"error: {type(exc).__name__}: {exc}"
            self.error = str(exc)
            if not self.bus.ended and self._started_run:
                self.emit(ev.Note, level="error", text=f"fleet failed: {exc}\n{traceback.format_exc(limit=4)}")
        finally:
            self._shutdown(reason or self._stop_reason)

    _started_run = False
    error: str | None = None  # why the fleet could not run (e.g. the cluster did not start)

    def _start_hosts(self) -> None:
        """Run started now (t=0); each node's host joins once its engine is up (HostJoined)."""
        here = self.cluster.ray.get_runtime_context().get_node_id()
        nodes = sorted((n for n in self.cluster.nodes() if n.alive), key=lambda n: n.node_id != here)
        cfg = self.config
        backend = "sim" if cfg.backend == "sim" or not any(n.gpus for n in nodes) else "cuda"
        if cfg.b_g2 == "auto":  # resolved once for the fleet, as one engine does, and given to every host
            self.config = cfg = resolve_auto_knobs(cfg, backend)
            self.controller.preset("b_g2", cfg.b_g2)
        self.emit(ev.RunStarted, backend=backend, simulated=backend == "sim", profile=self.profile.name,
                  proved_log2=cfg.constraints_log2, modelled_log2=cfg.modelled_log2 or self.profile.modelled_log2,
                  gpus=0, config={**cfg.public_dict(), "cluster": self.spec})
        self._started_run = True
        with self.knob_lock:  # every first host spawned before a knob change goes out: it reaches all alike
            for n in nodes:  # h0 is the driver's node
                self._spawn(n)
        for name, (ref, host, _) in list(self._starting.items()):
            host.info = self.cluster.ray.get(ref, timeout=START_TIMEOUT_S)
            self._joined(host)
        self._starting.clear()
        if cfg.class_gpus:  # fleet-wide GPU numbers: checked now the hosts have joined
            try:
                self.controller.place(cfg.class_gpus, "config")
            except ValueError as exc:
                self.controller.preset("class_gpus", "")
                self.emit(ev.Note, level="warn", text=f"{exc}; placing without it")

    def _host_config(self, node: Any) -> tuple[dict[str, Any], int]:
        """(the host's RunConfig dict, GPUs Ray reserves for it): sim GPUs as configured; on
        the cuda backend, the node's GPUs (Ray sets CUDA_VISIBLE_DEVICES, numbered from 0; on a
        local cluster each node has one, which its host pins: Cluster.device_of)."""
        k = self.controller.snapshot()  # a late joiner starts with the fleet's knobs as they are now
        cfg = {**self.config.public_dict(), **{name: getattr(k, name) for name in KNOBS}, "class_gpus": ""}  # the driver places
        if self.config.backend == "sim" or node.gpus == 0:
            return {**cfg, "backend": "sim" if self.config.backend != "cuda" else "cuda"}, 0
        return {**cfg, "gpus": node.gpus}, node.gpus

    def _spawn(self, node: Any) -> None:
        with self.knob_lock:  # its knobs read and its start registered with no change in between
            self._spawn_locked(node)

    def _spawn_locked(self, node: Any) -> None:
        self._nodes_seen.add(node.node_id)
        cfg, num_gpus = self._host_config(node)
        name = f"h{len(self._nodes_seen) - 1}"
        n = cfg["gpus"] if isinstance(cfg["gpus"], int) else len(cfg["gpus"])
        actor = self.cluster.spawn_host(node, num_gpus, name, node.node_id[:8], cfg, self._next_gpu, self.t0_wall,
                                        cuda_device=self.cluster.device_of.get(node.node_id))
        self._next_gpu += n
        host = Host(name=name, node=node.node_id, actor=actor)
        self._starting[name] = (actor.start.remote(), host, node)

    def _joined(self, h: Host) -> None:
        i = h.info
        assert i is not None
        with self.knob_lock:  # the changes made while it started go out before any made after
            with self._plock:
                self.hosts[h.name] = h
                self.sched.add_host(h.name, i.gpu_offset, i.gpus, i.workers_per_gpu, i.budget)
            self.emit(ev.HostJoined, host=h.name, node=i.node, gpus=i.gpus, gpu_offset=i.gpu_offset)
            knob_send.catch_up(h)

    def _check_starting(self) -> None:
        """Late joiners: a host whose start() has answered joins the fleet now."""
        ray = self.cluster.ray
        for name, (ref, host, _) in list(self._starting.items()):
            ready, _ = ray.wait([ref], timeout=0)
            if not ready:
                continue
            try:
                host.info = ray.get(ref)
            except Exception as exc:
                del self._starting[name]
                self.emit(ev.Note, level="warn", text=f"host {name} did not start: {exc}")
                continue
            self._joined(host)  # then out of _starting: a change made meanwhile reaches it one way or the other
            del self._starting[name]

    def _watch_nodes(self) -> None:
        nodes = self.cluster.nodes()
        alive = {n.node_id for n in nodes if n.alive}
        for n in nodes:
            if n.alive and n.node_id not in self._nodes_seen and not self._draining.is_set():
                self._spawn(n)
        for h in list(self.hosts.values()):
            if h.node not in alive:
                self._lose(h.name, "node gone")

    def _poll_round(self) -> None:
        ray = self.cluster.ray
        from ray.exceptions import GetTimeoutError, RayActorError

        refs = {name: h.actor.poll.remote() for name, h in self.hosts.items()}
        batch: list[Any] = []
        for name, ref in refs.items():
            try:
                batch += ray.get(ref, timeout=30)
            except RayActorError as exc:
                self._lose(name, f"actor died: {type(exc).__name__}")
            except GetTimeoutError:
                continue
        if batch:
            batch.sort(key=lambda e: e.t)
            for e in batch:  # one by one: a loss found mid-batch comes after the events before it
                if self._learn(e):
                    self._forward([e])

    def _learn(self, e: Any) -> bool:
        """Update the driver from one host event; False drops it (a stale or second report)."""
        k = e.kind
        if e.host not in self.hosts:
            return False  # a host already dropped as lost: its partitions were requeued
        if k == "partition_done":
            with self._plock:
                if e.part in self._done:
                    return False
                self._done.add(e.part)
                self.sched.done(e.part)
        elif k == "vram_sample":
            self.sched.vram(e.gpu, e.budget, e.pool_used)
        elif k == "mode_change" and e.knob == "workers_per_gpu":
            self.sched.set_workers(e.host, int(e.new))
        elif k in ("lock_acquired", "lock_released", "alloc", "free"):
            self.held.learn(e)
        elif k == "host_left" and not self._stop.is_set():  # its engine ended on its own: an error
            self._lose(e.host, f"engine ended: {e.reason}", emit_first=e)
            return False
        return True

    def _lose(self, name: str, reason: str, emit_first: Any = None) -> None:
        """Drop host `name`: its own last event first (`emit_first`, e.g. the HostLeft its
        engine sent when it ended), then a release / free for every lock and buffer it held
        (reason host_lost: the file alone then ends with nothing held), then HostLeft lost=True
        and its partitions queued again."""
        with self._plock:
            h = self.hosts.pop(name, None)
            if h is None:
                return
            lost = self.sched.remove_host(name)
            self.requeued += len(lost)
            self._waiting.extendleft(reversed(lost))
        if emit_first is not None:
            self._forward([emit_first])
        closing = {"lock_released": ev.LockReleased, "free": ev.Free}
        for kind, fields in self.held.closing(name, self.now()):
            self.emit(closing[kind], host=name, **fields)
        self.emit(ev.HostLeft, host=name, reason=reason, lost=True, requeued=lost)
        for p in lost:
            q = self._parts[p]
            self.emit(ev.PartitionQueued, part=p, sector=q.sector, index=q.index)
        try:
            self.cluster.ray.kill(h.actor)
        except Exception:  # already gone
            pass

    def _place(self) -> None:
        if self._draining.is_set():
            return
        batches: dict[str, list[Assignment]] = {}
        with self._plock:
            self._top_up()
            while self._waiting:
                slot = self.sched.place(self._waiting[0])
                if slot is None:
                    break
                q = self._parts[self._waiting.popleft()]
                batches.setdefault(slot.host, []).append(
                    Assignment(part=q.part, sector=q.sector, index=q.index, instance=q.instance, gpu=slot.gpu))
                if not self._waiting:  # a wide fleet takes more than the lookahead in one round
                    self._top_up()
        for name, parts in batches.items():
            self.hosts[name].actor.assign.remote(parts)  # a dead actor shows at the next poll

    def _top_up(self) -> None:
        """Queue the run's next sectors while fewer than LOOKAHEAD_SECTORS' partitions wait, as a
        host's WorkQueue does (--sectors 10^20 queued at once would never start, and grow without bound)."""
        with self._plock:
            while not self._stop.is_set() and sector_due(len(self._waiting), self.config.partitions, self._sectors_left):
                if self._sectors_left is not None:
                    self._sectors_left -= 1
                self.submit_sector(None, source="config" if self._bounded else "auto")

    def _check_end(self) -> None:
        with self._plock:
            if self._bounded and not self._sectors_left and len(self._done) >= self._queued_total:
                self.request_stop("done")
            elif self._draining.is_set() and self.sched.pending == 0:
                self.request_stop("done (drained)")

    def _shutdown(self, reason: str) -> None:
        try:
            if self.cluster is not None:
                ray = self.cluster.ray
                refs = {n: h.actor.stop.remote() for n, h in self.hosts.items()}
                for name, ref in refs.items():
                    try:
                        self._forward([e for e in ray.get(ref, timeout=60) if self._learn(e)])
                    except Exception as exc:
                        self.emit(ev.Note, level="warn", text=f"host {name} did not stop cleanly: {exc}")
                left = sorted(set(self._parts) - self._done)
                if left and self._started_run:
                    self.emit(ev.Note, level="warn", text=f"{len(left)} partition(s) not finished at stop")
            if self._started_run:
                self.emit(ev.RunEnded, reason=reason)
        finally:
            if self.cluster is not None:
                self.cluster.shutdown()
            self._finished.set()

    # --- the controller's calls -------------------------------------------------------------
    def submit_sector(self, partitions: int | None, source: str = "controller") -> int:
        n = partitions or self.config.partitions
        with self._plock:
            sector = self._next_sector
            self._next_sector += 1
            self._queued_total += n
            self.emit(ev.SectorSubmitted, sector=sector, partitions=n, source=source)
            for i in range(n):
                q = _Part(part=f"s{sector}p{i}", sector=sector, index=i, instance=self._next_instance)
                self._next_instance += 1
                self._parts[q.part] = q
                self._waiting.append(q.part)
                self.emit(ev.PartitionQueued, part=q.part, sector=sector, index=i)
        return sector

    def cordon(self, gpu: int, on: bool, source: str) -> str:
        """Keep new work off fleet GPU `gpu` (or let it back); recorded as JobAction on its host."""
        with self._plock:
            host, _ = self.sched.cordon(gpu, on)  # ValueError naming the fleet's GPUs
            pending = len(self.sched.slots[gpu].pending)
        detail = (f"gpu{gpu} on {host} cordoned: no new work, {pending} pending there finish" if on
                  else f"gpu{gpu} on {host} uncordoned")
        self.emit(ev.JobAction, action="cordon" if on else "uncordon", target=f"gpu{gpu}", source=source,
                  detail=detail, host=host)
        return detail

    def place(self, pl: Placement, source: str) -> bool:
        """Placement (prover/placement.py) for the scheduler, checked against the GPUs of the
        hosts joined now; recorded as a ModeChange of the driver. True if it changed."""
        with self._plock:
            pl.check(sorted(self.sched.slots))
            old = self.sched.placement.spec()
            self.sched.placement = pl
        if old == pl.spec():
            return False
        self.emit(ev.ModeChange, knob="class_gpus", old=old, new=pl.spec(), source=source)
        return True

    def send_control(self, knob: str, value: Any, source: str, target: str | None) -> None:
        """One knob to every host, one host or one GPU (prover/fleet/knob_send.py); the caller
        holds knob_lock."""
        knob_send.send(self, knob, value, source, target)
