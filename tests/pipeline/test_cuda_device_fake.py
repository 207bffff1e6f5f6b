"""CudaDevice's code paths against a stand-in `cupy` module (runs everywhere, no GPU).

It checks the calls CudaDevice makes have the shapes CuPy expects (streams and devices as
context managers, MemoryPointer methods, c_void_p host pointers, RawKernel launches), that
the engine runs end to end on backend=cuda with impl "cpu-reference", that the budget is
enforced before any real allocation, and that a missing NVML falls back cleanly. The real
thing is tests/gpu/test_cuda_device.py (marked gpu)."""
from __future__ import annotations

import ctypes
import sys
import types

import numpy as np
import pytest


class _Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


_BACKED = 64 << 20  # allocations up to this size get real host memory behind them


class FakeMemPtr:
    def __init__(self, pool, size, off=0, mem=None):
        self.pool, self.size, self.off = pool, size, off
        self.mem = mem if mem is not None else (np.zeros(size, np.uint8) if size <= _BACKED else None)

    def memset_async(self, value, size, stream=None):
        assert 0 <= size <= self.size
        if self.mem is not None:
            self.mem[self.off:self.off + size] = value
        self.pool.log.append(("memset", size))

    def copy_from_host_async(self, mem, size, stream=None):
        assert isinstance(mem, ctypes.c_void_p), "CuPy reads mem.value"
        assert size <= self.size - self.off
        if self.mem is not None:
            ctypes.memmove(self.mem.ctypes.data + self.off, mem.value, size)
        self.pool.log.append(("h2d", size))

    def __add__(self, off):
        return FakeMemPtr(self.pool, self.size, self.off + off, self.mem)

    def __del__(self):
        if self.off == 0:
            self.pool.live -= self.size


class FakePool:
    def __init__(self):
        self.live = 0
        self.log = []
        self.trims = 0

    def malloc(self, size):
        self.live += size
        return FakeMemPtr(self, size)

    def free_all_blocks(self, stream=None):
        self.trims += 1

    def total_bytes(self):
        return self.live


class FakeStream(_Ctx):
    def __init__(self, non_blocking=False):
        pass

    def synchronize(self):
        pass


class FakeEvent:
    def __init__(self, block=False, disable_timing=False):
        self.done = True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass


def make_fake_cupy():
    cp = types.ModuleType("cupy")
    cuda = types.SimpleNamespace()
    state = {"syncs": 0, "spins": [], "pools": []}

    class Device(_Ctx):
        def __init__(self, i=0):
            self.id = i
            self.pci_bus_id = "0000:00:00.0"

    def async_pool():
        p = FakePool()
        state["pools"].append(p)
        return p

    def device_sync():
        state["syncs"] += 1

    cuda.Device = Device
    cuda.Stream = FakeStream
    cuda.Event = FakeEvent
    cuda.MemoryAsyncPool = async_pool
    cuda.MemoryPool = async_pool
    cuda.memory = types.SimpleNamespace(OutOfMemoryError=type("OutOfMemoryError", (Exception,), {}))
    cuda.runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDeviceProperties=lambda i: {"name": b"Fake H200", "clockRate": 1_000_000},
        memGetInfo=lambda: (140 << 30, 141 << 30),
        deviceSynchronize=device_sync,
    )
    cuda.get_elapsed_time = lambda a, b: 100.0

    class RawKernel:
        def __init__(self, src, name):
            assert "clock64" in src and name == "c2tui_spin"

        def __call__(self, grid, block, args):
            state["spins"].append(int(args[0]))

    def ndarray(shape, dtype=None, memptr=None):  # a device array over a buffer's memory
        assert memptr is not None and memptr.mem is not None
        return np.ndarray(shape, dtype=dtype, buffer=memptr.mem, offset=memptr.off)

    cp.cuda = cuda
    cp.get_default_memory_pool = lambda: state.setdefault("default_pool", FakePool())
    cp.ndarray = ndarray
    cp.uint64 = np.uint64
    cp.RawKernel = RawKernel
    cp.int64 = int
    cp._state = state
    return cp


@pytest.fixture
def fake_cupy(monkeypatch):
    cp = make_fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, "prover.kernels.cuda_backend", None)  # no kernels: cpu-reference
    return cp


