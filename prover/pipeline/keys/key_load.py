"""One proving key read from the key cache or set up, with its progress: the set-up's own
timed steps (prover/groth16/setup.py: lagrange .. save_keys, 10 of them in a fresh set-up) or
the cache read, reported as (frac, detail) to whoever shows it (the start-up panel, a
KeyLoad event). The key ring (key_ring.py) calls it for every load, at start-up and later.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

# report(frac, detail); the key ring's also takes step= and step_s= (a set-up step and, when it
# ended, its seconds: the summary lists them)
Report = Callable[..., None]

# setup's timed steps in a fresh set-up: lagrange, qap_matvecs, scalars, lagrange_coset,
# fixed_base_g1 x5 (a, b_g1, l, h, ic), fixed_base_g2, save_keys
SETUP_STEP_ENDS = 11
SET_UP, LOADED = "set up and cached", "loaded from the cache"
SET_UP_UNCACHED = "set up (key cache not written)"
# neither set up nor read: the phases object already held this key (a benchmark's engines
# reusing one set-up): the start-up's seconds then do not include making it
HELD = "held by this process, made before this run"


@dataclass
class LoadDetail:
    """How the key came: set up (and cached) or read from the cache; empty: neither said."""
    how: str = ""


@contextmanager
def observe_setup(report: Report) -> Iterator[LoadDetail]:
    """Report the set-up's (or the cache read's) steps run on this thread inside the block."""
    from prover.groth16 import setup

    ended, out, saved = [0], LoadDetail(), [False]
    t0: dict[str, float] = {}

    def on_step(name: str, done: bool) -> None:
        saved[0] |= name == "save_keys"
        if name == "load_keys":
            out.how = LOADED if done else out.how
            report(1.0 if done else 0.0, LOADED if done else "loading from the cache")
            return
        ended[0] += done
        n = ended[0] + (not done)
        secs = max(0.0, time.perf_counter() - t0.pop(name, time.perf_counter())) if done else None
        if not done:
            t0[name] = time.perf_counter()
        report(min(1.0, ended[0] / SETUP_STEP_ENDS),
               f"set-up: {name} ({n}/{SETUP_STEP_ENDS})" if not done else f"set-up: {name} done ({n}/{SETUP_STEP_ENDS})",
               step=name, step_s=secs)

    with setup.observe_steps(on_step):
        yield out
    if ended[0]:
        out.how = SET_UP if saved[0] else SET_UP_UNCACHED


def load_key(phases: Any, circuit: Any, config: Any, report: Report) -> tuple[Any, Any, str]:
    """(pk, vk, how) for `circuit`: the run's cache, seed and kernel settings."""
    cache = None if config.cache_dir is None else Path(config.cache_dir)
    with observe_setup(report) as how:
        pk, vk = phases.load_or_setup(circuit, config.seed, cache, insecure_seeded=config.insecure_seeded_setup,
                                      kernels=config.kernels)
    return pk, vk, how.how or HELD
