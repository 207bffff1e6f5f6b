"""The compute protocol: the primitives a Groth16 prove needs from a device, and nothing of
Groth16 itself (the prove is composed once over them, prover/groth16/compose.py).

    Backend                 the protocol (structural: kernels/ never imports this module)
    ReferenceBackend        the CPU reference (numpy NTT, py_arkworks MSMs); every result of
                            another backend must equal its bytes (tests/backends/)
    Fallback                a failed primitive of a device backend re-runs on the reference,
                            with a note (the first few) -- today's one fallback path
    select(...)             the one place that decides which backend a run uses

Primitives (formats: prover/field/params.py): ``ntt_h(a, b, c)``; ``ntt_h_staged(d_a, d_b, d_c,
host=None)`` in place on device buffers (``host``: the same a, b, c on the host, for a backend
that re-runs a failed call on the reference); ``points(pk, query)`` a proving key's query as the backend holds
it (uploaded once); ``msm(points, scalars, group, rows=None)`` and ``batch_add(points, rows,
group)`` launched now and read later (``Pending.fetch()`` waits and downloads under the GPU
section and returns the host step, run after it); ``fixed_base(base_xy, coeffs, group)``;
``intt(x)``; ``pin(array)`` page-locked host copies; ``to_host(x)``; the R1CS products on the device
(capability ``r1cs``: ``r1cs_arrays(plan)`` a matrix's device form as host arrays by name,
``r1cs_matrix(plan, arrays)`` that form over device arrays allocated by the caller, ``r1cs(mats, z,
cls, outs)`` A.z, B.z, C.z launched into `outs`); ``lane(k)`` a context in
which launches go to the backend's k-th lane (k = 0: the caller's stream), so that independent
MSMs overlap on the device (capability ``lanes``; without it the composition runs them in order).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from prover import events as ev
from prover.device.base import Stopped
from prover.field import curve, ntt
from prover.settings import KernelSettings

Emit = Callable[..., Any]
Finish = Callable[[], bytes]

# capabilities: the primitives a backend runs itself (the rest a Fallback gives the reference)
NTT_H, NTT_H_STAGED, INTT = "ntt_h", "ntt_h_staged", "intt"
MSM_G1, MSM_G2, BATCH_ADD_G1, BATCH_ADD_G2 = "msm_g1", "msm_g2", "batch_add_g1", "batch_add_g2"
FIXED_BASE_G1, FIXED_BASE_G2, PINNED = "fixed_base_g1", "fixed_base_g2", "pinned"
LANES = "lanes"  # launches inside lane(k) run beside the caller's stream (else in order)
# the key set-up's steps on the device, arrays kept there (setup_lagrange, setup_qap, setup_combo,
# setup_scale, setup_points, setup_nonzero: prover/groth16/setup_device.py composes them)
SETUP_DEVICE = "setup_device"
R1CS = "r1cs"  # A.z, B.z, C.z on the device over a circuit's resident matrices (abc gpu)
ALL = frozenset({NTT_H, NTT_H_STAGED, INTT, MSM_G1, MSM_G2, BATCH_ADD_G1, BATCH_ADD_G2, FIXED_BASE_G1,
                 FIXED_BASE_G2, PINNED, LANES, SETUP_DEVICE, R1CS})
_NOTED_FAILURES = 3


Host = tuple[Any, Any, Any] | Callable[[], tuple[Any, Any, Any]]  # a, b, c on the host, or how to make them


def host_arrays(host: Host) -> tuple[Any, Any, Any]:
    """a, b, c on the host: as given, or made now (the GPU made them: abc gpu)."""
    return host() if callable(host) else host


class Pending(Protocol):
    def fetch(self) -> Finish: ...


@runtime_checkable
class Backend(Protocol):
    name: str  # "reference", "cuda"
    impl: str  # the PhaseStart impl label of its phases
    capabilities: frozenset[str]

    def ntt_h(self, a: Any, b: Any, c: Any) -> Any: ...
    def ntt_h_staged(self, d_a: Any, d_b: Any, d_c: Any, host: Host | None = None) -> Any: ...
    def intt(self, x: np.ndarray) -> np.ndarray: ...
    def points(self, pk: Any, query: str) -> Any: ...
    def msm(self, points: Any, scalars: Any, group: str, rows: Any = None) -> Pending: ...
    def batch_add(self, points: Any, rows: Any, group: str) -> Pending: ...
    def fixed_base(self, base_xy: np.ndarray, coeffs: np.ndarray, group: str) -> np.ndarray: ...
    def pin(self, x: np.ndarray) -> np.ndarray: ...
    def to_host(self, x: Any) -> Any: ...
    def device_key(self) -> Any: ...  # the device this thread's calls go to (per-device copies)
    def lane(self, k: int) -> contextlib.AbstractContextManager[None]: ...


class Deferred:
    """A result whose last, host-only step (the MSMs' Horner sums of window sums, the partial
    sums of a query) is left for after the GPU section: the GPU phase waits for its kernels and
    downloads their few bytes under the compute lock, and the worker finishes them in
    `assemble`, outside it, while the next holder's kernels run."""

    __slots__ = ("_finish", "_value", "_done")

    def __init__(self, finish: Callable[[], Any]) -> None:
        self._finish: Callable[[], Any] | None = finish
        self._value: Any = None
        self._done = False

    def result(self) -> Any:
        if not self._done:
            assert self._finish is not None  # set until the first result
            self._value, self._done = self._finish(), True
            self._finish = None  # the downloaded data goes with it
        return self._value


