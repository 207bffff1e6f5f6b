from __future__ import annotations

import threading
import time

import pytest

from prover.device.base import Stopped
from prover.pipeline.locks import LockOrderError, LockSet


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
