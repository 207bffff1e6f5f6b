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

    # MSMs and batch additions are launched now and read later (gp.msm_launch /
    # batch_add_launch -> .result()): a partition's MSMs queue back to back on the stream and
    # the host reads them all at the end, not with a stream sync between every two of them.
    def resolve(parts: list[Any]) -> list[bytes]:
        return [bytes(p.result()) for p in parts]

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

    def msm_g1(prep: Any, h: Any, pk: Any) -> Any:
        d = key_on_device(pk)
        n_h = len(pk.h_query)
        hq = [gp.msm_launch(d["h"], h[:n_h], group="g1")] if n_h else []
        l, a, b = (split(d[q], getattr(prep, q), "g1") for q in ("l", "a", "b_g1"))
        hb = resolve(hq)[0] if hq else G1_ID
        return G1Msms(h=hb, l=add_g1(resolve(l)), a=add_g1(resolve(a)), b_g1=add_g1(resolve(b)))

    def b_g2_msm(prep: Any, pk: Any) -> bytes:
        return add_g2(resolve(split(key_on_device(pk)["b_g2"], prep.b_g2, "g2")))

    out: dict[str, Callable[..., Any]] = {}
    if hasattr(gp, "ntt_h_gpu"):
        out["ntt_h"] = ntt_h
    if all(hasattr(gp, n) for n in ("msm_launch", "batch_add_launch")):
        out["msm_g1"] = msm_g1
        out["b_g2_msm"] = b_g2_msm
    return out
