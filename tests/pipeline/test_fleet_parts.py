"""The fleet's pieces without Ray: scheduler, event tagging, the inbox hook on a real engine,
the fold's host level, old recordings, and that one host never imports Ray."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from prover import events as ev
from prover.config import RunConfig
from prover.fleet.control import split_target
from prover.fleet.host import Assignment, HostRuntime, rename_worker, tag
from prover.fleet.scheduler import Scheduler
from prover.record import read_recording
from prover.fold.apply import fold
from prover.fold.summary import summarize

from tests.helpers.invariants import InvariantChecker  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GiB = 1024**3


def test_scheduler_least_loaded_bounded_and_requeue():
    s = Scheduler(depth=1)
    s.add_host("h0", 0, 2, workers=2, budget=16 * GiB)
    s.add_host("h1", 2, 1, workers=2, budget=16 * GiB)
    s.vram(1, 16 * GiB, 12 * GiB)  # gpu1 has least free budget: last among equals
    placed = [s.place(f"p{i}").gpu for i in range(9)]
    assert placed[:3] == [0, 2, 1]  # equal load: most free budget, then the lowest number
    assert placed[-1] is not None and s.place("extra") is None  # 3 GPUs x (2 workers + 1) = 9: backpressure
    assert sorted(placed) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert s.done("p0") == "h0" and s.place("again").gpu == 0
    lost = s.remove_host("h1")
    assert len(lost) == 3 and all(s.host_of(p) is None for p in lost)
    assert s.pending == 6 and s.done(lost[0]) is None


def test_tag_renames_gpu_worker_host_and_time():
    e = ev.LockAcquired(t=1.0, gpu=1, lock="compute", worker="g1w2", part="s0p1", wait=0.1)
    t = tag(e, "h2", 4, 0.5)
    assert (t.host, t.gpu, t.worker, t.t, t.part) == ("h2", 5, "g5w2", 1.5, "s0p1")
    a = tag(ev.Alloc(t=0.0, gpu=0, owner="g0w0", name="d_a", bytes=8), "h1", 2, 0.0)
    assert (a.gpu, a.owner) == (2, "g2w0")
    assert rename_worker("prep", 3) == "prep" and rename_worker("g10w1", 0) == "g10w1"
    assert split_target("h1:two-lock") == ("h1", "two-lock")
    assert split_target("workers=2") == (None, "workers=2") and split_target("fleet:single") == (None, "single")


def test_host_runtime_proves_partitions_placed_from_outside():
    """The engine's inbox hook: no sectors of its own, only what is assigned, on that GPU."""
    cfg = RunConfig(backend="sim", gpus=2, workers_per_gpu=1, constraints_log2=8, time_scale=0.02).public_dict()
    h = HostRuntime("h3", "node", cfg, gpu_offset=6, t0_wall=time.time() - 10.0)
    info = h.start()
    assert (info.gpus, info.gpu_offset) == (2, 6)
    assert h.control("lock_mode", "single", "test", gpu=1)  # one GPU's sections only
    assert h.engine.controller.snapshot(1).lock_mode == "single" and h.engine.controller.snapshot(0).lock_mode == "two-lock"
    with pytest.raises(ValueError, match="whole host"):
        h.control("workers_per_gpu", 2, "test", gpu=1)
    h.assign([Assignment(part=f"s0p{i}", sector=0, index=i, instance=i, gpu=6 + i % 2) for i in range(4)])
    events, deadline = [], time.monotonic() + 60
    while sum(e.kind == "partition_done" for e in events) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
        events += h.poll()
    events += h.stop()
    assert {e.host for e in events} == {"h3"} and events[-1].kind == "host_left" and not events[-1].lost
    mc = [e for e in events if e.kind == "mode_change"]
    assert [(e.knob, e.new, e.gpu, e.source) for e in mc] == [("lock_mode", "single", 7, "test")]
    assert fold(events).knobs.get("lock_mode") != "single"  # a one-GPU change is not the fleet's value
    assert not any(e.kind in ("run_started", "run_ended", "sector_submitted") for e in events)
    assert min(e.t for e in events) >= 9.0  # on the driver's clock
    done = {e.part: e for e in events if e.kind == "partition_done"}
    assert sorted(done) == [f"s0p{i}" for i in range(4)] and all(d.ok for d in done.values())
    starts = {e.part: e.gpu for e in events if e.kind == "phase_start" and e.phase.value == "ntt_h"}
    assert starts == {"s0p0": 6, "s0p1": 7, "s0p2": 6, "s0p3": 7}
    chk = InvariantChecker()
    for e in events:
        chk(e)
    assert [v for v in chk.final(all_done=False) if "run_" not in v] == []


