"""Ray plumbing for the fleet: a local cluster on this machine or an existing one, its nodes,
and one host actor pinned to each node. Ray is imported here only (never on one host).

    --cluster local:N   ray.cluster_utils.Cluster: N nodes on loopback (a head + N-1), each
                        with a small object store; the driver connects to the head
    --cluster ADDRESS   ray.init(address=ADDRESS): the nodes that cluster has (and gets later)

Ray's CPU/GPU accounting is bookkeeping only: a host actor asks for no CPU (num_cpus=0) and,
on a real cluster with the cuda backend, for all of its node's GPUs so Ray sets
CUDA_VISIBLE_DEVICES for it; the locks and the VRAM budget stay real, inside the engine.
A local cluster on the cuda backend gives node i GPU i of this machine (prover.fleet.gpus:
each node declares one GPU, its host actor pins that GPU itself; more nodes than GPUs is refused).
"""
from __future__ import annotations

import logging
import os
import re
import signal
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from prover.fleet.errors import ClusterError  # noqa: F401 - the door's name for it (prover.ClusterError)

NODE_STORE_BYTES = 100 * 1024**2  # object store per local node: events are small


@dataclass
class NodeInfo:
    node_id: str
    gpus: int  # Ray's GPU resource on the node (0 on a CPU-only node)
    alive: bool


def parse_cluster(spec: str) -> tuple[str, int | str]:
    """'local:3' -> ('local', 3); 'ray://h:10001' or 'h:6379' or 'auto' -> ('address', spec)."""
    s = spec.strip()
    m = re.fullmatch(r"local:(\d+)", s)
    if m:
        n = int(m.group(1))
        if not 1 <= n <= 16:
            raise ClusterError(f"--cluster {spec!r}: local clusters have 1..16 nodes")
        return "local", n
    if s.startswith("local"):
        raise ClusterError(f"--cluster {spec!r}: use local:N (N nodes on this machine) or a Ray address")
    if not s:
        raise ClusterError("--cluster: empty; use local:N or a Ray address (host:port, ray://host:port, auto)")
    return "address", s


