"""One knob vocabulary (prover/knobs.py): a value added there is seen by config validation,
the CLI's --help, the controller, `--switch` parsing, the dashboard's help screen; the
README's key table is the one the help screen's rows make."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.cli import main as cli
from c2tui.widgets.help_screen import key_table, live_keys
from prover import knobs
from prover.config import ConfigError, load_config
from prover.pipeline.controller import Controller, Knobs, parse_switch


@pytest.fixture
def three_lock(monkeypatch):
    """A discipline registered as the registry's modules do it (its values then reach the
    knob table at import; patched here). The knob value alone cannot run: test_disciplines."""
    from prover import disciplines

    class ThreeLock(disciplines.get("two-lock")):  # type: ignore[misc, valid-type]
        name = "three-lock"

    monkeypatch.setitem(disciplines._REGISTRY, "three-lock", ThreeLock)
    k = knobs.KNOBS["lock_mode"]
    monkeypatch.setitem(knobs.KNOBS, "lock_mode", replace(k, values=disciplines.names()))


def test_value_unknown_before():
    with pytest.raises(ConfigError, match="lock_mode"):
        load_config(None, lock_mode="three-lock")
    with pytest.raises(ValueError):
        parse_switch("three-lock")


def test_value_added_in_one_place_is_seen_everywhere(three_lock):
    cfg = load_config(None, lock_mode="three-lock")  # config validation
    assert cfg.lock_mode == "three-lock"
    out = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output  # the CLI
    assert "single|narrow|two-lock|reserved|three-lock" in out.replace(" ", "")
    events = []
    ctl = Controller(Knobs.from_config(load_config(None)), lambda cls, **f: events.append(f))  # the controller
    assert ctl.set_lock_mode("three-lock") and ctl.snapshot().lock_mode == "three-lock"
    assert events[-1]["new"] == "three-lock"
    assert parse_switch("three-lock") == ("lock_mode", "three-lock")  # --switch
    assert parse_switch("lock_mode=three-lock") == ("lock_mode", "three-lock")
    assert ("l", "lock mode: single ↔ narrow ↔ two-lock ↔ reserved ↔ three-lock") in live_keys()  # the help screen
    assert knobs.KNOBS["lock_mode"].next_value("reserved") == "three-lock"  # the key cycles through it


def test_controller_refuses_what_the_vocabulary_does_not_allow():
    ctl = Controller(Knobs.from_config(load_config(None)), lambda cls, **f: None)
    for knob, bad in (("lock_mode", "three-lock"), ("mem_sync", "often"), ("b_g2", "tpu"), ("workers_per_gpu", 0)):
        with pytest.raises(ValueError, match=knob):
            ctl.set(knob, bad)


def test_config_defaults_are_the_vocabulary_defaults():
    cfg = load_config(None)
    assert {n: getattr(cfg, n) for n in knobs.KNOBS} == {n: k.default for n, k in knobs.KNOBS.items()}


def test_readme_key_table_is_generated():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert key_table() in readme, "README's key table is stale; paste c2tui.widgets.help_screen.key_table()"
