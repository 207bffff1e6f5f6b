"""One knob vocabulary (prover/knobs.py): a value added there is seen by config validation,
the CLI's --help, the controller, `--switch` parsing, the dashboard's help screen; the
README's key table is the one the help screen's rows make."""
from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from c2tui.commands import main as cli
from c2tui.widgets.help_screen import key_table, live_keys
from prover import disciplines, knobs
from prover.config import ConfigError, load_config
from prover.disciplines import b_g2, mem_sync
from prover.pipeline.control.controller import Controller, Knobs, parse_switch


@pytest.fixture
def three_lock(monkeypatch):
    """A discipline registered as the registry's modules do it (its values then reach the
    knob table at import; patched here). The knob value alone cannot run: test_disciplines."""
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
    names = disciplines.names()  # read from the registry, never spelled here
    assert names[-1] == "three-lock"
    out = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output  # the CLI
    assert "|".join(names) in out.replace(" ", "")
    events = []
    ctl = Controller(Knobs.from_config(load_config(None)), lambda cls, **f: events.append(f))  # the controller
    assert ctl.set_lock_mode("three-lock") and ctl.snapshot().lock_mode == "three-lock"
    assert events[-1]["new"] == "three-lock"
    assert parse_switch("three-lock") == ("lock_mode", "three-lock")  # --switch
    assert parse_switch("lock_mode=three-lock") == ("lock_mode", "three-lock")
    assert ("l", "lock mode: " + " ↔ ".join(names)) in live_keys()  # the help screen
    assert knobs.KNOBS["lock_mode"].next_value(names[-2]) == "three-lock"  # the key cycles through it


# the knobs whose values are behaviours registered in prover/disciplines/: (knob, registry, a value it lacks)
REGISTERED = [("lock_mode", disciplines, "three-lock"), ("mem_sync", mem_sync, "pool"), ("b_g2", b_g2, "tpu")]


@pytest.mark.parametrize("name,registry,extra", REGISTERED, ids=[r[0] for r in REGISTERED])
def test_a_choice_knobs_values_are_its_registrys(name, registry, extra):
    k = knobs.KNOBS[name]
    assert k.values == registry.names() and k.runs is not None and k.runs() == registry.names()
    for v in registry.names():
        registry.get(v)  # every value has a behaviour
    with pytest.raises(ValueError, match=extra):
        registry.get(extra)


@pytest.mark.parametrize("name,registry,extra", REGISTERED, ids=[r[0] for r in REGISTERED])
def test_a_value_added_to_the_knob_table_alone_is_refused_in_words(name, registry, extra, monkeypatch):
    """The probe (issue 32): `mem_sync=pool` added to the knob table alone ran as `stream`
    without a word. Now config validation, the controller and `--switch` refuse it, in one line
    that names the knob, the value and what can run."""
    k = knobs.KNOBS[name]
    monkeypatch.setitem(knobs.KNOBS, name, replace(k, values=(*k.values, extra)))
    runnable = ", ".join(registry.names())
    with pytest.raises(ConfigError) as exc:
        load_config(None, backend="sim", **{name: extra})
    msg = str(exc.value)
    assert "\n" not in msg and name in msg and extra in msg and "nothing that runs it" in msg and runnable in msg
    with pytest.raises(ValueError, match=f"{name} '{extra}' has nothing that runs it; runnable: {runnable}"):
        parse_switch(f"{name}={extra}")
    ctl = Controller(Knobs.from_config(load_config(None, backend="sim")), lambda *a, **kw: None)
    with pytest.raises(ValueError, match="nothing that runs it"):
        ctl.set(name, extra)
    assert getattr(ctl.snapshot(), name) == getattr(load_config(None, backend="sim"), name)  # unchanged


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


# a knob of its own shape (the budgets): value or text -> what every door makes of it (None: refused)
SHAPED = {
    "host_ram_budget": [("64GiB", 64 << 30), ("off", 0), ("0", 0), (1 << 30, 1 << 30), (" 2 TiB ", 2 << 40),
                        ("lots", None), ("-1", None), ("2000000TB", None)],
    "vram_budget": [("20GiB", 20 << 30), ("Two-Prestage", "two-prestage"), (24 << 30, 24 << 30), ("lots", None)],
    "class_gpus": [("winning=1", "winning=1"), ("Winning = gpu1:1", "winning=1:1"), ("off", ""),
                   ("window=0+1:1,winning=1", "winning=1,window=0+1:1"), ("foo=1", None), ("winning", None),
                   ("winning=1:0", None)],
    "host_threads": [("4", 4), ("auto", 0), (" Auto ", 0), (8, 8), ("lots", None), ("-1", None), ("300", None),
                     ("2.5", None)],
}


