from __future__ import annotations

import threading
import time

import pytest

from prover.device.base import Stopped
from prover.pipeline.gpu.locks import LockOrderError, LockSet


class Sink(list):
    def __call__(self, cls, **kw):
        self.append((cls.__name__, kw))


def test_events_wait_hold_and_release_on_exception():
    s = Sink()
    ls = LockSet(0, s)
    with pytest.raises(RuntimeError):
        with ls.both("w0", "p0"):
            raise RuntimeError("boom")
    assert ls.all_free() and ls.held_by("w0") == []
    names = [(n, kw["lock"]) for n, kw in s]
    assert names == [("LockRequested", "mem"), ("LockAcquired", "mem"), ("LockRequested", "compute"),
                     ("LockAcquired", "compute"), ("LockReleased", "compute"), ("LockReleased", "mem")]


def test_order_mem_after_compute_refused():
    ls = LockSet(0, Sink())
    with ls.hold("compute", "w0"):
        with pytest.raises(LockOrderError):
            with ls.hold("mem", "w0"):
                pass
        with pytest.raises(LockOrderError):
            with ls.hold("compute", "w0"):
                pass
    assert ls.all_free()


def test_fifo_and_wait_measured():
    s = Sink()
    ls = LockSet(0, s)
    order = []

    def worker(name):
        with ls.hold("compute", name):
            order.append(name)

    with ls.hold("compute", "first"):
        ts = []
        for i in range(4):
            t = threading.Thread(target=worker, args=(f"w{i}",))
            t.start()
            ts.append(t)
            while ls.locks["compute"].waiting < i + 1:
                time.sleep(0.001)
        time.sleep(0.05)
    for t in ts:
        t.join(5)
    assert order == ["w0", "w1", "w2", "w3"]
    waits = [kw["wait"] for n, kw in s if n == "LockAcquired" and kw["worker"] != "first"]
    assert min(waits) >= 0.04


def test_acquire_interrupted_by_stop():
    stop = threading.Event()
    ls = LockSet(0, Sink(), stop)
    errs = []

    def waiter():
        try:
            with ls.hold("mem", "w1"):
                pass
        except Stopped:
            errs.append("stopped")

    with ls.hold("mem", "w0"):
        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.05)
        stop.set()
        t.join(2)
    assert errs == ["stopped"] and ls.all_free() and ls.locks["mem"].waiting == 0


def test_handover_queues_for_the_next_lock_before_letting_the_held_one_go():
    """two-lock's mem -> compute: the place in compute's queue is taken while mem is still held,
    so compute is served in mem order; everything is let go on the way out."""
    s = Sink()
    ls = LockSet(0, s)
    with ls.handover("mem", "compute", "w0", "p0") as h:
        assert ls.held_by("w0") == ["mem"]
        h.next()
        assert ls.held_by("w0") == ["compute"]
    assert ls.all_free() and ls.held_by("w0") == []
    assert [(n, kw["lock"]) for n, kw in s] == [
        ("LockRequested", "mem"), ("LockAcquired", "mem"), ("LockRequested", "compute"), ("LockReleased", "mem"),
        ("LockAcquired", "compute"), ("LockReleased", "compute")]


def _held_until(ls: LockSet, name: str, release: threading.Event) -> threading.Thread:
    """Another worker holding `name` until `release` is set."""
    def hold() -> None:
        with ls.hold(name, "holder"):
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    while ls.locks[name].holder != "holder":
        time.sleep(0.001)
    return t


def test_handover_keeps_mem_order():
    """w1 takes mem after w0: its place in compute's queue comes after w0's."""
    ls, release, order = LockSet(0, Sink()), threading.Event(), []
    holder = _held_until(ls, "compute", release)

    def worker(name: str) -> None:
        with ls.handover("mem", "compute", name) as h:
            h.next()
            order.append(name)

    w0 = threading.Thread(target=worker, args=("w0",))
    w0.start()
    while ls.locks["compute"].waiting < 1:  # w0 queued for compute (and let mem go)
        time.sleep(0.001)
    w1 = threading.Thread(target=worker, args=("w1",))
    w1.start()
    while ls.locks["compute"].waiting < 2:
        time.sleep(0.001)
    release.set()
    for t in (holder, w0, w1):
        t.join(5)
    assert order == ["w0", "w1"] and ls.all_free()


def test_handover_withdraws_its_place_on_a_stop():
    stop, release, got = threading.Event(), threading.Event(), []
    ls = LockSet(0, Sink(), stop)
    holder = _held_until(ls, "compute", release)

    def w1() -> None:
        try:
            with ls.handover("mem", "compute", "w1") as h:
                h.next()
        except Stopped:
            got.append("stopped")

    t = threading.Thread(target=w1)
    t.start()
    while ls.locks["compute"].waiting < 1:
        time.sleep(0.001)
    stop.set()
    t.join(5)
    release.set()
    holder.join(5)
    assert got == ["stopped"] and ls.locks["compute"].waiting == 0 and ls.held_by("w1") == [] and ls.all_free()
