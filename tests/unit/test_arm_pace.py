"""Each experiment arm's pace, read over its own holds (prover/fold/arm_pace.py): the run-wide
pace of an experiment mixes its arms. On the native 2^26 H100 experiment (single against
two-lock + stream, 1.44x) the run-wide line says GPU-bound with kernels 86% of the holds; arm by
arm, single waits for its prep_msm under the lock and two-lock's kernels fill its holds."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from c2tui.commands import main
from prover import DashboardState, read_recording
from prover.fold.arm_pace import ArmPace

ROOT = Path(__file__).resolve().parents[2]
H100_EXPERIMENT = ROOT / "benchmarks/recordings/h100/experiment/n26_experiment.jsonl.gz"
NO_EXPERIMENT = ROOT / "benchmarks/recordings/h200/native/n22_stream_card.jsonl.gz"


def _rows(path: Path):
    st = DashboardState()
    arms = ArmPace(st)

    def sink(e):
        st.apply(e)
        arms(e)

    read_recording(path, sink=sink)
    return st, arms.rows()


def test_each_arm_read_over_its_own_holds():
    st, rows = _rows(H100_EXPERIMENT)
    assert [(r.arm, r.gpu, r.holds) for r in rows] == [(0, 0, 3), (1, 0, 3)]
    single, two = rows
    assert single.label.startswith("lock_mode=single") and two.label.startswith("lock_mode=two-lock")
    # single's holder waits for its own prep_msm under the lock: the GPU idles inside its holds
    assert single.headline == "host-bound: prep_msm" and single.kernels_of_hold < 0.8
    assert two.headline == "GPU-bound" and two.kernels_of_hold > 0.95
    # the run-wide reading is neither: both arms together
    run = st.pace.run(0, st.t)
    assert run is not None and single.kernels_of_hold < run.kernel_share / run.compute_share < two.kernels_of_hold


def test_summary_says_the_run_mixes_the_arms_and_gives_each(tmp_path):
    res = CliRunner().invoke(main, ["summary", str(H100_EXPERIMENT)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "over the run (every arm together: by arm below)" in res.output
    assert "pace by arm" in res.output and "host-bound: prep_msm" in res.output
    doc = json.loads(CliRunner().invoke(main, ["summary", "--json", str(H100_EXPERIMENT)]).output)
    assert [r["headline"] for r in doc["arm_pace"]] == ["host-bound: prep_msm", "GPU-bound"]


def test_a_run_without_an_experiment_reads_no_arm():
    _, rows = _rows(NO_EXPERIMENT)
    assert rows == []
    res = CliRunner().invoke(main, ["summary", str(NO_EXPERIMENT)], terminal_width=200)
    assert "pace by arm" not in res.output and "every arm together" not in res.output
