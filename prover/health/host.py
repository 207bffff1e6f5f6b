"""The host's CPUs and memory pressure from Linux's /proc, as HostHealth's fields.

- per core busy share: the change in /proc/stat's cpuN jiffies between two reads (busy = all
  but idle and iowait), so the first read gives nothing and each next one the time between;
- pressure (PSI, Linux 4.20+): /proc/pressure/cpu and /memory's `avg10`, the share of the last
  10 s some (or every, `full`) task stalled waiting. Memory PSI counts stalls on reclaim and
  swap: the nearest the OS gives to memory pressure without perf counters. It is not memory
  bandwidth, which no unprivileged counter reports; the docs say so rather than guess;
- MemAvailable and MemTotal from /proc/meminfo.
A file the OS lacks (macOS, an old kernel, a container without PSI) leaves its fields None.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def cpu_times(stat: str) -> dict[int, tuple[int, int]]:
    """cpuN -> (busy, total) jiffies from /proc/stat's text."""
    out: dict[int, tuple[int, int]] = {}
    for line in stat.splitlines():
        name, *rest = line.split()
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        nums = [int(x) for x in rest[:8]]
        idle = nums[3] + (nums[4] if len(nums) > 4 else 0)  # idle + iowait
        total = sum(nums)
        out[int(name[3:])] = (total - idle, total)
    return out


def psi_avg10(text: str | None) -> tuple[float | None, float | None]:
    """(some, full) avg10 as shares 0..1 from a /proc/pressure/* file (full: None if absent)."""
    if not text:
        return None, None
    got: dict[str, float] = {}
    for line in text.splitlines():
        head, *fields = line.split()
        for f in fields:
            k, _, v = f.partition("=")
            if k == "avg10":
                try:
                    got[head] = min(1.0, max(0.0, float(v) / 100.0))
                except ValueError:
                    pass
    return got.get("some"), got.get("full")


def meminfo(text: str | None) -> tuple[int | None, int | None]:
    """(MemAvailable, MemTotal) bytes."""
    if not text:
        return None, None
    kb: dict[str, int] = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        parts = v.split()
        if k in ("MemAvailable", "MemTotal") and parts and parts[0].isdigit():
            kb[k] = int(parts[0]) * 1024
    return kb.get("MemAvailable"), kb.get("MemTotal")


class HostReader:
    """Reads the host's figures; keeps the last /proc/stat to turn jiffies into shares."""

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self.proc = proc
        self._last: dict[int, tuple[int, int]] = {}

    def cpu_busy(self) -> list[float]:
        text = _read(self.proc / "stat")
        now = cpu_times(text) if text else {}
        out = []
        for cpu in sorted(now):
            b1, t1 = now[cpu]
            b0, t0 = self._last.get(cpu, (b1, t1))
            dt = t1 - t0
            out.append(round(min(1.0, max(0.0, (b1 - b0) / dt)), 3) if dt > 0 else 0.0)
        first = not self._last
        self._last = now
        return [] if first else out

    def read(self) -> dict[str, Any]:
        """HostHealth's fields (t left to the caller)."""
        cpu_some, _ = psi_avg10(_read(self.proc / "pressure" / "cpu"))
        mem_some, mem_full = psi_avg10(_read(self.proc / "pressure" / "memory"))
        avail, total = meminfo(_read(self.proc / "meminfo"))
        return {"cpu_busy": self.cpu_busy(), "cpu_pressure": cpu_some, "mem_pressure": mem_some,
                "mem_pressure_full": mem_full, "mem_available": avail, "mem_total": total}
