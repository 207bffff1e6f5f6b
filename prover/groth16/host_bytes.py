"""What one worker holds on the host for its partition, by name, as the host RAM accounting
counts it (prover/pipeline/keys/host_ram.py) and the start-up line says it:

    witness  z (32 B a variable, reused) and its density classes (1 B a variable); page-locked on
             CUDA where the GPU builds a, b, c (the pre-stage uploads them)
    abc      a = A.z, b = B.z, c = C.z (3 x 32 B a row of the 2^k domain), while the host builds
             them: page-locked on CUDA (one set a worker, reused); 0 where the GPU builds them
             (abc gpu: `abc_on_host=False`; the host-RAM book leaves a part of 0 bytes out)
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

_WHAT = {"witness": "z + its classes", "abc": "a/b/c built on the host", "prep": "prep_msm's splits"}


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
                 pinned_prep: bool = False, real_circuit: bool = True) -> dict[str, int]:
    """One worker's host bytes by name (see the module docstring), x `scale` (a modelled run:
    2^modelled / 2^proved). real_circuit False (the engine's NullPhases, no witness at all): prep
    from the family's measured figure, no kernel run."""
    per_var = prep_bytes_per_var() if real_circuit else STAND_IN_PREP_PER_VAR
    prep = per_var * num_vars * (2 if pinned_prep else 1)
    return {"witness": int(WITNESS_BYTES_PER_VAR * num_vars * scale),
            "abc": int(ABC_BYTES_PER_ROW * (1 << log2) * scale) if abc_on_host else 0,
            "prep": int(prep * scale)}
