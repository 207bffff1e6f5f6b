"""Fault injection (the config's [faults] section), drawn from one RNG seeded by the run seed
so a faulty run is reproducible."""
from __future__ import annotations

import random
import threading
from typing import Any, Callable

from prover.config import FaultsConfig
from prover.device.base import BaseDevice, DeviceError, Stopped
from prover.events import Phase

_CUDA_PHASES = (Phase.prestage, Phase.ntt_h, Phase.msm)


class InjectedFault(RuntimeError):
    """An exception injected by the faults config section."""


class WorkerDeath(BaseException):
    """Injected: the worker thread dies (between partitions)."""


class Faults:
    def __init__(self, config: FaultsConfig, seed: int, clock: Callable[[], float], stop: threading.Event) -> None:
        self.config = config
        self._clock = clock
        self._stop = stop
        self._rng = random.Random(seed ^ 0x5EED)
        self._rng_lock = threading.Lock()

    def chance(self, p: float) -> bool:
        if p <= 0:
            return False
        with self._rng_lock:
            return self._rng.random() < p

    def install(self, dev: BaseDevice) -> None:
        if self.config.oom_rate > 0:
            dev.oom_hook = lambda name, n: self.chance(self.config.oom_rate)

    def inject(self, phase: Phase) -> None:
        """At a phase's start: hang, raise, or raise a (modelled) CUDA error, as configured."""
        f = self.config
        if not f.any:
            return
        if phase in f.hang and self.chance(f.hang[phase]):
            end = self._clock() + f.hang_seconds
            while self._clock() < end:
                if self._stop.wait(min(0.1, end - self._clock())):
                    raise Stopped()
        if phase in f.phase_error and self.chance(f.phase_error[phase]):
            raise InjectedFault(f"injected fault in {phase.value}")
        if phase in _CUDA_PHASES and self.chance(f.cuda_error_rate):
            raise DeviceError(f"injected CUDA error in {phase.value} (cudaErrorLaunchFailure)")

    def worker_dies(self) -> bool:
        return bool(self.config.worker_death_rate) and self.chance(self.config.worker_death_rate)

    def maybe_corrupt(self, proof: Any) -> Any:
        """Swap A and C (with corrupt_proof_rate) so the pairing check must fail."""
        if not self.chance(self.config.corrupt_proof_rate):
            return proof
        try:
            return type(proof)(a=proof.c, b=proof.b, c=proof.a)
        except Exception:  # a stand-in proof object (NullPhases)
            return ("corrupt", proof)
