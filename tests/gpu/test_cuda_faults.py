"""Real CUDA errors from CuPy on the GPU (issue 7): a failed kernel launch and a real
out-of-memory. Each ends clearly, releases everything, and the run goes on."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu  # tests/gpu/conftest.py skips these where no CUDA device is visible

GiB = 1024**3


def _bad_launch() -> None:
    """A real CUDA error: 4096 threads per block is over the limit (CUDA_ERROR_INVALID_VALUE)."""
    import cupy as cp

    cp.RawKernel('extern "C" __global__ void c2tui_bad() {}', "c2tui_bad")((1,), (4096,), ())


@pytest.mark.timeout(180)
def test_a_real_cuda_error_in_a_kernel_is_survived(monkeypatch):
    from tests.helpers.invariants import InvariantChecker
    from prover.config import load_config
    from prover.kernels import ntt
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold

    # the engine's NTT-H runs ntt_h_device on the pre-staged buffers (its CPU fallback then
    # reads the host arrays)
    real, calls = ntt.ntt_h_device, [0]

    def flaky(*args, **kwargs):
        calls[0] += 1
        if calls[0] <= 2:
            _bad_launch()
        return real(*args, **kwargs)

    monkeypatch.setattr(ntt, "ntt_h_device", flaky)
    cfg = load_config(None, backend="cuda", profile="native", constraints_log2=8, modelled_log2=10,
                      workers_per_gpu=2, lock_mode="two-lock", mem_sync="stream", sectors=1, partitions=4)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(150)
    assert chk.final() == []
    st = fold(chk.events)
    assert st.partitions_ok == 4 and st.proofs_ok == 4 and st.proofs_failed == 0
    notes = [e.text for e in chk.events if e.kind == "note" and "on the GPU failed" in e.text]
    assert len(notes) == 2 and all("CUDA" in n or "cuda" in n.lower() for n in notes), notes


def test_a_real_cuda_oom_is_a_clear_error_and_the_device_stays_usable():
    import threading

    from prover.device.base import DeviceError, OomError
    from prover.device.cuda import CudaDevice
    from prover.device.profiles import get_profile

    d = CudaDevice(0, get_profile("rtx5070ti-16g"), 4096 * GiB, lambda cls, **kw: cls(t=0.0, **kw),
                   threading.Event(), time_scale=1.0)
    s = d.stream("g0w0")
    with pytest.raises((DeviceError, OomError)) as info:
        d.alloc("g0w0", "s0p0", "d_bc", 1024 * GiB, s)  # far more than the card has
    assert "MiB" in str(info.value)
    assert d.pool.used == 0
    buf = d.alloc("g0w0", "s0p0", "d_a", 1 * GiB, s)
    d.free(buf, s)
    assert d.pool.used == 0
    d.close()
