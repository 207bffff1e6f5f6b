"""The CUDA backend: the kernels' primitives behind the compute protocol (prover/backend.py),
built with a run's KernelSettings (NTT and MSM builds, MSM window limit, H precompute, NVRTC
options, page-locked uploads). Primitives only: the Groth16 composition lives in
prover/groth16/compose.py, and nothing here imports groth16/ or pipeline/.

Every launch goes to CuPy's current stream: CudaDevice.launch runs the phases inside the
worker's stream context. Building one needs CuPy and a visible device (else it raises, and
prover.backend.select runs the reference)."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

import numpy as np

from prover.kernels import fixed_base, msm, ntt, pinned, r1cs, setup_gpu
from prover.kernels.cupy_util import _cp
from prover.settings import KernelSettings

_QUERY_GROUP = {"h": "g1", "l": "g1", "a": "g1", "b_g1": "g1", "b_g2": "g2"}


class CudaBackend:
    name, impl = "cuda", "cuda"

    def __init__(self, settings: KernelSettings) -> None:
        cp = _cp()
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device visible")
        self.settings = settings
        self.capabilities = frozenset({
            "ntt_h", "ntt_h_staged", "intt", "msm_g1", "msm_g2", "batch_add_g1", "batch_add_g2",
            "fixed_base_g1", "fixed_base_g2", "setup_device", "r1cs"} | ({"pinned"} if settings.pinned_host else set())
            | ({"lanes"} if settings.msm_lanes > 1 else set()))
        self._local = threading.local()  # each worker thread's side streams, per device

    # NTT ----------------------------------------------------------------------------------
    def ntt_h(self, a: Any, b: Any, c: Any) -> Any:
        # h stays on the device (a cupy array) for the MSM that reads it next
        return ntt.ntt_h_gpu(a, b, c, out_device=True, ks=self.settings)

    def ntt_h_staged(self, d_a: Any, d_b: Any, d_c: Any, host: Any = None) -> Any:
        # device views of the pre-staged buffers: transformed in place, no copy (h aliases d_a);
        # `host` is for a wrapper that re-runs a failure on the reference (prover.backend.Fallback)
        return ntt.ntt_h_device(d_a, d_b, d_c, ks=self.settings)

    def intt(self, x: np.ndarray) -> np.ndarray:
        return ntt.ntt_gpu(x, inverse=True, ks=self.settings)

    # R1CS products (abc gpu) -------------------------------------------------------------------
    def r1cs_arrays(self, plan: Any) -> dict[str, np.ndarray]:
        """A matrix's device form as host arrays by name: the caller allocates and uploads them
        (through its device's allocator, so the GPU's room counts them)."""
        return r1cs.device_arrays(plan)

    def r1cs_matrix(self, plan: Any, arrays: dict[str, Any]) -> r1cs.DeviceMatrix:
        return r1cs.DeviceMatrix(plan, arrays)

    def r1cs(self, mats: Any, vals: Any, tab: Any, outs: Any) -> bool:
        """A.z, B.z, C.z into `outs` (device (rows, 4) uint64 views), launched on the current stream;
        z in its upload form on the device (prover/host/zpack.py: its field values, its table)."""
        for m, out in zip(mats, outs):
            r1cs.matvec_gpu(m, vals, tab, out=out, ks=self.settings)
        return True

    # MSM ----------------------------------------------------------------------------------
    def points(self, pk: Any, query: str) -> msm.DevicePoints:
        """A key's query uploaded (Montgomery form on the device); the H query with its window
        shifts precomputed where msm_precompute allows. The upload is waited for: other
        workers' streams read the points next."""
        xy = getattr(pk, query + "_query")
        if isinstance(xy, setup_gpu.ResidentPoints):  # set up on a device and kept there: no upload
            pts = xy.on_current_device()
        else:
            pts = msm.DevicePoints(_QUERY_GROUP[query], xy, ks=self.settings)
        if query == "h" and self.settings.msm_precompute in ("auto", "h"):
            pts = msm._try_precompute(pts, self.settings.msm_precompute == "auto", None)
        _cp().cuda.get_current_stream().synchronize()
        return pts

    def msm(self, points: msm.DevicePoints, scalars: Any, group: str, rows: Any = None) -> msm.Pending:
        pts = points if rows is None else points.take(rows)
        return msm.msm_launch(pts, scalars, group=group, ks=self.settings)

    def batch_add(self, points: msm.DevicePoints, rows: Any, group: str) -> msm.Pending:
        return msm.batch_add_launch(points, rows, group=group, ks=self.settings)

    # setup, host memory -------------------------------------------------------------------
    def fixed_base(self, base_xy: np.ndarray, coeffs: np.ndarray, group: str) -> np.ndarray:
        return fixed_base.fixed_base_gpu(group, base_xy, coeffs, ks=self.settings)

    # key set-up on the device (prover/groth16/setup_device.py): device arrays in and out ----
    def setup_lagrange(self, tau: int, n: int) -> Any:
        return setup_gpu.lagrange(tau, n, self.settings)

    def setup_qap(self, matrix: Any, lag: Any) -> Any:
        return setup_gpu.qap(matrix, lag, self.settings)

    def setup_combo(self, u: Any, v: Any, w: Any, alpha: int, beta: int, gamma: int, delta: int, ni: int) -> Any:
        return setup_gpu.combo(u, v, w, alpha, beta, gamma, delta, ni, self.settings)

    def setup_scale(self, x: Any, k: int) -> Any:
        return setup_gpu.scale(x, k, self.settings, in_place=True)

    def setup_points(self, base_xy: np.ndarray, scalars: Any, group: str) -> Any:
        return setup_gpu.fixed_base_points(group, base_xy, scalars, self.settings)

    def setup_nonzero(self, x: Any) -> np.ndarray:
        return setup_gpu.nonzero_host(x, self.settings)

    def setup_upload(self, group: str, xy: np.ndarray) -> Any:
        """A key's query read from the cache, put on the device as resident points."""
        return setup_gpu.ResidentPoints.adopt(group, _cp().asarray(np.ascontiguousarray(xy)), self.settings)

    def setup_sync(self) -> None:
        """Wait for the set-up's kernels on the current stream (its steps are timed to here)."""
        _cp().cuda.get_current_stream().synchronize()

    def free_cached(self) -> None:
        """The set-up's freed scratch back to the device (CuPy's pool keeps freed blocks; the CPU
        emulator has no pool)."""
        pool = getattr(_cp(), "get_default_memory_pool", None)
        if pool is not None:
            pool().free_all_blocks()

    def pin(self, x: np.ndarray) -> np.ndarray:
        # size classes: CuPy's pinned pool reuses a block only at the same size
        return pinned.pinned_copy(x) if self.settings.pinned_host else x

    def to_host(self, x: Any) -> Any:
        return x.get() if type(x).__module__.startswith("cupy") else x

    def device_key(self) -> int:
        return int(_cp().cuda.Device().id)

    # lanes ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def lane(self, k: int) -> Iterator[None]:
        """Launches inside go to this thread's side stream k (of msm_lanes - 1, round robin;
        k = 0: the caller's stream). The side stream does not wait for the caller's: what runs
        there reads only the key's points (uploaded and waited for once) and what it uploads
        itself. On exit the caller's stream waits for it (an event), so whatever the caller
        enqueues next, the downloads included, comes after the lane's work."""
        sides = self.settings.msm_lanes - 1
        if k <= 0 or sides < 1:
            yield
            return
        cp = _cp()
        caller = cp.cuda.get_current_stream()
        side = self._side_stream(cp, (k - 1) % sides)
        with side:
            yield
        done = cp.cuda.Event(disable_timing=True)
        done.record(side)
        caller.wait_event(done)

    def _side_stream(self, cp: Any, i: int) -> Any:
        streams = getattr(self._local, "streams", None)
        if streams is None:
            streams = self._local.streams = {}
        key = (int(cp.cuda.Device().id), i)
        if key not in streams:
            streams[key] = cp.cuda.Stream(non_blocking=True)
        return streams[key]