def settle(x: Any) -> Any:
    """x's value: a Deferred finished now, anything else as it is."""
    return x.result() if isinstance(x, Deferred) else x


def on_host(x: Any) -> Any:
    """A device array (CuPy) as numpy; anything else as it is."""
    return x.get() if type(x).__module__.startswith("cupy") else x


class Ready:
    """A Pending whose work has run already (the reference computes when launched)."""

    def __init__(self, value: bytes) -> None:
        self.value = value

    def fetch(self) -> Finish:
        return lambda: self.value


_GROUPS: dict[str, tuple[Any, ...]] = {"g1": (curve.msm_g1, curve.batch_add_g1, curve.g1_to_bytes, curve.g1_generator, curve.fixed_base_g1,
                  curve.g1_from_bytes),
           "g2": (curve.msm_g2, curve.batch_add_g2, curve.g2_to_bytes, curve.g2_generator, curve.fixed_base_g2,
                  curve.g2_from_bytes)}


class ReferenceBackend:
    """The CPU reference: numpy Fr and NTT (prover.field), py_arkworks MSMs."""

    name, impl = "reference", "cpu-reference"
    capabilities = ALL - {NTT_H_STAGED, PINNED, LANES, SETUP_DEVICE, R1CS}

    def ntt_h(self, a: Any, b: Any, c: Any) -> np.ndarray:
        return ntt.ntt_h(on_host(a), on_host(b), on_host(c))

    def ntt_h_staged(self, d_a: Any, d_b: Any, d_c: Any, host: Host | None = None) -> np.ndarray:
        return self.ntt_h(d_a, d_b, d_c)

    def intt(self, x: np.ndarray) -> np.ndarray:
        return ntt.intt(x)

    def points(self, pk: Any, query: str) -> np.ndarray:
        x = getattr(pk, query + "_query")
        return x if isinstance(x, np.ndarray) else x.to_host()  # a query resident on a device: its bytes

    def msm(self, points: Any, scalars: Any, group: str, rows: Any = None) -> Ready:
        msm, _, dump = _GROUPS[group][:3]
        pts = points[: len(scalars)] if rows is None else points[on_host(rows)]
        return Ready(dump(msm(pts, on_host(scalars))))

    def batch_add(self, points: Any, rows: Any, group: str) -> Ready:
        _, add, dump = _GROUPS[group][:3]
        return Ready(dump(add(points[on_host(rows)])))

    def fixed_base(self, base_xy: np.ndarray, coeffs: np.ndarray, group: str) -> np.ndarray:
        load, table = _GROUPS[group][5], _GROUPS[group][4]
        return table(load(bytes(base_xy)), coeffs)

    def pin(self, x: np.ndarray) -> np.ndarray:
        return x

    def to_host(self, x: Any) -> Any:
        return on_host(x)

    def device_key(self) -> Any:
        return None

    def lane(self, k: int) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


