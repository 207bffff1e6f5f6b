#!/usr/bin/env bash
# The seed on a real GPU: record runs with a 24 GiB VRAM budget (two 12 GiB partitions, not
# three) under single, two-lock+device and two-lock+stream, with real allocations, real
# cudaDeviceSynchronize / pool trims and NVML figures; then `pytest -m gpu`.
#
#   OUT=/some/dir bash benchmarks/gpu_record.sh        (on the GPU machine; needs cupy)
#
# Writes under $OUT: cuda_<mode>.jsonl recordings, their summaries (.txt and .json),
# nvidia-smi.txt, pytest_gpu.txt, and gpu_record.md (a table for benchmarks/RESULTS.md).
set -uo pipefail
OUT=${OUT:-benchmarks/results/gpu}
PARTS=${PARTS:-9}
SCALE=${SCALE:-0.5}
PY=${PY:-python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

if ! $PY -c "import cupy, sys; sys.exit(0 if cupy.cuda.runtime.getDeviceCount() else 1)" 2>"$OUT/cupy_error.txt"; then
  echo "cupy or a CUDA device is missing (see $OUT/cupy_error.txt); install cupy-cuda12x first" >&2
  exit 2
fi
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
$PY -c "import cupy; print('cupy', cupy.__version__, 'cuda runtime', cupy.cuda.runtime.runtimeGetVersion())" > "$OUT/versions.txt" 2>&1

run() {  # name lock_mode mem_sync
  local name=$1
  echo "== $name" >&2
  $PY -m c2tui record --backend cuda --vram-budget 24GiB --workers-per-gpu 3 \
      --lock-mode "$2" --mem-sync "$3" --constraints-log2 8 --sectors 1 --partitions "$PARTS" \
      --time-scale "$SCALE" --out "$OUT/cuda_$name.jsonl" > "$OUT/cuda_$name.txt" 2> "$OUT/cuda_$name.stderr" \
    || echo "record $name exited $?" >&2
  $PY -m c2tui summary "$OUT/cuda_$name.jsonl" --json > "$OUT/cuda_$name.summary.json" || true
}
run single single device
run two-lock-device two-lock device
run two-lock-stream two-lock stream

$PY - "$OUT" "$SCALE" <<'PYEOF' > "$OUT/gpu_record.md"
import json, sys
from pathlib import Path
out, scale = Path(sys.argv[1]), float(sys.argv[2])
rows = []
for name in ("single", "two-lock-device", "two-lock-stream"):
    p = out / f"cuda_{name}.summary.json"
    if not p.exists() or not p.read_text().strip():
        rows.append(f"| {name} | (no summary) |"); continue
    s = json.loads(p.read_text()); g = s["gpus"][0]
    rows.append(
        f"| {name} | {s['steady_throughput_per_min'] * scale:.2f} | {s['fallbacks']} | {s['ooms']} | "
        f"{g['mem']['section_mean'] / scale:.2f} | {s['phases'].get('prestage', {}).get('max', 0) / scale:.2f} | "
        f"{g['compute']['hold_mean'] / scale:.2f} | {s['proofs_ok']} ok / {s['proofs_failed']} failed | "
        f"{g['name']} nvml={g['nvml']} |")
print(f"time_scale {scale}; times in modelled seconds (wall / time_scale); budget 24 GiB, 3 workers, 12 GiB per partition\n")
print("| mode | partitions / modelled min | fallbacks | OOMs | mem section mean s | prestage max s | compute hold mean s | proofs | device |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
PYEOF
cat "$OUT/gpu_record.md"

$PY -m pytest -m gpu tests/gpu -q -p no:cacheprovider > "$OUT/pytest_gpu.txt" 2>&1
echo "pytest -m gpu exit $?" | tee -a "$OUT/pytest_gpu.txt"
tail -5 "$OUT/pytest_gpu.txt"