class _Engine:
    """Just enough of EngineHooks for a hook knob's change (vram_budget) to go through."""

    def set_vram_budget(self, spec):
        return 0, 1


class _Fleet:
    knob_lock = threading.RLock()
    _plock = threading.RLock()

    def __init__(self):
        from prover.fleet.scheduler import Scheduler

        self.sched = Scheduler()
        self.sched.add_host("h0", 0, 2, 3, 1 << 30)  # gpu0, gpu1 (class_gpus is checked against them)

    def send_control(self, knob, value, source, target):
        pass

    def emit(self, cls, **fields):
        pass

    def place(self, pl, source):  # the driver's own placement, over this stand-in's scheduler
        from prover.fleet.driver import FleetEngine

        return FleetEngine.place(self, pl, source)


def _doors(name, value, tmp_path):
    """The value as each door makes it: TOML, the run option, --switch / attach --send (the
    text form), the controller, the fleet's controller."""
    from c2tui.cli.options import config_from_options
    from prover.fleet.control import FleetController

    toml = tmp_path / "c.toml"
    toml.write_text(f"{name} = {value!r}\n".replace("'", '"'))
    base = Knobs.from_config(load_config(None))
    ctl = Controller(base, lambda cls, **f: None, _Engine())
    fleet = FleetController(_Fleet(), base)
    ctl.set(name, value)
    fleet.set(name, value)
    return {"toml": getattr(load_config(toml), name), "option": getattr(config_from_options(**{name: str(value)}), name),
            "switch": parse_switch(f"{name}={value}")[1], "controller": getattr(ctl.snapshot(), name),
            "fleet": getattr(fleet.snapshot(), name)}


@pytest.mark.parametrize("name,value,want", [(n, v, w) for n, cases in SHAPED.items() for v, w in cases])
def test_a_budget_reads_the_same_at_every_door(name, value, want, tmp_path):
    """One parse, one check: a budget given as TOML, a run option, `--switch` (attach --send
    and the fleet's apply parse the same text), to the controller or to the fleet's is the
    same value, or refused everywhere with the knob named."""
    if want is not None:
        assert set(_doors(name, value, tmp_path).values()) == {want}
        return
    for door in (lambda: parse_switch(f"{name}={value}"), lambda: load_config(None, **{name: value}),
                 lambda: Controller(Knobs.from_config(load_config(None)), lambda cls, **f: None, _Engine()).set(name, value)):
        with pytest.raises(ValueError, match=name) as refused:
            door()
        assert str(refused.value).count(name) == 1, refused.value  # named once, as the knob's parse says it


def test_every_knob_is_a_choice_a_number_a_switch_or_of_its_own_shape():
    """host_ram_budget's size flag went into parse_value (issue 26's knob on issue 21's mechanism):
    one way to describe a knob that is none of the plain kinds."""
    from dataclasses import fields

    assert "size" not in {f.name for f in fields(knobs.Knob)}
    shaped = {k.name for k in knobs.KNOBS.values() if k.parse_value is not None}
    assert shaped == set(SHAPED)
    for name in shaped:
        k = knobs.KNOBS[name]
        assert k.switch_help() == f"{name}={k.accepts}" and k.parse(k.show(k.default)) == k.default


def test_every_knob_but_paused_is_a_run_flag_made_from_the_table():
    """--vram-budget was written by hand beside the generated knob flags (issue 43): every live
    knob's flag comes from prover.knobs now, its help the table's."""
    from c2tui.cli.options import CLI_KNOBS, run_options
    from prover.knobs import KNOBS

    def probe() -> None: ...

    params = {p.name: p for p in run_options(probe).__click_params__}
    assert set(CLI_KNOBS) == set(KNOBS) - {"paused"}
    for name in CLI_KNOBS:
        assert params[name].help.startswith(KNOBS[name].help), name
