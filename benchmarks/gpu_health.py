"""Issue 36 on a real GPU: a native recording with the GPU's health (NVML) and the host's, made
by `c2tui record --backend cuda` as an operator would, then checked and summarised.

On the GPU machine, from the repo root (with the wheels, see ../shared/tools/gpu-wheels):
    python3 benchmarks/gpu_health.py --out-dir "$OUT/health" [--log2 22] [--seconds 20] [--workers 8]

It runs, in one process per recording:
    python3 -m c2tui record --backend cuda --profile native --constraints-log2 N --workers-per-gpu W
        --mem-sync stream --duration S --cache-dir .cache/keys --out DIR/n{N}_health.jsonl -q
then reads the recording back and checks: GpuHealth events from NVML (temperature, power and
its limit, SM and memory clocks, the clock-event mask, PCIe rx/tx, this process among the GPU's
processes) about once a second; HostHealth (per-core busy shares, PSI where the kernel has it);
a VramMark per partition and no VramGrowth (a healthy run is the leak test's control); OOMs said
retried or failed. Writes DIR/health.json as results are made and prints a short table last.
Everything it prints is native (no modelled figure): the recording's header says backend cuda.
The recording is then gzipped beside (n{N}_health.jsonl.gz, what benchmarks/recordings keeps).
"""
from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def record(out: Path, log2: int, seconds: float, workers: int, cache: Path) -> tuple[int, float, str]:
    cmd = [sys.executable, "-m", "c2tui", "record", "--backend", "cuda", "--profile", "native",
           "--constraints-log2", str(log2), "--workers-per-gpu", str(workers), "--mem-sync", "stream",
           "--duration", str(seconds), "--cache-dir", str(cache), "--out", str(out), "--force", "-q"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=max(120, 10 * seconds + 300))
    return r.returncode, time.monotonic() - t0, " ".join(cmd) + "\n" + r.stdout[-2000:] + r.stderr[-4000:]


def _spread(xs: list) -> dict:
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "min": min(xs), "median": statistics.median(xs), "max": max(xs)}


def check(path: Path) -> dict:
    from prover import read_recording

    rec = read_recording(path)
    ev = rec.events
    run = next(e for e in ev if e.kind == "run_started")
    gh = [e for e in ev if e.kind == "gpu_health"]
    hh = [e for e in ev if e.kind == "host_health"]
    marks = [e for e in ev if e.kind == "vram_mark"]
    done = [e for e in ev if e.kind == "partition_done"]
    span = (ev[-1].t - ev[0].t) if ev else 0.0
    mine = [p for e in gh for p in e.procs if p.mine]
    res = {
        "recording": str(path), "error": rec.error, "backend": run.backend, "simulated": run.simulated,
        "events": len(ev), "run_s": span, "partitions_done": len(done), "verified": sum(e.ok for e in done),
        "gpu_health": {"n": len(gh), "per_s": len(gh) / span if span else 0.0,
                       "sources": sorted({e.source for e in gh}),
                       "temp_c": _spread([e.temp_c for e in gh]), "power_w": _spread([e.power_w for e in gh]),
                       "power_limit_w": _spread([e.power_limit_w for e in gh]),
                       "sm_clock_mhz": _spread([e.sm_clock_mhz for e in gh]),
                       "mem_clock_mhz": _spread([e.mem_clock_mhz for e in gh]),
                       "throttle_seen": sorted({r for e in gh for r in e.throttle}),
                       "pcie_rx_MBps": _spread([e.pcie_rx_bps / 1e6 if e.pcie_rx_bps is not None else None for e in gh]),
                       "pcie_tx_MBps": _spread([e.pcie_tx_bps / 1e6 if e.pcie_tx_bps is not None else None for e in gh]),
                       "this_process_GiB": _spread([p.bytes / 2**30 if p.bytes is not None else None for p in mine])},
        "host_health": {"n": len(hh), "cores": max((len(e.cpu_busy) for e in hh), default=0),
                        "busy_mean": _spread([sum(e.cpu_busy) / len(e.cpu_busy) for e in hh if e.cpu_busy]),
                        "cpu_pressure": _spread([e.cpu_pressure for e in hh]),
                        "mem_pressure": _spread([e.mem_pressure for e in hh])},
        "vram_marks": len(marks), "vram_growth": [e.model_dump() for e in ev if e.kind == "vram_growth"],
        "ooms": {o: sum(1 for e in ev if e.kind == "oom" and (e.outcome or "failed") == o) for o in ("retried", "failed")},
    }
    g = res["gpu_health"]
    res["ok"] = bool(
        rec.error is None and run.backend == "cuda" and g["n"] >= max(1, int(span * 0.5)) and g["sources"] == ["nvml"]
        and g["temp_c"]["n"] and g["sm_clock_mhz"]["n"] and res["host_health"]["n"] and len(marks) == len(done)
        and not res["vram_growth"])
    return res


def table(results: list[dict]) -> str:
    rows = ["recording                      ok  parts  gpu_health/s  temp C   power W (limit)   SM MHz  PCIe rx MB/s  throttle"]
    for r in results:
        g = r.get("gpu_health", {})
        med = lambda k: g.get(k, {}).get("median")  # noqa: E731
        rows.append(f"{Path(r['recording']).name:30} {'yes' if r.get('ok') else 'NO ':3} {r.get('partitions_done', 0):5} "
                    f"{g.get('per_s', 0):12.2f}  {med('temp_c') or 0:6.0f}  {med('power_w') or 0:7.0f} "
                    f"({med('power_limit_w') or 0:.0f})  {med('sm_clock_mhz') or 0:7.0f}  {med('pcie_rx_MBps') or 0:12.1f}  "
                    f"{','.join(g.get('throttle_seen', [])) or '-'}")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--log2", type=int, nargs="+", default=[22])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--cache-dir", type=Path, default=ROOT / ".cache" / "keys")
    a = ap.parse_args()
    a.out_dir.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    for log2 in a.log2:
        out = a.out_dir / f"n{log2}_health.jsonl"
        rc, wall, log = record(out, log2, a.seconds, a.workers, a.cache_dir)
        (a.out_dir / f"n{log2}_record.log").write_text(log)
        res = {"recording": str(out), "rc": rc, "wall_s": wall, "ok": False}
        if out.exists():
            try:
                res.update(check(out))
            except Exception as exc:  # a recording that cannot be read: say why, keep going
                res["check_error"] = f"{type(exc).__name__}: {exc}"
        res["ok"] = bool(res.get("ok")) and rc == 0
        if out.exists():  # what benchmarks/recordings/h200/ keeps
            with open(out, "rb") as src, gzip.open(out.with_suffix(".jsonl.gz"), "wb") as dst:
                shutil.copyfileobj(src, dst)
            out.unlink()
        results.append(res)
        (a.out_dir / "health.json").write_text(json.dumps(results, indent=1))  # as results are made
    print(table(results))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
