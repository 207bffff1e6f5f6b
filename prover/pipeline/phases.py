"""The contract between the engine and a prover: the phases of one Groth16 prove.

`prover.groth16.phases` (the CPU reference, a module) and `prover.pipeline.nullphases.NullPhases`
(no math, for bookkeeping benchmarks) implement it; the GPU implementations in
`prover.kernels.gpu_adapter` replace ntt_h / msm_g1 / b_g2_msm with the same
signatures. The engine never needs to know which one it holds.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Protocol


class Deferred:
    """A GPU phase's result whose last, host-only step (the MSMs' Horner sums of window sums,
    the partial sums of a query) is left for after the GPU section: the GPU phase waits for
    its kernels and downloads their few bytes under the compute lock, and the worker finishes
    them in `assemble`, outside it, while the next holder's kernels run."""

    __slots__ = ("_finish", "_value", "_done")

    def __init__(self, finish: Callable[[], Any]) -> None:
        self._finish, self._value, self._done = finish, None, False

    def result(self) -> Any:
        if not self._done:
            self._value, self._done = self._finish(), True
            self._finish = None  # the downloaded data goes with it
        return self._value


def settle(x: Any) -> Any:
    """x's value: a Deferred finished now, anything else as it is."""
    return x.result() if isinstance(x, Deferred) else x


class Phases(Protocol):
    def make_circuit(self, constraints_log2: int, seed: int) -> Any: ...

    def load_or_setup(self, circuit: Any, seed: int, cache_dir: Path | None = None, *,
                      insecure_seeded: bool = False) -> tuple[Any, Any]: ...

    def synthesize(self, circuit: Any, instance: int, out: tuple[Any, Any, Any] | None = None,
                   z: Any = None) -> Any: ...

    def prep_msm(self, syn: Any, pk: Any) -> Any: ...

    def ntt_h(self, a: Any, b: Any, c: Any) -> Any: ...

    def msm_g1(self, prep: Any, h: Any, pk: Any) -> Any: ...

    def b_g2_msm(self, prep: Any, pk: Any) -> Any: ...

    def randomisers(self, seed: int, instance: int, *, insecure_seeded: bool = False) -> tuple[int, int]: ...

    def assemble(self, syn: Any, g1: Any, b_g2: Any, pk: Any, r: int, s: int) -> Any: ...

    def verify(self, vk: Any, public_inputs: list[int], proof: Any) -> bool: ...
