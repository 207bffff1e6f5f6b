"""`c2tui export --format perfetto|csv`: every committed recording exports to a trace that
keeps the Chrome trace event format's rules, with what the recording holds on its tracks."""
from __future__ import annotations

import csv
import gzip
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover.observe.trace import to_trace
from prover.observe.trace_check import validate
from prover.record import read_recording

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = sorted((ROOT / "benchmarks" / "recordings" / "h200").glob("*.jsonl")) + \
    sorted((ROOT / "tests" / "tui" / "recordings").glob("*.jsonl"))


def test_there_are_recordings():
    assert len([p for p in RECORDINGS if "h200" in p.parts]) >= 10


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_export_keeps_format_rules(path):
    rec = read_recording(path)
    assert rec.error is None
    trace = json.loads(json.dumps(to_trace(rec)))  # what a file holds
    assert validate(trace) == []
    kinds = Counter(e.kind for e in rec.events)
    evs = trace["traceEvents"]
    procs = {e["args"]["name"] for e in evs if e["name"] == "process_name"}
    gpus = {e.gpu for e in rec.events if e.kind == "gpu_info"}
    assert sum(n.startswith("GPU ") for n in procs) == len(gpus)  # one process per GPU
    cats = Counter(e.get("cat") for e in evs if e["ph"] == "X")
    assert cats["phase"] == kinds["phase_end"] + sum(1 for e in evs if e["ph"] == "X" and e["args"].get("open")
                                                     and e["cat"] == "phase")
    assert cats["lock"] >= kinds["lock_released"] and cats["wait"] >= kinds["lock_acquired"]
    inst = Counter(e.get("cat") for e in evs if e["ph"] == "i")
    assert inst["fallback"] == kinds["fallback"] and inst["oom"] == kinds["oom"]
    assert inst["mode"] == kinds["mode_change"]
    assert inst["proof"] == sum(1 for e in rec.events if e.kind == "proof_result" and e.checked and not e.ok)
    counters = {e["name"] for e in evs if e["ph"] == "C"}
    assert {"VRAM live", "VRAM pool reserved", "VRAM budget"} <= counters
    assert any(n.startswith("GPU utilisation") for n in counters)
    threads = {e["args"]["name"] for e in evs if e["name"] == "thread_name"}
    assert any(n.startswith("lock mem") for n in threads) and any(n.startswith("lock compute") for n in threads)
    assert any(n.endswith("lock waits") for n in threads) and any(n.endswith("prep_msm (CPU thread)") for n in threads)


def test_failures_become_instants():
    rec = read_recording(ROOT / "tests" / "tui" / "recordings" / "synth_failures.jsonl")
    evs = to_trace(rec)["traceEvents"]
    names = [e["name"] for e in evs if e["ph"] == "i"]
    assert any(n.startswith("proof FAILED") for n in names) and any(n.startswith("partition failed") for n in names)


def _span(pid, tid, ts, dur, name="x"):
    return {"ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur, "name": name}


def _named(*events):
    meta = [{"ph": "M", "pid": 1, "tid": 0, "name": "process_name", "args": {"name": "p"}},
            {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "t"}}]
    return {"traceEvents": meta + list(events)}


def test_validator_catches_each_rule():
    assert validate(_named(_span(1, 1, 0, 10), _span(1, 1, 2, 3), _span(1, 1, 10, 5))) == []
    assert "without nesting" in validate(_named(_span(1, 1, 0, 10), _span(1, 1, 5, 10)))[0]
    assert "dur" in validate(_named(_span(1, 1, 0, -1)))[0]
    assert "ts" in validate(_named({"ph": "X", "pid": 1, "tid": 1, "dur": 1, "name": "x"}))[0]
    assert "no thread_name" in validate(_named(_span(1, 2, 0, 1)))[0]
    assert "no process_name" in validate(_named(_span(2, 1, 0, 1)))[0]
    bad_counter = {"ph": "C", "pid": 1, "tid": 0, "ts": 1, "name": "c", "args": {"v": "12"}}
    assert "numbers" in validate(_named(bad_counter))[0]
    assert "i.s:" in validate(_named({"ph": "i", "pid": 1, "tid": 1, "ts": 1, "name": "i", "s": "x"}))[0]
    assert "tag" in validate(_named({"ph": "Q", "pid": 1, "tid": 1, "ts": 1, "name": "q"}))[0]
    assert "integer" in validate(_named(_span("1", 1, 0, 1)))[0]
    assert validate([]) != []


