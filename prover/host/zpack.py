"""z's upload form where the GPU makes a, b, c (abc gpu): what goes up instead of the whole witness.

The witness is ~96% bits (the circuit family: 97 of each round's 101 variables), so the R1CS kernel
(prover/kernels/cuda/r1cs.cu) does not need z whole: a variable's value is 0, 1, or a field value,
and only the field values (class OTHER) need their 32 bytes. The form, two arrays:

    tab   (words, 3) uint32, a row per 32 variables (word w: variables 32w .. 32w + 31):
              [ones, others, rank]: bit j of `ones` says variable 32w + j is 1, bit j of `others`
              that it is a field value, `rank` how many field values come before the word
    vals  (capacity, 4) uint64: the field values in variable order, canonical (as z holds them)

A variable v reads: w = v >> 5, bit = 1 << (v & 31); others & bit: vals[rank + popc(others &
(bit - 1))]; else ones & bit: 1; else 0. 12 B a 32 variables (0.375 B a variable) and 32 B a
field value, where z and its classes took 33 B a variable: at 2^27 0.19 GB where they took 4.21.

Measured for bytes against the other shapes (docs/kernels.md): the classes as bytes (1 B a
variable) with a u32 rank each (4 B) take 5 B a variable; with a rank a 32 variables 1.25 B;
this form keeps no byte a variable at all (at 2^27: 4.21, 0.79, 0.29-0.31 and 0.199 GB). The host builds it from the classes the witness
kernel wrote (prover/host/zpack_nb.py, one pass of counting and one of filling over ranges of
words, split over the partition's host threads); no device scan, so no scratch buffer outside
the plan. `capacity` is fixed before the witness exists (the VRAM plan is): the circuit's field
variables (`Circuit.field_vars`), which bounds the OTHER values of every witness.

This module is the layout and its numpy reference (pure: the VRAM arithmetic imports it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WORD_VARS = 32  # variables a row of the table
TAB_COLS = 3  # ones, others, rank
TAB_BYTES_PER_WORD = 4 * TAB_COLS
VALUE_BYTES = 32  # a canonical Fr
ONE_CLS, OTHER_CLS = 1, 2  # the witness kernel's density classes (ZERO is 0)


def words(num_vars: int) -> int:
    """Rows of the table for `num_vars` variables."""
    return -(-int(num_vars) // WORD_VARS)


def tab_bytes(num_vars: int) -> int:
    return TAB_BYTES_PER_WORD * words(num_vars)


def vals_bytes(capacity: int) -> int:
    return VALUE_BYTES * int(capacity)


@dataclass(frozen=True)
class ZPack:
    """One witness's upload form: the table, the values' array (its first `count` rows hold them)."""

    tab: np.ndarray  # (words, 3) uint32
    vals: np.ndarray  # (capacity, 4) uint64
    count: int  # the field values: > capacity when they did not fit (the GPU cannot use it then)

    @property
    def fits(self) -> bool:
        return self.count <= len(self.vals)

    @property
    def upload_bytes(self) -> int:
        """What goes up: the table and the values written."""
        return int(self.tab.nbytes) + VALUE_BYTES * min(self.count, len(self.vals))


def empty(num_vars: int, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """A table and a values array for `num_vars` variables and `capacity` field values."""
    return np.empty((words(num_vars), TAB_COLS), np.uint32), np.empty((max(1, int(capacity)), 4), np.uint64)


def pack_reference(z: np.ndarray, cls: np.ndarray, capacity: int | None = None) -> ZPack:
    """The form by numpy (the compiled pack's reference): `capacity` None takes every field value."""
    n = len(cls)
    pad = words(n) * WORD_VARS - n
    c = np.concatenate([np.asarray(cls, np.uint8), np.zeros(pad, np.uint8)]).reshape(-1, WORD_VARS)
    weights = np.uint64(1) << np.arange(WORD_VARS, dtype=np.uint64)
    ones = ((c == ONE_CLS) * weights).sum(axis=1).astype(np.uint32)
    others_mask = c == OTHER_CLS
    others = (others_mask * weights).sum(axis=1).astype(np.uint32)
    per_word = others_mask.sum(axis=1)
    rank = (np.cumsum(per_word) - per_word).astype(np.uint32)
    idx = np.flatnonzero(np.asarray(cls) == OTHER_CLS)
    cap = len(idx) if capacity is None else int(capacity)
    vals = np.zeros((max(1, cap), 4), np.uint64)
    vals[: min(cap, len(idx))] = np.asarray(z)[idx[:cap]]
    return ZPack(np.stack([ones, others, rank], axis=1), vals, len(idx))


def unpack(zp: ZPack, num_vars: int) -> np.ndarray:
    """z from its form, as the R1CS kernel reads it (tests; the form says all of z)."""
    v = np.arange(num_vars)
    w, bit = v // WORD_VARS, np.uint64(1) << (v % WORD_VARS).astype(np.uint64)
    ones, others, rank = (zp.tab[w, k].astype(np.uint64) for k in range(TAB_COLS))
    z = np.zeros((num_vars, 4), np.uint64)
    z[(ones & bit) != 0, 0] = 1
    is_other = (others & bit) != 0
    below = others & (bit - np.uint64(1))
    pos = rank + np.array([bin(int(x)).count("1") for x in below], np.uint64)
    z[is_other] = zp.vals[pos[is_other].astype(np.int64)]
    return z
