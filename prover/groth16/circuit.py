"""A circuit family shaped like a PoRep partition: mostly bits, 32-bit word logic and a
hash-like mixing of field elements, with a handful of public inputs.

Structure: ``lanes`` independent lanes each run ``rounds`` rounds of

    x = u XOR v            (32 rows: (2u) * v = u + v - x)
    a = u AND v            (32 rows: u * v = a)
    s = x + a + k_r        (33 boolean rows s*(s-1)=0, 1 packing row, A dense: 64 terms)
    y = acc + word(s)      (1 row, A dense: 33 terms)
    acc' = y^5             (3 rows: y*y=t2, t2*t2=t4, t4*y=acc')
    u, v = rotl(s, rot_r), x

from private random input bits u0, v0 (64 boolean rows per lane). Public input j equals
the final accumulator of lane j (with fewer
than 4 lanes, also the last round's t4, t2, y). After padding rows (repeated boolean checks)
come the input rows ``z_i * 0 = 0`` (bellman's trick that keeps the input polynomials
independent), so constraints + inputs fill the domain 2^k exactly.

The witness is ~97% bits; A is dense-ish (packing rows), B sparse (1-2 terms a row). The
same circuit (fixed by ``constraints_log2`` and ``seed``) is proved for many instances:
an instance only changes the private input bits, hence the whole witness and the public
inputs.
"""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from prover.field import fr
from prover.groth16.r1cs import SparseMatrix, compact

NUM_PUBLIC = 4  # public inputs, not counting the constant one
WORD = 32
ROWS_PER_ROUND = 32 + 32 + 33 + 1 + 1 + 3
CIRCUIT_NAME = "porep-like-v1"
MIN_LOG2, MAX_LOG2 = 8, 27  # 2^27: a 32 GiB PoRep partition (set-up on the GPU; docs/scale.md)


@dataclass(frozen=True)
class Layout:
    """Variable indices of the witness, per lane, so witness generation is array work."""

    lanes: int
    rounds: int
    init_u: np.ndarray  # (lanes, 32)
    init_v: np.ndarray  # (lanes, 32)
    x: np.ndarray  # (rounds, lanes, 32)
    a: np.ndarray  # (rounds, lanes, 32)
    s: np.ndarray  # (rounds, lanes, 33)
    y: np.ndarray  # (rounds, lanes)
    t2: np.ndarray
    t4: np.ndarray
    acc: np.ndarray
    round_consts: np.ndarray  # (rounds,) uint64, < 2^32
    rotations: np.ndarray  # (rounds,) int64 in 1..31
    acc0: fr.FrArray  # (lanes, 4) starting accumulators


@dataclass(frozen=True)
class Circuit:
    constraints_log2: int
    seed: int
    num_vars: int  # including the constant one and the public inputs
    num_constraints: int  # rows before the input rows (padding included)
    a: SparseMatrix  # each with exactly 2^k rows
    b: SparseMatrix
    c: SparseMatrix
    layout: Layout

    @property
    def domain_size(self) -> int:
        return 1 << self.constraints_log2

    @property
    def num_inputs(self) -> int:
        """Input variables including the constant one (= len(IC))."""
        return NUM_PUBLIC + 1

    def digest(self) -> str:
        """sha256 of the name, size, seed and the three matrices' compact arrays (hashed in
        place, no joined copy), made once: at 2^27 they are ~6 GiB."""
        d = self.__dict__.get("_digest")
        if d is None:
            h = hashlib.sha256(f"{CIRCUIT_NAME}:{self.constraints_log2}:{self.seed}".encode())
            for m in (self.a, self.b, self.c):
                m.digest_into(h)
            d = self.__dict__["_digest"] = h.hexdigest()
        return d

    @property
    def field_vars(self) -> int:
        """Variables whose value may be other than 0 or 1: each round's y, t2, t4, acc of every lane
        and the public inputs (copies of accumulators); the rest are bits and the constant one. It
        bounds the field values of every witness: z's upload form holds that many (abc gpu)."""
        lay = self.layout
        return 4 * lay.rounds * lay.lanes + NUM_PUBLIC

    @property
    def nbytes(self) -> int:
        """Host bytes the circuit holds: its matrices and the witness layout's index arrays."""
        lay = self.layout
        arrays = (lay.init_u, lay.init_v, lay.x, lay.a, lay.s, lay.y, lay.t2, lay.t4, lay.acc, lay.acc0)
        return sum(m.nbytes for m in (self.a, self.b, self.c)) + sum(int(a.nbytes) for a in arrays)