REFERENCE = ReferenceBackend()


class _Points:
    """A query as both backends hold it: the device's copy (None once its upload failed) and
    the host array the reference reads, made when first read (a key resident on the device has
    no host copy: its tens of GiB come down only if the reference ever needs them)."""

    __slots__ = ("device", "_host", "_make", "_lock")

    def __init__(self, device: Any, host: Callable[[], np.ndarray]) -> None:
        self.device, self._make, self._lock = device, host, threading.Lock()
        self._host: np.ndarray | None = None

    @property
    def host(self) -> np.ndarray:
        with self._lock:
            if self._host is None:
                self._host = self._make()
            return self._host


class _FallbackPending:
    def __init__(self, pending: Pending, redo: Callable[[], Pending], note: Callable[[Exception], None]) -> None:
        self._pending, self._redo, self._note = pending, redo, note

    def fetch(self) -> Finish:
        try:
            return self._pending.fetch()
        except Stopped:
            raise
        except Exception as exc:
            self._note(exc)
            return self._redo().fetch()


class Fallback:
    """A device backend whose failed primitive (at launch or at download) re-runs on the
    reference with host copies of its inputs, with a note for the first few failures."""

    def __init__(self, primary: Any, emit: Emit, reference: ReferenceBackend = REFERENCE) -> None:
        self.primary, self.reference, self.emit = primary, reference, emit
        self.name, self.impl = primary.name, primary.impl
        self.capabilities = frozenset(primary.capabilities)
        self._failures = 0
        self._lock = threading.Lock()

    def _failed(self, what: str) -> Callable[[Exception], None]:
        def note(exc: Exception) -> None:
            with self._lock:
                self._failures += 1
                n = self._failures
            if n <= _NOTED_FAILURES:
                self.emit(ev.Note, level="warn", text=f"{what} on the GPU failed, CPU reference used: {exc}")
        return note

    def _try(self, what: str, cap: str, run: Callable[[], Any], redo: Callable[[], Any]) -> Any:
        if cap not in self.capabilities:
            return redo()
        try:
            return run()
        except Stopped:
            raise
        except Exception as exc:
            self._failed(what)(exc)
            return redo()

    def ntt_h(self, a: Any, b: Any, c: Any) -> Any:
        return self._try("ntt_h", NTT_H, lambda: self.primary.ntt_h(a, b, c),
                         lambda: self.reference.ntt_h(a, b, c))

    def ntt_h_staged(self, d_a: Any, d_b: Any, d_c: Any, host: Host | None = None) -> Any:
        # the views may be half-transformed when the GPU call fails: the reference then reads
        # the host arrays, never the views (made then, where the GPU made a, b, c: abc gpu)
        return self._try("ntt_h", NTT_H_STAGED, lambda: self.primary.ntt_h_staged(d_a, d_b, d_c),
                         lambda: self.reference.ntt_h(*(host_arrays(host) if host is not None else (d_a, d_b, d_c))))

    def r1cs(self, mats: Any, vals: Any, tab: Any, outs: tuple[Any, Any, Any]) -> bool:
        """A.z, B.z, C.z launched into `outs` from z's upload form (vals, tab); False (noted) where the
        primary cannot or failed: the caller makes them on the host."""
        return bool(self._try("r1cs", R1CS, lambda: self.primary.r1cs(mats, vals, tab, outs) or True, lambda: False))

    def r1cs_arrays(self, plan: Any) -> dict[str, np.ndarray]:
        return self.primary.r1cs_arrays(plan)  # asked only where `r1cs` is a capability (the primary's)

    def r1cs_matrix(self, plan: Any, arrays: dict[str, Any]) -> Any:
        return self.primary.r1cs_matrix(plan, arrays)

    def intt(self, x: np.ndarray) -> np.ndarray:
        return self._try("intt", INTT, lambda: self.primary.to_host(self.primary.intt(x)),
                         lambda: self.reference.intt(x))

    def points(self, pk: Any, query: str) -> _Points:
        cap = MSM_G2 if query.endswith("g2") else MSM_G1
        return _Points(self._try(f"{query} query upload", cap, lambda: self.primary.points(pk, query),
                                 lambda: None), lambda: self.reference.points(pk, query))

    def _launch(self, what: str, cap: str, device_points: Any, launch: Callable[[], Pending],
                redo: Callable[[], Pending]) -> Pending:
        if device_points is None or cap not in self.capabilities:
            return redo()
        note = self._failed(what)
        try:
            return _FallbackPending(launch(), redo, note)
        except Stopped:
            raise
        except Exception as exc:
            note(exc)
            return redo()

    def msm(self, points: _Points, scalars: Any, group: str, rows: Any = None) -> Pending:
        return self._launch(f"msm {group}", MSM_G1 if group == "g1" else MSM_G2, points.device,
                            lambda: self.primary.msm(points.device, scalars, group, rows),
                            lambda: self.reference.msm(points.host, scalars, group, rows))

    def batch_add(self, points: _Points, rows: Any, group: str) -> Pending:
        return self._launch(f"batch_add {group}", BATCH_ADD_G1 if group == "g1" else BATCH_ADD_G2, points.device,
                            lambda: self.primary.batch_add(points.device, rows, group),
                            lambda: self.reference.batch_add(points.host, rows, group))

    def fixed_base(self, base_xy: np.ndarray, coeffs: np.ndarray, group: str) -> np.ndarray:
        cap = FIXED_BASE_G1 if group == "g1" else FIXED_BASE_G2
        return self._try(f"fixed-base {group}", cap, lambda: self.primary.fixed_base(base_xy, coeffs, group),
                         lambda: self.reference.fixed_base(base_xy, coeffs, group))

    def pin(self, x: np.ndarray) -> np.ndarray:
        if PINNED not in self.capabilities:
            return x
        try:
            return self.primary.pin(x)
        except Stopped:
            raise
        except Exception as exc:  # e.g. no lockable memory left: pageable uploads still work
            self.emit(ev.Note, level="warn", text=f"prep_msm output not page-locked ({exc}); pageable uploads")
            return x

    def to_host(self, x: Any) -> Any:
        return on_host(x)

    def device_key(self) -> Any:
        return self.primary.device_key()

    def lane(self, k: int) -> contextlib.AbstractContextManager[None]:
        return self.primary.lane(k)  # asked only where `lanes` is a capability (the primary's)


def cuda_backend(settings: KernelSettings) -> tuple[Any | None, str]:
    """The CUDA backend built with `settings`, or (None, why) where its kernels cannot run:
    the one check of whether CUDA is usable for compute (the device layer's own check,
    prover.device.cuda.available, says whether a CudaDevice can be made)."""
    try:
        from prover.kernels.cuda_backend import CudaBackend

        return CudaBackend(settings), ""
    except Exception as exc:  # no CuPy, no device, a broken CUDA install
        return None, f"{type(exc).__name__}: {exc}"


def select(device: str, settings: KernelSettings, emit: Emit | None = None) -> tuple[Any, str]:
    """The backend a run on `device` ("sim" or "cuda") computes with: the CUDA backend behind
    the fallback where it can run, else the reference; and why not, when it cannot."""
    if device != "cuda":
        return REFERENCE, ""
    primary, why = cuda_backend(settings)
    if primary is None:
        return REFERENCE, why
    return Fallback(primary, emit or (lambda *a, **k: None)), ""
