"""`record --switch AT:KNOB=V[,KNOB=V]` (issue 44): a knob set applied as one change, its two
ModeChanges back to back and one segment boundary in the fold and in the summary; the one-word
form still works. The syntax is prover/knob_set.py's, the one every surface reads."""
from __future__ import annotations

import json
import threading

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover import events as ev
from prover.config import load_config
from prover.fold.apply import fold
from prover.fold.segments import SAME_MOMENT_S
from prover.pipeline.control.controller import Controller, Knobs
from prover.record import read_recording

FAST = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05"]


@pytest.mark.timeout(90)
def test_record_switch_applies_a_knob_set_as_one_segment_boundary(tmp_path):
    out = tmp_path / "set.jsonl"
    r = CliRunner().invoke(main, ["record", "--out", str(out), *FAST, "--lock-mode", "single", "--mem-sync", "stream",
                                  "--duration", "3", "--switch", "1.2:lock_mode=two-lock,mem_sync=device",
                                  "--switch", "1.8:stream"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    events = read_recording(out).events
    changes = [e for e in events if isinstance(e, ev.ModeChange)]
    assert [(e.knob, e.old, e.new, e.source) for e in changes] == [
        ("lock_mode", "single", "two-lock", "switch"), ("mem_sync", "stream", "device", "switch"),  # the set: one pair
        ("mem_sync", "device", "stream", "switch")]  # the one-word form
    assert changes[1].t - changes[0].t < SAME_MOMENT_S
    i = events.index(changes[0])
    assert events[i + 1] is changes[1]  # back to back: no GPU section began between them
    st = fold(events)
    assert [sg.change for sg in st.segments] == [
        None, "lock_mode: single -> two-lock (switch), mem_sync: stream -> device (switch)",
        "mem_sync: device -> stream (switch)"]
    doc = json.loads(CliRunner().invoke(main, ["summary", str(out), "--json"]).output)
    segs = doc["segments"]
    assert len(segs) == 3 and segs[1]["knobs"]["lock_mode"] == "two-lock" and segs[1]["knobs"]["mem_sync"] == "device"
    assert segs[0]["knobs"]["lock_mode"] == "single" and segs[0]["knobs"]["mem_sync"] == "stream"


@pytest.mark.parametrize("spec,needle", [
    ("5:lock_mode=two-lock,mem_sync=often", "mem_sync must be one of device, stream, got 'often'"),
    ("5:two-lock,single", "sets lock_mode twice"),
    ("5:lock_mode=two-lock,frob=1", "unknown knob 'frob'"),
])
def test_a_bad_set_is_refused_before_the_run(tmp_path, spec, needle):
    r = CliRunner().invoke(main, ["record", "--out", str(tmp_path / "x.jsonl"), "--backend", "sim", "--switch", spec])
    assert r.exit_code == 2 and needle in r.output, r.output
    assert not (tmp_path / "x.jsonl").exists()


def test_set_many_checks_every_value_before_setting_any():
    got: list[dict] = []
    ctl = Controller(Knobs.from_config(load_config(None)), lambda cls, **f: got.append(f))
    with pytest.raises(ValueError, match="mem_sync"):
        ctl.apply("lock_mode=single,mem_sync=often")
    assert ctl.knobs.lock_mode == "two-lock" and not got  # nothing half-applied
    assert ctl.apply("lock_mode=single,mem_sync=stream,workers=3")  # workers unchanged: two events
    assert [(f["knob"], f["new"]) for f in got] == [("lock_mode", "single"), ("mem_sync", "stream")]
    assert not ctl.apply("single,stream")  # already so


def test_a_section_never_sees_half_a_set():
    """Readers take the knobs as a GPU section does (snapshot_then) while sets flip both knobs:
    every snapshot is one whole set or the other."""
    ctl = Controller(Knobs.from_config(load_config(None)), lambda cls, **f: None)
    sets = ("lock_mode=single,mem_sync=stream", "lock_mode=two-lock,mem_sync=device")
    whole = {("single", "stream"), ("two-lock", "device")}
    ctl.apply(sets[1])
    stop, seen = threading.Event(), set()

    def read() -> None:
        while not stop.is_set():
            k = ctl.snapshot_then(0, lambda k: None)
            seen.add((k.lock_mode, k.mem_sync))

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    for i in range(2000):
        ctl.apply(sets[i % 2])
    stop.set()
    for t in readers:
        t.join()
    assert seen <= whole and seen


def test_the_fleet_controller_takes_a_set_with_its_target():
    import threading as th

    from prover.config import RunConfig
    from prover.fleet.control import FleetController

    sent: list[tuple] = []

    class Fleet:
        knob_lock = th.RLock()

        def send_control(self, knob, value, source, target):
            sent.append((knob, value, target))

    fc = FleetController(Fleet(), Knobs.from_config(RunConfig(backend="sim")))
    assert fc.apply("h1:lock_mode=single,mem_sync=stream")
    assert sent == [("lock_mode", "single", "h1"), ("mem_sync", "stream", "h1")]
    with pytest.raises(ValueError, match="mem_sync"):
        fc.apply("lock_mode=narrow,mem_sync=often")
    assert len(sent) == 2  # checked before anything was sent


def test_a_sets_changes_share_one_history_mark_named_whole():
    """The History panel names every change of a column (a set's two ModeChanges fall in one):
    it named the last alone."""
    from c2tui.widgets.history_view import mark_columns, short_mark
    from prover.fold.history import HistoryMark

    class P:
        def __init__(self, t: float) -> None:
            self.t = t

    shown = [P(float(t)) for t in range(2, 22, 2)]
    marks = [HistoryMark(t=9.0, label="", knob="lock_mode", old="single", new="two-lock", source="switch"),
             HistoryMark(t=9.0, label="", knob="mem_sync", old="stream", new="device", source="switch")]
    cols = mark_columns(shown, marks, 20)
    assert len(cols) == 1 and short_mark(next(iter(cols.values()))) == "lock_mode→two-lock,mem_sync→device"


@pytest.mark.timeout(60)
def test_attach_send_takes_a_knob_set_as_one_change(tmp_path):
    """`attach --send lock_mode=single,mem_sync=stream`: the prover's controller applies both, as
    one change recorded with the client's name."""
    from prover.attach.server import AttachServer
    from prover.pipeline.engine import Engine
    from prover.pipeline.nullphases import NullPhases

    eng = Engine(load_config(None, backend="sim", profile="tiny", partitions=2, paused=True), phases=NullPhases())
    got: list = []
    eng.add_sink(got.append)
    sock = tmp_path / "p.sock"
    server = AttachServer(eng, str(sock)).start()
    eng.start()
    try:
        r = CliRunner().invoke(main, ["attach", str(sock), "--send", "lock_mode=single,mem_sync=stream", "--name", "ops"])
        assert r.exit_code == 0 and "changed" in r.output, r.output
        assert (eng.controller.knobs.lock_mode, eng.controller.knobs.mem_sync) == ("single", "stream")
        changes = [e for e in got if isinstance(e, ev.ModeChange)]
        assert [(e.knob, e.new, e.source) for e in changes] == [("lock_mode", "single", "attach:ops"),
                                                               ("mem_sync", "stream", "attach:ops")]
        bad = CliRunner().invoke(main, ["attach", str(sock), "--send", "lock_mode=narrow,mem_sync=often"])
        assert bad.exit_code == 2 and "mem_sync must be one of" in bad.output
        assert eng.controller.knobs.lock_mode == "single"  # nothing of the refused set applied
    finally:
        eng.stop(timeout=10)
        server.close()
