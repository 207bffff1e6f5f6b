"""Groth16 trusted setup (toxic waste from the OS's randomness, dropped after use), and the
on-disk key cache.

Whoever knows the toxic waste (tau, alpha, beta, gamma, delta) can forge proofs that
verify, so by default it is drawn with `secrets` and never stored: two setups give different
keys, and the cache keeps only the keys, named by a key id (a hash of the verifying key). A
seeded, reproducible setup (`insecure_seed=`) stays for tests and benchmarks that compare
bytes; its keys are labelled "insecure-seeded" in the cache file and in exported JSON, and a
default lookup never picks them up.

The QAP polynomials are evaluated at tau through the Lagrange basis of the domain: the
vector L_j(tau) is the inverse NTT of (1, tau, tau^2, ...), so u_i(tau) = sum_j A[j, i]
L_j(tau) is one transposed sparse product -- no polynomial is ever interpolated.
"""
from __future__ import annotations

import hashlib
import logging
import secrets
import shutil
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

from prover.backend import SETUP_DEVICE, cuda_backend
from prover.settings import KernelSettings
from prover.field import curve, fr, ntt
from prover.groth16.circuit import Circuit
from prover.groth16.keys import ProvingKey, VerifyingKey
from prover.groth16 import setup_device
from prover.groth16 import setup_scalars_nb as setup_scalars

from prover.groth16.key_cache import (CACHE_FORMAT, INSECURE, RANDOM, cache_path, cached_keys,  # noqa: F401
                                      default_cache_dir, key_id, load_keys, save_keys)
from prover.groth16.setup_steps import observe_steps, step_seconds  # noqa: F401  (re-exported)
from prover.groth16.setup_steps import step as _step

log = logging.getLogger(__name__)


_NAMES = ("tau", "alpha", "beta", "gamma", "delta")


def _toxic_waste(circuit: Circuit, insecure_seed: int | None) -> dict[str, int]:
    """tau, alpha, beta, gamma, delta: uniform, non-zero; from `secrets` unless a seed is given
    (then derived from it: reproducible, and forgeable by anyone who knows the seed). tau must
    lie off the domain H and off the coset gH (the Lagrange bases at tau and tau / g divide by
    tau^n - 1 and tau^n - g^n): a draw there (probability 2n/r, ~2^-227) is drawn again."""
    while True:
        if insecure_seed is None:
            t = {name: 1 + secrets.randbelow(fr.R_MOD - 1) for name in _NAMES}
        else:
            t = _seeded_waste(insecure_seed, circuit)
        n, r = circuit.domain_size, fr.R_MOD
        if pow(t["tau"], n, r) not in (1, pow(ntt.GENERATOR, n, r)):
            return t
        if insecure_seed is not None:  # pragma: no cover - 2^-227
            raise ValueError(f"seed {insecure_seed} gives a tau on the domain or its coset; use another seed")


def _seeded_waste(seed: int, circuit: Circuit) -> dict[str, int]:
    names = _NAMES
    rng_seed = int.from_bytes(hashlib.sha256(f"c2tui-setup:{circuit.digest()}:{seed}".encode()).digest()[:8], "little")
    values = fr.to_ints(fr.random(16, rng_seed))
    values = [v for v in values if v != 0]  # probability 2^-254 each; 16 candidates
    return dict(zip(names, values))


GPU_NTT_MIN = 1 << 14  # below this the numpy iNTT is as fast as an upload and a kernel compile


def _lagrange_at(tau: int, n: int, ks: KernelSettings | None = None) -> fr.FrArray:
    """[L_j(tau)] for the size-n domain (assumes tau is not in the domain): the iNTT of the
    powers of tau, on the GPU where there is one (the numpy iNTT is O(n log n) Python-driven
    butterflies: minutes at 2^24); the same bytes either way."""
    powers = fr.mont_powers(tau, n)
    intt = gpu_intt(ks) if n >= GPU_NTT_MIN else None
    if intt is not None:
        try:
            return np.ascontiguousarray(intt(fr.from_mont(powers)), dtype=np.uint64)
        except Exception as exc:  # a GPU failure costs time, never the key
            warnings.warn(f"GPU iNTT failed ({exc}); setting up on the CPU", RuntimeWarning, stacklevel=2)
    return fr.from_mont(ntt.intt_mont(powers))


