"""Start-up in plain sight (prover/pipeline/startup.py): the steps before the first partition
as Startup events with progress, timed in the summary; a fresh key set-up reports its own
steps, a second run loads from the cache; a failing step says so and ends the run."""
from __future__ import annotations

import pytest

from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from prover.fold.apply import fold
from prover.fold.summary import summarize
from tests.helpers.tiny_run import tiny_run


def _run(tmp_path, phases=None):
    return tiny_run(tmp_path / "keys", phases)


@pytest.mark.timeout(240)
def test_fresh_setup_then_cache_load_in_startup_steps(tmp_path):
    evs = _run(tmp_path)
    ups = [e for e in evs if e.kind == "startup"]
    ends = {e.step: e for e in ups if e.state == "end"}
    assert list(ends) == ["circuit", "keys", "host_kernels", "devices"]  # sim: no gpu kernels
    assert all(e.ok and e.seconds is not None for e in ends.values())
    fracs = [e.frac for e in ups if e.step == "keys" and e.state == "progress"]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0 and len(fracs) >= 10  # the set-up's own steps
    assert ends["keys"].detail == "set up and cached"
    first_phase = next(i for i, e in enumerate(evs) if e.kind == "phase_start")
    assert max(i for i, e in enumerate(evs) if e.kind == "startup") < first_phase
    sm = summarize(fold(evs))
    assert sm.startup is not None and set(sm.startup.steps) == set(ends) and sm.startup.seconds > 0
    again = [e for e in _run(tmp_path) if e.kind == "startup" and e.state == "end" and e.step == "keys"]
    assert again[0].detail == "loaded from the cache"


class BrokenKeys(NullPhases):
    def load_or_setup(self, *a, **kw):
        raise OSError("key file unreadable")


@pytest.mark.timeout(60)
def test_a_failed_step_is_shown_and_ends_the_run(tmp_path):
    evs = _run(tmp_path, BrokenKeys())
    end = [e for e in evs if e.kind == "startup" and e.state == "end" and e.step == "keys"]
    assert end and not end[0].ok and "key file unreadable" in end[0].detail
    s = fold(evs)
    assert s.ended and s.startup.failed == ["keys"]
    assert summarize(s).startup.failed == ["keys"]


@pytest.mark.timeout(60)
def test_a_stop_during_start_up_ends_the_run_cleanly(tmp_path):
    """A --duration or ctrl+c that lands while the key set-up runs (a loaded fleet host once
    did): the step says it was stopped, the run ends with the stop's reason, and no "engine
    failed" error or traceback is shown for it."""
    evs: list = []
    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=8, sectors=1, partitions=1,
                      workers_per_gpu=1, time_scale=0.05, cache_dir=str(tmp_path / "keys"))
    eng = Engine(cfg, [evs.append], phases=None)

    def stop_at_keys(e) -> None:
        if e.kind == "startup" and e.step == "keys" and e.state == "start":
            eng.request_stop("duration reached")

    eng.add_sink(stop_at_keys)
    eng.start()
    assert eng.wait(60)
    end = [e for e in evs if e.kind == "startup" and e.state == "end" and e.step == "keys"]
    assert end and end[0].ok and end[0].detail.startswith("stopped before it finished")
    assert [e.reason for e in evs if e.kind == "run_ended"] == ["duration reached"]
    assert not [e for e in evs if e.kind == "note" and e.level == "error"]
    s = fold(evs)
    assert s.ended and s.startup.failed == [] and not [ln for ln in s.log if ln[1] == "error"]
