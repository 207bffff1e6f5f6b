"""Phase-level GPU functions built from prover.kernels.gpu_phases' primitives.

The engine calls phases with the CPU reference's signatures (`ntt_h(a, b, c)`,
`msm_g1(prep, h, pk)`, `b_g2_msm(prep, pk)`); the kernels module offers NTT-H, Pippenger MSMs
and batch additions. This composes them exactly as prover.groth16.phases does on the CPU
(each query split into batch addition of the scalar-one rows + a tail MSM), so results are
bit-identical. GPU work goes to CuPy's current stream: CudaDevice.launch runs these inside
the worker's stream context.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

G1_ID = bytes(96)
G2_ID = bytes(192)


def make_gpu_phases(gp: Any) -> dict[str, Callable[..., Any]]:
    from prover.field import curve
    from prover import settings
    from prover.groth16.phases import G1Msms, MsmPrep, QuerySplit
    from prover.pipeline.phases import Deferred

    # A proving key's queries go to each GPU once and stay there: every partition proves the
    # same circuit, so re-uploading them per MSM would cost more than the MSMs.
    on_device: dict[tuple[int, int], Any] = {}
    upload_lock = threading.Lock()

    def key_on_device(pk: Any) -> Any:
        cp = gp._cp()
        key = (cp.cuda.Device().id, id(pk))
        with upload_lock:
            d = on_device.get(key)
            if d is None:
                d = gp.ProvingKeyOnDevice(h=pk.h_query, l=pk.l_query, a=pk.a_query,
                                          b_g1=pk.b_g1_query, b_g2=pk.b_g2_query)
                cp.cuda.get_current_stream().synchronize()  # other workers' streams read it next
                on_device[key] = d
        return d

    def adder(identity: bytes, load: Callable[[bytes], Any], dump: Callable[[Any], bytes]) -> Callable[[list[bytes]], bytes]:
        """Sum of partial results (batch addition + tail) as one point, in the group's bytes."""
        def add(parts: list[bytes]) -> bytes:
            if not parts:
                return identity
            acc = load(parts[0])
            for p in parts[1:]:
                acc = acc + load(p)
            return dump(acc)
        return add

    add_g1 = adder(G1_ID, curve.g1_from_bytes, curve.g1_to_bytes)
    add_g2 = adder(G2_ID, curve.g2_from_bytes, curve.g2_to_bytes)

    # MSMs and batch additions are launched now and downloaded together (gp.msm_launch /
    # batch_add_launch -> .fetch()): a partition's MSMs queue back to back on the stream and
    # the host syncs once. Their host step (Horner sums in Python, py_arkworks partial sums:
    # ~10 ms a partition) is returned as a Deferred, finished after the compute lock.
    def fetch(parts: list[Any]) -> list[Callable[[], bytes]]:
        return [p.fetch() for p in parts]

    def finished(parts: list[Callable[[], bytes]]) -> list[bytes]:
        return [bytes(f()) for f in parts]

    def split(points: Any, sp: Any, group: str) -> list[Any]:
        parts = []
        if len(sp.ones):
            parts.append(gp.batch_add_launch(points, sp.ones, group=group))
        if len(sp.tail):
            parts.append(gp.msm_launch(points.take(sp.tail), sp.tail_scalars, group=group))
        return parts

    def ntt_h(a: Any, b: Any, c: Any) -> Any:
        # h stays on the device (a cupy array) for the MSM that reads it next; the engine's CPU
        # fallback converts it back if the MSM has to run on the CPU
        return gp.ntt_h_gpu(a, b, c, out_device=True)

    def ntt_h_staged(d_a: Any, d_b: Any, d_c: Any) -> Any:
        # device views of the pre-staged buffers: transformed in place, no copy (h aliases d_b)
        return gp.ntt_h_device(d_a, d_b, d_c)

    def msm_g1(prep: Any, h: Any, pk: Any) -> Deferred:
        d = key_on_device(pk)
        n_h = len(pk.h_query)
        hq = [gp.msm_launch(d["h"], h[:n_h], group="g1")] if n_h else []
        l, a, b = (split(d[q], getattr(prep, q), "g1") for q in ("l", "a", "b_g1"))
        hf, lf, af, bf = fetch(hq), fetch(l), fetch(a), fetch(b)
        return Deferred(lambda: G1Msms(h=finished(hf)[0] if hf else G1_ID, l=add_g1(finished(lf)),
                                       a=add_g1(finished(af)), b_g1=add_g1(finished(bf))))

    def b_g2_msm(prep: Any, pk: Any) -> Deferred:
        parts = fetch(split(key_on_device(pk)["b_g2"], prep.b_g2, "g2"))
        return Deferred(lambda: add_g2(finished(parts)))

    def pin_prep(prep: Any) -> Any:
        """prep_msm's index and scalar arrays copied into page-locked memory, on the prep
        thread (off the locks): the GPU section's uploads of them (~75 MB at 2^22) are then
        DMAs queued on its stream, where pageable copies make the host wait for the kernels
        ahead and the GPU then idle while the driver stages the bytes."""
        if not settings.current().pinned_host or not isinstance(prep, MsmPrep):
            return prep
        from prover.kernels.pinned import pinned_copy as pinned  # size classes: the pool reuses them

        def one(sp: QuerySplit) -> QuerySplit:
            return QuerySplit(ones=pinned(sp.ones), tail=pinned(sp.tail), tail_scalars=pinned(sp.tail_scalars))
        return MsmPrep(density=prep.density, a=one(prep.a), b_g1=one(prep.b_g1), b_g2=one(prep.b_g2), l=one(prep.l))

    out: dict[str, Callable[..., Any]] = {}
    if hasattr(gp, "ntt_h_gpu"):
        out["ntt_h"] = ntt_h
    if hasattr(gp, "ntt_h_device"):
        out["ntt_h_staged"] = ntt_h_staged
    if all(hasattr(gp, n) for n in ("msm_launch", "batch_add_launch")):
        out["msm_g1"] = msm_g1
        out["b_g2_msm"] = b_g2_msm
        out["pin_prep"] = pin_prep
    return out
