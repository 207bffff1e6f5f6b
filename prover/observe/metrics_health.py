"""Metrics of the operators' console (issue 36), fed from prover/observe/ops_figures.py:

- the GPU's own health under DCGM's names where DCGM has one (dcgm-exporter's default
  counters: DCGM_FI_DEV_GPU_TEMP in C, DCGM_FI_DEV_POWER_USAGE and _POWER_MGMT_LIMIT in W,
  DCGM_FI_DEV_SM_CLOCK and _MEM_CLOCK in MHz, DCGM_FI_DEV_CLOCK_THROTTLE_REASONS as NVML's
  bitmask, DCGM_FI_PROF_PCIE_RX_BYTES / _TX_BYTES in bytes/s), labelled gpu and modelName as
  dcgm-exporter labels them, so its dashboards read them; NVML figures only (a simulated GPU
  has none, and none are made up). What DCGM has no name for is c2tui_: the throttle reasons
  by name, the processes' memory on the GPU, the host's CPUs and pressure;
- OOMs by outcome (retried | failed), how long a GPU has gone without a GPU phase ending, VRAM
  growth found by the trend test (docs/alerts/c2tui.rules.yml alerts on them).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from prover.device.base import OOM_CAUSES
from prover.observe.ops_figures import OpsFigures

DCGM = (  # (metric, GpuHealth field, help)
    ("DCGM_FI_DEV_GPU_TEMP", "temp_c", "GPU temperature (in C), NVML"),
    ("DCGM_FI_DEV_POWER_USAGE", "power_w", "Power draw (in W), NVML"),
    ("DCGM_FI_DEV_POWER_MGMT_LIMIT", "power_limit_w", "Power management limit (in W), NVML's enforced limit"),
    ("DCGM_FI_DEV_SM_CLOCK", "sm_clock_mhz", "SM clock frequency (in MHz), NVML"),
    ("DCGM_FI_DEV_MEM_CLOCK", "mem_clock_mhz", "Memory clock frequency (in MHz), NVML"),
    ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "throttle_mask", "Current clock throttle reasons (NVML bitmask)"),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "pcie_rx_bps", "PCIe bytes received per second (NVML, 20 ms window)"),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "pcie_tx_bps", "PCIe bytes sent per second (NVML, 20 ms window)"),
)
Gauge = Callable[[str, str, list[str], Any], GaugeMetricFamily]


def dcgm_families(o: OpsFigures, names: dict[int, str], lab: Any) -> Iterator[Metric]:
    for metric, attr, doc in DCGM:
        m = GaugeMetricFamily(metric, doc, labels=lab.n("gpu", "modelName"))
        for g, h in sorted(o.health.items()):
            v = getattr(h, attr)
            if v is not None and h.source == "nvml":
                m.add_metric(lab.v(g, names.get(g, "")), float(v))
        yield m


def gpu_families(o: OpsFigures, lab: Any, gauge: Gauge) -> Iterator[Metric]:
    thr = gauge("gpu_throttle", "1 for each clock-event reason active now (NVML; gpu_idle left out)", ["gpu", "reason"], lab)
    procs = gauge("gpu_process_memory_bytes", "GPU memory a process holds (NVML; mine: this prover)",
                  ["gpu", "pid", "name", "mine"], lab)
    for g, h in sorted(o.health.items()):
        for r in h.throttle:
            thr.add_metric(lab.v(g, r), 1.0)
        for p in h.procs:
            if p.bytes is not None:
                procs.add_metric(lab.v(g, p.pid, p.name, str(p.mine).lower()), p.bytes)
    yield from (thr, procs)
    age = gauge("gpu_progress_age_seconds", "seconds since a GPU phase last ended on the GPU while one runs (0: "
                "none runs); a stalled GPU grows it", ["gpu"], lab)
    for g, pr in sorted(o.progress.items()):
        age.add_metric(lab.v(g), pr.age(o.t))
    yield age


def host_families(o: OpsFigures, lab: Any, gauge: Gauge) -> Iterator[Metric]:
    h = o.host
    busy = gauge("host_cpu_busy_ratio", "each host CPU's busy share since the previous sample (/proc/stat)", ["cpu"], lab)
    psi = gauge("host_pressure_ratio", "PSI avg10 as a share: cpu some, memory some / full (stalls on memory, "
                "not its bandwidth)", ["resource", "kind"], lab)
    avail = gauge("host_memory_available_bytes", "MemAvailable (/proc/meminfo)", [], lab)
    if h is not None:
        for i, b in enumerate(h.cpu_busy):
            busy.add_metric(lab.v(i), b)
        for res, kind, v in (("cpu", "some", h.cpu_pressure), ("memory", "some", h.mem_pressure),
                             ("memory", "full", h.mem_pressure_full)):
            if v is not None:
                psi.add_metric(lab.v(res, kind), v)
        if h.mem_available is not None:
            avail.add_metric(lab.v(), h.mem_available)
    yield from (busy, psi, avail)


def oom_family(o: OpsFigures, gpus: Any, lab: Any) -> Metric:
    m = CounterMetricFamily("c2tui_ooms", "out-of-memory refusals by outcome (retried: the partition went on; "
                            "failed: it ended the attempt) and cause (switch | budget | leak | contention | "
                            "injected | unknown: docs/disciplines.md)", labels=lab.n("gpu", "outcome", "cause"))
    counts = {(g, out, c): 0 for g in gpus for out in ("retried", "failed") for c in OOM_CAUSES}
    counts.update(o.ooms)
    for (g, out, c), n in sorted(counts.items()):
        m.add_metric(lab.v(g, out, c), n)
    return m


def growth_families(o: OpsFigures, lab: Any, gauge: Gauge) -> Iterator[Metric]:
    slope = gauge("vram_growth_bytes_per_partition", "Sen's slope of a VRAM series the trend test finds growing "
                  "(0 once cleared); owner: whose bytes", ["gpu", "series", "owner"], lab)
    for key in sorted(o.growth_seen):
        f = o.growth.get(key)
        slope.add_metric(lab.v(*key), f.slope if f is not None else 0.0)
    left = gauge("vram_growth_partitions_left", "partitions until the budget at the fastest growth in force "
                 "(absent: nothing grows)", ["gpu"], lab)
    for g in sorted({k[0] for k in o.growth}):
        n = o.partitions_left(g)
        if n is not None:
            left.add_metric(lab.v(g), n)
    yield from (slope, left)
