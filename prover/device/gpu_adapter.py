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
    from prover.bls import curve
    from prover.groth16.phases import G1Msms

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

    def split(points: Any, sp: Any, batch: Callable[..., bytes], msm: Callable[..., bytes]) -> list[bytes]:
        parts = []
        if len(sp.ones):
            parts.append(bytes(batch(points, sp.ones)))
        if len(sp.tail):
            parts.append(bytes(msm(points.take(sp.tail), sp.tail_scalars)))
        return parts

    def ntt_h(a: Any, b: Any, c: Any) -> Any:
        return gp.ntt_h_gpu(a, b, c)

    def msm_g1(prep: Any, h: Any, pk: Any) -> Any:
        d = key_on_device(pk)
        n_h = len(pk.h_query)
        hb = bytes(gp.msm_g1_gpu(d["h"], h[:n_h])) if n_h else G1_ID
        g1 = (gp.batch_add_g1_gpu, gp.msm_g1_gpu)
        return G1Msms(h=hb, l=add_g1(split(d["l"], prep.l, *g1)), a=add_g1(split(d["a"], prep.a, *g1)),
                      b_g1=add_g1(split(d["b_g1"], prep.b_g1, *g1)))

    def b_g2_msm(prep: Any, pk: Any) -> bytes:
        return add_g2(split(key_on_device(pk)["b_g2"], prep.b_g2, gp.batch_add_g2_gpu, gp.msm_g2_gpu))

    out: dict[str, Callable[..., Any]] = {}
    if hasattr(gp, "ntt_h_gpu"):
        out["ntt_h"] = ntt_h
    if all(hasattr(gp, n) for n in ("msm_g1_gpu", "batch_add_g1_gpu")):
        out["msm_g1"] = msm_g1
    if all(hasattr(gp, n) for n in ("msm_g2_gpu", "batch_add_g2_gpu")):
        out["b_g2_msm"] = b_g2_msm
    return out
