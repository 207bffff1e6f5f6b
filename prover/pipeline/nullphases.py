"""A stand-in for prover.groth16.phases with no math at all.

Only for measuring the pipeline's own bookkeeping (benchmarks/bench_engine.py) and for fast
scheduling tests; it must be injected explicitly (`Engine(cfg, phases=NullPhases())`): the
engine's default is always the real prover. Its "proofs" are tokens; `verify` checks the
token, so a corrupted proof still fails.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class _Circuit:
    """Shaped like prover.groth16.circuit.Circuit where the engine looks (the key ring sizes a
    key from it before loading it): as many variables as rows, 2^constraints_log2."""
    constraints_log2: int
    seed: int
    num_vars: int
    domain_size: int
    num_inputs: int = 5


@dataclass(frozen=True)
class _Key:
    """A token key of its circuit's size: `nbytes` as a real key of that shape would hold, so
    the host-RAM accounting and the key ring see keys of several sizes."""
    kind: str  # pk | vk
    log2: int
    nbytes: int = 0


@dataclass(frozen=True)
class _Syn:
    instance: int
    log2: int = 0
    a: Any = None
    b: Any = None
    c: Any = None

    def public_ints(self) -> list[int]:
        return [self.instance]


class NullPhases:
    uses_host_kernels = False  # no real math: the engine skips the numba warm-up

    def make_circuit(self, constraints_log2: int, seed: int) -> Any:
        return _Circuit(constraints_log2, seed, 1 << constraints_log2, 1 << constraints_log2)

    def load_or_setup(self, circuit: Any, seed: int, cache_dir: Any = None, *, insecure_seeded: bool = False,
                      kernels: Any = None) -> tuple[Any, Any]:
        from prover.groth16.keys import ProvingKey

        n = ProvingKey.size_for(circuit.num_vars, circuit.num_inputs, circuit.domain_size)
        return _Key("pk", circuit.constraints_log2, n), _Key("vk", circuit.constraints_log2)

    def synthesize(self, circuit: Any, instance: int, out: Any = None, z: Any = None, threads: int = 1) -> _Syn:
        return _Syn(instance, log2=circuit.constraints_log2)

    def witness(self, circuit: Any, instance: int, z: Any = None, threads: int = 1, cls: Any = None,
                pack: Any = False) -> _Syn:
        return _Syn(instance, log2=circuit.constraints_log2)

    def products(self, circuit: Any, syn: _Syn, out: Any = None, threads: int = 1) -> tuple[Any, Any, Any]:
        return None, None, None

    def prep_msm(self, syn: _Syn, pk: Any, threads: int = 1) -> Any:
        return ("prep", syn.instance)

    def ntt_h(self, a: Any, b: Any, c: Any) -> Any:
        return "h"

    def msm_g1(self, prep: Any, h: Any, pk: Any) -> Any:
        return ("g1", prep[1])

    def b_g2_msm(self, prep: Any, pk: Any) -> Any:
        return ("b_g2", prep[1])

    def randomisers(self, seed: int, instance: int, *, insecure_seeded: bool = False) -> tuple[int, int]:
        return seed + 1, instance + 1

    def assemble(self, syn: _Syn, g1: Any, b_g2: Any, pk: Any, r: int, s: int) -> Any:
        # the key's size is in the token: a proof made with another size's key fails verify
        return ("proof", syn.instance, g1[1], b_g2[1], getattr(pk, "log2", syn.log2), syn.log2)

    def verify(self, vk: Any, public_inputs: list[int], proof: Any) -> bool:
        ok = isinstance(proof, tuple) and len(proof) == 6 and proof[0] == "proof" and [proof[1]] == public_inputs
        return ok and proof[4] == proof[5] == getattr(vk, "log2", proof[5])
