"""GPU health from NVML (a fake pynvml: no GPU or NVML needed) and host CPU / pressure from a
/proc written by the test; the sampler emits them off the hot path; a simulated GPU reports
none (never invented figures); the exporter serves them under DCGM's names."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from prover import events as ev
from prover.health import gpu
from prover.health.host import HostReader
from prover.observe.metrics import MetricsFold, families
from prover.pipeline.health_sampler import HealthSampler
from tests.health.fake_nvml import FakeNvml, NVMLError


def test_nvml_figures_in_the_event_s_units(tmp_path):
    (tmp_path / "4242").mkdir()
    (tmp_path / "4242" / "comm").write_text("c2tui\n")
    got = gpu.read(FakeNvml(), object(), my_pid=4242, proc=tmp_path)
    h = ev.GpuHealth(t=1.0, gpu=0, **got)  # the event takes them as they are
    assert (h.temp_c, h.power_w, h.power_limit_w) == (61.0, 412.3, 700.0)
    assert (h.sm_clock_mhz, h.sm_clock_max_mhz, h.mem_clock_mhz) == (1755, 1980, 2619)
    assert h.throttle_mask == 0x25 and h.throttle == ["sw_power_cap", "sw_thermal"]  # gpu_idle left out
    assert (h.pcie_rx_bps, h.pcie_tx_bps) == (1_000_000 * 1024.0, 2_000 * 1024.0)
    assert [(p.pid, p.bytes, p.name, p.mine) for p in h.procs] == [(4242, 12 << 30, "c2tui", True), (7, None, "", False)]


def test_a_figure_the_card_does_not_report_is_none_and_the_rest_stand():
    m = FakeNvml(power_mw=NVMLError("Not Supported"), limit_mw=NVMLError("Not Supported"),
                 reasons=NVMLError("No permission"), procs=NVMLError("No permission"))
    got = gpu.read(m, object(), my_pid=1)
    assert got["power_w"] is None and got["power_limit_w"] is None and got["throttle_mask"] is None
    assert got["throttle"] == [] and got["procs"] == [] and got["temp_c"] == 61.0


def test_the_new_clocks_event_name_is_preferred():
    m = FakeNvml()
    m.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x8  # NVML 12.2's name
    assert gpu.read(m, object(), my_pid=1)["throttle"] == ["hw_slowdown"]


def _proc(root: Path, stat: str, psi: bool = True) -> Path:
    root.mkdir(exist_ok=True)
    (root / "stat").write_text(stat)
    (root / "meminfo").write_text("MemTotal:       1000 kB\nMemFree:  10 kB\nMemAvailable:    400 kB\n")
    if psi:
        (root / "pressure").mkdir(exist_ok=True)
        (root / "pressure" / "memory").write_text("some avg10=12.50 avg60=1.00 avg300=0.10 total=5\n"
                                                  "full avg10=2.00 avg60=0.00 avg300=0.00 total=1\n")
        (root / "pressure" / "cpu").write_text("some avg10=50.00 avg60=0.00 avg300=0.00 total=9\n")
    return root


def test_host_cpu_per_core_and_pressure_from_proc(tmp_path):
    first = "cpu  20 0 20 160 0 0 0 0\ncpu0 10 0 10 80 0 0 0 0\ncpu1 10 0 10 80 0 0 0 0\n"
    r = HostReader(_proc(tmp_path, first))
    assert r.read()["cpu_busy"] == []  # one read says nothing of the time between
    _proc(tmp_path, "cpu0 60 0 10 80 0 0 0 0\ncpu1 10 0 10 170 10 0 0 0\n")  # cpu0 +50 busy, cpu1 +90 idle +10 iowait
    got = r.read()
    assert got["cpu_busy"] == [1.0, 0.0]
    assert (got["mem_pressure"], got["mem_pressure_full"], got["cpu_pressure"]) == (0.125, 0.02, 0.5)
    assert (got["mem_available"], got["mem_total"]) == (400 * 1024, 1000 * 1024)
    ev.HostHealth(t=0.0, **got)


def test_a_host_without_psi_or_proc_gives_none(tmp_path):
    got = HostReader(tmp_path / "nowhere").read()
    assert got == {"cpu_busy": [], "cpu_pressure": None, "mem_pressure": None, "mem_pressure_full": None,
                   "mem_available": None, "mem_total": None}


class _Dev:
    def __init__(self, index, health):
        self.index, self._health = index, health

    def health(self):
        if isinstance(self._health, Exception):
            raise self._health
        return self._health


def test_the_sampler_emits_what_devices_report_and_says_a_failure_once(tmp_path):
    got: list = []
    emit = lambda cls, **f: got.append(cls(t=0.0, **f))  # noqa: E731
    devs = {0: _Dev(0, gpu.read(FakeNvml(), object(), 1)), 1: _Dev(1, None), 2: _Dev(2, RuntimeError("GPU lost"))}
    s = HealthSampler(1.0, emit, threading.Event(), devs, HostReader(tmp_path))
    s.sample()
    s.sample()
    assert [e.gpu for e in got if e.kind == "gpu_health"] == [0, 0]  # gpu1 (simulated): nothing invented
    assert sum(e.kind == "host_health" for e in got) == 2
    notes = [e.text for e in got if e.kind == "note"]
    assert notes == ["gpu2 health read failed: RuntimeError: GPU lost"]


def test_the_cuda_device_reads_health_through_its_nvml_handle():
    from prover.device.cuda import _Nvml

    n = object.__new__(_Nvml)
    n.m, n.h = FakeNvml(), object()
    assert n.health()["sm_clock_mhz"] == 1755


@pytest.mark.timeout(120)
def test_a_simulated_run_reports_host_health_and_no_gpu_health():
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.pipeline.nullphases import NullPhases

    seen: list = []
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=0.5, sectors=1, partitions=4, workers_per_gpu=2,
                      health_sample_s=0.05)
    eng = Engine(cfg, [seen.append], phases=NullPhases()).start()
    assert eng.wait(60)
    kinds = [e.kind for e in seen]
    assert "host_health" in kinds and "gpu_health" not in kinds


def test_the_exporter_serves_health_under_dcgm_names():
    f = MetricsFold()
    for e in (ev.RunStarted(t=0, backend="cuda", simulated=False, profile="native", proved_log2=20, modelled_log2=20,
                            gpus=1),
              ev.GpuInfo(t=0, gpu=0, name="NVIDIA H200", total_bytes=1, budget_bytes=1, simulated=False, nvml=True),
              ev.GpuHealth(t=1, gpu=0, **gpu.read(FakeNvml(), object(), 4242)),
              ev.HostHealth(t=1, cpu_busy=[0.5, 1.0], mem_pressure=0.1, mem_available=7)):
        f.apply(e)
    got = {(m.name, tuple(sorted(s.labels.items()))): s.value for m in families(f) for s in m.samples}
    lab = (("gpu", "0"), ("modelName", "NVIDIA H200"), ("simulated", "false"))  # every series says whether it is modelled
    assert got[("DCGM_FI_DEV_GPU_TEMP", lab)] == 61.0
    assert got[("DCGM_FI_DEV_POWER_USAGE", lab)] == 412.3 and got[("DCGM_FI_DEV_POWER_MGMT_LIMIT", lab)] == 700.0
    assert got[("DCGM_FI_DEV_SM_CLOCK", lab)] == 1755 and got[("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", lab)] == 0x25
    assert got[("DCGM_FI_PROF_PCIE_RX_BYTES", lab)] == 1_000_000 * 1024.0
    assert got[("c2tui_gpu_throttle", (("gpu", "0"), ("reason", "sw_thermal"), ("simulated", "false")))] == 1.0
    assert got[("c2tui_host_cpu_busy_ratio", (("cpu", "1"), ("simulated", "false")))] == 1.0
    assert got[("c2tui_host_pressure_ratio", (("kind", "some"), ("resource", "memory"), ("simulated", "false")))] == 0.1
