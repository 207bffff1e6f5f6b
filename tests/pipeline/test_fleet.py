"""A fleet on a real local Ray cluster (ray.cluster_utils): 3 nodes x 2 sim GPUs, a node removed
mid-run, a node joining late; checked from the recording."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("warm_numba_cache")  # Ray hosts load the kernels, never compile them on the clock

from prover.events import SCHEMA_VERSION  # noqa: E402
from prover.config import RunConfig  # noqa: E402
from prover.fleet.driver import FleetEngine  # noqa: E402
from prover.record import RecordingHeader, RecordingWriter, read_recording  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.model import DashboardState  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402

from tests.helpers.invariants import InvariantChecker  # noqa: E402


def _until(cond, timeout: float, what: str, state=None) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            log = "\n".join(t for _, _, t in list(state.log)[-15:]) if state is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{log}")
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fleet_three_nodes_lose_one_gain_one(tmp_path):
    cfg = RunConfig(backend="sim", gpus=2, workers_per_gpu=2, constraints_log2=8, partitions=8, sectors=3,
                    time_scale=0.1, vram_budget="24GiB", cache_dir=str(tmp_path / "keys"))
    out = tmp_path / "fleet.jsonl"
    writer = RecordingWriter(out, RecordingHeader(config=cfg.public_dict()))
    state, lock = DashboardState(), threading.Lock()

    def fold_sink(e):
        with lock:
            state.apply(e)

    fleet = FleetEngine(cfg, "local:3", sinks=[writer.write, fold_sink])
    try:
        fleet.start()
        # a GPU counts once one of its partitions has started NTT-H (what the assertion below reads),
        # not when one is merely assigned: a host can be removed before its first kernel
        gpus_used = lambda: {p.gpu for p in state.partitions.values() if p.gpu is not None and "ntt_h" in p.phases}  # noqa: E731
        _until(lambda: len(gpus_used()) == 6 and state.partitions_done >= 2, 400, "work on all 6 GPUs", state)
        # a cordon (issue 27): nothing new is placed on gpu0 (h0: the driver's node, never removed)
        assert fleet.controller.apply("cordon=gpu0", source="test")
        # a host-RAM budget below the key in use is refused by the hosts, and so by the fleet,
        # whose knob keeps its value (it once claimed the cut while every host refused it)
        with pytest.raises(ValueError, match="below what the run needs to go on: key 2"):
            fleet.controller.apply("host_ram_budget=1MiB", source="test")
        assert fleet.controller.snapshot().host_ram_budget == 0
        bound = fleet.sched.bound(fleet.sched.slots[0])
        # a worker node (the driver is on the head) that has work in flight goes away
        workers = {n.node_id: n for n in fleet.cluster.local.worker_nodes}
        assert fleet.hosts["h0"].node not in workers  # h0 is the driver's node
        busy = {fleet.sched.host_of(p) for p in list(fleet.sched.where)} - {"h0", None}
        victim = sorted(busy)[0] if busy else "h1"
        node = workers[fleet.hosts[victim].node]
        fleet.cluster.local.remove_node(node)
        _until(lambda: victim in state.hosts and state.hosts[victim].lost, 60, "the lost host", state)
        fleet.controller.pause(source="test")  # hold the fleet while a node joins late (it starts paused too)
        fleet.cluster.add_local_node()
        _until(lambda: "h3" in state.hosts, 300, "the late host to join", state)
        fleet.controller.submit_sector(8, source="test")
        fleet.controller.resume(source="test")
        assert fleet.wait(240), "fleet did not finish"
    finally:
        fleet.stop(timeout=60)
        writer.close()

    rec = read_recording(out)
    assert rec.error is None and rec.header.schema_version == SCHEMA_VERSION
    s = fold(rec.events)
    sm = summarize(s)
    total = 4 * 8
    assert s.end_reason == "done"
    assert s.partitions_ok == total and s.partitions_failed == 0
    assert s.proofs_ok == total and s.proofs_failed == 0 and sm.all_proofs_verified
    done = [e.part for e in rec.events if e.kind == "partition_done"]
    assert len(done) == len(set(done)) == total  # nothing lost, nothing counted twice
    lost = [e for e in rec.events if e.kind == "host_left" and e.lost]
    assert [e.host for e in lost] == [victim]
    assert sm.requeued == s.hosts[victim].requeued == len(lost[0].requeued) == fleet.requeued
    ran = {(e.host, e.gpu) for e in rec.events if e.kind == "phase_start" and e.phase.value == "ntt_h"}
    assert {g for _, g in ran} >= set(range(8))  # all 6 first GPUs, and the late host's 2
    assert s.hosts["h3"].done >= 1 and set(s.hosts["h3"].gpus) == {6, 7}
    assert {h.host for h in sm.hosts} == {"h0", "h1", "h2", "h3"}
    chk = InvariantChecker()
    for e in rec.events:
        chk(e)
    assert chk.final() == []
    assert all(n <= 1 for n in chk.compute_max.values())
    assert {h for (h, _g) in chk.compute_max} == {"h0", "h1", "h2", "h3"}
    cordons = [e for e in rec.events if e.kind == "job_action"]
    assert [(e.action, e.target, e.host, e.source) for e in cordons] == [("cordon", "gpu0", "h0", "test")]
    assert "no new work" in cordons[0].detail and s.jobs.cordoned == {0}
    first: dict[str, float] = {}
    for e in rec.events:
        if e.kind == "phase_start" and (e.worker or "").startswith("g0w"):
            first.setdefault(e.part, e.t)
    assert len([p for p, t in first.items() if t > cordons[0].t]) <= bound  # only what was pending there


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_record_cluster_local2_replays_and_summarises(tmp_path):
    """`c2tui record --cluster local:2 --backend sim ... --switch 8:vram_budget=20GiB` as a user
    runs it: the budget change is recorded on both hosts (the fleet once refused it as an
    "unknown knob"), and so is a switch made before they joined (once lost); the recording
    summarises (per host and fleet) and renders in replay. The duration counts the hosts' joining
    (docs/engine.md): on two loaded cores they took 12 s once, and an 8.5 s run proved nothing."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "fleet.jsonl"
    env = {**__import__("os").environ, "PYTHONPATH": str(root)}
    run = [sys.executable, "-m", "c2tui"]
    r = subprocess.run([*run, "record", "--cluster", "local:2", "--backend", "sim", "--gpus", "2",
                        "--constraints-log2", "8", "--time-scale", "0.2", "--duration", "16", "--partitions", "6",
                        "--switch", "0.01:mem_sync=stream", "--switch", "8:vram_budget=20GiB", "--out", str(out)],
                       cwd=root, env=env, capture_output=True, text=True, timeout=500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "all proofs verified" in r.stdout and "per host" in r.stdout
    s = subprocess.run([*run, "summary", str(out), "--json"], cwd=root, env=env, capture_output=True, text=True)
    import json

    sm = json.loads(s.stdout)
    assert [h["host"] for h in sm["hosts"]] == ["h0", "h1"] and sm["partitions_ok"] >= 4
    assert sm["knobs"]["b_g2"] == "cpu"  # "auto" resolved for the fleet (sim: cpu), not left unresolved
    notes = [e.text for e in read_recording(out).events if e.kind == "note" and e.host is not None]
    assert notes and all(t.startswith(("h0: ", "h1: ")) for t in notes)
    changes = [e for e in read_recording(out).events if e.kind == "mode_change"]
    # the first switch lands before the hosts join (~0.8 s): each takes it as it joins
    assert sorted((e.host, e.knob, e.new) for e in changes) == [("h0", "mem_sync", "stream"), ("h0", "vram_budget", "20 GiB"),
                                                               ("h1", "mem_sync", "stream"), ("h1", "vram_budget", "20 GiB")]
    svg = tmp_path / "shot.svg"
    end = read_recording(out).events[-1].t
    p = subprocess.run([*run, "screenshot", str(out), "--at", f"{end * 0.9:.2f}", "-o", str(svg)], cwd=root, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and svg.exists(), p.stderr[-2000:]