def test_committed_trace_is_the_export_of_its_recording():
    committed = ROOT / "benchmarks" / "traces" / "m_switch.perfetto.json.gz"
    trace = json.loads(gzip.decompress(committed.read_bytes()))
    assert validate(trace) == []
    assert trace == json.loads(json.dumps(to_trace(read_recording(ROOT / "benchmarks/recordings/h200/m_switch.jsonl"))))


def test_export_cli_perfetto_and_csv(tmp_path):
    src = ROOT / "benchmarks" / "recordings" / "h200" / "m_stream_2gpu.jsonl"
    out = tmp_path / "t.json"
    r = CliRunner().invoke(main, ["export", str(src), "--format", "perfetto", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert validate(json.loads(out.read_text())) == []
    r = CliRunner().invoke(main, ["export", str(src), "--format", "csv", "-o", str(tmp_path / "t.csv")])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))
    rec = read_recording(src)
    done = [e for e in rec.events if e.kind == "partition_done"]
    assert [row["part"] for row in rows] == [e.part for e in done]
    ends = [e for e in rec.events if e.kind == "phase_end" and e.phase.value == "ntt_h"]
    assert sum(float(row["ntt_h_s"]) for row in rows) == pytest.approx(sum(e.duration for e in ends), abs=1e-4)
    assert {row["gpu"] for row in rows} == {"0", "1"}


def test_export_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    r = CliRunner().invoke(main, ["export", str(bad), "-o", str(tmp_path / "o.json")])
    assert r.exit_code == 2 and "not a c2tui recording" in r.output and not (tmp_path / "o.json").exists()
    r = CliRunner().invoke(main, ["export", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "o.json")])
    assert r.exit_code == 2 and "cannot read" in r.output


def test_oom_and_stall_instants_and_open_spans():
    from prover import events as ev
    from prover.record import Recording, RecordingHeader

    events = [ev.RunStarted(t=0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=20, gpus=1),
              ev.GpuInfo(t=0, gpu=0, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 29, simulated=True),
              ev.WorkerStarted(t=0, gpu=0, worker="g0w0"),
              ev.PhaseStart(t=0.1, part="s0p0", phase=ev.Phase.ntt_h, worker="g0w0", gpu=0, impl="sim"),
              ev.LockRequested(t=0.1, gpu=0, lock="compute", worker="g0w0", part="s0p0"),
              ev.LockAcquired(t=0.2, gpu=0, lock="compute", worker="g0w0", part="s0p0", wait=0.1),
              ev.Oom(t=0.3, gpu=0, part="s0p0", worker="g0w0", requested=1 << 30, free=0),
              ev.Stall(t=0.4, what="lock", gpu=0, worker="g0w0", part="s0p0", name="compute", seconds=30)]
    trace = to_trace(Recording(header=RecordingHeader(), events=events))
    assert validate(trace) == []
    evs = trace["traceEvents"]
    assert {"OOM", "stall: lock compute"} <= {e["name"] for e in evs if e["ph"] == "i"}
    open_spans = [e for e in evs if e["ph"] == "X" and e["args"].get("open")]
    assert {e["cat"] for e in open_spans} == {"phase", "lock"} and all(e["ts"] + e["dur"] == 400000 for e in open_spans)


def test_a_simulated_runs_csv_and_trace_say_so(tmp_path):
    """Issue 35: the CSV export did not say "simulated"; the trace said it only in process names."""
    src = ROOT / "tests" / "tui" / "recordings" / "two_gpus.jsonl"
    r = CliRunner().invoke(main, ["export", str(src), "--format", "csv", "-o", str(tmp_path / "t.csv")])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))
    assert rows and all(row["simulated"] == "True" for row in rows)
    trace = to_trace(read_recording(src))
    assert trace["otherData"]["simulated"] is True and "SIMULATED" in trace["otherData"]["figures"]
    native = to_trace(read_recording(ROOT / "benchmarks/recordings/h200/m_switch.jsonl"))
    assert native["otherData"]["simulated"] is False
