"""The host_threads knob on a live engine (real proofs, sim device): synthesis and prep_msm get
the knob's threads (auto: the cores over the workers), a live switch reaches the next partition,
every proof verifies, the start-up says the threads, and the fold's knobs show the change."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from prover.config import load_config
from prover.fold.apply import fold
from prover.groth16 import phases as real
from prover.host import threads
from prover.pipeline.engine import Engine


class Counting:
    """The real phases, with the threads each host phase was asked to use recorded."""

    uses_host_kernels = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self.first = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(real, name)

    def synthesize(self, circuit: Any, instance: int, out: Any = None, z: Any = None, threads: int = 1) -> Any:
        self.calls.append(("synthesize", threads))
        self.first.set()
        return real.synthesize(circuit, instance, out=out, z=z, threads=threads)

    def prep_msm(self, syn: Any, pk: Any, threads: int = 1) -> Any:
        self.calls.append(("prep_msm", threads))
        return real.prep_msm(syn, pk, threads=threads)


def _run(tmp_path: Path, **kw: Any) -> tuple[list, Counting, Engine]:
    evs: list = []
    phases = Counting()
    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=8, sectors=1, partitions=4,
                      workers_per_gpu=1, time_scale=0.05, cache_dir=str(tmp_path), **kw)
    eng = Engine(cfg, [evs.append], phases=phases)
    eng.start()
    return evs, phases, eng


def test_the_knob_reaches_synthesis_and_prep_live(tmp_path: Path) -> None:
    evs, phases, eng = _run(tmp_path, host_threads=3)
    assert phases.first.wait(120)
    eng.controller.set("host_threads", 2, source="test")
    assert eng.wait(120)
    got = [t for name, t in phases.calls]
    assert got[0] == 3 and got[-1] == 2 and set(got) <= {2, 3}, phases.calls
    s = fold(evs)
    assert s.partitions_ok == 4 and s.proofs_failed == 0
    assert s.knobs["host_threads"] == "2"
    notes = [e.text for e in evs if e.kind == "note"]
    assert any(n.startswith("host threads: 3 a partition (host_threads)") for n in notes), notes


def test_auto_is_the_cores_over_the_workers(tmp_path: Path) -> None:
    evs, phases, eng = _run(tmp_path)
    assert eng.wait(120)
    want = threads.auto_threads(1)
    assert {t for _, t in phases.calls} == {want}
    assert fold(evs).partitions_ok == 4
    assert any(e.kind == "note" and e.text.startswith(f"host threads: {want} a partition (auto: this host's")
               for e in evs)