def h_factor(tau: int, delta: int, n: int) -> int:
    """Z(tau) / delta: the H query's points are [L^coset_i(tau) * Z(tau) / delta]_1."""
    r = fr.R_MOD
    return (pow(tau, n, r) - 1) * pow(delta, -1, r) % r


def qap_at(circuit: Circuit, tau: int, ks: KernelSettings | None = None) -> tuple[fr.FrArray, fr.FrArray, fr.FrArray]:
    """u_i(tau), v_i(tau), w_i(tau) for every variable i."""
    with _step("lagrange"):
        lag = _lagrange_at(tau, circuit.domain_size, ks)
    with _step("qap_matvecs"):
        return tuple(_transpose_times(m, lag) for m in (circuit.a, circuit.b, circuit.c))  # type: ignore[return-value]


def _transpose_times(m: Any, lag: fr.FrArray) -> fr.FrArray:
    """m^T . lag by the compiled host kernel in row blocks on fr's pool (the numpy reference
    took 126 of a 2^24 setup's 234 s on 32 cores); the same canonical rows either way, and the
    reference where the kernel cannot take the matrix (a row over its int64 sum bound)."""
    from prover.groth16 import prep_nb as prep
    from prover.host import matvec

    t = m.transpose()
    try:
        plan = t.host_plan
    except ValueError:
        return t.matvec(lag)
    return matvec.matvec_blocks(plan, np.ascontiguousarray(lag), prep.density(lag))


GPU_FIXED_BASE_MIN = 1 << 12  # below this the CPU tables win: no upload, no kernel compile


def _settings(ks: KernelSettings | None) -> KernelSettings:
    """The settings given (a run's), else the environment's, read now."""
    return ks if ks is not None else KernelSettings.from_env()


def _gpu(ks: KernelSettings | None) -> Any | None:
    """The CUDA backend (prover.backend.cuda_backend, the one check of whether CUDA can compute),
    so that large keys are set up on the GPU; None without one, or with setup_gpu off
    (C2TUI_SETUP_GPU=0)."""
    ks = _settings(ks)
    if not ks.setup_gpu:
        return None
    return cuda_backend(ks)[0]


def gpu_fixed_base_g1(ks: KernelSettings | None = None) -> Callable[[np.ndarray, fr.FrArray], np.ndarray] | None:
    """The GPU's batched G1 fixed-base multiplication (base xy, scalars) -> (n, 96), or None."""
    bk = _gpu(ks)
    return None if bk is None else lambda base, coeffs: bk.fixed_base(base, coeffs, "g1")


def gpu_fixed_base_g2(ks: KernelSettings | None = None) -> Callable[[np.ndarray, fr.FrArray], np.ndarray] | None:
    """The GPU's batched G2 fixed-base multiplication (base xy, scalars) -> (n, 192), or None."""
    bk = _gpu(ks)
    return None if bk is None else lambda base, coeffs: bk.fixed_base(base, coeffs, "g2")


def gpu_intt(ks: KernelSettings | None = None) -> Callable[[fr.FrArray], fr.FrArray] | None:
    """The GPU's natural-order inverse NTT (FrArray -> FrArray, 1/n included: prover.field.ntt.intt's
    convention), or None."""
    bk = _gpu(ks)
    return None if bk is None else bk.intt


def _fixed(coeffs: fr.FrArray, g2: bool, ks: KernelSettings | None = None) -> np.ndarray:
    """coeffs * generator, skipping zero coefficients (identity stays all-zero bytes). Large
    batches go to the GPU where there is one; the keys are the same bytes either way."""
    nbytes = curve.G2_BYTES if g2 else curve.G1_BYTES
    gen = curve.g2_generator() if g2 else curve.g1_generator()
    nz = np.flatnonzero(coeffs.any(axis=1))
    dense = len(nz) == len(coeffs)
    gpu = (gpu_fixed_base_g2 if g2 else gpu_fixed_base_g1)(ks) if len(nz) >= GPU_FIXED_BASE_MIN else None
    if gpu is not None:
        try:
            base = np.frombuffer(gen.to_xy_bytes_le(), dtype=np.uint8)
            res = np.asarray(gpu(base, np.ascontiguousarray(coeffs if dense else coeffs[nz])), dtype=np.uint8)
            if dense:
                return np.ascontiguousarray(res.reshape(len(coeffs), nbytes))
            out = np.zeros((len(coeffs), nbytes), dtype=np.uint8)
            out[nz] = res
            return out
        except Exception as exc:  # a GPU failure costs time, never the key
            warnings.warn(f"GPU fixed-base failed ({exc}); setting up on the CPU", RuntimeWarning, stacklevel=3)
    out = np.zeros((len(coeffs), nbytes), dtype=np.uint8)
    out[nz] = curve.fixed_base_g2(curve.g2_generator(), coeffs[nz]) if g2 else \
        curve.fixed_base_g1(curve.g1_generator(), coeffs[nz])
    return out