def test_fold_host_level_and_lost_host():
    evs = [ev.RunStarted(t=0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=27, gpus=0),
           ev.HostJoined(t=0.1, host="h0", node="n0", gpus=2, gpu_offset=0),
           ev.HostJoined(t=0.1, host="h1", node="n1", gpus=2, gpu_offset=2),
           ev.PartitionQueued(t=0.2, part="s0p0", sector=0, index=0),
           ev.PartitionQueued(t=0.2, part="s0p1", sector=0, index=1),
           ev.PhaseStart(t=0.3, host="h1", part="s0p1", phase="ntt_h", worker="g3w0", gpu=3),
           ev.LockAcquired(t=0.3, host="h1", gpu=3, lock="compute", worker="g3w0", part="s0p1", wait=0),
           ev.PhaseStart(t=0.3, host="h0", part="s0p0", phase="ntt_h", worker="g0w0", gpu=0),
           ev.ProofResult(t=0.5, host="h0", part="s0p0", ok=True, checked=True),  # ok = verified (issue 16)
           ev.PartitionDone(t=0.5, host="h0", part="s0p0", ok=True, seconds=0.3),
           ev.HostLeft(t=0.6, host="h1", reason="actor died", lost=True, requeued=["s0p1"]),
           ev.PartitionQueued(t=0.6, part="s0p1", sector=0, index=1),
           ev.PhaseStart(t=0.7, host="h0", part="s0p1", phase="ntt_h", worker="g1w0", gpu=1),
           ev.ProofResult(t=0.9, host="h0", part="s0p1", ok=True, checked=True),
           ev.PartitionDone(t=0.9, host="h0", part="s0p1", ok=True, seconds=0.3),
           ev.RunEnded(t=1.0)]
    s = fold(evs)
    assert s.gpus[3].host == "h1" and s.gpus[3].locks["compute"].holder is None  # died with its process
    assert (s.hosts["h0"].done, s.hosts["h1"].lost, s.hosts["h1"].requeued) == (2, True, 1)
    assert s.partitions_ok == 2 and s.partitions["s0p1"].gpu == 1
    sm = summarize(s)
    assert [(h.host, h.partitions_done, h.lost) for h in sm.hosts] == [("h0", 2, False), ("h1", 0, True)]
    chk = InvariantChecker()
    for e in evs:
        chk(e)
    assert chk.final() == [] and chk.lost_hosts == {"h1"}


def test_old_recordings_still_read():
    olds = sorted((ROOT / "benchmarks" / "recordings" / "h200").glob("*.jsonl"))[:2]
    assert olds
    for p in olds:
        rec = read_recording(p)
        assert rec.error is None and rec.header.schema_version == 1
        assert fold(rec.events).hosts == {}


def test_one_host_never_imports_ray(tmp_path):
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "import c2tui.commands\n"
        f"r = CliRunner().invoke(c2tui.commands.main, ['record', '--out', {str(tmp_path / 'r.jsonl')!r}, '--backend', 'sim',"
        " '--constraints-log2', '8', '--time-scale', '0.02', '--sectors', '1', '--partitions', '2', '-q'])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'ray' not in sys.modules and 'prover.fleet.driver' not in sys.modules, 'ray imported'\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


def test_bad_cluster_option_is_one_clean_line(tmp_path):
    from click.testing import CliRunner

    from c2tui.commands import main

    r = CliRunner().invoke(main, ["record", "--out", str(tmp_path / "x.jsonl"), "--cluster", "local:zero"])
    assert r.exit_code == 2 and "--cluster" in r.output and "Traceback" not in r.output
    with pytest.raises(Exception, match="1..16 nodes"):
        from prover.fleet.cluster import parse_cluster

        parse_cluster("local:99")
