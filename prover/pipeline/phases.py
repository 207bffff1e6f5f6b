"""The contract between the engine and a prover: the phases of one Groth16 prove.

`prover.groth16.phases` (the CPU reference, a module) and `prover.pipeline.nullphases.NullPhases`
(no math, for bookkeeping benchmarks) implement it. What the GPU section computes goes
through one seam over them or a device backend (`prover.groth16.compose.GpuCompute`, made in
pipeline/gpu/compute.py), with the same signatures. The engine never needs to know which one it holds.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from prover.backend import Deferred, settle  # noqa: F401  (a GPU phase's result, finished later)


class Phases(Protocol):
    def make_circuit(self, constraints_log2: int, seed: int) -> Any: ...

    def load_or_setup(self, circuit: Any, seed: int, cache_dir: Path | None = None, *,
                      insecure_seeded: bool = False, kernels: Any = None) -> tuple[Any, Any]: ...

    def synthesize(self, circuit: Any, instance: int, out: tuple[Any, Any, Any] | None = None,
                   z: Any = None, threads: int = 1) -> Any: ...

    def witness(self, circuit: Any, instance: int, z: Any = None, threads: int = 1, cls: Any = None,
                pack: Any = False) -> Any: ...

    def products(self, circuit: Any, syn: Any, out: tuple[Any, Any, Any] | None = None,
                 threads: int = 1) -> tuple[Any, Any, Any]: ...

    def prep_msm(self, syn: Any, pk: Any, threads: int = 1) -> Any: ...

    def ntt_h(self, a: Any, b: Any, c: Any) -> Any: ...

    def msm_g1(self, prep: Any, h: Any, pk: Any) -> Any: ...

    def b_g2_msm(self, prep: Any, pk: Any) -> Any: ...

    def randomisers(self, seed: int, instance: int, *, insecure_seeded: bool = False) -> tuple[int, int]: ...

    def assemble(self, syn: Any, g1: Any, b_g2: Any, pk: Any, r: int, s: int) -> Any: ...

    def verify(self, vk: Any, public_inputs: list[int], proof: Any) -> bool: ...
