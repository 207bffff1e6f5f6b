"""CudaDevice on a real GPU (pytest -m gpu; skipped where CuPy or a GPU is missing).

Real allocations under an emulated budget, real device-global sync semantics (the seed's
measurement: a device sync waits for another stream's kernels, a stream-ordered allocation
does not), NVML figures, and the engine's record path on backend=cuda with both mem_sync
settings."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

cuda_mod = pytest.importorskip("prover.device.cuda")
ok, why = cuda_mod.available()
if not ok:
    pytest.skip(f"no CUDA: {why}", allow_module_level=True)

from prover import events as ev  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.device.base import OomError  # noqa: E402
from prover.device.cuda import CudaDevice  # noqa: E402
from prover.device.profiles import get_profile  # noqa: E402

GiB = 1024**3


def make(budget=24 * GiB, scale=1.0):
    got = []
    lock = threading.Lock()

    def emit(cls, **kw):
        with lock:
            e = cls(t=0.0, **kw)
            got.append(e)
            return e

    d = CudaDevice(0, get_profile("rtx5070ti-16g"), budget, emit, threading.Event(), time_scale=scale)
    return d, got


def test_info_nvml_and_budget_real_allocations():
    d, got = make()
    d.announce()
    info = [e for e in got if isinstance(e, ev.GpuInfo)][0]
    assert not info.simulated and info.total_bytes > 20 * GiB
    if d.nvml:
        used, total = d.device_memory()
        assert used and total and total >= info.total_bytes * 0.9
    s = d.stream("w0")
    used0 = d.device_memory()[0]
    a = d.alloc("w0", "p0", "d_bc", 12 * GiB, s)
    b = d.alloc("w1", "p1", "d_bc", 12 * GiB, s)
    d.upload(s, [(a, 0, np.zeros(0, np.uint8))], 0.0)  # the buffer touched, nothing copied
    s.handle.synchronize()
    if d.nvml:
        assert d.device_memory()[0] - used0 >= 20 * GiB  # real memory behind the bookkeeping
    with pytest.raises(OomError):
        d.alloc("w2", "p2", "d_bc", 12 * GiB, s)  # a 24 GiB card emulated on a large one
    d.free(a, s)
    d.free(b, s)
    d.pool_trim()
    d.close()


def test_device_sync_waits_for_other_streams_stream_alloc_does_not():
    d, _ = make()
    busy, mine = d.stream("busy"), d.stream("mine")
    d.launch(busy, "kernel", 1.0, None)  # 1 s of real GPU work on another worker's stream
    t0 = time.monotonic()
    buf = d.alloc("mine", "p", "d_a", 4 * GiB, mine)
    k = d.upload(mine, [(buf, 0, np.zeros(0, np.uint8))], 0.0)
    d.wait(k)
    t_stream = time.monotonic() - t0
    t1 = time.monotonic()
    d.device_sync()
    t_sync = time.monotonic() - t1 + t_stream
    assert t_stream < 0.5, t_stream
    assert t_sync > 0.8, t_sync
    d.free(buf, mine)
    d.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mem_sync", ["device", "stream"])
def test_engine_records_on_cuda(tmp_path, mem_sync):
    from tests.helpers.invariants import InvariantChecker
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold
    from prover.fold.summary import summarize

    cfg = load_config(None, backend="cuda", vram_budget="two-prestage", workers_per_gpu=3, lock_mode="two-lock",
                      mem_sync=mem_sync, constraints_log2=8, sectors=1, partitions=8, time_scale=0.3)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(240)
    assert chk.final() == []
    sm = summarize(fold(chk.events))
    assert sm.backend == "cuda" and not sm.simulated and sm.all_proofs_verified and sm.partitions_ok == 8
    assert any(e.kind == "vram_sample" and e.device_used for e in chk.events)
    if mem_sync == "stream":
        assert sm.fallbacks == 0