def test_cuda_device_budget_and_calls(fake_cupy):
    import threading

    from prover import events as ev
    from prover.device.base import OOM_CAUSES, OomError
    from prover.device.cuda import CudaDevice, available
    from prover.device.profiles import get_profile

    assert available() == (True, "")
    got = []
    emit = lambda cls, **kw: got.append(cls(t=0.0, **kw))  # noqa: E731
    d = CudaDevice(0, get_profile("rtx5070ti-16g"), 24 << 30, emit, threading.Event(), time_scale=0.001, nvml=False)
    assert d.clock_khz == 1_000_000 and d.pool_kind == "async" and not d.simulated
    d.announce()
    info = [e for e in got if isinstance(e, ev.GpuInfo)][0]
    assert info.name == "Fake H200" and info.nvml is False and info.simulated is False and info.budget_bytes == 24 << 30
    s = d.stream("g0w0")
    bufs = [d.alloc("g0w0", "s0p0", n, b, s) for n, b in (("d_a", 4 << 30), ("d_bc", 8 << 30))]
    more = [d.alloc("g0w1", "s0p1", "d_bc", 12 << 30, s)]
    pool = fake_cupy._state["pools"][0]
    assert pool.live == 24 << 30
    with pytest.raises(OomError) as refused:
        d.alloc("g0w2", "s0p2", "d_a", 1 << 30, s)
    assert pool.live == 24 << 30  # refused before any real allocation
    # the catcher emits the Oom, saying what came of it (issue 36: retried vs failed)
    assert refused.value.event("retried") == {"gpu": 0, "part": "s0p2", "worker": "g0w2", "requested": 1 << 30,
                                              "free": 0, "outcome": "retried", "cause": refused.value.cause}
    assert refused.value.cause in OOM_CAUSES  # and why (issue 33: switch, budget, leak, ...)
    import numpy as np

    z = np.zeros(16, np.uint64)
    k = d.upload(s, [(bufs[0], 0, z), (bufs[1], 0, z), (bufs[1], bufs[1].nbytes // 2, z)], 0.018)
    d.wait(k)
    assert ("h2d", 128) in pool.log and ("memset", 4 << 30) in pool.log
    k2 = d.launch(s, "ntt_h", 0.69, lambda: 42)
    d.wait(k2)
    assert k2.result == 42 and fake_cupy._state["spins"]  # paced by a spin kernel
    d.device_sync()
    d.pool_trim()
    assert fake_cupy._state["syncs"] >= 2 and pool.trims == 1
    for b in bufs + more:
        d.free(b, s)
    assert d.pool.used == 0
    d.close()


@pytest.mark.timeout(60)
def test_engine_on_fake_cuda(fake_cupy):
    from tests.helpers.invariants import InvariantChecker
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.pipeline.nullphases import NullPhases
    from prover.fold.apply import fold

    cfg = load_config(None, backend="cuda", profile="tiny", time_scale=1.0, sectors=1, partitions=6,
                      workers_per_gpu=3, mem_sync="device", faults={"nvml_missing": True})
    chk = InvariantChecker()
    eng = Engine(cfg, [chk], phases=NullPhases())
    assert eng.backend == "cuda"
    eng.start()
    assert eng.wait(30)
    assert chk.final() == []
    st = fold(chk.events)
    assert st.partitions_ok == 6 and not st.simulated and st.backend == "cuda"
    impls = {e.impl for e in chk.events if e.kind == "phase_start" and e.phase.value in ("ntt_h", "msm")}
    assert impls == {"cpu-reference"}
    assert st.gpus[0].nvml is False and st.gpus[0].name == "Fake H200"


def cpu_backend_module(staged=None):
    """A stand-in for prover.kernels.cuda_backend: a "cuda" backend whose primitives are the CPU
    reference's (a test double of the protocol; `staged` adds an in-place NTT-H primitive)."""
    from prover import backend as B

    class StandIn(B.ReferenceBackend):
        name, impl = "cuda", "cuda"
        capabilities = B.ALL - {B.NTT_H_STAGED, B.PINNED, B.SETUP_DEVICE, B.R1CS} | ({B.NTT_H_STAGED} if staged else set())
        host_ntt_calls = 0

        def __init__(self, settings):
            self.settings = settings

        def ntt_h(self, a, b, c):
            StandIn.host_ntt_calls += 1
            return super().ntt_h(a, b, c)

        def ntt_h_staged(self, d_a, d_b, d_c, host=None):
            return staged(d_a, d_b, d_c)

        def device_key(self):
            return 0

    mod = types.ModuleType("prover.kernels.cuda_backend")
    mod.CudaBackend = StandIn
    return mod


def test_composition_over_a_device_backend_is_bit_identical():
    from prover import backend as B
    from prover.groth16 import compose
    from prover.groth16 import phases as P
    from prover.pipeline.phases import Deferred, settle
    from prover.settings import KernelSettings

    fns = compose.GpuCompute.over(B.Fallback(cpu_backend_module().CudaBackend(KernelSettings()), lambda *a, **k: None))
    assert fns.in_use() == ["b_g2_msm", "msm_g1", "ntt_h"]
    c = P.make_circuit(8, 1)
    pk, vk = P.load_or_setup(c, 1)
    syn = P.synthesize(c, 3)
    prep = P.prep_msm(syn, pk)
    h = fns.ntt_h(syn.a, syn.b, syn.c)
    # the MSMs' host step is left for after the GPU section (a Deferred), with the same bytes
    g1, b2 = fns.msm_g1(prep, h, pk), fns.b_g2_msm(prep, pk)
    assert isinstance(g1, Deferred) and isinstance(b2, Deferred)
    assert settle(g1) == P.msm_g1(prep, h, pk)
    assert settle(b2) == P.b_g2_msm(prep, pk)
    assert settle(P.b_g2_msm(prep, pk)) == P.b_g2_msm(prep, pk)  # anything else passes through


@pytest.mark.timeout(60)
def test_engine_uses_cuda_kernels_when_present(fake_cupy, monkeypatch):
    from tests.helpers.invariants import InvariantChecker
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold

    monkeypatch.setitem(sys.modules, "prover.kernels.cuda_backend", cpu_backend_module())
    cfg = load_config(None, backend="cuda", profile="tiny", constraints_log2=8, sectors=1, partitions=3,
                      workers_per_gpu=2, b_g2="gpu", faults={"nvml_missing": True})
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(60)
    assert chk.final() == []
    st = fold(chk.events)
    assert st.proofs_ok == 3 and st.proofs_failed == 0
    impls = {e.impl for e in chk.events if e.kind == "phase_start" and e.phase.value in ("ntt_h", "msm", "b_g2_msm")}
    assert impls == {"cuda"}


@pytest.mark.timeout(120)
def test_engine_ntt_h_reads_the_prestaged_buffers(fake_cupy, monkeypatch):
    """With a backend offering the staged NTT-H, the engine hands NTT-H views of the pre-staged d_a /
    d_bc (a at d_a + 0, b at d_bc + 0, c at d_bc + nbytes/2) instead of the host arrays; the
    in-place result (h in b's place) makes proofs that verify. b_g2 "auto" resolves to gpu."""
    from tests.helpers.invariants import InvariantChecker
    from prover.config import load_config
    from prover.device.cuda import CudaDevice
    from prover.groth16 import phases as P
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold

    seen, staged_bufs = [], []

    def ntt_h_device(d_a, d_b, d_c):
        seen.append((d_a, d_b, d_c))
        d_b[...] = P.ntt_h(d_a.copy(), d_b.copy(), d_c.copy())  # in place, h where b was (as the kernel)
        return d_b

    mod = cpu_backend_module(staged=ntt_h_device)
    monkeypatch.setitem(sys.modules, "prover.kernels.cuda_backend", mod)
    real_alloc = CudaDevice._device_alloc

    def alloc(self, buf, stream):
        real_alloc(self, buf, stream)
        staged_bufs.append(buf.handle.mem)

    monkeypatch.setattr(CudaDevice, "_device_alloc", alloc)
    cfg = load_config(None, backend="cuda", profile="native", constraints_log2=8, modelled_log2=10, sectors=1,
                      partitions=3, workers_per_gpu=2, faults={"nvml_missing": True})
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(90)
    assert chk.final() == []
    st = fold(chk.events)
    assert st.proofs_ok == 3 and st.proofs_failed == 0 and st.knobs["b_g2"] == "gpu"
    assert len(seen) == 3
    assert mod.CudaBackend.host_ntt_calls == 0, "NTT-H took the host arrays although the buffers were pre-staged"
    for d_a, d_b, d_c in seen:
        assert d_a.shape == (256, 4) and d_a.dtype == np.uint64
        a_mem = next(m for m in staged_bufs if np.shares_memory(d_a, m))
        bc_mem = next(m for m in staged_bufs if np.shares_memory(d_b, m))
        assert d_a.ctypes.data == a_mem.ctypes.data and d_b.ctypes.data == bc_mem.ctypes.data
        assert d_c.ctypes.data == bc_mem.ctypes.data + bc_mem.nbytes // 2


@pytest.mark.parametrize("refusals", [1, 2])
def test_a_card_without_room_under_the_budget_is_an_oom_the_section_can_retry(fake_cupy, refusals):
    """2^24 on the H200 (12 workers, budget `card`): CuPy refused d_bc while the budget had room,
    and the partition failed on a bare DeviceError, counted as no OOM. Now the pools' cached
    blocks are given back and the allocation tried once more; if the card still has no room it is
    an OomError (cause `device`) that the section's catcher retries or fails, the budget untouched."""
    import threading

    from prover.device.base import OOM_CAUSES, OomError
    from prover.device.cuda import CudaDevice
    from prover.device.profiles import get_profile

    d = CudaDevice(0, get_profile("rtx5070ti-16g"), 24 << 30, lambda cls, **kw: None, threading.Event(),
                   time_scale=0.001, nvml=False)
    pool = fake_cupy._state["pools"][0]
    real, left = pool.malloc, [refusals]

    def refuse(size):
        if left[0]:
            left[0] -= 1
            raise fake_cupy.cuda.memory.OutOfMemoryError("Out of memory allocating")
        return real(size)

    pool.malloc = refuse
    s = d.stream("g0w0")
    if refusals == 1:  # the cached blocks were what filled the card: given back, the retry fits
        buf = d.alloc("g0w0", "s0p0", "d_bc", 1 << 30, s)
        assert buf.nbytes == 1 << 30 and pool.trims == 1 and fake_cupy._state["default_pool"].trims == 1
        assert d.pool.used == 1 << 30
        return
    with pytest.raises(OomError) as refused:
        d.alloc("g0w0", "s0p0", "d_bc", 1 << 30, s)
    assert refused.value.cause == "device" and "device" in OOM_CAUSES
    assert refused.value.event("retried")["part"] == "s0p0" and "not under the budget" in str(refused.value)
    assert d.pool.used == 0 and pool.live == 0  # nothing counted, nothing held
