"""A run at scale shown as it is (issue 37): the key's set-up step by step in the summary, a
key or circuit made before the run (a benchmark's engines sharing one set-up) said as such
rather than as a 0 ms "cache lookup", and the host RAM's circuits apart from the key, with the
key's bytes resident on the GPU. The last test reads the native 2^27 recording of session 12."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import themes
from c2tui.text.summary import _host_ram_line, _startup_line
from c2tui.widgets.startup_panel import render_startup
from prover.fold.apply import fold
from prover.fold.summary import summarize
from prover.pipeline.keys.key_load import HELD
from prover.record import read_recording
from tests.helpers.tiny_run import tiny_run

N27 = Path(__file__).resolve().parents[2] / "benchmarks/recordings/h200/scale27/n27_stream_card.jsonl.gz"
STEPS = ("lagrange", "qap_matvecs", "scalars", "lagrange_coset", "fixed_base_g1", "fixed_base_g2")


class Held:
    """prover.groth16.phases with the circuit and key made once (benchmarks' MemoPhases)."""

    def __init__(self) -> None:
        import prover.groth16.phases as P

        self._P, self._c, self._k = P, {}, {}

    def __getattr__(self, name: str):
        return getattr(self._P, name)

    def holds_circuit(self, log2: int, seed: int) -> bool:
        return (log2, seed) in self._c

    def make_circuit(self, log2: int, seed: int):
        return self._c.setdefault((log2, seed), self._P.make_circuit(log2, seed))

    def load_or_setup(self, circuit, seed, cache_dir=None, **kw):
        if id(circuit) not in self._k:
            self._k[id(circuit)] = self._P.load_or_setup(circuit, seed, cache_dir, **kw)
        return self._k[id(circuit)]


def _run(phases, cache: Path) -> list:
    return tiny_run(cache, phases)


@pytest.mark.timeout(240)
def test_a_fresh_set_up_is_summarised_step_by_step_and_a_held_key_says_so(tmp_path):
    phases = Held()
    sm = summarize(fold(_run(phases, tmp_path / "keys")))  # an empty cache: set up
    steps = sm.keys.sizes[0].setup_steps
    assert set(STEPS) <= set(steps) and all(v >= 0.0 for v in steps.values()), steps
    line = _startup_line(sm)
    assert "key set-up: lagrange" in line and "fixed base g2" in line
    assert HELD not in line
    # on screen, under the keys line while start-up is what there is to show
    evs = _run(Held(), tmp_path / "fresh")
    upto = next(i for i, e in enumerate(evs) if e.kind == "startup" and e.step == "keys" and e.state == "end")
    shown = [ln.plain for ln in render_startup(fold(evs[: upto + 1]), themes.load("dark").palette, 200)]
    keys_at = next(i for i, ln in enumerate(shown) if "keys" in ln)
    assert shown[keys_at + 1].strip().startswith("set-up: lagrange"), shown
    again = summarize(fold(_run(phases, tmp_path / "keys")))  # the same process's circuit and key: made before this run
    assert again.startup.details["keys"] == HELD and HELD in again.startup.details["circuit"]
    assert not again.keys.sizes[0].setup_steps  # nothing set up in this run
    line = _startup_line(again)
    # the time is whatever a loaded 2-core runner takes to look up a held key: read its shape, not its value
    assert re.search(rf"keys \d+ ms \({re.escape(HELD)}\)", line) and "key set-up" not in line, line


def test_the_native_2_27_recording_reads_as_it_was():
    sm = summarize(fold(read_recording(N27).events))
    h, key = sm.host_ram, sm.keys.sizes[0]
    assert abs(h.circuits / 2**30 - 6.89) < 0.01 and h.key == key.bytes == 127533733  # presence bits only
    assert abs(key.device_bytes / 2**30 - 69.0) < 0.05  # from the detail: the recording predates the field
    assert sm.startup.details["keys"] == HELD  # its "cache lookup" was the key set up before the run
    line = _host_ram_line(sm)
    assert "circuits 6.9 GiB, key 0.1 GiB on the host + 69.0 GiB on the GPU" in line
