"""The key set-up wholly on the device (prover/groth16/setup_device.py over the real setup.cu and
fixed-base kernels, on the CPU emulator): the same key bytes as the host set-up for the same
toxic waste; a resident key (queries kept on the device as the MSMs' points) proves, verifies
and gives the same proof bytes; the key cache writes it query by query and reads it back onto
the device. No gpu marker: runs in CI (skipped without g++)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from prover.field import fr
from prover.groth16 import phases as P
from prover.groth16 import prep_nb
from prover.groth16.keys import ProvingKey
from prover.groth16 import setup as S
from prover.settings import KernelSettings
from tests.helpers.cudaemu import config
from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the fixture)

LOG2, SEED = 8, 21


@pytest.fixture
def device_setup(cuda_emulator, monkeypatch):  # noqa: F811
    monkeypatch.setattr(S, "DEVICE_SETUP_MIN", 1 << LOG2)  # reach the device path at 2^8
    return cuda_emulator


@pytest.fixture(scope="module")
def host_keys():
    circuit = P.make_circuit(LOG2, SEED)
    return circuit, *S.setup(circuit, insecure_seed=SEED, kernels=KernelSettings(setup_gpu=False))


def _setup(circuit, **ks):
    before = config.launches.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failing device path would fall back with a warning
        keys = S.setup(circuit, insecure_seed=SEED, kernels=KernelSettings(**ks))
    return keys, config.launches - before


def test_the_device_set_up_gives_the_host_key_bytes(device_setup, host_keys) -> None:
    circuit, pk_host, vk_host = host_keys
    (pk, vk), ran = _setup(circuit)
    assert ran["qap_columns"] == 3 and ran["setup_combo"] == 1 and ran["fr_scale"] == 1 and ran["setup_powers"] == 2
    assert ran["qap_heavy"] == 0  # no column of a 2^8 circuit holds more than HEAVY entries
    assert not pk.resident and pk.presence is None
    for name, want in pk_host.arrays().items():
        assert np.array_equal(pk.arrays()[name], want), name
    for name, want in vk_host.arrays().items():
        assert np.array_equal(vk.arrays()[name], want), name


def test_a_heavy_column_is_summed_by_a_block(device_setup, monkeypatch, host_keys) -> None:
    from prover.kernels import setup_gpu

    monkeypatch.setattr(setup_gpu, "HEAVY", 8)  # the constant one's column and a few bits become heavy
    circuit, pk_host, _ = host_keys
    (pk, _), ran = _setup(circuit)
    assert ran["qap_heavy"] >= 1
    assert all(np.array_equal(pk.arrays()[k], v) for k, v in pk_host.arrays().items())


def test_a_resident_key_proves_the_same_bytes(device_setup, host_keys, tmp_path) -> None:
    from prover.backend import settle
    from prover.groth16 import compose
    from prover.kernels.cuda_backend import CudaBackend
    from prover.kernels.setup_gpu import ResidentPoints

    circuit, pk_host, vk_host = host_keys
    (pk, vk), _ = _setup(circuit, key_resident="device")
    assert pk.resident and isinstance(pk.h_query, ResidentPoints) and len(pk.h_query) == circuit.domain_size
    assert pk.nbytes == ProvingKey.resident_host_size_for(circuit.num_vars)
    assert pk.device_bytes == pk_host.nbytes - ProvingKey.resident_host_size_for(0)  # the queries, on the device
    assert np.array_equal(pk.presence, prep_nb.presence(pk_host))
    assert np.array_equal(pk.l_query.to_host(), pk_host.l_query)
    backend = CudaBackend(KernelSettings())
    fns = compose.GpuCompute.over(backend, P)
    syn = P.synthesize(circuit, 2)
    r, s = P.seeded_randomisers(SEED, 2)
    prep = fns.pin_prep(P.prep_msm(syn, pk))
    h = fns.ntt_h(syn.a, syn.b, syn.c)
    proof = P.assemble(syn, settle(fns.msm_g1(prep, h, pk)), settle(fns.b_g2_msm(prep, pk)), pk, r, s)
    assert P.verify(vk, syn.public_ints(), proof)
    assert proof.to_bytes() == P.prove(circuit, pk_host, 2, r, s).to_bytes()
    # the cache: written query by query from the device, read back onto it
    path = S.cache_path(circuit, vk, tmp_path, SEED)
    S.save_keys(path, pk, vk, circuit)
    pk2, _ = S.load_keys(path, circuit)
    assert all(np.array_equal(pk2.arrays()[k], v) for k, v in pk_host.arrays().items())
    pk3, _ = S.load_keys(path, circuit, backend.setup_upload)
    assert pk3.resident and np.array_equal(pk3.presence, pk.presence)
    assert np.array_equal(pk3.b_g2_query.to_host(), pk_host.b_g2_query)


def test_device_steps_equal_the_host_steps(device_setup) -> None:
    from prover.field import ntt
    from prover.groth16 import setup_scalars_nb
    from prover.kernels import setup_gpu

    tau, n = 0x1234567, 1 << 9
    lag = setup_gpu.lagrange(tau, n)
    assert np.array_equal(lag.get(), fr.from_mont(ntt.intt_mont(fr.mont_powers(tau, n))))
    assert np.array_equal(setup_gpu.powers(5, 77, 3).get(), fr.from_ints([3 * pow(5, i, fr.R_MOD) for i in range(77)]))
    x = fr.random(100, 3)
    import cupy as cp

    got = setup_gpu.scale(cp.asarray(x), 987654321).get()
    assert np.array_equal(got, setup_scalars_nb.times(x, 987654321))
    z = x.copy()
    z[[3, 50]] = 0
    assert setup_gpu.nonzero_host(cp.asarray(z)).tolist() == [i not in (3, 50) for i in range(100)]
