"""Issue 16: a partition is ok only when its proof verified; unchecked proofs are their own
outcome (fold, summary, header, exit status); throughput counts verified partitions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover import events as ev
from prover.fold.apply import fold
from c2tui.text.summary import render, verdict
from prover.fold.summary import summarize


def summary_text(sm) -> str:  # type: ignore[no-untyped-def]
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(width=120, file=buf, color_system=None).print(render(sm))
    return buf.getvalue()

FAST = ["--backend", "sim", "--constraints-log2", "8", "--time-scale", "0.05"]


def _run(parts: list[tuple[str, bool | None, bool]]) -> list:
    """Events of a run whose partitions end as (id, proof verified / failed / None unchecked, ok)."""
    out: list = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=27, gpus=1)]
    for i, (part, proof, ok) in enumerate(parts):
        t = 1.0 + i
        out.append(ev.PartitionQueued(t=0.0, part=part, sector=0, index=i))
        if ok:
            out.append(ev.ProofResult(t=t, part=part, ok=proof is not False, checked=proof is not None))
        out.append(ev.PartitionDone(t=t, part=part, ok=ok and proof is not False, seconds=t,
                                    reason=None if ok else "oom"))
    out.append(ev.RunEnded(t=10.0, reason="done"))
    return out


def test_unchecked_proofs_are_not_ok_nor_all_verified() -> None:
    st = fold(_run([("s0p0", True, True), ("s0p1", None, True), ("s0p2", None, True)]))
    assert (st.partitions_ok, st.partitions_unchecked, st.partitions_failed) == (1, 2, 0)
    sm = summarize(st)
    assert not sm.all_proofs_verified and "never verified" in verdict(sm)[0]
    assert "all proofs verified" not in summary_text(sm)
    assert sm.throughput_per_min == pytest.approx(60.0 * 1 / 10.0)  # verified partitions only


def test_every_partition_failing_is_not_throughput_nor_proof_failure() -> None:
    sm = summarize(fold(_run([(f"s0p{i}", None, False) for i in range(3)])))
    assert sm.throughput_per_min == 0 and sm.steady_throughput_per_min == 0 and sm.partitions_ok == 0
    text = " ".join(summary_text(sm).split())
    assert "PARTITIONS FAILED (3, no proof failed verification)" in text and "PROOFS FAILED" not in text
    assert render(sm) is not None


def test_all_verified_only_when_it_is_so() -> None:
    assert summarize(fold(_run([("s0p0", True, True), ("s0p1", True, True)]))).all_proofs_verified
    assert not summarize(fold(_run([]))).all_proofs_verified


@pytest.mark.timeout(120)
def test_record_with_corrupt_proofs_and_partial_verification_fails(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("verify_share = 0.5\n[faults]\ncorrupt_proof_rate = 1.0\n")
    out = tmp_path / "r.jsonl"
    r = CliRunner().invoke(main, ["record", "--out", str(out), *FAST, "--config", str(cfg), "--sectors", "1",
                                  "--partitions", "8"])
    assert r.exit_code == 1, r.output
    doc = json.loads(CliRunner().invoke(main, ["summary", str(out), "--json"]).output)
    assert doc["partitions_ok"] == 0 and doc["proofs_ok"] == 0 and not doc["all_proofs_verified"]
    assert doc["partitions_unchecked"] + doc["partitions_failed"] == 8 and doc["throughput_per_min"] == 0


@pytest.mark.timeout(120)
def test_record_that_proves_nothing_is_not_a_success(tmp_path: Path) -> None:
    out = tmp_path / "oom.jsonl"
    # a budget below one partition's pre-stage is refused at start now (issue 12), with the numbers
    r = CliRunner().invoke(main, ["record", "--out", str(out), *FAST, "--vram-budget", "4GiB", "--sectors", "1"])
    assert r.exit_code == 2 and "4 GiB" in r.output and not out.exists(), r.output
    # every allocation failing (the 4 GiB run of the issue, as a fault): nothing proved, not a success
    cfg = tmp_path / "oom.toml"
    cfg.write_text("[faults]\noom_rate = 1.0\n")
    r = CliRunner().invoke(main, ["record", "--out", str(out), *FAST, "--config", str(cfg), "--sectors", "1",
                                  "--partitions", "3"])
    assert r.exit_code != 0, r.output
    assert "all proofs verified" not in r.output and "PROOFS FAILED" not in r.output
    sm = summarize(fold(__import__("prover.record", fromlist=["x"]).read_recording(out).events))
    assert sm.partitions_ok == 0 and sm.steady_throughput_per_min == 0


@pytest.mark.timeout(120)
def test_record_verify_share_zero_proves_nothing_verified(tmp_path: Path) -> None:
    out = tmp_path / "v0.jsonl"
    r = CliRunner().invoke(main, ["record", "--out", str(out), *FAST, "--verify-share", "0", "--sectors", "1",
                                  "--partitions", "3"])
    assert r.exit_code == 3 and "never verified" in r.output, r.output
