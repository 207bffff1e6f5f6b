"""The driver's placement under uneven GPUs (issue 27), under random schedules: the real
Scheduler (prover/fleet/scheduler.py) driven the way FleetEngine drives it (place everything
waiting after every batch of completions), over a discrete-event model of the hosts: each GPU
runs `workers` partitions at a time from its own FIFO, at its own speed with +-50% jitter. One GPU
is slow, one is cordoned at a random time (and maybe let back later), one host may be lost.
Checked: every partition done exactly once; nothing placed on the cordoned GPU while it is
cordoned, while what it held finishes; the slow GPU's share below every fast GPU's."""
from __future__ import annotations

import heapq
import random
from collections import Counter, deque
from dataclasses import dataclass, field

import pytest

from prover.fleet.scheduler import Scheduler

GiB = 1024**3


@dataclass
class Gpu:
    host: str
    speed: float  # partitions a worker proves per unit of time
    workers: int
    queue: deque = field(default_factory=deque)
    running: int = 0


@dataclass
class Run:
    done: Counter = field(default_factory=Counter)  # partition -> times it was counted done
    by_gpu: Counter = field(default_factory=Counter)
    placed_while_cordoned: list = field(default_factory=list)
    finished_on_cordoned: int = 0
    held_at_cordon: int = 0


def simulate(seed: int, parts: int = 240) -> tuple[Run, dict[int, Gpu], int, int]:
    rng = random.Random(seed)
    hosts, per_host = rng.choice([(2, 4), (3, 3), (4, 2)])
    workers = rng.choice([1, 2, 3])
    sched = Scheduler(depth=rng.choice([0, 1, 2]))
    gpus: dict[int, Gpu] = {}
    for h in range(hosts):
        sched.add_host(f"h{h}", h * per_host, per_host, workers=workers, budget=16 * GiB)
        for g in range(h * per_host, (h + 1) * per_host):
            gpus[g] = Gpu(f"h{h}", 1.0, workers)
    slow, cordoned = rng.sample(sorted(gpus), 2)
    gpus[slow].speed = rng.uniform(0.2, 0.4)
    t_cordon, t_uncordon = rng.uniform(2, 10), (rng.uniform(15, 30) if rng.random() < 0.5 else None)
    lose = rng.choice([h for h in range(hosts) if f"h{h}" not in (gpus[slow].host, gpus[cordoned].host)] + [None])
    t_lose = rng.uniform(5, 20)
    waiting = deque(f"p{i}" for i in range(parts))
    heap: list = []  # (finish time, seq, partition, gpu)
    seq, now, run = 0, 0.0, Run()
    live = set(gpus)
    is_cordoned = False

    def start(g: int) -> None:
        nonlocal seq
        G = gpus[g]
        while G.running < G.workers and G.queue:
            p = G.queue.popleft()
            G.running += 1
            seq += 1
            heapq.heappush(heap, (now + rng.uniform(0.5, 1.5) / G.speed, seq, p, g))

    def place() -> None:
        while waiting:
            slot = sched.place(waiting[0])
            if slot is None:
                return
            p = waiting.popleft()
            if is_cordoned and slot.gpu == cordoned:
                run.placed_while_cordoned.append((now, p))
            gpus[slot.gpu].queue.append(p)
            start(slot.gpu)

    place()
    while heap:
        now, _, p, g = heapq.heappop(heap)
        if not is_cordoned and now >= t_cordon and (t_uncordon is None or now < t_uncordon):
            sched.cordon(cordoned)
            is_cordoned = True
            run.held_at_cordon = len(sched.slots[cordoned].pending)
        elif is_cordoned and t_uncordon is not None and now >= t_uncordon:
            sched.cordon(cordoned, on=False)
            is_cordoned = False
        if lose is not None and now >= t_lose:  # the host's process dies: its work comes back
            lost = sched.remove_host(f"h{lose}")
            waiting.extendleft(reversed(lost))
            live -= {i for i, G in gpus.items() if G.host == f"h{lose}"}
            lose = None
        if g not in live:
            continue  # a lost host's late completion: ignored (the driver drops its events)
        gpus[g].running -= 1
        if sched.done(p) is not None:
            run.done[p] += 1
            run.by_gpu[g] += 1
            run.finished_on_cordoned += is_cordoned and g == cordoned
        start(g)
        place()
    return run, {g: gpus[g] for g in live}, slow, cordoned


@pytest.mark.parametrize("seed", range(40))
def test_uneven_gpus_exactly_once_cordon_respected_slow_gets_less(seed):
    run, gpus, slow, cordoned = simulate(seed)
    assert sorted(run.done) == sorted(f"p{i}" for i in range(240)) and set(run.done.values()) == {1}
    assert run.placed_while_cordoned == []
    # what the cordoned GPU held when cordoned still finishes there, and is counted once
    assert run.finished_on_cordoned <= run.held_at_cordon
    fast = [g for g in gpus if g not in (slow, cordoned)]  # gpus: those alive to the end
    assert fast and all(run.by_gpu[slow] < run.by_gpu[g] for g in fast), (run.by_gpu, slow)
    # 0.2-0.4x the speed: about that share of a fast GPU's (its queued `depth` adds a little)
    assert run.by_gpu[slow] < 0.6 * sum(run.by_gpu[g] for g in fast) / len(fast), (run.by_gpu, slow)


def test_cordon_names_its_gpu_lets_it_back_and_a_missing_one_is_refused():
    s = Scheduler(depth=0)
    s.add_host("h0", 0, 2, workers=1, budget=GiB)
    assert s.cordon(1) == ("h0", 1)
    assert s.place("a").gpu == 0 and s.place("b") is None  # gpu1 cordoned, gpu0 at its bound
    s.cordon(1, on=False)
    assert s.place("b").gpu == 1
    s.cordon(0)
    assert s.remove_host("h0") == ["a", "b"] and s.cordoned == set()
    with pytest.raises(ValueError, match="no GPU 7 in the fleet"):
        s.cordon(7)


def test_fleet_controller_refuses_cancel_and_requeue_in_words():
    from prover.config import RunConfig
    from prover.fleet.control import FleetController
    from prover.pipeline.control.controller import Knobs

    fc = FleetController(None, Knobs.from_config(RunConfig(backend="sim")))
    for spec in ("cancel=s3p2", "requeue=s3p2"):
        with pytest.raises(ValueError, match="on a fleet: not yet"):
            fc.apply(spec, source="test")
    with pytest.raises(ValueError, match="cordon takes a GPU"):
        fc.apply("cordon=h1", source="test")
