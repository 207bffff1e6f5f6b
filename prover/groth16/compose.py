"""The Groth16 prove's compute phases, composed once over a backend (prover/backend.py), as
SupraSeal C2's groth16_cuda.cu composes its primitives:

    r1cs       a, b, c = A.z, B.z, C.z on the device, over a circuit's resident matrices (abc gpu)
    ntt_h      h = NTT-H(a, b, c)
    msm_g1     H: an MSM over h_0..h_{n-2};  L, A, B_G1: each the batch addition of the rows
               whose scalar is 1 plus the tail MSM of the others
    b_g2_msm   B over G2: batch addition + tail MSM
    pin_prep   prep_msm's arrays page-locked for the MSMs' uploads (where the backend pins)

The CPU reference (groth16/phases.py) is this composition over the ReferenceBackend; a run on
a GPU is this composition over the CUDA backend behind the fallback. Bit-identical by
construction: the same partial sums, added in the same group.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable

from prover import backend as B
from prover.backend import Deferred
from prover.field import curve
from prover.groth16.results import G1Msms, MsmPrep, QuerySplit

G1_ID = bytes(96)  # the identity's xy encoding
G2_ID = bytes(192)
G1_QUERIES = ("l", "a", "b_g1")


def _adder(identity: bytes, load: Callable[[bytes], Any], dump: Callable[[Any], bytes]) -> Callable[[list[bytes]], bytes]:
    def add(parts: list[bytes]) -> bytes:
        """Sum of partial results (batch addition + tail) as one point, in the group's bytes."""
        if not parts:
            return identity
        acc = load(parts[0])
        for p in parts[1:]:
            acc = acc + load(p)
        return dump(acc)
    return add


add_g1 = _adder(G1_ID, curve.g1_from_bytes, curve.g1_to_bytes)
add_g2 = _adder(G2_ID, curve.g2_from_bytes, curve.g2_to_bytes)


