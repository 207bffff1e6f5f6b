"""`c2tui status`'s lines of the operators' console (issue 36), from the StatusReport: the alert
thresholds met now (the alert rules' numbers, prover.screen), why each proof class waits, the
host's CPUs and pressure (/proc), and each GPU's own health as NVML read it. A simulated GPU
has no health line (nothing is made up); a modelled figure says so."""
from __future__ import annotations

from typing import Any

Styled = tuple[str, str]


def _gpu(i: int, h: dict) -> str:
    bits = [f"gpu{i} health ({'NVML' if h.get('source') == 'nvml' else 'MODELLED'}):"]
    if h.get("temp_c") is not None:
        bits.append(f"{h['temp_c']:.0f} C")
    if h.get("power_w") is not None:
        lim = f"/{h['power_limit_w']:.0f}" if h.get("power_limit_w") else ""
        bits.append(f"{h['power_w']:.0f}{lim} W")
    if h.get("sm_clock_mhz") is not None:
        top = f"/{h['sm_clock_max_mhz']}" if h.get("sm_clock_max_mhz") else ""
        bits.append(f"SM {h['sm_clock_mhz']}{top} MHz")
    if h.get("mem_clock_mhz") is not None:
        bits.append(f"mem {h['mem_clock_mhz']} MHz")
    if h.get("pcie_rx_bps") is not None or h.get("pcie_tx_bps") is not None:
        bits.append(f"PCIe rx {(h.get('pcie_rx_bps') or 0) / 1e6:.1f} MB/s tx {(h.get('pcie_tx_bps') or 0) / 1e6:.1f} MB/s")
    bits.append("throttle " + ",".join(h["throttle"]) if h.get("throttle") else "no throttle")
    procs = [p for p in h.get("procs", []) if p.get("bytes") is not None]
    if procs:
        bits.append("procs " + ", ".join(f"{'mine' if p.get('mine') else p.get('name') or p['pid']} "
                                         f"{p['bytes'] / 2**30:.1f} GiB" for p in procs))
    return " ".join(bits)


def _host(h: dict) -> str:
    busy = h.get("cpu_busy") or []
    bits = ["host (/proc):"]
    if busy:
        bits.append(f"{len(busy)} CPUs, mean {sum(busy) / len(busy):.0%}, busiest {max(busy):.0%}; per core "
                    + " ".join(f"{b:.0%}" for b in busy))
    for name, key in (("PSI cpu", "cpu_pressure"), ("PSI memory", "mem_pressure")):
        if h.get(key) is not None:
            bits.append(f"{name} {h[key]:.0%}")
    if h.get("mem_available") is not None:
        bits.append(f"{h['mem_available'] / 2**30:.1f} GiB available")
    return " ".join(bits)


def status_health_lines(r: Any) -> list[Styled]:
    out: list[Styled] = []
    for a in r.alerts:
        out.append((f"ALERT {a}", "bold red" if a.startswith("red") else "bold yellow"))
    for c, why in r.waits.items():
        out.append((f"{c} waits: {why}", ""))
    if r.host_health is not None:
        out.append((_host(r.host_health), ""))
    for g in r.gpus:
        if g.health is not None:
            out.append((_gpu(g.gpu, g.health), ""))
    return out
