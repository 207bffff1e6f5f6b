"""The key ring: the circuits and proving keys of a run, one per size (prover/classes.py gives
each proof class its size), each `cold` (in the key cache only, or not set up yet), `loading`
(read from the cache or set up, with progress) or `hot` (in host RAM, and on CUDA its device
copies), under the host-RAM budget (prover/pipeline/keys/host_ram.py).

    with ring.use(log2, worker, part) as key:    # key.circuit, key.pk, key.vk; pinned while inside
        ...

A partition pins its key for its whole flow, so a key with a partition in flight is never
evicted. A worker whose key is cold loads it (one load at a time: loads compete for the same
disk and cores); others needing it wait (KeyWait, like a host-RAM wait). A load first makes
room: the least recently used hot key with no partition in flight is made cold (KeyEvicted:
host arrays and device copies dropped), and while room is still short it waits for pins to
drop, holding back new users of hot keys meanwhile (else a busy key would starve the load).
Workers are admitted with room for the largest key beside them (HostRam.keys = this ring's
floor), so once the unpinned keys are cold, room is there; only a live budget cut can leave
workers holding it, and then the load goes through with a warning rather than wait forever.
A key that does not fit beside one worker at all is refused with the sizes and the budget
(KeyLoad ok=False); its partitions fail, they never wait. All state is under the host-RAM
lock (HostRam.lock), so the admission of workers and the keys see one account.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from prover import events as ev
from prover.classes import ClassSize
from prover.device.base import Stopped
from prover.pipeline.keys.host_ram import HostRam
from prover.pipeline.keys.key_load import Report, load_key

Emit = Callable[..., Any]
COLD, LOADING, HOT = "cold", "loading", "hot"
_POLL_S = 0.05  # a waiter re-reads the ring this often (a stop or a budget change wakes it this late)


class KeyDoesNotFit(RuntimeError):
    """A key larger than the host-RAM budget leaves beside one worker: its partitions fail."""


@dataclass
class RingKey:
    """One size's circuit and key. `nbytes`: host bytes counted for it (modelled in sim)."""

    size: ClassSize
    circuit: Any
    nbytes: int
    state: str = COLD
    pk: Any = None
    vk: Any = None
    pins: int = 0  # partitions in flight with it
    used_t: float = 0.0
    refused_at: int | None = None  # the budget it was last refused under (said once per budget)

    @property
    def log2(self) -> int:
        return self.size.log2

    @property
    def owner(self) -> str:
        return f"key 2^{self.size.log2}"


def _scale(size: ClassSize) -> float:
    return 2.0 ** (size.modelled_log2 - size.log2)


def key_bytes(circuit: Any, size: ClassSize, resident: bool = False) -> int:
    """The key's host bytes before it exists: its shape's (a resident key's: its presence bits
    and fixed points), scaled to the modelled size."""
    from prover.groth16.keys import ProvingKey

    nv = int(circuit.num_vars)
    n = (ProvingKey.resident_host_size_for(nv) if resident
         else ProvingKey.size_for(nv, int(circuit.num_inputs), int(circuit.domain_size)))
    return int(n * _scale(size))


def circuit_bytes(circuit: Any, size: ClassSize) -> int:
    """A circuit's host bytes (its matrices and layout), scaled to the modelled size."""
    return int(int(getattr(circuit, "nbytes", 0)) * _scale(size))


