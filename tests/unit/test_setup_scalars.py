"""The key setup's scalars by the compiled kernels (prover/groth16/setup_scalars_nb.py) equal the
numpy field code's rows, whatever the block size."""
from __future__ import annotations

import numpy as np
import pytest

from prover.field import fr
from prover.groth16 import setup_scalars_nb as S

R = fr.R_MOD


@pytest.mark.parametrize("n,ni,chunk", [(1, 1, 64), (300, 3, 64), (5000, 17, 1000), (20000, 1, fr.CHUNK)])
def test_combo_equals_numpy(n: int, ni: int, chunk: int, monkeypatch) -> None:
    monkeypatch.setattr(fr, "CHUNK", chunk)
    u, v, w = fr.random(n, 1), fr.random(n, 2), fr.random(n, 3)
    u[:1] = 0  # zero and one rows too
    v[:1] = fr.from_ints([1])
    alpha, beta, gamma, delta = (int(x) for x in fr.to_ints(fr.random(4, 9)))
    c = fr.add(fr.add(fr.mul_const(u, beta), fr.mul_const(v, alpha)), w)
    want = np.concatenate([fr.mul_const(c[:ni], pow(gamma, -1, R)), fr.mul_const(c[ni:], pow(delta, -1, R))])
    assert np.array_equal(S.combo(u, v, w, alpha, beta, gamma, delta, ni), want)


@pytest.mark.parametrize("n,chunk", [(1, 64), (1023, 64), (40000, fr.CHUNK)])
def test_powers_times_equals_numpy(n: int, chunk: int, monkeypatch) -> None:
    monkeypatch.setattr(fr, "CHUNK", chunk)
    tau, k = 0x1234567890ABCDEF1234567890ABCDEF % R, R - 5
    want = fr.from_mont_mul_const(fr.mont_powers(tau, n), k)
    assert np.array_equal(S.powers_times(tau, n, k), want)
