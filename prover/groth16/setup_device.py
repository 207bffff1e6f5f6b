"""The key set-up composed over a device backend's set-up steps (capability setup_device:
prover/kernels/setup_gpu.py), every n-sized array kept on the device:

    lagrange        L_j(tau) = iNTT(powers of tau)
    qap_matvecs     u, v, w = A^T L, B^T L, C^T L (sorted by column on the device)
    scalars         (beta u + alpha v + w) / gamma|delta; which points are present (host bits)
    lagrange_coset  the H query's scalars L_i(tau / g) Z(tau) / delta (coset-Lagrange form)
    fixed_base_*    the query points, by fixed-base multiplication of the generator, each
                    scalar vector freed as soon as its points are made

The same values as the host set-up (setup.py) at every step, so the same key bytes for the
same toxic waste: tests/unit/test_setup_device_emulated.py checks it on the CPU emulator. The
queries stay on the device as the MSMs' points (resident) or come to the host one at a time.
Device memory at 2^27 (docs/scale.md): the queries ~69 GiB at the end, ~16 GiB of scalars at the
peak of the QAP step, the NTT plan's twiddles (8 GiB, kept for NTT-H).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from prover.field import curve, fr, ntt
from prover.groth16.circuit import Circuit
from prover.groth16.keys import ProvingKey
from prover.groth16.setup_steps import step as _timed_step

G1, G2 = "g1", "g2"
QUERY_BITS = {"a": 0, "b_g1": 1, "b_g2": 2, "l": 3}  # prover/groth16/prep_nb.py presence's bits


def _base(group: str) -> np.ndarray:
    gen = curve.g2_generator() if group == G2 else curve.g1_generator()
    return np.frombuffer(gen.to_xy_bytes_le(), dtype=np.uint8)


@contextmanager
def step(bk: Any, name: str) -> Iterator[None]:
    """A timed set-up step whose device work is finished when it ends: the kernels are
    asynchronous, so without this a step's seconds land in the next one that waits (the 2^27
    run's fixed-base steps read 0.00 s). The set-up's own stream only, never the whole device:
    a key loaded mid-run must not wait for the workers' kernels."""
    with _timed_step(name):
        yield
        sync = getattr(bk, "setup_sync", None)  # the CPU emulator has nothing in flight
        if sync is not None:
            sync()


def _presence(bk: Any, u: Any, v: Any, lq: Any, num_vars: int, ni: int) -> np.ndarray:
    """Presence bits from the scalars: a point is the identity exactly when its scalar is zero
    (the generator has prime order r; every scalar is below r)."""
    out = np.zeros(num_vars, dtype=np.uint8)
    for name, x, offset in (("a", u, 0), ("b_g1", v, 0), ("b_g2", v, 0), ("l", lq, ni)):
        nz = bk.setup_nonzero(x)
        out[offset:offset + len(nz)] |= nz.astype(np.uint8) << np.uint8(QUERY_BITS[name])
    return out


def setup_on_device(bk: Any, circuit: Circuit, t: dict[str, int], h_factor: int, resident: bool,
                    fixed_host: Callable[[fr.FrArray], np.ndarray]) -> tuple[ProvingKey, np.ndarray]:
    """(pk, ic points) for toxic waste `t`; `fixed_host` makes the few IC points on the host.
    The queries are resident points with `resident`, else host arrays (downloaded one by one)."""
    n, ni, nv, r = circuit.domain_size, circuit.num_inputs, circuit.num_vars, fr.R_MOD
    with step(bk, "lagrange"):
        lag = bk.setup_lagrange(t["tau"], n)
    with step(bk, "qap_matvecs"):
        u, v, w = (bk.setup_qap(m, lag) for m in (circuit.a, circuit.b, circuit.c))
        del lag
    with step(bk, "scalars"):
        combo = bk.setup_combo(u, v, w, t["alpha"], t["beta"], t["gamma"], t["delta"], ni)
        del w
        ic_scalars = np.ascontiguousarray(bk.to_host(combo[:ni]))
        lq = combo[ni:]
        presence = _presence(bk, u, v, lq, nv, ni) if resident else None
    with step(bk, "lagrange_coset"):
        hq = bk.setup_scale(bk.setup_lagrange(t["tau"] * pow(ntt.GENERATOR, -1, r) % r, n), h_factor)

    def points(x: Any, group: str) -> Any:
        with step(bk, "fixed_base_" + group):
            p = bk.setup_points(_base(group), x, group)
            return p if resident else p.to_host()

    a_q = points(u, G1)
    del u
    b_g1, b_g2 = points(v, G1), points(v, G2)
    del v
    l_q = points(lq, G1)
    del lq, combo
    h_q = points(hq, G1)
    del hq
    with step(bk, "fixed_base_g1"):
        ic = fixed_host(ic_scalars)
    bk.free_cached()
    g1, g2 = curve.g1_generator(), curve.g2_generator()

    def pt1(k: int) -> np.ndarray:
        return np.frombuffer(curve.g1_to_bytes(g1 * curve.Scalar(k)), np.uint8).copy()

    def pt2(k: int) -> np.ndarray:
        return np.frombuffer(curve.g2_to_bytes(g2 * curve.Scalar(k)), np.uint8).copy()

    pk = ProvingKey(alpha_g1=pt1(t["alpha"]), beta_g1=pt1(t["beta"]), beta_g2=pt2(t["beta"]),
                    delta_g1=pt1(t["delta"]), delta_g2=pt2(t["delta"]), a_query=a_q, b_g1_query=b_g1,
                    b_g2_query=b_g2, l_query=l_q, h_query=h_q, num_inputs=ni, presence=presence)
    return pk, ic
