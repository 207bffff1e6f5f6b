"""benchmarks/switch_pairs.py --check: its five checks, each passing a good stream and failing a
bad one (issue 42: a check made unable to fail passed the suite), and the whole --check on the
committed native recording and on a copy with faults planted."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import switch_pairs as sp
from prover import events as ev

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "benchmarks" / "recordings" / "h200" / "switch" / "switch_pairs_cuda_22.jsonl.gz"
SRC = f"attach:{sp.SOURCE}"


def _proof(t: float, part: str, ok: bool = True) -> ev.ProofResult:
    return ev.ProofResult(t=t, part=part, ok=ok, reason=None if ok else "pairing check failed")


def _good() -> tuple[list[Any], dict[str, Any]]:
    """Two-lock + device, then a switch to reserved, a proof verified in each."""
    events = [ev.GpuInfo(t=0.0, gpu=0, name="x", total_bytes=1, budget_bytes=1, simulated=True), _proof(1.0, "a"),
              ev.ModeChange(t=2.0, knob="lock_mode", old="two-lock", new="reserved", source=SRC), _proof(3.0, "b")]
    segs = [{"index": 0, "knobs": {"lock_mode": "two-lock", "mem_sync": "device"}, "proofs": 1, "per_min": 30.0,
             "per_min_ci": [1.0, 100.0], "device_sync_s": 0.4},
            {"index": 1, "knobs": {"lock_mode": "reserved", "mem_sync": "device"}, "proofs": 1, "per_min": 30.0,
             "per_min_ci": [1.0, 100.0], "device_sync_s": 0.0}]
    return events, {"partitions_failed": 0, "segments": segs}


def test_a_good_stream_passes_every_check() -> None:
    events, sm = _good()
    assert {c.__name__: c(events, sm) for c in sp.CHECKS} == {c.__name__: [] for c in sp.CHECKS}
    assert len(sp.CHECKS) == 5


def _bad_oom(events: list, sm: dict) -> None:
    events.append(ev.Oom(t=2.5, gpu=0, part="b", worker="g0w0", requested=1, free=0, outcome="retried", cause="switch"))


def _bad_proof(events: list, sm: dict) -> None:
    events.append(_proof(2.6, "c", ok=False))


def _bad_partition(events: list, sm: dict) -> None:
    sm["partitions_failed"] = 1


def _bad_pair(events: list, sm: dict) -> None:
    events.remove(next(e for e in events if e.kind == "proof_result" and e.part == "b"))


def _bad_ci(events: list, sm: dict) -> None:
    sm["segments"][1]["per_min_ci"] = None


def _bad_sync(events: list, sm: dict) -> None:
    sm["segments"][1]["device_sync_s"] = 0.2


@pytest.mark.parametrize("check,plant", [
    (sp.no_oom_events, _bad_oom), (sp.every_proof_verified, _bad_proof), (sp.every_proof_verified, _bad_partition),
    (sp.every_pair_exercised, _bad_pair), (sp.per_min_ci_present, _bad_ci),
    (sp.no_device_sync_under_reserved_or_stream, _bad_sync),
], ids=lambda x: getattr(x, "__name__", ""))
def test_each_check_fails_what_it_names(check: Any, plant: Any) -> None:
    events, sm = _good()
    plant(events, sm)
    assert check(events, sm), f"{check.__name__} passed a stream with {plant.__name__}"
    others = [c for c in sp.CHECKS if c is not check and c(events, sm)]
    assert plant is _bad_proof or others == [] or check is sp.every_proof_verified, others


def test_a_stream_stream_segment_with_a_device_sync_fails_too() -> None:
    events, sm = _good()
    sm["segments"][0]["knobs"]["mem_sync"] = "stream"
    assert sp.no_device_sync_under_reserved_or_stream(events, sm)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_check_passes_the_native_recording_and_fails_a_copy_with_faults_planted(tmp_path: Path, capsys) -> None:
    assert sp.check(NATIVE, tmp_path / "good.json") == 0
    assert json.loads((tmp_path / "good.json").read_text())["passed"] is True
    lines = gzip.open(NATIVE, "rt").read().splitlines()
    t = json.loads(lines[-1])["t"]
    planted = [ev.Oom(t=t, gpu=0, part="s0p0", worker="g0w0", requested=1, free=0, outcome="retried", cause="switch"),
               _proof(t, "s0p0", ok=False)]
    bad = tmp_path / "bad.jsonl.gz"
    with gzip.open(bad, "wt") as f:
        f.write("\n".join(lines + [e.model_dump_json() for e in planted]) + "\n")
    capsys.readouterr()
    assert sp.check(bad, tmp_path / "bad.json") == 1
    out = capsys.readouterr().out
    assert "no_oom_events: 1 problem(s)" in out and "every_proof_verified: 1 problem(s)" in out
    checks = json.loads((tmp_path / "bad.json").read_text())["checks"]
    assert checks["per_min_ci_present"] == [] and checks["every_pair_exercised"] == []
