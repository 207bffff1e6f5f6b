"""Keys of several sizes (prover/pipeline/keys/key_ring.py): a winning sector's smaller key is
loaded with progress when it is needed, its proof verifies against its own key, and it is
done before the c2 partitions queued ahead of it; under a budget that holds one key beside
the workers keys are evicted and reloaded with every proof verified and no OOM; a budget too
small for any key is a clear error and no hang; random submissions across classes keep the
ring's invariants (tests/helpers/key_invariants.py)."""
from __future__ import annotations

import random
import threading
import time

import pytest

from prover import events as ev
from prover.classes import MIN_LOG2, class_sizes
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.keys.host_ram import HostRam
from prover.pipeline.keys.key_ring import HOT, KeyRing
from prover.pipeline.nullphases import NullPhases
from prover.fold.apply import fold
from prover.fold.summary import summarize
from tests.helpers.invariants import InvariantChecker
from tests.helpers.threads import run_threads
from tests.helpers.key_invariants import KeyChecker
from tests.pipeline.test_classes import jumped_the_queue


def _until(seen: list, what, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not any(what(e) for e in list(seen)):
        assert time.monotonic() < end, "never happened"
        time.sleep(0.01)


def _engine(tmp_path, phases=None, **kw) -> tuple[Engine, KeyChecker, InvariantChecker]:
    keys, inv = KeyChecker(), InvariantChecker()
    cfg = load_config(None, backend="sim", profile="tiny", cache_dir=str(tmp_path / "keys"), seed=3, **kw)
    return Engine(cfg, [keys, inv], phases=phases), keys, inv


def test_class_sizes_follow_the_run_and_stop_at_the_smallest_circuit():
    from prover.groth16.circuit import MIN_LOG2 as CIRCUIT_MIN

    assert MIN_LOG2 == CIRCUIT_MIN
    z = class_sizes(14, 27)
    assert (z["winning"].log2, z["winning"].modelled_log2, z["window"].log2, z["c2"].log2) == (10, 23, 12, 14)
    low = class_sizes(10, 20)  # winning would be 2^6: it meets window at 2^8, one circuit, one modelled size
    assert low["winning"] == low["window"] and (low["winning"].log2, low["winning"].modelled_log2) == (8, 18)


@pytest.mark.timeout(180)
def test_winning_behind_a_full_c2_queue_loads_its_key_with_progress_and_goes_first(tmp_path):
    eng, keys, inv = _engine(tmp_path, constraints_log2=10, time_scale=1.0, sectors=2, partitions=4, workers_per_gpu=2)
    eng.start()
    _until(keys.events, lambda e: e.kind == "partition_done")
    assert eng.controller.apply("submit=winning", source="test")
    assert eng.wait(150)
    assert keys.final() == [] and inv.final() == []
    sub = keys.of("sector_submitted", proof_class="winning")[0]
    _, queued = jumped_the_queue(keys.events)
    assert len(queued) >= 4
    # taken first: the next free worker picks winning and sets up its key while the other
    # worker goes on with c2. Whether it is also *done* first depends on how long the real
    # set-up takes against a c2 partition (a loaded 2-core box once took longer); without a
    # key to load it is (tests/pipeline/test_classes.py).
    taken = min(e.t for e in keys.events if e.kind == "key_load" and e.state == "start" and e.log2 == sub.log2)
    c2_queued = {e.part for e in keys.events if e.kind == "partition_queued" and e.proof_class == "c2" and e.t <= sub.t}
    started = {}
    for e in keys.events:
        if e.kind == "phase_start" and e.part in c2_queued:
            started.setdefault(e.part, e.t)
    later = [t for t in started.values() if t > sub.t]
    assert later and taken < min(later)
    assert (sub.log2, sub.modelled_log2) == (8, 18)  # clamped at 2^8: window's size
    loads = keys.of("key_load", log2=8)
    assert loads[0].state == "start" and loads[-1].state == "end" and loads[-1].ok
    assert loads[-1].detail == "set up and cached" and loads[0].worker is not None
    fracs = [e.frac for e in loads if e.state == "progress"]
    assert len(fracs) >= 10 and fracs == sorted(fracs) and fracs[-1] == 1.0  # the set-up's own steps
    mine = f"s{sub.sector}p0"
    assert [(e.ok, e.checked) for e in keys.of("proof_result", part=mine)] == [(True, True)]  # against its own vk
    s = fold(keys.events)
    assert s.partitions_ok == 9 and s.proofs_failed == 0 and s.keys.keys[8].state == HOT
    assert s.keys.classes == {"c2": 10, "winning": 8}
    sm = summarize(s).keys
    assert [(z.log2, z.loads, z.classes) for z in sm.sizes] == [(10, 1, ["c2"]), (8, 1, ["winning"])]


@pytest.mark.timeout(240)
def test_a_budget_for_one_key_beside_the_workers_evicts_and_reloads(tmp_path):
    eng, keys, inv = _engine(tmp_path, constraints_log2=10, time_scale=1.0, sectors=2, partitions=4, workers_per_gpu=2,
                             paused=True)
    eng.start()
    _until(keys.events, lambda e: e.kind == "worker_started")
    assert eng.keys is not None
    big, small, need = eng.keys.entry(10).nbytes, eng.keys.entry(8).nbytes, eng.host_ram.need
    circuits = eng.host_ram.circuits_held()  # held for the whole run, beside the keys and workers
    eng.controller.set("host_ram_budget", 2 * need + big + small // 2 + circuits, source="test")  # not both keys
    eng.controller.resume("test")
    for at in (1, 2):
        _until(keys.events, lambda e: e.kind == "partition_done" and e.part.startswith("s0p"), 90)
        if at == 2:
            _until(keys.events, lambda e: e.kind == "key_evicted" and e.log2 == 10, 90)
        eng.controller.submit_sector(source="test", cls="winning")
    assert eng.wait(200)
    assert keys.final() == [] and inv.final() == []
    evicted = {e.log2 for e in keys.of("key_evicted")}
    assert evicted == {8, 10}  # each made room for the other
    assert len([e for e in keys.of("key_load", log2=10, state="end") if e.ok]) >= 2  # c2's reloaded
    assert keys.of("key_wait", state="start")  # a partition waited for its key, never an OOM
    s = fold(keys.events)
    assert s.ooms == 0 and s.partitions_ok == 10 and s.proofs_failed == 0 and s.partitions_failed == 0
    assert keys.peak <= 2 * need + big + small // 2 + circuits


@pytest.mark.timeout(120)
def test_a_budget_too_small_for_any_key_is_a_clear_error_not_a_hang(tmp_path):
    eng, keys, _ = _engine(tmp_path, constraints_log2=10, sectors=1, partitions=2, host_ram_budget="64MiB")
    eng.start()
    assert eng.wait(60)
    refused = keys.of("key_load", log2=10, state="end")
    assert refused and not refused[0].ok
    assert "key 2^10" in refused[0].detail and "does not fit host_ram_budget 64 MiB" in refused[0].detail
    s = fold(keys.events)
    assert s.ended and s.startup.failed == ["keys"] and s.partitions_done == 0
    assert any("does not fit host_ram_budget" in text for _, level, text, _ in s.log if level == "error")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(4))
def test_random_submissions_across_classes_keep_the_ring_invariants(tmp_path, seed):
    """Three sizes (2^8, 2^10, 2^12), random class submissions at random times, a budget
    that holds the workers and one or two keys: the invariants hold, every proof verifies."""
    rng = random.Random(seed)
    eng, keys, inv = _engine(tmp_path / str(seed), phases=NullPhases(), constraints_log2=12, time_scale=4.0, sectors=2,
                             partitions=6, workers_per_gpu=3, paused=True)
    eng.start()
    _until(keys.events, lambda e: e.kind == "worker_started")
    ring, need = eng.keys, eng.host_ram.need
    sizes = sorted((ring.entry(n).nbytes for n in ring.sizes()), reverse=True)
    one_key = rng.random() < 0.7
    budget = 3 * need + sizes[0] + (rng.choice([0, sizes[1] // 2]) if one_key else sizes[1] + sizes[2] // 2)
    budget += eng.host_ram.circuits_held()
    eng.controller.set("host_ram_budget", budget, source="test")
    classes = ["winning", "window"] + [rng.choice(["winning", "window", "c2"]) for _ in range(6)]
    for i, cls in enumerate(rng.sample(classes, len(classes))):
        if i == 3:  # a few queued before the workers start, the rest while they run
            eng.controller.resume("test")
        time.sleep(rng.random() * 0.1)
        eng.controller.submit_sector(source="test", cls=cls)
    assert eng.wait(100)
    assert keys.final() == [] and inv.final() == []
    s = fold(keys.events)
    assert s.partitions_failed == 0 and s.proofs_failed == 0 and s.ooms == 0
    assert s.partitions_ok == sum(e.partitions for e in keys.of("sector_submitted")) == 12 + sum(
        1 if c == "winning" else 2 if c == "window" else 6 for c in classes)
    if one_key:  # three sizes through room for one beside the workers: keys went cold and came back
        assert keys.of("key_evicted") and len(keys.of("key_load", state="end")) >= 3


@pytest.mark.timeout(60)
def test_the_ring_under_threads_never_evicts_a_pinned_key_nor_passes_the_budget(tmp_path):
    """The ring alone, six threads pinning random sizes for random times."""
    stop, seen, lock = threading.Event(), [], threading.Lock()
    pins = {8: 0, 10: 0, 12: 0}

    def emit(cls, **kw) -> None:
        e = cls(t=0.0, **kw)
        seen.append(e)
        if isinstance(e, ev.KeyEvicted):
            assert pins[e.log2] == 0, f"key 2^{e.log2} evicted while pinned"

    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=12, cache_dir=str(tmp_path))
    host = HostRam(emit, time.monotonic, stop, lambda: budget)
    host.configure({"abc": 1000})
    ring = KeyRing(NullPhases(), cfg, emit, time.monotonic, stop, host)
    ring.make_circuits(list(cfg.class_sizes.values()))
    budget = 6 * 1000 + ring.entry(12).nbytes + ring.entry(8).nbytes  # 2^12 and 2^10 never both
    budget += host.circuits_held()
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        r = random.Random(i)
        try:
            assert host.admit(f"w{i}", lambda: False)
            for _ in range(25):
                n = r.choice([8, 10, 12])
                with ring.use(n, f"w{i}", None) as k:
                    with lock:
                        pins[n] += 1
                    assert k.state == HOT and k.pk is not None and k.pk.log2 == n
                    time.sleep(r.random() * 0.003)
                    with lock:
                        pins[n] -= 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    assert run_threads(worker, 6, 40) == [], "a worker never got its key"
    assert errors == []
    held = {}
    for e in seen:
        if isinstance(e, ev.HostRam):
            held[(e.owner, e.name)] = e.bytes
            assert sum(held.values()) <= budget
    assert any(isinstance(e, ev.KeyEvicted) for e in seen)
    starts = sum(1 for e in seen if isinstance(e, ev.KeyLoad) and e.state == "start")
    assert starts == sum(1 for e in seen if isinstance(e, ev.KeyLoad) and e.state == "end")


def test_an_evicted_keys_device_copies_are_dropped_and_made_again():
    """compose.KeyPoints: a key's points per device, forgotten when the ring evicts the key."""
    from prover.groth16.compose import KeyPoints

    class Backend:  # what KeyPoints asks of a device backend: which device, and a query's points
        made = 0

        def device_key(self) -> int:
            return 0

        def points(self, pk, q):
            Backend.made += 1
            return (id(pk), q)

    keys, pk = KeyPoints(Backend()), object()
    first = keys.of(pk)
    assert keys.of(pk) is first and Backend.made == 5  # h, l, a, b_g1, b_g2: once per key and device
    keys.drop(pk)
    assert keys.of(pk) is not first and Backend.made == 10


@pytest.mark.timeout(120)
def test_a_live_budget_cut_below_the_key_in_use_is_refused_and_the_run_goes_on(tmp_path):
    """Under such a budget the key would be evicted for the workers' buffers and every queued
    partition fail at once; the controller refuses it with the numbers instead."""
    eng, keys, inv = _engine(tmp_path, constraints_log2=10, time_scale=1.0, sectors=2, partitions=4, workers_per_gpu=2)
    eng.start()
    _until(keys.events, lambda e: e.kind == "partition_done")
    least = eng.keys.entry(10).nbytes + eng.host_ram.need + eng.host_ram.circuits_held()
    with pytest.raises(ValueError, match=r"64 MiB is below what the run needs to go on: key 2\^10 \(\d+ MiB\) beside "
                                         r"one worker's \d+ MiB and the circuits' \d+ MiB = \d+ MiB; give at least that, "
                                         r"or off"):
        eng.controller.apply("host_ram_budget=64MiB", source="test")
    assert eng.controller.set("host_ram_budget", least, source="test")  # the least it names is accepted
    assert eng.controller.set("host_ram_budget", 0, source="test")  # and off
    assert eng.wait(100)
    assert keys.final() == [] and inv.final() == []
    s = fold(keys.events)
    assert s.partitions_ok == 8 and s.partitions_failed == 0 and not keys.of("key_evicted")
    notes = [text for _, level, text, _ in s.log if level == "warn" and "host_ram_budget change refused" in text]
    assert len(notes) == 1 and "give at least that" in notes[0]
    assert [e.new for e in keys.of("mode_change") if e.knob == "host_ram_budget"] == [str(least), "0"]


def test_a_resident_key_is_counted_small_then_for_real_and_circuits_are_held(tmp_path):
    """key_resident=device on cuda: a key's host bytes are counted as its presence bits before it
    loads; once loaded, as what it really holds (here a host-sized token: a set-up that fell back
    to the host), said in HostRam; circuits are held as HostRam "circuit" entries."""
    seen: list = []
    stop = threading.Event()
    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=12, cache_dir=str(tmp_path))
    host = HostRam(lambda cls, **kw: seen.append(cls(t=0.0, **kw)), time.monotonic, stop, lambda: 0)
    host.configure({"abc": 1000})
    ring = KeyRing(NullPhases(), cfg, lambda cls, **kw: seen.append(cls(t=0.0, **kw)), time.monotonic, stop, host,
                   resident=True)
    ring.make_circuits(list(cfg.class_sizes.values()))
    k = ring.entry(12)
    scale = 2 ** (k.size.modelled_log2 - k.size.log2)
    assert k.nbytes == (3 * 96 + 2 * 192 + k.circuit.num_vars) * scale  # presence bits and five points
    assert host.circuits_held() == sum(e.bytes for e in seen if isinstance(e, ev.HostRam) and e.name == "circuit")
    ring.preload(12)
    assert k.nbytes == k.pk.nbytes * scale > 10 * k.circuit.num_vars * scale  # re-counted from the key as loaded
    assert [e.bytes for e in seen if isinstance(e, ev.HostRam) and e.owner == k.owner and e.name == "pk"][-1] == k.nbytes


class _Host:
    """What KeyRing asks of HostRam for a pin and an eviction: its lock, no budget, bytes per owner."""

    need = 0

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.keys = None
        self.held: dict[str, int] = {}

    def budget(self) -> int:
        return 0

    def circuits_held(self) -> int:  # compact R1CS circuits (issue 37): none here
        return 0

    def hold_fixed(self, owner: str, name: str, n: int) -> None:
        self.held[owner] = n


def test_eviction_takes_the_least_recently_used_key():
    """Issue 35: evicting the most- instead of the least-recently used key passed all 680
    pipeline and unit tests. Three hot keys, used in a known order through the ring's own
    pin/unpin: each eviction takes the one used longest ago, never a pinned one."""
    from prover.classes import ClassSize
    from prover.pipeline.keys.key_ring import COLD, RingKey

    now = iter(range(1, 1000))
    seen: list = []
    ring = KeyRing(None, None, lambda cls, **f: seen.append(cls(t=0.0, **f)), lambda: float(next(now)),
                   threading.Event(), _Host())
    for log2 in (8, 10, 12):
        ring._keys[log2] = RingKey(ClassSize(log2, log2 + 10), circuit=None, nbytes=1 << log2, state=HOT, pk=object())
    for log2 in (12, 8, 10, 8):  # last used: 12, then 10, then 8
        with ring.use(log2, "w", None):
            pass
    with ring.use(12, "w", None):  # 12 is the least recently used, but pinned now
        assert ring._evict_lru(None, "test") == 1 << 10  # the least recently used of the others
    assert ring._evict_lru(None, "test") == 1 << 8  # 12 was used just now (its unpin)
    assert ring._evict_lru(None, "test") == 1 << 12
    assert ring._evict_lru(None, "test") == 0
    assert [e.log2 for e in seen if e.kind == "key_evicted"] == [10, 8, 12]
    assert all(k.state == COLD for k in ring._keys.values())