class _Rows:
    """Collects the entries of A, B and C while rows are laid out: int32 rows and columns, small
    signed coefficients as int64, and the few full-size ones (FrArray) with a mask (16 bytes an
    entry, where FrArray coefficients took 48)."""

    def __init__(self) -> None:
        self.next_row = 0
        self.parts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray, fr.FrArray | None]]] = {
            "a": [], "b": [], "c": []}

    def take(self, count: int) -> np.ndarray:
        rows = np.arange(self.next_row, self.next_row + count, dtype=np.int64)
        self.next_row += count
        return rows

    def add(self, mat: str, rows: np.ndarray, cols: np.ndarray, coeffs: np.ndarray | int | fr.FrArray) -> None:
        """Add one term to each of ``rows``; coeffs are small ints or an FrArray."""
        is_fr = isinstance(coeffs, np.ndarray) and coeffs.ndim == 2 and coeffs.dtype == np.uint64
        small = np.zeros((), np.int64) if is_fr else np.asarray(coeffs, np.int64)
        rows, cols, small = (x.ravel() for x in np.broadcast_arrays(np.asarray(rows, np.int64), np.asarray(cols, np.int64), small))
        self.parts[mat].append((rows.astype(np.int32), cols.astype(np.int32), small.copy(),
                                np.asarray(coeffs, np.uint64).reshape(-1, 4) if is_fr else None))

    def matrix(self, mat: str, n_rows: int, n_cols: int) -> SparseMatrix:
        """The entries of `mat` as CSR (its parts are dropped as it is made: peak memory)."""
        parts = self.parts.pop(mat)
        rows = np.concatenate([p[0] for p in parts])
        cols = np.concatenate([p[1] for p in parts])
        small = np.concatenate([p[2] for p in parts])
        is_big = np.concatenate([np.full(len(p[0]), p[3] is not None) for p in parts])
        big = [p[3] for p in parts if p[3] is not None]
        big_rows = np.concatenate(big) if big else np.zeros((0, 4), np.uint64)
        del parts
        codes, values, big_rows = compact(small, is_big, big_rows)
        del small, is_big
        return SparseMatrix.from_entries(rows, cols, codes, values, big_rows, n_rows, n_cols)


