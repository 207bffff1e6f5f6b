from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prover.config import ConfigError, RunConfig, load_config, parse_bytes


def test_defaults_tell_the_seed():
    c = load_config()
    assert c.backend == "auto" and c.lock_mode == "two-lock" and c.mem_sync == "device"
    assert c.workers_per_gpu == 3 and c.vram_budget == "card" and c.profile == "rtx5070ti-16g"
    assert c.gpu_ids == [0] and c.sectors is None


@pytest.mark.parametrize("text,n", [("24GiB", 24 * 1024**3), ("16 GB", 16 * 10**9), ("512MiB", 512 * 1024**2),
                                    ("1.5GiB", int(1.5 * 1024**3)), (1234, 1234), ("99", 99)])
def test_sizes(text, n):
    assert parse_bytes(text) == n
    if n >= 96 << 10:  # one native 2^10 partition's pre-stage: smaller budgets are refused
        assert load_config(vram_budget=text, profile="native", modelled_log2=10).vram_budget == n


def test_budget_scenarios_resolve_against_the_profile():
    from prover.device import budget
    from prover.device.profiles import get_profile

    rtx = get_profile("rtx5070ti-16g")
    assert budget.Sizing(rtx, 27).bytes("card") == 16 * 1024**3  # the seed's card: not even two pre-stages
    assert budget.Sizing(rtx, 27).bytes("two-prestage") == 24 * 1024**3  # two 12 GiB pre-stages, not three
    assert 2 * rtx.partition_bytes() <= 24 * 1024**3 < 3 * rtx.partition_bytes()
    native = budget.Sizing(get_profile("native"), 22)
    assert native.bytes("card") is None  # the device's memory, known at start
    assert native.bytes("card", card=141 << 30) == 141 << 30
    assert load_config(vram_budget="Two-Prestage").vram_budget == "two-prestage"


@pytest.mark.parametrize("kw", [{"vram_budget": "8GiB"}, {"vram_budget": "2GiB", "profile": "h200-141g"},
                                {"vram_budget": "300MiB", "profile": "native", "modelled_log2": 22}])
def test_budget_below_one_partition_is_refused_with_the_numbers(kw):
    with pytest.raises(ConfigError, match=r"vram_budget .* is below one partition's pre-stage of .*iB \(d_a \+ d_bc at 2\^"):
        load_config(None, **kw)


def test_toml_and_overrides(tmp_path):
    p = tmp_path / "run.toml"
    p.write_text('lock_mode = "single"\nworkers_per_gpu = 2\nvram_budget = "16GiB"\ngpus = [0, 1]\n'
                 '[faults]\noom_rate = 0.1\nphase_error = { ntt_h = 0.5 }\n')
    c = load_config(p)
    assert c.lock_mode == "single" and c.workers_per_gpu == 2 and c.vram_budget == 16 * 1024**3
    assert c.gpu_ids == [0, 1] and c.faults.oom_rate == 0.1
    c2 = load_config(p, lock_mode="two-lock", workers_per_gpu=None, faults={"retries": 2})
    assert c2.lock_mode == "two-lock" and c2.workers_per_gpu == 2
    assert c2.faults.retries == 2 and c2.faults.oom_rate == 0.1  # merged


def test_run_table_accepted(tmp_path):
    p = tmp_path / "run.toml"
    p.write_text('[run]\nmem_sync = "stream"\n')
    assert load_config(p).mem_sync == "stream"


@pytest.mark.parametrize("kw,field,allowed", [
    ({"lock_mode": "triple"}, "lock_mode", "'two-lock' or 'reserved'"),
    ({"mem_sync": "sometimes"}, "mem_sync", "'device' or 'stream'"),
    ({"backend": "tpu"}, "backend", "'auto', 'sim' or 'cuda'"),
    ({"b_g2": "fpga"}, "b_g2", "'cpu' or 'gpu'"),
    ({"vram_budget": "lots"}, "vram_budget", "two-prestage"),
    ({"workers_per_gpu": 0}, "workers_per_gpu", "greater than or equal to 1"),
    ({"profile": "gtx480"}, "profile", "rtx5070ti-16g"),
    ({"constraints_log2": 40}, "constraints_log2", "less than or equal to 27"),
    ({"bogus": 1}, "bogus", "unknown key"),
    ({"faults": {"phase_error": {"nope": 0.5}}}, "faults.phase_error", "synthesis"),
])
def test_errors_name_field_and_allowed(kw, field, allowed):
    with pytest.raises(ConfigError) as ei:
        load_config(**kw)
    msg = str(ei.value)
    assert field in msg and allowed in msg, msg


def test_bad_toml_is_a_clear_error(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("lock_mode = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(p)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(list(RunConfig.model_fields) + ["junk"]),
                       st.one_of(st.none(), st.integers(-5, 2**40), st.floats(allow_nan=True), st.text(max_size=12),
                                 st.booleans(), st.lists(st.integers(-2, 3), max_size=3)), max_size=6))
def test_fuzz_config_never_crashes(d):
    try:
        c = load_config(**d)
    except ConfigError as exc:
        assert str(exc).startswith("invalid config:")
    else:
        assert isinstance(c, RunConfig)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_toml_never_crashes(tmp_path_factory, text):
    p = tmp_path_factory.mktemp("fz") / "c.toml"
    p.write_text(text)
    try:
        load_config(p)
    except ConfigError:
        pass


@pytest.mark.parametrize("budget", [float("inf"), float("-inf"), float("nan"), "1e400GiB", "0.0000001B"])
def test_non_finite_or_tiny_budgets_are_clear_errors(budget):
    with pytest.raises(ConfigError, match="vram_budget"):
        load_config(None, vram_budget=budget)


def test_native_models_the_proved_size_unless_told():
    # profile native models nothing: its buffers are the proved circuit's, not 2^27's
    assert load_config(profile="native", constraints_log2=12).modelled == 12
    assert load_config(profile="native", constraints_log2=12, modelled_log2=14).modelled == 14
    assert load_config(profile="rtx5070ti-16g", constraints_log2=12).modelled == 27
    assert load_config(profile="native", constraints_log2=12, vram_budget="1MiB").vram_budget == 1 << 20  # 2^12's 384 KiB fit
    with pytest.raises(ConfigError, match=r"at 2\^12, profile native"):
        load_config(profile="native", constraints_log2=12, vram_budget="256KiB")


def test_the_header_labels_native_buffers_that_differ_from_the_proof():
    from types import SimpleNamespace

    from c2tui.widgets.header_bar import size_label

    assert size_label(SimpleNamespace(profile="native", proved_log2=22, modelled_log2=22)) == "native 2^22"
    assert size_label(SimpleNamespace(profile="native", proved_log2=8, modelled_log2=10)) == "native 2^8 · buffers 2^10"
    assert size_label(SimpleNamespace(profile="rtx5070ti-16g", proved_log2=10, modelled_log2=27)) \
        == "proved 2^10 · modelled 2^27 (rtx5070ti-16g)"