class KeyPoints:
    """A proving key's queries as a backend holds them, made once per key and device: every
    partition proves the same circuit, so re-uploading the queries per MSM would cost more
    than the MSMs. Keyed by (the backend's current device, key); the entry holds the key too,
    so its id is not reused while cached. A backend whose points are the key's own arrays
    (device_key() None: the reference) is not cached."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self._held: dict[tuple[Any, int], tuple[Any, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def _make(self, pk: Any) -> dict[str, Any]:
        return {q: self.backend.points(pk, q) for q in ("h",) + G1_QUERIES + ("b_g2",)}

    def of(self, pk: Any) -> dict[str, Any]:
        device = self.backend.device_key()
        if device is None:
            return self._make(pk)
        key = (device, id(pk))
        with self._lock:
            held = self._held.get(key)
            if held is None:
                held = self._held[key] = (pk, self._make(pk))
        return held[1]

    def drop(self, pk: Any) -> None:
        """Forget pk's points on every device (the key ring evicted it): the device copies go
        when nothing else holds them, and a later `of(pk)` makes them again."""
        with self._lock:
            for key in [k for k in self._held if k[1] == id(pk)]:
                del self._held[key]


def _split(backend: Any, points: Any, sp: QuerySplit, group: str) -> list[B.Pending]:
    parts = []
    if len(sp.ones):
        parts.append(backend.batch_add(points, sp.ones, group))
    if len(sp.tail):
        parts.append(backend.msm(points, sp.tail_scalars, group, rows=sp.tail))
    return parts


def _lane(backend: Any, k: int) -> contextlib.AbstractContextManager[None]:
    return backend.lane(k) if B.LANES in backend.capabilities else contextlib.nullcontext()


def _fetch(parts: list[B.Pending]) -> list[B.Finish]:
    return [p.fetch() for p in parts]


def _finished(parts: list[B.Finish]) -> list[bytes]:
    return [bytes(f()) for f in parts]


def msm_g1(backend: Any, keys: KeyPoints, prep: MsmPrep, h: Any, pk: Any) -> Deferred:
    """H, L, A, B_G1. Every MSM and batch addition is launched first (H on the caller's stream,
    each other query on a lane of the backend's, where it has lanes), then all are downloaded
    (one wait); the host step (Horner sums, partial sums) is the Deferred, run later."""
    q = keys.of(pk)
    n_h = len(pk.h_query)
    hq = [backend.msm(q["h"], h[:n_h], "g1")] if n_h else []
    lanes = []
    for k, name in enumerate(G1_QUERIES, start=1):  # L, A, B_G1 need nothing of NTT-H: a lane each
        with _lane(backend, k):
            lanes.append(_split(backend, q[name], getattr(prep, name), "g1"))
    l, a, b = lanes
    hf, lf, af, bf = _fetch(hq), _fetch(l), _fetch(a), _fetch(b)
    return Deferred(lambda: G1Msms(h=_finished(hf)[0] if hf else G1_ID, l=add_g1(_finished(lf)),
                                   a=add_g1(_finished(af)), b_g1=add_g1(_finished(bf))))


def b_g2_msm(backend: Any, keys: KeyPoints, prep: MsmPrep, pk: Any) -> Deferred:
    parts = _fetch(_split(backend, keys.of(pk)["b_g2"], prep.b_g2, "g2"))
    return Deferred(lambda: add_g2(_finished(parts)))


def pin_prep(backend: Any, prep: Any) -> Any:
    """prep_msm's index and scalar arrays copied into page-locked memory, on the prep thread
    (off the locks): the GPU section's uploads of them (~75 MB at 2^22) are then DMAs queued
    on its stream, where pageable copies make the host wait for the kernels ahead and the GPU
    then idle while the driver stages the bytes."""
    if not isinstance(prep, MsmPrep):
        return prep
    pin = backend.pin

    def one(sp: QuerySplit) -> QuerySplit:
        return QuerySplit(ones=pin(sp.ones), tail=pin(sp.tail), tail_scalars=pin(sp.tail_scalars))
    return MsmPrep(density=prep.density, a=one(prep.a), b_g1=one(prep.b_g1), b_g2=one(prep.b_g2), l=one(prep.l))


Fn = Callable[..., Any]
G2 = frozenset({B.MSM_G2, B.BATCH_ADD_G2})  # B over G2 composed on the backend


class GpuCompute:
    """What a partition's GPU section computes (pipeline/partition.py), one typed seam over one
    backend: NTT-H (from the host arrays, or in place over the pre-staged buffers' device
    views), the G1 MSMs, B over G2, prep_msm's arrays made ready for the uploads, a key's
    device copies forgotten. Every method exists whatever the backend runs itself: what it
    cannot run is chosen here, once, from its capabilities (B over G2 and NTT-H then run as the
    phases' own; pinning and forgetting do nothing), so its caller never asks.

    `GpuCompute.over(backend, phases)`: a device backend (behind the Fallback, which takes the
    host arrays of a staged NTT-H for its reference); `GpuCompute.on_host(phases, impl)`: the
    phases' own functions under the GPU section (sim runs, or no usable kernels)."""

    def __init__(self, impl: str, ntt_h: Fn, msm_g1: Fn, b_g2_msm: Fn, *, backend: Any = None,
                 keys: KeyPoints | None = None) -> None:
        self.impl = impl
        self._ntt_h, self._msm_g1, self._b_g2_msm = ntt_h, msm_g1, b_g2_msm
        self._backend, self._keys = backend, keys
        caps = backend.capabilities if backend is not None else frozenset()
        self._staged = B.NTT_H_STAGED in caps
        self._pins = {B.MSM_G1, B.BATCH_ADD_G1, B.PINNED} <= caps
        self._r1cs = B.R1CS in caps
        self._in_use = sorted(["ntt_h", "msm_g1"] * (backend is not None) + ["b_g2_msm"] * (G2 <= caps)
                              + ["ntt_h_staged"] * self._staged + ["pin_prep"] * self._pins + ["r1cs"] * self._r1cs)

    @classmethod
    def over(cls, backend: Any, phases: Any = None) -> "GpuCompute":
        """The composition over a device backend. h stays where the backend put it (on the
        device) for the MSM that reads it next. Without the G2 primitives, B over G2 is the
        phases' own (the CPU reference's composition when no phases are given)."""
        keys = KeyPoints(backend)
        if G2 <= backend.capabilities:
            bg2: Fn = lambda prep, pk: b_g2_msm(backend, keys, prep, pk)  # noqa: E731
        elif phases is not None:
            bg2 = phases.b_g2_msm
        else:
            bg2 = lambda prep, pk: b_g2_msm(B.REFERENCE, KeyPoints(B.REFERENCE), prep, pk)  # noqa: E731
        return cls(backend.impl, backend.ntt_h, lambda prep, h, pk: msm_g1(backend, keys, prep, h, pk), bg2,
                   backend=backend, keys=keys)

    @classmethod
    def on_host(cls, phases: Any, impl: str) -> "GpuCompute":
        """The phases' own NTT-H and MSMs under the GPU section, labelled `impl`."""
        return cls(impl, phases.ntt_h, phases.msm_g1, phases.b_g2_msm)

    def ntt_h(self, a: Any, b: Any, c: Any) -> Any:
        return self._ntt_h(a, b, c)

    def ntt_h_staged(self, views: tuple[Any, Any, Any] | None, host: B.Host) -> Any:
        """NTT-H in place over the pre-staged buffers' device views (consumed), where the
        backend runs it so and the device gave views; else from the host arrays. `host` goes
        with the call: where the device's NTT fails half-way, the reference reads them (made
        then, where the GPU made a, b, c: a callable)."""
        if views is None or not self._staged:
            return self._ntt_h(*B.host_arrays(host))
        return self._backend.ntt_h_staged(*views, host=host)

    # the R1CS products on the device (abc gpu) ------------------------------------------------
    @property
    def r1cs_on_device(self) -> bool:
        """Whether the backend makes a, b, c itself (over matrices resident on the device)."""
        return self._r1cs

    def r1cs_arrays(self, plan: Any) -> dict[str, Any]:
        """A matrix's device form as host arrays by name, for the caller to allocate and upload."""
        return self._backend.r1cs_arrays(plan)

    def r1cs_matrix(self, plan: Any, arrays: dict[str, Any]) -> Any:
        """The matrix over its device arrays (allocated and uploaded by the caller)."""
        return self._backend.r1cs_matrix(plan, arrays)

    def r1cs(self, mats: Any, vals: Any, tab: Any, outs: tuple[Any, Any, Any] | None) -> bool:
        """A.z, B.z, C.z into the device views `outs`, launched on the current stream, from z's upload
        form on the device (prover/host/zpack.py: `vals` its field values, `tab` its table); False
        where they are not made there (no kernel, no resident matrices or views, or the kernel
        failed: the fallback says so), and the caller makes them on the host."""
        if not self._r1cs or mats is None or vals is None or tab is None or outs is None:
            return False
        return bool(self._backend.r1cs(mats, vals, tab, outs))

    def msm_g1(self, prep: Any, h: Any, pk: Any) -> Any:
        return self._msm_g1(prep, h, pk)

    def b_g2_msm(self, prep: Any, pk: Any) -> Any:
        return self._b_g2_msm(prep, pk)

    def pin_prep(self, prep: Any) -> Any:
        """prep_msm's output page-locked for the MSMs' uploads, on the prep thread (where the
        backend pins; else as it is)."""
        return pin_prep(self._backend, prep) if self._pins else prep

    def drop_key(self, pk: Any) -> None:
        """A key's device copies forgotten (the key ring made it cold); nothing where none are kept."""
        if self._keys is not None:
            self._keys.drop(pk)

    def in_use(self) -> list[str]:
        """The GPU functions the backend runs itself (the note a cuda run starts with)."""
        return list(self._in_use)