def _loopback() -> None:
    """Keep a local cluster on 127.0.0.1: Ray otherwise resolves 127.0.0.1 to the machine's
    outward address when it connects. Its switch for that is this variable, read when
    ray_constants is imported (set here, before, for this process and its raylets' workers)."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    consts = sys.modules.get("ray._private.ray_constants")
    if consts is not None:  # Ray was imported already (a second fleet in one process)
        setattr(consts, "ENABLE_RAY_CLUSTER", False)  # a module found at run time: ModuleType declares no such name


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ClusterError("--cluster needs Ray: pip install 'c2tui[fleet]'") from None
    return ray


@contextmanager
def _callers_sigterm(ray: Any) -> Iterator[None]:
    """SIGTERM stays the caller's while Ray starts and after: the head node Ray starts in this
    process and ray.init each set their own SIGTERM handler (kill Ray's processes, sys.exit(1)),
    so `record --cluster` ended on SIGTERM with 1 and a Ray log line where every command says 3,
    its recording closed whole. Ray's processes still go: at exit (its atexit hook) or at our
    shutdown. Ray's setter is set aside while it starts, and the caller's handler put back after
    (in case Ray set it some other way). Main thread only (signals are set there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    utils = getattr(getattr(ray, "_private", None), "utils", None)
    setter = getattr(utils, "set_sigterm_handler", None)
    old = signal.getsignal(signal.SIGTERM)
    if utils is not None and setter is not None:
        utils.set_sigterm_handler = lambda handler: None
    try:
        yield
    finally:
        if utils is not None and setter is not None:
            utils.set_sigterm_handler = setter
        if old is not None:
            signal.signal(signal.SIGTERM, old)


class Cluster:
    """The Ray side of one fleet run: connect, list nodes, spawn host actors, shut down."""

    def __init__(self, spec: str, backend: str = "sim") -> None:
        self.kind, arg = parse_cluster(spec)
        # local:N on cuda: node i's CUDA_VISIBLE_DEVICES (checked before Ray starts anything)
        self.devices: list[str] = []
        self.device_of: dict[str, str] = {}  # Ray node id -> the GPU its host pins
        if self.kind == "local" and backend == "cuda":
            from prover.fleet.gpus import local_devices, machine_gpus

            self.devices = local_devices(int(arg), *machine_gpus())
        if self.kind == "local":
            _loopback()
        self.ray = import_ray()
        self.local: Any = None  # ray.cluster_utils.Cluster for local:N
        self._init(arg)

    def _node_args(self) -> dict[str, Any]:
        # one GPU of bookkeeping per node on cuda (so the driver gives its host one GPU)
        return dict(num_cpus=1, num_gpus=1 if self.devices else 0, object_store_memory=NODE_STORE_BYTES,
                    node_ip_address="127.0.0.1")

    def _init(self, arg: int | str) -> None:
        ray = self.ray
        env = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # actors import prover from here
        if self.devices:
            from prover.fleet.gpus import NOSET_ENV

            env[NOSET_ENV] = os.environ[NOSET_ENV] = "1"  # the host actors pin their GPU themselves
        with _callers_sigterm(ray):
            try:
                self._start(ray, arg, env)
            except ClusterError:
                raise
            except KeyboardInterrupt:  # a stop signal while it starts: what started goes, then the caller's exit
                self.shutdown()
                raise
            except Exception as exc:
                self.shutdown()
                raise ClusterError(f"--cluster: cannot start or reach the Ray cluster: {exc}") from None

    def _start(self, ray: Any, arg: int | str, env: dict[str, str]) -> None:
        if self.kind == "local":
            from ray.cluster_utils import Cluster as RayCluster

            self.local = RayCluster(initialize_head=True, connect=False,
                                    head_node_args={**self._node_args(), "include_dashboard": False})
            self._claim(self.local.head_node)
            for _ in range(int(arg) - 1):
                self.add_local_node(wait=False)
            self.local.wait_for_nodes()
            ray.init(address=self.local.address, _node_ip_address="127.0.0.1", log_to_driver=False,
                     logging_level=logging.WARNING, runtime_env={"env_vars": env})
        else:
            ray.init(address=str(arg), log_to_driver=False, logging_level=logging.WARNING)

    def add_local_node(self, wait: bool = True) -> Any:
        """One more node of a local cluster (a late joiner in tests); returns Ray's node."""
        if self.devices and len(self.device_of) >= len(self.devices):
            raise ClusterError(f"no GPU left for another local node: {len(self.devices)} node(s) have the "
                               f"{len(self.devices)} GPU(s) this cluster was given")
        with _callers_sigterm(self.ray):  # each node Ray starts here sets its SIGTERM handler
            return self._claim(self.local.add_node(wait=wait, **self._node_args()))

    def _claim(self, node: Any) -> Any:
        """Node i of a local cuda cluster gets the i-th GPU."""
        if self.devices:
            self.device_of[node.node_id] = self.devices[len(self.device_of)]
        return node

    def nodes(self) -> list[NodeInfo]:
        return [NodeInfo(node_id=n["NodeID"], gpus=int(n.get("Resources", {}).get("GPU", 0)), alive=bool(n["Alive"]))
                for n in self.ray.nodes()]

    def spawn_host(self, node: NodeInfo, num_gpus: int, *args: Any, **kwargs: Any) -> Any:
        """A HostRuntime actor pinned to `node` (hard affinity: it never moves, it dies with it)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from prover.fleet.host import HostRuntime

        actor_cls = self.ray.remote(HostRuntime)
        return actor_cls.options(
            num_cpus=0, num_gpus=num_gpus, max_restarts=0, max_concurrency=4,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node.node_id, soft=False),
        ).remote(*args, **kwargs)

    def shutdown(self) -> None:
        ray = self.ray
        try:
            if ray.is_initialized():
                ray.shutdown()
        finally:
            if self.local is not None:
                self.local.shutdown()
                self.local = None
