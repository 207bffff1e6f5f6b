"""What one worker holds on the host for its partition, by name, as the host RAM accounting
counts it (prover/pipeline/keys/host_ram.py) and the start-up line says it:

    witness  z (32 B a variable, reused) and its density classes (1 B a variable): only the host
             reads them (prep_msm; a, b, c where it builds them)
    abc      a = A.z, b = B.z, c = C.z (3 x 32 B a row of the 2^k domain), while the host builds
             them: page-locked on CUDA (one set a worker, reused); 0 where the GPU builds them
             (abc gpu: `abc_on_host=False`; the host-RAM book leaves a part of 0 bytes out)
    zpack    z's upload form where the GPU builds a, b, c (prover/host/zpack.py): its classes as
             bits with ranks (12 B a 32 variables) and its field values packed (32 B each, room
             for the circuit's field variables); page-locked on CUDA, the pre-stage uploads it.
             0 while the host builds a, b, c (left out of the book like abc)
    prep     prep_msm's splits: the ones' and the tail's indices (8 B each) and the tail's
             scalars (32 B) of the four queries, and their page-locked copies where the backend
             pins them for the MSMs' uploads

prep's bytes depend on the witness (how many values are 0, 1 or neither in each query): they
are measured once on a small member of the same circuit family (PROBE_LOG2: a few ms), as
bytes a variable, and scaled to the run's num_vars; the family's shares do not change with its
size (2^16: 16.3 B a variable, 2^20: 16.0). The old count (32 B a variable for prep, none for
the classes) was twice prep's real size without pinning.
"""
from __future__ import annotations

import functools

from prover.device.budget import FAMILY_FIELD_VARS_PER_ROW
from prover.host import zpack

_WHAT = {"witness": "z + its classes", "abc": "a/b/c built on the host", "prep": "prep_msm's splits",
         "zpack": "z's upload form: classes as bits, field values packed"}


def describe(name: str, pinned: bool) -> str:
    """A worker buffer's name in the start-up line's words (pinned: page-locked; prep: a copy)."""
    what = _WHAT.get(name, "")
    if pinned:
        what += " + their page-locked copies" if name == "prep" else ", page-locked"
    return what


PROBE_LOG2 = 14  # the family member prep's bytes a variable are measured on
WITNESS_BYTES_PER_VAR = 32 + 1  # z, and its density class
ABC_BYTES_PER_ROW = 3 * 32


@functools.lru_cache(maxsize=1)
def prep_bytes_per_var() -> float:
    """prep_msm's output bytes a variable on the circuit family (one real synthesis and split)."""
    from prover.groth16 import phases, prep_nb

    circuit = phases.make_circuit(PROBE_LOG2, 0)
    syn = phases.synthesize(circuit, 0)
    cls = syn.density if syn.density is not None else prep_nb.density(syn.z)  # (synthesize always makes it)
    parts = prep_nb.split_arrays(cls, syn.z, prep_nb.presence_from_circuit(circuit), circuit.num_inputs)
    return sum(x.nbytes for split in parts for x in split) / circuit.num_vars


STAND_IN_PREP_PER_VAR = 16.2  # prep_bytes_per_var() as measured (2026-12-07): for circuits without a witness


def worker_bytes(num_vars: int, log2: int, scale: float = 1.0, *, abc_on_host: bool = True,
                 pinned_prep: bool = False, real_circuit: bool = True, field_vars: int | None = None) -> dict[str, int]:
    """One worker's host bytes by name (see the module docstring), x `scale` (a modelled run:
    2^modelled / 2^proved). real_circuit False (the engine's NullPhases, no witness at all): prep
    from the family's measured figure, no kernel run. field_vars: the circuit's (z's upload form
    holds that many values; None: the family's share of its rows)."""
    per_var = prep_bytes_per_var() if real_circuit else STAND_IN_PREP_PER_VAR
    prep = per_var * num_vars * (2 if pinned_prep else 1)
    nf = field_vars if field_vars is not None else int(FAMILY_FIELD_VARS_PER_ROW * (1 << log2))
    up = 0 if abc_on_host else zpack.tab_bytes(num_vars) + zpack.vals_bytes(max(1, nf))
    return {"witness": int(WITNESS_BYTES_PER_VAR * num_vars * scale),
            "abc": int(ABC_BYTES_PER_ROW * (1 << log2) * scale) if abc_on_host else 0,
            "zpack": int(up * scale), "prep": int(prep * scale)}
