"""Regenerate the small recordings under tests/tui/recordings/ (then refresh the snapshots:
pytest tests/tui --snapshot-update). Uses `c2tui record` (the real engine, sim backend)
when it exists, else the synthetic model in tests/helpers/tui_synth.py."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent))
OUT = HERE / "recordings"


def synth(path: Path, **kw) -> None:
    from tests.helpers.tui_synth import synth_events

    evs = synth_events(**kw)
    with open(path, "w") as f:
        f.write(json.dumps({"kind": "c2tui-recording", "schema_version": 1, "tool": "tests/helpers/tui_synth.py"}) + "\n")
        for e in evs:
            f.write(e.model_dump_json() + "\n")


def real(path: Path) -> None:
    """The real engine on the simulated device: 2 GPUs x 3 workers, the seed's mem_sync=device
    for 8 s, then a live switch to stream; about 20 s and 100 KB."""
    subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--gpus", "2",
                    "--workers-per-gpu", "3", "--duration", "14", "--switch", "8:stream", "--seed", "1",
                    "--quiet", "--out", str(path)], check=True, cwd=HERE.parent.parent)


def switch(path: Path) -> None:
    """The real engine on the simulated device under the default profile (rtx5070ti-16g), one
    GPU x 3 workers at time scale 0.1: mem_sync=device (device syncs recorded, schema 3) for
    8 s, then `--switch 8:stream`; about 17 s, gzipped ~40 KB. tests/unit/test_switch_recording.py
    reads its segment ratio."""
    plain = path.with_suffix("")
    subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--time-scale", "0.1",
                    "--duration", "16", "--switch", "8:stream", "--seed", "1", "--quiet", "--force",
                    "--out", str(plain)], check=True, cwd=HERE.parent.parent)
    with open(plain, "rb") as f, open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        g.write(f.read())
    plain.unlink()
def host_ram(path: Path) -> None:
    """One GPU, 3 workers under a host-RAM budget that holds 2 (a modelled 2^27 key of ~69 GiB
    + ~20 GiB a worker): the third waits for room, shown like a lock wait."""
    subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--gpus", "1",
                    "--workers-per-gpu", "3", "--duration", "6", "--time-scale", "0.3", "--host-ram-budget", "110GiB",
                    "--seed", "1", "--quiet", "--force", "--out", str(path)], check=True, cwd=HERE.parent.parent)


def startup(path: Path) -> None:
    """A fresh key set-up at 2^12 (an empty key cache) then a second of proving: the start-up
    steps with the set-up's progress."""
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--constraints-log2", "12",
                        "--cache-dir", cache, "--duration", "3", "--time-scale", "0.05", "--seed", "1", "--quiet",
                        "--force", "--out", str(path)], check=True, cwd=HERE.parent.parent)


def classes(path: Path) -> None:
    """1 GPU x 3 workers with two sectors of c2 queued; a winning sector at 3 s and a window
    sector at 3.5 s jump the queue (proof classes, served at the next partition boundary)."""
    subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--gpus", "1", "--workers-per-gpu", "3",
                    "--constraints-log2", "8", "--time-scale", "0.3", "--sectors", "2", "--partitions", "6",
                    "--switch", "3:submit=winning", "--switch", "3.5:submit=window", "--seed", "1", "--quiet",
                    "--force", "--out", str(path)], check=True, cwd=HERE.parent.parent)


def cordon(path: Path) -> None:
    """2 GPUs x 2 workers; gpu1 cordoned at 1.5 s (its in-flight work finishes, nothing new
    starts there) and sector 1 cancelled at 2 s (queued: out at once, counted as cancelled)."""
    subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--gpus", "2", "--workers-per-gpu", "2",
                    "--constraints-log2", "8", "--time-scale", "0.3", "--duration", "6", "--partitions", "6",
                    "--switch", "1.5:cordon=gpu1", "--switch", "2:cancel=s1", "--seed", "1", "--quiet", "--force",
                    "--out", str(path)], check=True, cwd=HERE.parent.parent)


