"""The device-global sync is recorded where the engine makes it: DeviceSyncStart names the
compute holder it waits behind, DeviceSyncEnd the wait, on every exit path (real LockSet and
SimDevice-like timing via a stub device whose sync blocks)."""
from __future__ import annotations

import threading
import time

import pytest

from prover import events as ev
from prover.pipeline.gpu.device_sync import device_sync
from prover.pipeline.gpu.locks import LockSet


class _Dev:
    """Only the two device-global calls: the sync waits `wait` seconds (a kernel behind it)."""

    def __init__(self, wait: float, fail: bool = False) -> None:
        self.wait, self.fail, self.calls = wait, fail, []

    def device_sync(self) -> None:
        self.calls.append("sync")
        time.sleep(self.wait)
        if self.fail:
            raise RuntimeError("device lost")

    def pool_trim(self) -> None:
        self.calls.append("trim")


def _bus():
    out: list = []
    t0 = time.monotonic()

    def emit(cls, **kw):
        e = cls(t=time.monotonic() - t0, **kw)
        out.append(e)
        return e

    return out, emit


def test_sync_waits_behind_the_compute_holder() -> None:
    out, emit = _bus()
    locks = LockSet(0, emit)
    held, go = threading.Event(), threading.Event()

    def holder():
        with locks.hold("compute", "g0w0", "s3p1"):
            held.set()
            go.wait(5)

    th = threading.Thread(target=holder)
    th.start()
    held.wait(5)
    with locks.hold("mem", "g0w2", "s3p2"):
        waited = device_sync(emit, time.monotonic, _Dev(0.02), locks, "g0w2", 0, "s3p2")  # type: ignore[arg-type]
    go.set()
    th.join()
    start = next(e for e in out if isinstance(e, ev.DeviceSyncStart))
    end = next(e for e in out if isinstance(e, ev.DeviceSyncEnd))
    assert (start.worker, start.part, start.behind_worker, start.behind_part) == ("g0w2", "s3p2", "g0w0", "s3p1")
    assert end.behind_worker == "g0w0" and end.start == start.t and end.duration == pytest.approx(waited)
    assert waited >= 0.02 and end.t >= start.t + 0.02


def test_single_waits_behind_nobody_and_end_is_emitted_on_failure() -> None:
    out, emit = _bus()
    locks = LockSet(0, emit)
    dev = _Dev(0.0, fail=True)
    with locks.hold("mem", "g0w1", "s0p0"), locks.hold("compute", "g0w1", "s0p0"):  # single: both its own
        with pytest.raises(RuntimeError):
            device_sync(emit, time.monotonic, dev, locks, "g0w1", 0, "s0p0")  # type: ignore[arg-type]
    kinds = [e.kind for e in out if e.kind.startswith("device_sync")]
    assert kinds == ["device_sync_start", "device_sync_end"]
    assert all(e.behind_worker is None for e in out if e.kind.startswith("device_sync"))
    assert dev.calls == ["sync"]  # the trim never ran after the failed sync


@pytest.mark.timeout(60)
@pytest.mark.parametrize("lock_mode", ["two-lock", "single"])
def test_engine_records_its_device_syncs(lock_mode: str) -> None:
    """Both call sites (two-lock's pre-stage under mem, single's inside both locks) emit them."""
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold

    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=8, sectors=1, partitions=3,
                      workers_per_gpu=2, lock_mode=lock_mode, mem_sync="device", seed=1)
    live: list = []
    eng = Engine(cfg, [live.append])
    eng.start()
    assert eng.wait(60)
    starts = [e for e in live if isinstance(e, ev.DeviceSyncStart)]
    ends = [e for e in live if isinstance(e, ev.DeviceSyncEnd)]
    assert len(starts) == len(ends) >= 3  # one per pre-stage (a retried GPU section: one more)
    if lock_mode == "single":
        assert all(e.behind_worker is None for e in starts)
    st = fold(live)
    assert st.gpus[0].device_syncs == len(ends) and st.gpus[0].device_sync is None
