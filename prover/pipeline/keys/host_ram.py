"""Host memory as a resource: the bytes of the proving key and of each worker's buffers, and
a budget (the live `host_ram_budget` knob) that holds a worker back before it would exceed it.

A worker's buffers (witness z, a/b/c, prep_msm's arrays) are its own, reused partition after
partition (partition.py `_synthesize`, the CUDA device's `host_out`), so a worker holds them
from its admission until it stops: the budget limits how many workers prove at once, as
cuzk's "69 + 20 GiB per partition worker" does on a real host. A worker is admitted between
partitions, before it takes one from the queue (never while it holds work), FIFO; it waits
like a lock waiter (HostRamWait ... HostRamAdmit). After a budget cut the newest admitted
worker gives its bytes back at its next partition boundary and waits again. Nothing is ever
killed; when not even one worker fits, one is let through anyway (with a warning), or the
run could not move at all.

Keys (prover/pipeline/keys/key_ring.py) share the budget: the ring holds each hot key's bytes here
(owner "key 2^N") under this object's lock, the one lock of host memory. A worker is admitted
only with room beside it for the largest key that fits at all (`KeyRoom.floor`), so a cold
key can always be loaded once the unpinned keys are evicted; hot keys beyond that floor are a
cache the ring evicts (least recently used first) to let a worker in.

Sizes: native runs count the real arrays at the proved size; modelled ones scale the proved
circuit's real sizes to the modelled size (2^modelled / 2^proved), labelled modelled.
"""
from __future__ import annotations

import os
import threading
from collections import deque
from typing import Any, Callable, Protocol

from prover import events as ev
from prover.groth16 import host_bytes

Emit = Callable[..., Any]
_POLL_S = 0.05  # a waiter re-reads the budget this often (a knob change wakes it this late)


def host_total_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 0


def worker_bytes(num_vars: int, log2: int, scale: float, pinned_prep: bool = False,
                 real_circuit: bool = True, abc_on_host: bool = True, field_vars: int | None = None) -> dict[str, int]:
    """One worker's host buffers: witness, a/b/c (where the host builds them) or z's upload form
    (where the GPU does), prep_msm's splits (prover/groth16/host_bytes.py)."""
    return host_bytes.worker_bytes(num_vars, log2, scale, pinned_prep=pinned_prep, real_circuit=real_circuit,
                                   abc_on_host=abc_on_host, field_vars=field_vars)


class KeyRoom(Protocol):
    """What the admission asks of the key ring (called with the host lock held)."""

    def floor(self, budget: int, need: int) -> int:
        """Bytes kept for keys beside the workers: the largest key that fits beside one."""
        ...

    def evict_for_worker(self, short: int, keep: int) -> None:
        """Make keys cold (unpinned, least recently used first) to free `short` bytes, while
        more than `keep` bytes of keys stay hot."""
        ...


