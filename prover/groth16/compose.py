"""The Groth16 prove's compute phases, composed once over a backend (prover/backend.py), as
SupraSeal C2's groth16_cuda.cu composes its primitives:

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
from dataclasses import dataclass
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


@dataclass
class GpuPhases:
    """What a partition's GPU section calls (pipeline/partition.py): the phase functions with
    the CPU reference's signatures, and the impl label its events carry."""

    ntt_h: Fn
    msm_g1: Fn
    b_g2_msm: Fn | None  # None: b_g2 on the GPU runs the CPU reference's b_g2_msm
    impl: str
    # NTT-H over device views of the pre-staged buffers, consumed in place:
    # ntt_h_staged((d_a, d_b, d_c), (a, b, c) on the host for the fallback) -> h
    ntt_h_staged: Fn | None = None
    # prep_msm's output made ready for the GPU MSMs' uploads (page-locked), on the prep thread
    pin_prep: Fn | None = None
    # drop_key(pk): a key's device copies forgotten (the key ring made it cold); None: none kept
    drop_key: Fn | None = None

    def in_use(self) -> list[str]:
        return sorted(n for n in ("ntt_h", "ntt_h_staged", "msm_g1", "b_g2_msm", "pin_prep")
                      if getattr(self, n) is not None)


def gpu_phases(backend: Any) -> GpuPhases:
    """The phases over a device backend (behind the Fallback, whose staged NTT-H takes the host
    arrays for its reference). h stays where the backend put it (on the device) for the MSM
    that reads it next."""
    keys = KeyPoints(backend)
    caps = backend.capabilities
    msms = {B.MSM_G1, B.BATCH_ADD_G1} <= caps
    g2 = {B.MSM_G2, B.BATCH_ADD_G2} <= caps
    staged = None
    if B.NTT_H_STAGED in caps:
        if isinstance(backend, B.Fallback):
            staged = lambda views, host: backend.ntt_h_staged(*views, host=host)  # noqa: E731
        else:
            staged = lambda views, host: backend.ntt_h_staged(*views)  # noqa: E731
    return GpuPhases(
        ntt_h=backend.ntt_h,
        msm_g1=lambda prep, h, pk: msm_g1(backend, keys, prep, h, pk),
        b_g2_msm=(lambda prep, pk: b_g2_msm(backend, keys, prep, pk)) if g2 else None,
        impl=backend.impl, ntt_h_staged=staged,
        pin_prep=(lambda prep: pin_prep(backend, prep)) if msms and B.PINNED in caps else None,
        drop_key=keys.drop)
