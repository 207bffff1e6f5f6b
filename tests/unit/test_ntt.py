"""NTT: round trips and agreement with a naive DFT."""
from __future__ import annotations

import pytest

from prover.field import fr, ntt

R = fr.R_MOD


def naive_dft(xs: list[int], w: int, shift: int = 1) -> list[int]:
    n = len(xs)
    return [sum(x * pow(shift * pow(w, i, R), j, R) for j, x in enumerate(xs)) % R for i in range(n)]


def test_roots_of_unity() -> None:
    w = ntt.root_of_unity(1 << 32)
    assert pow(w, 1 << 32, R) == 1 and pow(w, 1 << 31, R) != 1
    with pytest.raises(ValueError):
        ntt.root_of_unity(3)


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32])
def test_matches_naive_dft(n: int) -> None:
    xs = fr.to_ints(fr.random(n, n))
    a = fr.from_ints(xs)
    w = ntt.root_of_unity(n)
    assert fr.to_ints(ntt.ntt(a)) == naive_dft(xs, w)
    assert fr.to_ints(ntt.coset_ntt(a)) == naive_dft(xs, w, ntt.GENERATOR)


@pytest.mark.parametrize("k", [0, 1, 3, 7, 10, 12])
def test_round_trips(k: int) -> None:
    a = fr.random(1 << k, 100 + k)
    assert fr.equal(ntt.intt(ntt.ntt(a)), a)
    assert fr.equal(ntt.coset_intt(ntt.coset_ntt(a)), a)
    assert fr.equal(ntt.ntt(ntt.intt(a)), a)


def test_polynomial_product_via_ntt() -> None:
    """Evaluate, multiply pointwise, interpolate: the cyclic convolution of coefficients."""
    n = 16
    xs, ys = fr.to_ints(fr.random(n, 1)), fr.to_ints(fr.random(n, 2))
    prod = ntt.intt(fr.mul(ntt.ntt(fr.from_ints(xs)), ntt.ntt(fr.from_ints(ys))))
    expect = [sum(xs[j] * ys[(i - j) % n] for j in range(n)) % R for i in range(n)]
    assert fr.to_ints(prod) == expect


def test_segmented_large_layers_match_naive(monkeypatch: pytest.MonkeyPatch) -> None:
    """Layers wider than SEGMENT run piecewise; force that path at a small size."""
    monkeypatch.setattr(ntt, "SEGMENT", 4)
    xs = fr.to_ints(fr.random(32, 77))
    a = fr.from_ints(xs)
    assert fr.to_ints(ntt.ntt(a)) == naive_dft(xs, ntt.root_of_unity(32))
    assert fr.equal(ntt.coset_intt(ntt.coset_ntt(a)), a)


def test_chunked_products_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """Operations longer than 2 * CHUNK run blockwise; force that path."""
    monkeypatch.setattr(fr, "CHUNK", 8)
    xs, ys = fr.to_ints(fr.random(45, 1)), fr.to_ints(fr.random(45, 2))
    a, b = fr.from_ints(xs), fr.from_ints(ys)
    assert fr.to_ints(fr.mul(a, b)) == [x * y % R for x, y in zip(xs, ys)]
    assert fr.to_ints(fr.add(a, b)) == [(x + y) % R for x, y in zip(xs, ys)]
    assert fr.to_ints(fr.sub(a, b)) == [(x - y) % R for x, y in zip(xs, ys)]
    scaled = fr.from_mont(fr.mont_mul(fr.to_mont(a), fr.mont_const(3)))  # broadcast column
    assert fr.to_ints(scaled) == [3 * x % R for x in xs]