def _fixed_g1(coeffs: fr.FrArray, ks: KernelSettings | None = None) -> np.ndarray:
    with _step("fixed_base_g1"):
        return _fixed(coeffs, False, ks)


def _fixed_g2(coeffs: fr.FrArray, ks: KernelSettings | None = None) -> np.ndarray:
    with _step("fixed_base_g2"):
        return _fixed(coeffs, True, ks)


DEVICE_SETUP_MIN = 1 << 14  # a domain from this size is set up wholly on the GPU (setup_device.py)
HOST_SETUP_MAX = 1 << 24  # above this a failed GPU set-up is not redone on the host (hours, tens of GiB)


def _device_backend(ks: KernelSettings, n: int) -> Any | None:
    """The backend that sets up a key of domain n wholly on the device, or None (no GPU, setup_gpu
    off, a small key, or a backend without the set-up steps)."""
    if n < DEVICE_SETUP_MIN:
        return None
    bk = _gpu(ks)
    return bk if bk is not None and SETUP_DEVICE in getattr(bk, "capabilities", ()) else None


def setup(circuit: Circuit, *, insecure_seed: int | None = None,
          kernels: KernelSettings | None = None) -> tuple[ProvingKey, VerifyingKey]:
    """Generate keys for ``circuit`` from fresh OS randomness; with ``insecure_seed`` the same
    (circuit, seed) gives the same keys (for tests and benchmarks only: forgeable). `kernels`:
    the run's settings (setup_gpu, key_resident, the kernels' build), else the environment's.
    Large keys are set up on the GPU (setup_device.py; kept there with key_resident=device),
    the rest on the host; the same bytes either way."""
    ks = _settings(kernels)
    t = _toxic_waste(circuit, insecure_seed)
    label = RANDOM if insecure_seed is None else INSECURE
    bk = _device_backend(ks, circuit.domain_size)
    if bk is not None:
        try:
            pk, ic = setup_device.setup_on_device(bk, circuit, t, h_factor(t["tau"], t["delta"], circuit.domain_size),
                                                  ks.key_on_device(circuit.constraints_log2), lambda c: _fixed(c, False, ks))
            vk = VerifyingKey(alpha_g1=pk.alpha_g1, beta_g2=pk.beta_g2, gamma_g2=_pt2(t["gamma"]),
                              delta_g2=pk.delta_g2, ic=ic, setup_label=label)
            del t  # toxic waste: nothing derived from it outlives setup
            return pk, vk
        except Exception as exc:  # a GPU failure costs time, never the key (up to a size the host can do)
            if circuit.domain_size > HOST_SETUP_MAX:
                raise RuntimeError(f"GPU set-up of 2^{circuit.constraints_log2} failed ({type(exc).__name__}: {exc}); "
                                   f"the host set-up is not tried above 2^24") from exc
            warnings.warn(f"GPU set-up failed ({exc}); setting up on the host", RuntimeWarning, stacklevel=2)
    return _setup_host(circuit, t, label, ks)


def _pt1(k: int) -> np.ndarray:
    return np.frombuffer(curve.g1_to_bytes(curve.g1_generator() * curve.Scalar(k)), np.uint8).copy()


def _pt2(k: int) -> np.ndarray:
    return np.frombuffer(curve.g2_to_bytes(curve.g2_generator() * curve.Scalar(k)), np.uint8).copy()