class KeyRing:
    def __init__(self, phases: Any, config: Any, emit: Emit, clock: Callable[[], float], stop: threading.Event,
                 host: HostRam, drop_device: Callable[[Any], None] | None = None,
                 resident: bool | Callable[[int], bool] = False,
                 on_hot: Callable[[int, Any], None] | None = None, on_cold: Callable[[int], None] | None = None) -> None:
        """`drop_device(pk)`: a key's device copies dropped when it is made cold; `on_hot(log2,
        circuit)` / `on_cold(log2)`: its circuit's device copies (the matrices, abc gpu) made when
        it is loaded (outside the lock: it may wait for the GPU's room) and dropped when evicted."""
        self.P, self.config, self._emit, self._clock, self._stop = phases, config, emit, clock, stop
        # which sizes' keys stay on the GPU where they are set up (key_resident, on cuda)
        self.resident: Callable[[int], bool] = resident if callable(resident) else (lambda _log2: bool(resident))
        self._host, self._lock = host, host.lock
        self.drop_device = drop_device  # device copies of a key (compose.KeyPoints), set once there are any
        self.on_hot, self.on_cold = on_hot, on_cold  # its circuit's device copies (the engine's resident matrices)
        self._keys: dict[int, RingKey] = {}
        self._loader: str | None = None  # who loads now (one load at a time)
        self._draining = False  # a load waits for pins to drop: new users of hot keys wait behind it
        self._stuck_said = False
        host.keys = self

    # --- set-up ---------------------------------------------------------------------------
    def make_circuits(self, sizes: list[ClassSize]) -> list[int]:
        """Each size's circuit (cheap beside its key) and so its key's bytes, known up front.
        Returns the sizes whose circuit the phases object already held (made before this run:
        a benchmark's engines sharing one; `holds_circuit`, where it has one)."""
        holds = getattr(self.P, "holds_circuit", None)
        held = []
        for size in sorted(set(sizes), key=lambda z: -z.log2):
            if size.log2 not in self._keys:
                if holds is not None and holds(size.log2, self.config.seed):
                    held.append(size.log2)
                c = self.P.make_circuit(size.log2, self.config.seed)
                self._keys[size.log2] = k = RingKey(size, c, key_bytes(c, size, self.resident(size.log2)))
                self._host.hold_circuit(k.owner, circuit_bytes(c, size))
        return held

    def entry(self, log2: int) -> RingKey:
        return self._keys[log2]

    def least_budget(self) -> tuple[int, str] | None:
        """The smallest host-RAM budget the run can go on under, and why: the largest key hot,
        loading or in use, beside one worker's buffers. None before any key is in (start-up
        refuses a key that can never fit on its own, _check_fits)."""
        with self._lock:
            live = [k for k in self._keys.values() if k.state != COLD or k.pins]
        need, circuits = self._host.need, self._host.circuits_held()
        if not live or need <= 0:
            return None
        k = max(live, key=lambda x: x.nbytes)
        return k.nbytes + need + circuits, (f"key 2^{k.log2} ({k.nbytes >> 20} MiB) beside one worker's {need >> 20} MiB"
                                            + (f" and the circuits' {circuits >> 20} MiB" if circuits else ""))

    def device_bytes(self) -> int:
        """Bytes of the hot keys' queries resident on a device (key_resident)."""
        with self._lock:
            return sum(int(getattr(k.pk, "device_bytes", 0) or 0) for k in self._keys.values() if k.state == HOT)

    def sizes(self) -> list[int]:
        return sorted(self._keys)

    def entries(self) -> list[tuple[int, str, int, int, float]]:
        """Each size's key now: (log2, cold | loading | hot, host bytes, pins, last used t)."""
        with self._lock:
            return [(k.log2, k.state, k.nbytes, k.pins, k.used_t) for _, k in sorted(self._keys.items())]

    def evict(self, log2: int, reason: str) -> int:
        """Make log2's key cold now (an operator's EvictSRS); its bytes freed, 0 if it was not
        hot. ValueError while a partition has it pinned (it would be loaded back at once)."""
        with self._lock:
            k = self._keys[log2]
            if k.state != HOT:
                return 0
            if k.pins:
                raise ValueError(f"key 2^{log2} is in use by {k.pins} partition(s) in flight")
            return self._evict_one(k, reason)

    def preload(self, log2: int, report: Report | None = None) -> str:
        """Make log2's key hot now (start-up); returns how it came (set up, or loaded)."""
        k = self._keys[log2]
        how = self._pin(k, "start-up", None, report)
        self._unpin(k)
        return how

    @contextmanager
    def use(self, log2: int | None, worker: str, part: str | None) -> Iterator[RingKey]:
        """log2's key (None: the run's), hot and pinned for the block (loaded first if cold)."""
        k = self._keys[self.config.constraints_log2 if log2 is None else log2]
        self._pin(k, worker, part, None)
        try:
            yield k
        finally:
            self._unpin(k)

    # --- KeyRoom: what the host-RAM admission asks (host lock held) -------------------------
    def floor(self, budget: int, need: int) -> int:
        room = budget - self._host.circuits_held()
        return max((k.nbytes for k in self._keys.values() if k.nbytes + need <= room), default=0)

    def evict_for_worker(self, short: int, keep: int) -> None:
        while short > 0 and self._host.keys_held() > keep:
            freed = self._evict_lru(None, "room for a worker's buffers")
            if not freed:
                return
            short -= freed

    # --- pin / unpin ----------------------------------------------------------------------
    def _pin(self, k: RingKey, worker: str, part: str | None, report: Report | None) -> str:
        with self._waiting(k, worker, part) as wait:
            with self._lock:
                while True:
                    if self._stop.is_set():
                        raise Stopped()
                    self._check_fits(k, worker)
                    if k.state == HOT and not self._draining:
                        k.pins += 1
                        k.used_t = self._clock()
                        return ""
                    if k.state == COLD and self._loader is None:
                        self._loader = worker
                        break
                    wait.start("loading" if k.state == LOADING else ("making room" if self._draining else "loader busy"))
                    self._lock.wait(_POLL_S)
        return self._load(k, worker, part, report)

    def _unpin(self, k: RingKey) -> None:
        with self._lock:
            k.pins -= 1
            k.used_t = self._clock()
            self._lock.notify_all()

    @contextmanager
    def _waiting(self, k: RingKey, worker: str, part: str | None) -> Iterator["_Wait"]:
        w = _Wait(self, k, worker, part)
        try:
            yield w
        finally:
            w.end()

    def _check_fits(self, k: RingKey, worker: str | None) -> None:
        """Refuse (KeyDoesNotFit) a key larger than the budget leaves beside one worker."""
        b, circuits = self._host.budget(), self._host.circuits_held()
        if b <= 0 or k.nbytes + self._host.need + circuits <= b:
            return
        why = (f"key 2^{k.log2} ({k.nbytes >> 20} MiB, modelled 2^{k.size.modelled_log2}) does not fit "
               f"host_ram_budget {b >> 20} MiB beside one worker's {self._host.need >> 20} MiB"
               + (f" and the circuits' {circuits >> 20} MiB" if circuits else "")
               + f" (it needs a budget of {(k.nbytes + self._host.need + circuits + (1 << 20) - 1) >> 20} MiB)")
        if k.refused_at != b:
            k.refused_at = b
            self._emit(ev.KeyLoad, log2=k.log2, modelled_log2=k.size.modelled_log2, state="end", bytes=k.nbytes,
                       ok=False, detail=why, worker=None if worker == "start-up" else worker)
        raise KeyDoesNotFit(why)

    # --- a load ---------------------------------------------------------------------------
    def _load(self, k: RingKey, worker: str, part: str | None, report: Report | None) -> str:
        """Make room, read or set up k's key (outside the lock: seconds), make it hot and pinned."""
        t0 = self._clock()
        who = None if worker == "start-up" else worker
        try:
            with self._waiting(k, worker, part) as wait, self._lock:
                self._make_room(k, wait)
                t0 = self._clock()  # the load's own time; a wait for room is the KeyWait's
                k.state = LOADING
                self._host.hold_fixed(k.owner, "pk", k.nbytes)
                self._emit(ev.KeyLoad, log2=k.log2, modelled_log2=k.size.modelled_log2, state="start",
                           bytes=k.nbytes, detail="cache lookup", worker=who)
            pk, vk, how = load_key(self.P, k.circuit, self.config, self._progress(k, who, report))
            if self.on_hot is not None:
                self.on_hot(k.log2, k.circuit)  # outside the lock: it waits for each GPU's room
        except BaseException as exc:
            self._load_failed(k, who, t0, exc)
            raise
        with self._lock:
            k.pk, k.vk, k.state, k.pins, k.used_t = pk, vk, HOT, k.pins + 1, self._clock()
            self._loader = None
            real, on_device = self._real_bytes(k, pk)
            if real != k.nbytes:  # counted for real: e.g. a resident set-up that fell back to the host
                k.nbytes = real
                self._host.hold_fixed(k.owner, "pk", real)
            self._lock.notify_all()
            # a resident key's device bytes are said in its detail (the event's bytes are host bytes)
            where = f"; {on_device / 2**30:.1f} GiB resident on the GPU" if on_device else ""
            self._emit(ev.KeyLoad, log2=k.log2, modelled_log2=k.size.modelled_log2, state="end", bytes=k.nbytes,
                       frac=1.0, detail=(how + where).lstrip("; "), seconds=max(0.0, self._clock() - t0), worker=who,
                       device_bytes=on_device)
        return how

    @staticmethod
    def _real_bytes(k: RingKey, pk: Any) -> tuple[int, int]:
        """(host, device) bytes the loaded key holds, scaled to the modelled size; a key without
        a size of its own (a test double) keeps what was counted."""
        host, dev = getattr(pk, "nbytes", None), getattr(pk, "device_bytes", 0)
        if not isinstance(host, int):
            return k.nbytes, 0
        return int(host * _scale(k.size)), int(int(dev or 0) * _scale(k.size))

    def _progress(self, k: RingKey, who: str | None, report: Report | None) -> Report:
        def on(frac: float, detail: str, step: str | None = None, step_s: float | None = None) -> None:
            self._emit(ev.KeyLoad, log2=k.log2, modelled_log2=k.size.modelled_log2, state="progress",
                       bytes=k.nbytes, frac=max(0.0, min(1.0, frac)), detail=detail, worker=who, step=step,
                       step_s=step_s)
            if report is not None:
                report(frac, detail)
        return on

    def _load_failed(self, k: RingKey, who: str | None, t0: float, exc: BaseException) -> None:
        with self._lock:
            if k.state == LOADING:
                self._host.hold_fixed(k.owner, "pk", 0)
                self._emit(ev.KeyLoad, log2=k.log2, modelled_log2=k.size.modelled_log2, state="end", bytes=0,
                           seconds=max(0.0, self._clock() - t0), ok=False, worker=who,
                           detail="stopped" if isinstance(exc, Stopped) else f"{type(exc).__name__}: {exc}"[:300])
            k.state, self._loader, self._draining = COLD, None, False
            self._lock.notify_all()

    def _room(self, n: int) -> bool:
        b = self._host.budget()
        return b <= 0 or self._host._held() + n <= b

    def _make_room(self, k: RingKey, wait: "_Wait") -> None:
        """Evict unpinned keys, least recently used first, then wait for pins to drop (new
        users of hot keys held back meanwhile) until k fits. Host lock held."""
        self._draining = True
        try:
            while not self._room(k.nbytes):
                if self._evict_lru(k, f"room for key 2^{k.log2}"):
                    continue
                if not any(o.pins for o in self._keys.values()):
                    self._go_through(k)  # only workers hold the room: after a live budget cut
                    return
                if self._stop.is_set():
                    raise Stopped()
                wait.start("making room")
                self._lock.wait(_POLL_S)
                self._check_fits(k, self._loader)
        finally:
            self._draining = False
            self._lock.notify_all()

    def _go_through(self, k: RingKey) -> None:
        if not self._stuck_said:
            self._stuck_said = True
            self._emit(ev.Note, level="warn", text=(
                f"key 2^{k.log2} loads over host_ram_budget {self._host.budget() >> 20} MiB: the workers' buffers "
                f"hold the room after a budget cut (they give it back at their next partition boundary)"))

    def _evict_lru(self, keep: RingKey | None, reason: str) -> int:
        """Make the least recently used hot, unpinned key (not `keep`) cold; its bytes, or 0."""
        free = [o for o in self._keys.values() if o.state == HOT and not o.pins and o is not keep]
        if not free:
            return 0
        return self._evict_one(min(free, key=lambda x: x.used_t), reason)

    def _evict_one(self, o: RingKey, reason: str) -> int:
        pk, o.pk, o.vk, o.state = o.pk, None, None, COLD
        if self.drop_device is not None and pk is not None:
            self.drop_device(pk)  # its device copies go with it
        if self.on_cold is not None:
            self.on_cold(o.log2)  # and its circuit's (freed, their room let go: never a wait)
        self._host.hold_fixed(o.owner, "pk", 0)
        self._emit(ev.KeyEvicted, log2=o.log2, bytes=o.nbytes, reason=reason)
        return o.nbytes


class _Wait:
    """A worker's wait for a key: KeyWait start once (the first time it has to wait), end on exit."""

    def __init__(self, ring: KeyRing, k: RingKey, worker: str, part: str | None) -> None:
        self.ring, self.k, self.worker, self.part = ring, k, worker, part
        self.t0: float | None = None

    def start(self, why: str) -> None:
        if self.t0 is None and self.worker != "start-up":
            self.t0 = self.ring._clock()
            self.ring._emit(ev.KeyWait, log2=self.k.log2, worker=self.worker, part=self.part, state="start", why=why)

    def end(self) -> None:
        if self.t0 is not None:
            self.ring._emit(ev.KeyWait, log2=self.k.log2, worker=self.worker, part=self.part, state="end",
                            wait=max(0.0, self.ring._clock() - self.t0))
            self.t0 = None


@dataclass
class FixedKeys:
    """One circuit and key for every partition (a Prover built by hand, as tests and
    benchmarks do): `use` hands it out, there is nothing to load or evict."""

    circuit: Any
    pk: Any
    vk: Any

    @contextmanager
    def use(self, log2: int | None, worker: str, part: str | None) -> Iterator["FixedKeys"]:
        yield self