class HostRam:
    """Owner -> bytes, and the admission of workers under the budget."""

    def __init__(self, emit: Emit, clock: Callable[[], float], stop: threading.Event,
                 budget: Callable[[], int]) -> None:
        self._emit, self._clock, self._stop, self._budget = emit, clock, stop, budget
        self._cond = threading.Condition()
        self._fixed: dict[tuple[str, str], int] = {}  # (owner, name) -> bytes: key, pinned pool
        self._circuits: dict[str, int] = {}  # owner -> a circuit's bytes: held for the whole run
        self._guard = 0  # with the budget off, a native run's ceiling: the host's RAM (set_guard)
        self._workers: dict[str, int] = {}  # admitted worker -> its bytes, in admission order
        self._queue: deque[str] = deque()  # waiting workers, first come first admitted
        self._sizes: dict[str, int] = {}
        self._pinned: frozenset[str] = frozenset()
        self._warned = False
        self.keys: KeyRoom | None = None  # the key ring, once there is one

    @property
    def lock(self) -> threading.Condition:
        """The one lock (and wait) of host memory: the key ring takes it too."""
        return self._cond

    def budget(self) -> int:
        """The budget in force: the knob's, or with it off the host guard (0: no limit)."""
        b = self._budget()
        return b if b > 0 else self._guard

    def set_guard(self, nbytes: int) -> None:
        """With host_ram_budget off, admit no more than `nbytes` (a native run: the host's RAM
        less a margin), so that an unlimited run is held back, never killed by the OOM killer."""
        with self._cond:
            self._guard = max(0, int(nbytes))
            self._cond.notify_all()

    def hold_circuit(self, owner: str, nbytes: int) -> None:
        """A circuit's bytes (its matrices: 2^27's are ~7 GiB), held from start-up to the end."""
        with self._cond:
            self._circuits[owner] = nbytes
            self._emit(ev.HostRam, owner=owner, name="circuit", bytes=nbytes, pinned=False)
            self._cond.notify_all()

    def circuits_held(self) -> int:
        return sum(self._circuits.values())

    def workers_that_fit(self) -> int | None:
        """How many workers the budget in force holds beside the circuits and the largest key
        that fits (None: no limit)."""
        with self._cond:
            b = self.budget()
            if b <= 0 or self.need <= 0:
                return None
            room = b - self.circuits_held() - max(self.keys_held(), self._key_floor(b))
            return max(0, room // self.need)

    # --- set-up ------------------------------------------------------------------------------
    def configure(self, sizes: dict[str, int], pinned: frozenset[str] = frozenset()) -> None:
        """Each worker's buffer sizes by name; `pinned` names those that are page-locked."""
        with self._cond:
            self._sizes, self._pinned = dict(sizes), pinned

    def hold_fixed(self, owner: str, name: str, nbytes: int, pinned: bool = False) -> None:
        """Bytes that are not a worker's (the proving key); absolute, 0 gives them back."""
        with self._cond:
            self._fixed[(owner, name)] = nbytes
            self._emit(ev.HostRam, owner=owner, name=name, bytes=nbytes, pinned=pinned)
            self._cond.notify_all()

    @property
    def need(self) -> int:
        return sum(self._sizes.values())

    def held(self) -> int:
        with self._cond:
            return self._held()

    def _held(self) -> int:
        return sum(self._fixed.values()) + sum(self._workers.values()) + self.circuits_held()

    def keys_held(self) -> int:
        """Bytes held that are not a worker's: the keys (hot or loading). Lock held."""
        return sum(self._fixed.values())

    def workers(self) -> dict[str, int]:
        """Admitted worker -> bytes (a copy). Lock held."""
        return dict(self._workers)

    def _key_floor(self, b: int) -> int:
        return self.keys.floor(b, self.need) if self.keys is not None else 0

    def _with_keys(self, workers: int, b: int) -> int:
        """Workers' bytes plus the circuits' and the keys', counting at least the floor kept for one key."""
        return workers + self.circuits_held() + max(self.keys_held(), self._key_floor(b))

    # --- admission ---------------------------------------------------------------------------
    def admit(self, worker: str, cancel: Callable[[], bool]) -> bool:
        """Between partitions: True once `worker` holds its buffers within the budget (at
        once if it already does); False if stopped or `cancel()` says so while it waits."""
        with self._cond:
            if worker in self._workers:
                if not self._over() or self._newest() != worker:
                    return True
                self._give_back(worker)  # a budget cut: the newest admitted steps back
            return self._wait(worker, cancel)

    def release(self, worker: str) -> None:
        """The worker stopped: its buffers go."""
        with self._cond:
            if worker in self._queue:
                self._queue.remove(worker)
            if worker in self._workers:
                self._give_back(worker)

    def _over(self) -> bool:
        b = self.budget()
        return b > 0 and self._with_keys(sum(self._workers.values()), b) > b

    def _newest(self) -> str | None:
        return next(reversed(self._workers), None)

    def _fits(self) -> bool:
        b = self.budget()
        if b <= 0:
            return True
        workers = sum(self._workers.values()) + self.need
        short = self._with_keys(workers, b) - b
        if short > 0 and self.keys is not None:  # hot keys beyond the floor are a cache: let a worker in
            self.keys.evict_for_worker(short, self._key_floor(b))
        if self._with_keys(workers, b) <= b:
            return True
        if not self._workers:  # not even one worker fits: let one through, said once
            if not self._warned:
                self._warned = True
                self._emit(ev.Note, level="warn", text=(
                    f"host_ram_budget {b >> 20} MiB holds not even one worker ({self.need >> 20} MiB "
                    f"beside {self._held() >> 20} MiB held): one worker runs anyway"))
            return True
        return False

    def _wait(self, worker: str, cancel: Callable[[], bool]) -> bool:
        self._queue.append(worker)
        t0, waited = self._clock(), False
        try:
            while not (self._queue[0] == worker and self._fits()):
                if not waited:
                    waited = True
                    b = self.budget()
                    self._emit(ev.HostRamWait, worker=worker, need=self.need, free=b - self._held(), budget=b)
                if self._stop.is_set() or cancel():
                    self._emit(ev.HostRamAdmit, worker=worker, wait=max(0.0, self._clock() - t0), admitted=False)
                    return False
                self._cond.wait(_POLL_S)
        finally:
            if worker in self._queue:
                self._queue.remove(worker)
                self._cond.notify_all()
        self._take(worker)
        if waited:
            self._emit(ev.HostRamAdmit, worker=worker, wait=max(0.0, self._clock() - t0))
        return True

    def _take(self, worker: str) -> None:
        self._workers[worker] = self.need
        for name, n in self._sizes.items():
            self._emit(ev.HostRam, owner=worker, name=name, bytes=n, pinned=name in self._pinned)

    def _give_back(self, worker: str) -> None:
        del self._workers[worker]
        for name in self._sizes:
            self._emit(ev.HostRam, owner=worker, name=name, bytes=0, pinned=name in self._pinned)
        self._cond.notify_all()


def size_host_ram(host: HostRam, emit: Emit, circuit: Any, config: Any, modelled_log2: int, backend: str) -> None:
    """Before the keys: the host's size and each worker's bytes, native or modelled (the
    run's circuit's real sizes x 2^modelled / 2^proved). A worker's buffers are sized for the
    run's circuit, the largest class's (prover/classes.py), and reused for smaller ones. The
    keys' bytes are the key ring's (key_ring.py)."""
    proved = config.constraints_log2
    native = modelled_log2 == proved
    scale = 1.0 if native else float(2 ** (modelled_log2 - proved))
    emit(ev.HostRamInfo, total_bytes=host_total_bytes(), modelled=not native, log2=modelled_log2)
    num_vars = getattr(circuit, "num_vars", 1 << proved)
    pinned = backend == "cuda" and config.kernels.pinned_host
    real = hasattr(circuit, "layout")  # NullPhases' stand-in has no witness to measure prep on
    on_host = getattr(config, "abc", "host") != "gpu"  # abc gpu: the GPU makes a/b/c, z's form goes up page-locked
    nf = getattr(circuit, "field_vars", None)
    sizes = worker_bytes(int(num_vars), proved, scale, pinned_prep=pinned, real_circuit=real, abc_on_host=on_host,
                         field_vars=int(nf) if isinstance(nf, int) else None)
    host.configure({k: v for k, v in sizes.items() if v or k not in ("abc", "zpack")},  # the path not taken: no part
                   frozenset({"abc" if on_host else "zpack", "prep"}) if pinned else frozenset())
    if native:  # real bytes: with the budget off, the host's RAM is the ceiling (held back, never OOM-killed)
        host.set_guard(int(GUARD_SHARE * host_total_bytes()))


GUARD_SHARE = 0.9  # with host_ram_budget off, a native run admits workers up to this share of the host's RAM


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def say_fit(host: HostRam, emit: Emit, workers: int, device_key_bytes: int = 0, abc: str = "host") -> int | None:
    """One line with the host-RAM arithmetic of the run as it stands after start-up: each worker's
    buffers, the circuits, the keys (and what of them lives on the device), the budget in force,
    and how many of the run's workers it holds (a warning when fewer than asked: the others wait
    for room, HostRamWait). Returns that count (None: no limit)."""
    with host.lock:
        sizes, need, circuits, keys = dict(host._sizes), host.need, host.circuits_held(), host.keys_held()
        knob, budget = host._budget(), host.budget()
    fit = host.workers_that_fit()
    what = {k: host_bytes.describe(k, k in host._pinned) for k in sizes}
    parts = ", ".join(f"{k} {_gib(v)}" + (f" ({what[k]})" if what[k] else "") for k, v in sizes.items())
    where = f"host_ram_budget {_gib(budget)}" if knob > 0 else (
        f"host_ram_budget off: {GUARD_SHARE:.0%} of this host's {_gib(host_total_bytes())} RAM" if budget else
        "host_ram_budget off")
    if abc == "gpu":  # the part the host no longer holds, said where the parts are
        parts += "; a/b/c made on the GPU (abc gpu): none on the host"
    text = (f"host RAM: a worker {_gib(need)} ({parts}); circuits {_gib(circuits)}; keys {_gib(keys)} on the host"
            + (f" + {_gib(device_key_bytes)} resident on the GPU" if device_key_bytes else "") + f"; {where}")
    if fit is None:
        emit(ev.Note, level="info", text=text)
    elif fit < workers:
        emit(ev.Note, level="warn", text=f"{text} holds {fit} of {workers} workers: the others wait for room")
    else:
        emit(ev.Note, level="info", text=f"{text} holds all {workers} workers (room for {fit})")
    return fit
