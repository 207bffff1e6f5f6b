"""Kernel and setup tunables: one typed object RunConfig carries, the environment overriding,
read when used (not at import)."""
from __future__ import annotations

import pytest

from prover import settings
from prover.config import ConfigError, load_config
from prover.settings import KernelSettings


def test_defaults_and_env_override(monkeypatch):
    for name in KernelSettings.model_fields:
        monkeypatch.delenv(KernelSettings.env_name(name), raising=False)
    assert load_config(None).kernels == KernelSettings()
    monkeypatch.setenv("C2TUI_MSM_MAX_C", "18")
    monkeypatch.setenv("C2TUI_SETUP_GPU", "0")
    monkeypatch.setenv("C2TUI_CACHE", "/tmp/keys")
    k = load_config(None, kernels={"msm_max_c": 12, "ntt_variant": "ptx"}).kernels
    assert (k.msm_max_c, k.setup_gpu, k.cache_dir, k.ntt_variant) == (18, False, "/tmp/keys", "ptx")


def test_kernel_defaults_are_the_measured_fastest():
    """Issue 38's products and radix-4 rounds measured slower on the H200 (2026-12-03,
    benchmarks/RESULTS.md "Issue 38 measured"): the defaults stay until a measurement says otherwise."""
    k = KernelSettings()
    assert (k.field_mul, k.ntt_radix, k.msm_acc) == ("eo_sq", 2, "xyzz")


def test_bad_value_names_the_field(monkeypatch):
    monkeypatch.delenv("C2TUI_G1_VARIANT", raising=False)
    with pytest.raises(ConfigError, match="kernels.g1_variant"):
        load_config(None, kernels={"g1_variant": "fast"})


def test_kernels_take_their_settings_never_the_environment(monkeypatch):
    from prover.groth16 import setup
    from prover.kernels import loader, msm

    monkeypatch.setenv("C2TUI_NVRTC_OPTS", "-DFIELD_MUL=x")
    assert "-DFIELD_MUL=x" not in loader.compile_options()  # the environment is read into settings only
    assert "-DFIELD_MUL=x" in loader.compile_options(ks=KernelSettings.from_env())
    monkeypatch.setenv("C2TUI_MSM_MAX_C", "8")
    assert msm.msm_window_bits(1 << 20, KernelSettings.from_env().msm_max_c) <= 8
    monkeypatch.setenv("C2TUI_CACHE", "/tmp/somewhere")
    assert str(setup.default_cache_dir()) == "/tmp/somewhere"


def test_no_process_global_settings():
    """The run's settings travel as arguments (issue 23): there is nothing to install."""
    assert not hasattr(settings, "use") and not hasattr(settings, "current")


def test_msm_max_c_has_a_run_option(tmp_path):
    from c2tui.cli.options import config_from_options

    assert config_from_options(msm_max_c=9).kernels.msm_max_c == 9
    f = tmp_path / "c.toml"
    f.write_text("[kernels]\nntt_variant = \"ptx\"\n")
    k = config_from_options(config=f, msm_max_c=10).kernels  # merged into the file's [kernels]
    assert (k.msm_max_c, k.ntt_variant) == (10, "ptx")
