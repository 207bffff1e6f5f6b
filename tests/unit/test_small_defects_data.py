"""The data side's small defects of issue 22, each pinned: the event filter's word match,
abandoned partitions apart from failed ones, fleet notes that name their host, b_g2=auto
resolved for a fleet."""
from __future__ import annotations

from dataclasses import fields

import pytest

from c2tui.widgets.event_filter import matcher
from prover import events as ev
from prover.config import RunConfig
from prover.fleet.control import FleetController
from prover.fleet.host import tag
from prover.pipeline.control.controller import Knobs
from prover.pipeline.engine import resolve_auto_knobs
from prover.fold.apply import fold
from prover.fold.summary import summarize


def _log(*texts_and_events: tuple[str, ev.Event | None]) -> list[tuple]:
    return [(1.0, "warn", text, e) for text, e in texts_and_events]


def test_filter_oom_is_a_word_not_the_end_of_room() -> None:
    fb = ev.Fallback(t=1.0, gpu=0, part="s0p1", worker="g0w1", reason="no room after device sync")
    oom = ev.Oom(t=1.0, gpu=0, part="s0p2", worker="g0w0", requested=1 << 30, free=0)
    log = _log(("gpu0 s0p1 fallback: no room after device sync + pool trim", fb),
               ("gpu0 OOM g0w0 s0p2: wanted 1024 MiB, 0 MiB free", oom), ("s0p3 OOMs twice", None))
    pick = lambda text: [e[2] for e in log if matcher(text)(e)]  # noqa: E731
    assert pick("OOM") == [log[1][2], log[2][2]]  # the word, and a word it starts
    assert pick("oom") == pick("OOM")
    assert pick("room") == [log[0][2]] and pick("no room") == [log[0][2]]
    assert pick("fallback") == [log[0][2]] and pick("fall") == [log[0][2]]
    assert pick("") == [e[2] for e in log]


def test_filter_matches_the_event_kind() -> None:
    mc = ev.ModeChange(t=1.0, knob="mem_sync", old="device", new="stream", source="key")
    log = _log(("mem_sync: device -> stream (key)", mc), ("something else", None))
    assert [e for e in log if matcher("mode change")(e)] == [log[0]]
    assert [e for e in log if matcher("mode_change")(e)] == [log[0]]


def _stopped_run() -> list:
    start = ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8, gpus=1)
    evs: list = [start]
    for i in range(3):
        evs += [ev.PartitionQueued(t=0.1, part=f"s0p{i}", sector=0, index=i),
                ev.PhaseStart(t=0.2, part=f"s0p{i}", phase=ev.Phase.msm, worker=f"g0w{i}", gpu=0),
                ev.PhaseStart(t=0.2, part=f"s0p{i}", phase=ev.Phase.prep_msm, worker=f"g0w{i}")]
    evs += [ev.PhaseEnd(t=1.0, part="s0p0", phase=ev.Phase.msm, worker="g0w0", gpu=0, duration=0.8),
            ev.ProofResult(t=1.1, part="s0p0", ok=True), ev.PartitionDone(t=1.1, part="s0p0", ok=True, seconds=1.0)]
    for i in (1, 2):  # ctrl+c: both phases of each end "stopped"
        evs += [ev.PhaseEnd(t=1.5, part=f"s0p{i}", phase=ev.Phase.msm, worker=f"g0w{i}", gpu=0, duration=1.3,
                            ok=False, error="stopped"),
                ev.PhaseEnd(t=1.5, part=f"s0p{i}", phase=ev.Phase.prep_msm, worker=f"g0w{i}", duration=1.3,
                            ok=False, error="stopped")]
    return evs + [ev.RunEnded(t=1.6, reason="interrupted")]


def test_stopped_partitions_are_abandoned_not_failed() -> None:
    st = fold(_stopped_run())
    assert st.partitions_abandoned == 2 and st.partitions_failed == 0 and st.partitions_ok == 1
    assert {p.part for p in st.partitions.values() if p.abandoned} == {"s0p1", "s0p2"}
    assert not [t for (_, level, t, _e) in st.log if level == "error"]
    assert st.phase_stats["msm"].failed == 0
    sm = summarize(st)
    assert sm.partitions_abandoned == 2 and sm.abandoned == ["s0p1", "s0p2"] and sm.errors == []
    from rich.console import Console

    from c2tui.text.summary import render

    con = Console(width=200, record=True, color_system=None)
    con.print(render(sm))
    text = con.export_text()
    assert "failed 0, abandoned (stopped mid-way) 2: s0p1 s0p2" in text and "msm failed: stopped" not in text


def test_a_partition_done_after_all_is_no_longer_abandoned() -> None:
    evs = _stopped_run()[:-1] + [ev.ProofResult(t=2.0, part="s0p1", ok=True),
                                 ev.PartitionDone(t=2.0, part="s0p1", ok=True, seconds=2.0)]
    st = fold(evs)
    assert st.partitions_abandoned == 1 and st.partitions_ok == 2


def test_fleet_notes_name_the_host_and_the_fleet_gpu() -> None:
    note = ev.Note(t=1.0, level="warn", text="s0p1 on gpu0: out of VRAM; GPU section retried (gpu1 fine)")
    h0, h1 = tag(note, "h0", 0, 0.0), tag(note, "h1", 2, 0.0)
    assert h0.text == "h0: s0p1 on gpu0: out of VRAM; GPU section retried (gpu1 fine)"
    assert h1.text == "h1: s0p1 on gpu2: out of VRAM; GPU section retried (gpu3 fine)"
    assert h1.host == "h1"


@pytest.mark.parametrize("backend,want", [("sim", "cpu"), ("cuda", None)])
def test_b_g2_auto_resolves_for_the_fleet_before_hosts_start(backend: str, want: str | None) -> None:
    cfg = resolve_auto_knobs(RunConfig(backend="sim", b_g2="auto"), backend)
    assert cfg.b_g2 in ("cpu", "gpu") and (want is None or cfg.b_g2 == want)
    auto = RunConfig(backend="sim", b_g2="auto")
    knobs = Knobs(**{f.name: getattr(auto, f.name) for f in fields(Knobs)})  # every live knob, as the config has it
    fc = FleetController(fleet=None, knobs=knobs)  # type: ignore[arg-type]
    fc.preset("b_g2", cfg.b_g2)
    assert fc.snapshot().b_g2 == cfg.b_g2  # what every host (and a late joiner) starts with
