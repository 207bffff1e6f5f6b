"""Size classes for page-locked prep arrays: CuPy's pinned pool reuses a freed block only for
a request of the same size, so close sizes must land in one class (and waste at most 1/8)."""
from __future__ import annotations

import random

from prover.kernels.pinned import MIN_CLASS, size_class


def test_size_class_covers_and_wastes_at_most_an_eighth() -> None:
    rng = random.Random(7)
    for n in [0, 1, MIN_CLASS, MIN_CLASS + 1] + [rng.randrange(1, 1 << 34) for _ in range(5000)]:
        c = size_class(n)
        assert c >= n
        if n > MIN_CLASS:
            assert c <= n + n // 8 + 1, (n, c)


def test_size_class_is_monotone_with_eight_classes_an_octave() -> None:
    lo = 1 << 24
    classes = sorted({size_class(n) for n in range(lo + 1, 2 * lo + 1, 997)})
    assert len(classes) == 8
    assert all(size_class(a) <= size_class(b) for a, b in zip(range(5000, 90000, 7), range(5001, 90001, 7)))


def test_prep_sizes_a_few_percent_apart_share_few_classes() -> None:
    # prep_msm's tail at 2^22 changes by a few percent from partition to partition
    rng = random.Random(1)
    sizes = [int(75e6 * rng.uniform(0.97, 1.03)) for _ in range(1000)]
    assert len({size_class(s) for s in sizes}) <= 2
