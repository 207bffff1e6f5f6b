"""Issue 13's CLI friction points, each with the behaviour an operator expects."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main
from prover import events as ev
from prover.config import ConfigError, FaultsConfig, RunConfig, load_config
from prover.settings import KernelSettings
from prover.fold.apply import fold

REC = Path(__file__).resolve().parents[1] / "tui" / "recordings" / "two_gpus.jsonl"


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_bare_c2tui_with_run_options_is_run():
    # reaches run's own checks (it would start the dashboard with a valid --fps)
    r = run("--backend", "sim", "--fps", "999")
    assert r.exit_code == 2 and "--fps" in r.output and "<= 60" in r.output
    r = run("--workers-per-gpu", "0", "--backend", "sim")
    assert r.exit_code == 2 and "workers_per_gpu" in r.output
    assert "Commands:" in run("--help").output


@pytest.mark.timeout(120)
def test_screenshot_png_is_png_and_other_suffixes_are_refused(tmp_path):
    pytest.importorskip("resvg_py")
    out = tmp_path / "x.png"
    r = run("screenshot", str(REC), "--at", "3", "--size", "80x24", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = run("screenshot", str(REC), "--at", "3", "-o", str(tmp_path / "x.jpg"))
    assert r.exit_code == 2 and "must end in .svg or .png" in r.output
    assert not (tmp_path / "x.jpg").exists()


@pytest.mark.parametrize("cmd", ["screenshot", "replay"])
@pytest.mark.parametrize("at", ["999", "-5", "nan"])
def test_at_out_of_range_names_the_recording_length(tmp_path, cmd, at):
    extra = ["-o", str(tmp_path / "x.svg")] if cmd == "screenshot" else []
    r = run(cmd, str(REC), "--at", at, *extra)
    assert r.exit_code == 2
    assert "outside the recording: it runs 0..18.6 s" in r.output


def test_summary_json_keeps_types_and_log_says_on_off():
    r = run("summary", str(REC), "--json")
    knobs = json.loads(r.output)["knobs"]
    assert knobs["prestage"] is True and knobs["paused"] is False
    assert isinstance(knobs["workers_per_gpu"], int) and knobs["lock_mode"] in ("single", "narrow", "two-lock", "reserved")
    st = fold([ev.ModeChange(t=0.0, knob="prestage", old="True", new="False", source="key")])
    assert st.log[-1][2] == "prestage: on -> off (key)"


def test_config_show_lists_every_key_with_type_default_allowed_help():
    r = run("config", "--show", "--json")
    rows = {x["key"]: x for x in json.loads(r.output)}
    tables = {"faults": FaultsConfig, "kernels": KernelSettings}
    want = {k for k in RunConfig.model_fields if k not in tables} | {
        f"{t}.{k}" for t, m in tables.items() for k in m.model_fields}
    assert set(rows) == want
    assert all(x["help"] and x["type"] for x in rows.values())
    assert rows["lock_mode"]["allowed"] == "single | narrow | two-lock | reserved" and rows["lock_mode"]["default"] == "two-lock"
    assert rows["workers_per_gpu"]["allowed"] == "1..16" and rows["prestage"]["default"] == "on"
    assert "workers_per_gpu" in run("config", "--show").output


def test_bad_config_key_names_the_nearest(tmp_path):
    with pytest.raises(ConfigError, match="worker_per_gpu: unknown key; did you mean 'workers_per_gpu'"):
        load_config(None, worker_per_gpu=3)
    f = tmp_path / "c.toml"
    f.write_text("[faults]\noom_rat = 0.1\n")
    r = run("config", "--check", str(f))
    assert r.exit_code == 2 and "did you mean 'oom_rate'" in r.output
    f.write_text("[kernels]\nmsm_max_cc = 12\n")
    r = run("config", "--check", str(f))
    assert r.exit_code == 2 and "did you mean 'msm_max_c'" in r.output
    f.write_text("lock_mode = 'single'\n")
    assert run("config", "--check", str(f)).output.strip().endswith("ok")