def _shape(constraints_log2: int) -> tuple[int, int]:
    """(lanes, rounds) so that all rows fit 2^k with the fewest padding rows practical."""
    n = 1 << constraints_log2
    lanes = max(1, n // 1024)
    fixed = NUM_PUBLIC + (NUM_PUBLIC + 1)  # output rows + input rows
    rounds = (n - fixed - 2 * WORD * lanes) // (ROWS_PER_ROUND * lanes)
    return lanes, rounds


def family_counts(constraints_log2: int) -> tuple[int, int]:
    """(num_vars, field_vars) of the family member of size 2^constraints_log2, from its shape
    alone (no circuit built): what a modelled size's plan and upload are counted from."""
    lanes, rounds = _shape(constraints_log2)
    per_round = 3 * WORD + 1 + 4  # x, a, s (33 bits); y, t2, t4, acc
    return 1 + NUM_PUBLIC + 2 * WORD * lanes + per_round * rounds * lanes, 4 * rounds * lanes + NUM_PUBLIC


def _allocate(constraints_log2: int, seed: int) -> tuple[Layout, int]:
    lanes, rounds = _shape(constraints_log2)
    rng = np.random.default_rng([seed, constraints_log2, 0xC1])
    counter = [1 + NUM_PUBLIC]

    def alloc(*shape: int) -> np.ndarray:
        size = int(np.prod(shape))
        idx = np.arange(counter[0], counter[0] + size, dtype=np.int64).reshape(shape)
        counter[0] += size
        return idx

    init_u, init_v = alloc(lanes, WORD), alloc(lanes, WORD)
    per_round = [
        (alloc(lanes, WORD), alloc(lanes, WORD), alloc(lanes, WORD + 1), alloc(lanes), alloc(lanes), alloc(lanes), alloc(lanes))
        for _ in range(rounds)
    ]
    x, a, s, y, t2, t4, acc = (np.stack(parts) for parts in zip(*per_round))
    layout = Layout(
        lanes=lanes,
        rounds=rounds,
        init_u=init_u,
        init_v=init_v,
        x=x, a=a, s=s, y=y, t2=t2, t4=t4, acc=acc,
        round_consts=rng.integers(0, 2**32, size=rounds, dtype=np.uint64),
        rotations=rng.integers(1, WORD, size=rounds, dtype=np.int64),
        acc0=fr.random(lanes, seed * 1_000_003 + constraints_log2),
    )
    return layout, counter[0]


def round_inputs(lay: Layout, r: int) -> tuple[np.ndarray, np.ndarray]:
    """Variable indices (lanes, 32) of the words u, v entering round r."""
    if r == 0:
        return lay.init_u, lay.init_v
    return np.roll(lay.s[r - 1][:, :WORD], int(lay.rotations[r - 1]), axis=1), lay.x[r - 1]


def output_vars(lay: Layout) -> np.ndarray:
    """Variables exposed as public inputs: the final accumulators of lanes 0..3; where
    there are fewer lanes, also their last t4, t2, y, so the inputs stay distinct."""
    j = np.arange(NUM_PUBLIC)
    last = np.stack([lay.acc[-1], lay.t4[-1], lay.t2[-1], lay.y[-1]])  # (4, lanes)
    return last[j // lay.lanes, j % lay.lanes]


def _boolean_rows(rows: _Rows, bits: np.ndarray) -> None:
    """b * (b - 1) = 0 for every variable in ``bits``."""
    bits = bits.ravel()
    r = rows.take(len(bits))
    rows.add("a", r, bits, 1)
    rows.add("b", r, bits, 1)
    rows.add("b", r, 0, -1)


def _round_rows(rows: _Rows, lay: Layout, r: int) -> None:
    u, v = round_inputs(lay, r)
    pow2 = (1 << np.arange(WORD + 1, dtype=np.int64))
    # XOR: (2u) * v = u + v - x
    rx = rows.take(u.size).reshape(u.shape)
    rows.add("a", rx, u, 2)
    rows.add("b", rx, v, 1)
    rows.add("c", rx, u, 1)
    rows.add("c", rx, v, 1)
    rows.add("c", rx, lay.x[r], -1)
    # AND: u * v = a
    ra = rows.take(u.size).reshape(u.shape)
    rows.add("a", ra, u, 1)
    rows.add("b", ra, v, 1)
    rows.add("c", ra, lay.a[r], 1)
    # the 33 sum bits are boolean, and pack to word(x) + word(a) + k_r
    _boolean_rows(rows, lay.s[r])
    rs = rows.take(lay.lanes)[:, None]
    rows.add("a", rs, lay.x[r], pow2[:WORD])
    rows.add("a", rs, lay.a[r], pow2[:WORD])
    rows.add("a", rs, 0, int(lay.round_consts[r]))
    rows.add("b", rs, 0, 1)
    rows.add("c", rs, lay.s[r], pow2)
    # y = acc + word(s mod 2^32)
    ry = rows.take(lay.lanes)
    if r == 0:
        rows.add("a", ry, 0, lay.acc0)
    else:
        rows.add("a", ry, lay.acc[r - 1], 1)
    rows.add("a", ry[:, None], lay.s[r][:, :WORD], pow2[:WORD])
    rows.add("b", ry, 0, 1)
    rows.add("c", ry, lay.y[r], 1)
    # acc' = y^5 in three multiplications
    for left, right, out in ((lay.y[r], lay.y[r], lay.t2[r]), (lay.t2[r], lay.t2[r], lay.t4[r]), (lay.t4[r], lay.y[r], lay.acc[r])):
        rm = rows.take(lay.lanes)
        rows.add("a", rm, left, 1)
        rows.add("b", rm, right, 1)
        rows.add("c", rm, out, 1)


def make_circuit(constraints_log2: int, seed: int) -> Circuit:
    """Build the R1CS of the family member of size 2^constraints_log2 fixed by ``seed``."""
    if not MIN_LOG2 <= constraints_log2 <= MAX_LOG2:
        raise ValueError(f"constraints_log2 must be in {MIN_LOG2}..{MAX_LOG2}, got {constraints_log2}")
    n = 1 << constraints_log2
    lay, num_vars = _allocate(constraints_log2, seed)
    rows = _Rows()
    _boolean_rows(rows, np.concatenate([lay.init_u, lay.init_v], axis=1))
    for r in range(lay.rounds):
        _round_rows(rows, lay, r)
    # outputs: public_j = a last-round value (see output_vars) times 1
    ro = rows.take(NUM_PUBLIC)
    rows.add("a", ro, output_vars(lay), 1)
    rows.add("b", ro, 0, 1)
    rows.add("c", ro, 1 + np.arange(NUM_PUBLIC), 1)
    # padding: repeat boolean checks of the input bits until only the input rows remain
    n_inputs = NUM_PUBLIC + 1
    pad = n - n_inputs - rows.next_row
    init_bits = np.concatenate([lay.init_u, lay.init_v], axis=1).ravel()
    _boolean_rows(rows, init_bits[np.arange(pad) % len(init_bits)])
    num_constraints = rows.next_row
    # input rows: z_i * 0 = 0
    rows.add("a", rows.take(n_inputs), np.arange(n_inputs), 1)
    assert rows.next_row == n
    # the three matrices at once (numpy's copies and the numba sorts release the GIL): at 2^27
    # each is a few hundred million entries
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="r1cs") as pool:
        a, b, c = pool.map(lambda m: rows.matrix(m, n, num_vars), ("a", "b", "c"))
    return Circuit(
        constraints_log2=constraints_log2,
        seed=seed,
        num_vars=num_vars,
        num_constraints=num_constraints,
        a=a,
        b=b,
        c=c,
        layout=lay,
    )
