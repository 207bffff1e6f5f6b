"""z's upload form (prover/host/zpack.py, zpack_nb.py): the compiled pack equals the numpy
reference at every thread count and chunking (words split over many chunks), on aligned and
unaligned classes; the form says all of z (unpack gives it back); a witness with more field values
than room writes nothing past the end and says so; the family's field values are exactly its
field variables (the plan's bound); and the plan's bytes at the sizes RESULTS gives."""
from __future__ import annotations

import numpy as np
import pytest

from prover.device.budget import FAMILY_FIELD_VARS_PER_ROW, FAMILY_VARS_PER_ROW, Sizing
from prover.device.profiles import get_profile
from prover.field.ref import fr_random
from prover.groth16 import phases as P
from prover.groth16.circuit import family_counts
from prover.host import zpack, zpack_nb
from tests.helpers.inputs import rng_for


def _random_z(n: int, tag: str) -> tuple[np.ndarray, np.ndarray]:
    rng = rng_for(tag)
    z = fr_random(n, rng)
    cls = rng.integers(0, 3, n).astype(np.uint8)
    z[cls == 0] = 0
    z[cls == 1] = 0
    z[cls == 1, 0] = 1
    cls[rng.random(n) < 0.05] = 2  # runs and lone values alike
    return z, cls


def _same(a: zpack.ZPack, b: zpack.ZPack) -> None:
    assert a.count == b.count and np.array_equal(a.tab, b.tab)
    assert np.array_equal(a.vals[: a.count], b.vals[: b.count])


@pytest.mark.parametrize("n", [1, 31, 32, 33, 200, 4099])
def test_the_compiled_pack_is_the_reference_at_every_thread_count(n, monkeypatch):
    z, cls = _random_z(n, f"zpack{n}")
    want = zpack.pack_reference(z, cls)
    monkeypatch.setattr(zpack_nb, "MIN_WORDS", 1)  # many chunks: ranks across chunk boundaries
    for threads in (1, 2, 5):
        _same(zpack_nb.pack(z, cls, want.count, threads=threads), want)
    unaligned = np.empty(n + 1, np.uint8)[1:]  # the byte path where the classes are not 8-byte aligned
    unaligned[:] = cls
    _same(zpack_nb.pack(z, unaligned, want.count), want)
    assert np.array_equal(zpack.unpack(want, n), z)


def test_a_worker_s_arrays_are_filled_in_place_and_a_smaller_circuit_takes_their_first_rows():
    z, cls = _random_z(1000, "zpack-out")
    want = zpack.pack_reference(z, cls)
    tab, vals = zpack.empty(5000, 2 * want.count)  # sized for a larger circuit
    got = zpack_nb.pack(z, cls, want.count + 10, out=(tab, vals))
    _same(got, want)
    assert np.shares_memory(got.tab, tab) and np.shares_memory(got.vals, vals) and len(got.vals) == want.count + 10
    with pytest.raises(ValueError, match="upload form"):
        zpack_nb.pack(z, cls, want.count, out=(tab.astype(np.uint64), vals))


def test_more_field_values_than_room_write_nothing_past_it():
    z, cls = _random_z(500, "zpack-over")
    want = zpack.pack_reference(z, cls)
    tab, vals = zpack.empty(500, want.count)
    vals[:] = 7
    got = zpack_nb.pack(z, cls, want.count - 10, out=(tab, vals))
    assert not got.fits and got.count == want.count
    assert np.all(vals[want.count - 10:] == 7)  # the rows past the room untouched
    assert got.upload_bytes == got.tab.nbytes + 32 * (want.count - 10)


@pytest.mark.parametrize("k", [8, 10, 14])
def test_the_family_s_field_values_are_its_field_variables(k):
    """Every witness of the family has exactly Circuit.field_vars field values (the plan's room):
    its bits and the constant one are 0 or 1, its y, t2, t4, acc and publics field values; and
    family_counts (a modelled size's plan, no circuit built) gives the built member's counts."""
    circuit = P.make_circuit(k, 1)
    assert family_counts(k) == (circuit.num_vars, circuit.field_vars)
    for instance in (0, 5):
        syn = P.witness(circuit, instance, pack=True)
        assert syn.zpack is not None and syn.zpack.fits
        assert syn.zpack.count == circuit.field_vars == int((syn.density == 2).sum())
        assert np.array_equal(zpack.unpack(syn.zpack, circuit.num_vars), syn.z)


def _plan(log2: int) -> tuple[dict[str, int], dict[str, int]]:
    """(abc host's plan, abc gpu's) at 2^log2 from the layout's counts (no circuit built)."""
    nv, nf = family_counts(log2)
    prof = get_profile("native")
    return Sizing(prof, log2).buffers, Sizing(prof, log2, abc="gpu", variables=nv, field_vars=nf).buffers


def test_the_plan_a_partition_at_the_sizes_results_gives():
    host, gpu = _plan(27)
    assert host == {"d_a": 4 << 30, "d_bc": 8 << 30}
    assert gpu["z"] == 150_995_072 and gpu["z_cls"] == 47_824_908  # 4,718,596 field values; 127,533,061 variables
    assert sum(gpu.values()) == 13_083_721_868  # 12.19 GiB; z and a class byte a variable made it 17.09 GB
    _, g22 = _plan(22)
    assert g22["z"] + g22["z_cls"] == 4_718_720 + 1_494_540
    # the family's shares (a stand-in circuit's plan) agree with the layout to 0.1%
    fam = Sizing(get_profile("native"), 27, abc="gpu").buffers
    assert fam["z"] == pytest.approx(gpu["z"], rel=1e-3) and fam["z_cls"] == pytest.approx(gpu["z_cls"], rel=1e-3)
    assert FAMILY_VARS_PER_ROW == pytest.approx(973 / 1024, abs=1e-4) and FAMILY_FIELD_VARS_PER_ROW == 36 / 1024


def test_two_plans_fit_beside_the_matrices_in_the_2_27_budget():
    """docs/scale.md: 59.0 GiB free after the 2^27 set-up with the key resident, less the H MSM's
    20 GiB scratch and a 4 GiB margin: a 35 GiB budget. Beside the 4.44 GiB of matrices it holds
    two partitions' plans (the overlap two-lock needs), not three; z whole held one."""
    _, gpu = _plan(27)
    budget, matrices = 35 << 30, int(4.44 * (1 << 30))
    assert (budget - matrices) // sum(gpu.values()) == 2
    assert (budget - matrices) // (sum(gpu.values()) - 198_819_980 + 4_208_591_013) == 1