def keys(path: Path) -> None:
    """Keys of two sizes: c2 at 2^10 (set up at start, an empty key cache), a winning sector at
    2 s whose 2^8 key is set up then (its progress on screen) beside the hot c2 key, under a
    140 GiB host budget that holds both (modelled 2^27 and 2^25) and the two workers."""
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--gpus", "1", "--workers-per-gpu", "2",
                        "--constraints-log2", "10", "--time-scale", "0.3", "--sectors", "2", "--partitions", "3",
                        "--host-ram-budget", "140GiB", "--cache-dir", cache, "--switch", "2:submit=winning", "--seed", "1",
                        "--quiet", "--force", "--out", str(path)], check=True, cwd=HERE.parent.parent)


def vram_leak(path: Path) -> None:
    """A planted VRAM leak (faults.vram_leak_bytes: the sim device keeps 64 MiB of every
    partition, never freed): 1 GPU x 2 workers, mem_sync=stream, 20 partitions; the trend test
    finds each worker's bytes growing after 8 marks (VramGrowth, the owner named). Health
    sampling off (the host's /proc figures would differ per machine). Gzipped, ~20 KB."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cfg, plain = Path(tmp) / "leak.toml", Path(tmp) / "vram_leak.jsonl"
        cfg.write_text("health_sample_s = 0\n\n[faults]\nvram_leak_bytes = 67108864\n")
        subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--gpus", "1", "--workers-per-gpu",
                        "2", "--constraints-log2", "8", "--time-scale", "0.05", "--sectors", "2", "--partitions", "10",
                        "--mem-sync", "stream", "--config", str(cfg), "--seed", "1", "--quiet", "--force",
                        "--out", str(plain)], check=True, cwd=HERE.parent.parent)
        with open(plain, "rb") as f, open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
            g.write(f.read())


def abc_gpu(path: Path) -> None:
    """a/b/c made on the GPU (issue 41), modelled at the seed's size on the H200 profile: 1 GPU x 3
    workers, two-lock + stream, a 40 GiB budget (the circuit's matrices resident, two partitions'
    plans d_a + d_bc + z + z_cls beside them), real 2^8 proofs; the VRAM bar with the matrices and
    each worker's z, the r1cs cell at the end of every pre-stage. Health off, gzipped."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cfg, plain = Path(tmp) / "abc.toml", Path(tmp) / "abc_gpu.jsonl"
        cfg.write_text("health_sample_s = 0\n")
        subprocess.run([sys.executable, "-m", "c2tui", "record", "--backend", "sim", "--profile", "h200-141g",
                        "--gpus", "1", "--workers-per-gpu", "3", "--constraints-log2", "8", "--time-scale", "0.3",
                        "--lock-mode", "two-lock", "--mem-sync", "stream", "--vram-budget", "40GiB", "--abc", "gpu",
                        "--duration", "8", "--config", str(cfg), "--seed", "1", "--quiet", "--force",
                        "--out", str(plain)], check=True, cwd=HERE.parent.parent)
        with open(plain, "rb") as f, open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
            g.write(f.read())


def main() -> None:
    OUT.mkdir(exist_ok=True)
    synth(OUT / "synth_failures.jsonl", gpus=2, workers_per_gpu=3, sectors=2,
          switches=[(20.0, "mem_sync", "device")], fail_every=7)
    # more GPUs than fit at 160x48 (the overview lines and the off-screen hint), and more
    # notes than fit in the event log (every other proof fails), in about 100 KB
    synth(OUT / "four_gpus.jsonl", gpus=4, workers_per_gpu=2, sectors=3, partitions=8, fail_every=2,
          progress_steps=1, sample_every=1.0)
    # issue 33: 8 GPUs x 3 workers, more partitions in flight than rows and more lanes than fit
    synth(OUT / "eight_gpus.jsonl", gpus=8, workers_per_gpu=3, sectors=2, partitions=12, progress_steps=1,
          sample_every=1.0, until=12.0)
    real(OUT / "two_gpus.jsonl")
    switch(OUT / "switch_device_stream.jsonl.gz")
    host_ram(OUT / "host_ram.jsonl")
    startup(OUT / "startup.jsonl")
    classes(OUT / "classes.jsonl")
    cordon(OUT / "cordon.jsonl")
    keys(OUT / "keys.jsonl")
    vram_leak(OUT / "vram_leak.jsonl.gz")
    abc_gpu(OUT / "abc_gpu.jsonl.gz")
    print("wrote", *sorted(OUT.glob("*.jsonl")))


if __name__ == "__main__":
    main()