def _setup_host(circuit: Circuit, t: dict[str, int], label: str, ks: KernelSettings) -> tuple[ProvingKey, VerifyingKey]:
    r = fr.R_MOD
    u, v, w = qap_at(circuit, t["tau"], ks)
    n, ni = circuit.domain_size, circuit.num_inputs
    with _step("scalars"):
        # beta*u + alpha*v + w, divided by gamma (inputs) or delta (private variables)
        # (compiled: prover/groth16/setup_scalars_nb.py)
        combo = setup_scalars.combo(u, v, w, t["alpha"], t["beta"], t["gamma"], t["delta"], ni)
        ic, lq = combo[:ni], combo[ni:]
    with _step("lagrange_coset"):
        # the H query in coset-Lagrange form: L^coset_i(tau) = L_i(tau / g), times Z(tau) / delta
        lag_coset = _lagrange_at(t["tau"] * pow(ntt.GENERATOR, -1, r) % r, n, ks)
        hq = setup_scalars.times(lag_coset, h_factor(t["tau"], t["delta"], n))
    pk = ProvingKey(
        alpha_g1=_pt1(t["alpha"]), beta_g1=_pt1(t["beta"]), beta_g2=_pt2(t["beta"]),
        delta_g1=_pt1(t["delta"]), delta_g2=_pt2(t["delta"]),
        a_query=_fixed_g1(u, ks), b_g1_query=_fixed_g1(v, ks), b_g2_query=_fixed_g2(v, ks),
        l_query=_fixed_g1(lq, ks), h_query=_fixed_g1(hq, ks), num_inputs=ni,
    )
    vk = VerifyingKey(alpha_g1=pk.alpha_g1, beta_g2=pk.beta_g2, gamma_g2=_pt2(t["gamma"]), delta_g2=pk.delta_g2,
                      ic=_fixed_g1(ic, ks), setup_label=label)
    del t, u, v, w, combo, lq, hq, lag_coset  # toxic waste: nothing derived from it outlives setup
    return pk, vk


def _upload(ks: KernelSettings, log2: int) -> Callable[[str, np.ndarray], Any] | None:
    """How a key read from the cache goes to the device as it is read (key_resident says so for
    its size, and a GPU is there), or None: a host key."""
    if not ks.key_on_device(log2):
        return None
    bk = _gpu(ks)
    return None if bk is None or SETUP_DEVICE not in bk.capabilities else bk.setup_upload


def load_or_setup(circuit: Circuit, cache_dir: Path | None = None, *, insecure_seed: int | None = None,
                  kernels: KernelSettings | None = None) -> tuple[ProvingKey, VerifyingKey]:
    """Keys from the cache if an intact file of the asked kind is there (the newest), else a
    fresh setup, written to the cache unless key_cache_write is off. A default (random) lookup
    never returns seeded keys."""
    ks = _settings(kernels)
    cache = cache_dir or default_cache_dir(ks)
    for path in cached_keys(circuit, cache, insecure_seed):
        try:
            with _step("load_keys"):
                pk, vk = load_keys(path, circuit, _upload(ks, circuit.constraints_log2))
        except Exception as exc:  # damaged in any way: set up again, loudly
            msg = f"key cache {path} is damaged ({exc}); setting up again"
            log.warning(msg)
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
            continue
        if vk.setup_label == (RANDOM if insecure_seed is None else INSECURE):
            return pk, vk
    pk, vk = setup(circuit, insecure_seed=insecure_seed, kernels=ks)
    if ks.key_cache_write:
        _save(circuit, pk, vk, cache_path(circuit, vk, cache, insecure_seed))
    return pk, vk


def _save(circuit: Circuit, pk: ProvingKey, vk: VerifyingKey, path: Path) -> None:
    """Write the fresh key to the cache, unless the disk cannot hold it (a 2^27 key is ~70 GiB):
    then, or when the write fails, say so and go on with the key as set up (the temp file is
    removed; nothing half-written is left)."""
    need = pk.nbytes + pk.device_bytes + (1 << 20)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(path.parent).free
        if free < need:
            raise OSError(f"{free >> 20} MiB free on its disk < the key's {need >> 20} MiB")
        with _step("save_keys"):
            save_keys(path, pk, vk, circuit)
    except OSError as exc:
        msg = f"key cache not written ({exc}); the key is used as set up"
        log.warning(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
