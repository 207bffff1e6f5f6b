"""Fr arithmetic against Python ints (the oracle)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.field import fr

R = fr.R_MOD
elems = st.lists(st.one_of(st.integers(0, R - 1), st.sampled_from([0, 1, 2, R - 1, R - 2, 2**64 - 1, 2**255 % R])), min_size=1, max_size=40)
pairs = st.integers(1, 40).flatmap(lambda n: st.tuples(*(st.lists(st.integers(0, R - 1), min_size=n, max_size=n),) * 2))


@settings(max_examples=60, deadline=None)
@given(pairs)
def test_add_sub_mul_match_python_ints(ab: tuple[list[int], list[int]]) -> None:
    xs, ys = ab
    a, b = fr.from_ints(xs), fr.from_ints(ys)
    assert fr.to_ints(fr.add(a, b)) == [(x + y) % R for x, y in zip(xs, ys)]
    assert fr.to_ints(fr.sub(a, b)) == [(x - y) % R for x, y in zip(xs, ys)]
    assert fr.to_ints(fr.mul(a, b)) == [x * y % R for x, y in zip(xs, ys)]


@settings(max_examples=40, deadline=None)
@given(elems)
def test_neg_pow_inverse_match_python_ints(xs: list[int]) -> None:
    a = fr.from_ints(xs)
    assert fr.to_ints(fr.neg(a)) == [(-x) % R for x in xs]
    assert fr.to_ints(fr.pow_(a, 5)) == [pow(x, 5, R) for x in xs]
    assert fr.to_ints(fr.batch_inverse(a)) == [pow(x, -1, R) if x else 0 for x in xs]


def test_edge_values() -> None:
    xs = [0, 1, R - 1, R - 2, 2**32, 2**64 - 1, 2**128 + 5, 2**254]
    a = fr.from_ints(xs)
    assert fr.to_ints(fr.mul(a, a)) == [x * x % R for x in xs]
    assert fr.to_ints(fr.add(a, a)) == [2 * x % R for x in xs]
    assert fr.to_ints(fr.pow_(a, R - 1)) == [pow(x, R - 1, R) for x in xs]
    assert fr.to_ints(fr.pow_(a, 0)) == [1] * len(xs)


def test_single_inverse_and_zero() -> None:
    assert fr.to_ints(fr.inverse(fr.from_ints([7]))) == [pow(7, -1, R)]
    with pytest.raises(ZeroDivisionError):
        fr.inverse(fr.from_ints([0]))


def test_interchange_format_and_round_trip() -> None:
    xs = [0, 1, R - 1, 123456789 << 200]
    a = fr.from_ints(xs)
    assert a.dtype == np.uint64 and a.shape == (4, 4)
    assert int(a[3, 3]) == (123456789 << 200) >> 192  # little-endian 64-bit limbs
    assert fr.to_ints(a) == xs
    assert fr.to_ints(fr.from_mont(fr.to_mont(a))) == xs  # Montgomery is internal only


def test_small_int_conversion() -> None:
    vals = np.array([0, 1, -1, 2**40, -(2**31)], dtype=np.int64)
    assert fr.to_ints(fr.from_i64(vals)) == [int(v) % R for v in vals]


def test_random_is_seeded_and_canonical() -> None:
    a, b = fr.random(500, 3), fr.random(500, 3)
    assert fr.equal(a, b) and not fr.equal(a, fr.random(500, 4))
    assert fr.is_canonical(a)
    assert not fr.is_canonical(fr.from_u64(np.array([1], np.uint64)) + np.array([[0, 0, 0, 2**63]], np.uint64))


def test_powers_and_segment_sums() -> None:
    assert fr.to_ints(fr.from_mont(fr.mont_powers(5, 11))) == [pow(5, i, R) for i in range(11)]
    xs = [R - 1, R - 2, 3, 4, 5]
    indptr = np.array([0, 2, 2, 5])
    out = fr.to_ints(fr.segment_sums_from_mont(fr.to_mont(fr.from_ints(xs)), indptr))
    assert out == [(2 * R - 3) % R, 0, 12]
