#!/usr/bin/env bash
# The seed's experiment on a real GPU (issue 6), plus the GPU checks of issues 3 and 5, in one
# device call. On the GPU machine, from the repo root, with the wheels installed:
#   OUT=/dir bash benchmarks/gpu_experiment.sh
# Everything lands in $OUT/work and is packed into $OUT/gpu_experiment.tar.gz after each step,
# so a run cut short still brings back what it finished.
set -uo pipefail
OUT=${OUT:?set OUT}
W=$OUT/work
mkdir -p "$W"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
CACHE=$PWD/.cache/keys
log() { echo "[$(date +%T)] $*" | tee -a "$W/log.txt"; }
pack() { tar -C "$OUT" -czf "$OUT/gpu_experiment.tar.gz.tmp" work && mv "$OUT/gpu_experiment.tar.gz.tmp" "$OUT/gpu_experiment.tar.gz"; }
NG=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>>"$W/log.txt" || echo 0)
nvidia-smi > "$W/nvidia-smi.txt" 2>&1
nproc > "$W/nproc.txt"
log "GPUs visible: $NG"

rec() {  # name, then record options
  local name=$1; shift
  timeout "${REC_TIMEOUT:-150}" python3 -m c2tui record --backend cuda -q --cache-dir "$CACHE" \
    --out "$W/$name.jsonl" "$@" > "$W/$name.txt" 2>&1
  log "record $name exit $?"
  python3 -m c2tui summary "$W/$name.jsonl" --json > "$W/$name.summary.json" 2>>"$W/log.txt"
  python3 - "$W/$name.summary.json" <<'PY' | tee -a "$W/log.txt"
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no summary:", e); sys.exit()
g = s["gpus"]
print(f"  {s['partitions_ok']} ok {s['partitions_failed']} failed, proofs {s['proofs_ok']}/{s['proofs_failed']}, "
      f"{s['steady_throughput_per_min']:.1f}/min wall, fallbacks {s['fallbacks']}, ooms {s['ooms']}, "
      f"busy {[round(x['busy_share'], 2) for x in g]}, mem wait {[round(x['mem']['wait_mean'], 3) for x in g]}, "
      f"compute hold {[round(x['compute']['hold_mean'], 3) for x in g]}")
PY
}

# 1. modelled: the rtx5070ti-16g card at 2^27 on the real GPU (real allocations of 12 GiB per
#    partition, real cudaDeviceSynchronize / pool trim, real kernels at 2^8 + paced kernels)
M="--profile rtx5070ti-16g --constraints-log2 8 --sectors 1 --time-scale 0.5 --gpus 1"
rec m_single   $M --partitions 12 --workers-per-gpu 3 --vram-budget 24GiB --lock-mode single
rec m_device   $M --partitions 12 --workers-per-gpu 3 --vram-budget 24GiB --lock-mode two-lock --mem-sync device
rec m_stream   $M --partitions 12 --workers-per-gpu 3 --vram-budget 24GiB --lock-mode two-lock --mem-sync stream
rec m_switch   $M --partitions 16 --workers-per-gpu 3 --vram-budget 24GiB --lock-mode two-lock --mem-sync device --switch 10:stream
pack
if [ "$NG" -ge 2 ]; then
  rec m_stream_2gpu --profile rtx5070ti-16g --constraints-log2 8 --sectors 1 --time-scale 0.5 --gpus 2 \
      --partitions 24 --workers-per-gpu 3 --vram-budget 24GiB --lock-mode two-lock --mem-sync stream
  pack
fi

# 2. the dashboard attached vs headless record (same engine, ABBA, one process)
timeout 120 python3 benchmarks/gpu_attached.py --seconds 18 --reps 2 --time-scale 0.5 --out "$W/attached.json" \
  backend=cuda profile=rtx5070ti-16g constraints_log2=8 workers_per_gpu=3 vram_budget=24GiB \
  lock_mode=two-lock mem_sync=stream "cache_dir=\"$CACHE\"" > "$W/attached.txt" 2>&1
log "attached exit $?"; tail -1 "$W/attached.txt" | tee -a "$W/log.txt"
pack

# 3. pytest -m gpu (kernels vs CPU reference, whole GPU proofs, CudaDevice)
timeout 170 python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider --timeout 160 > "$W/pytest_gpu.txt" 2>&1
log "pytest -m gpu exit $?"; tail -3 "$W/pytest_gpu.txt" | tee -a "$W/log.txt"
pack

# 4. native: no model, the CuPy kernels at real speed on a 2^16 circuit (keys carried in .cache)
N="--profile native --constraints-log2 16 --modelled-log2 16 --sectors 1 --vram-budget 139GiB --gpus 1"
rec n_single $N --partitions 12 --workers-per-gpu 3 --lock-mode single
rec n_device $N --partitions 12 --workers-per-gpu 3 --lock-mode two-lock --mem-sync device
rec n_stream $N --partitions 12 --workers-per-gpu 3 --lock-mode two-lock --mem-sync stream
pack

# 5. workers per GPU and the whole card (modelled), as time allows
rec m_stream_w1 $M --partitions 8 --workers-per-gpu 1 --vram-budget 24GiB --lock-mode two-lock --mem-sync stream
rec m_stream_w4 $M --partitions 12 --workers-per-gpu 4 --vram-budget 24GiB --lock-mode two-lock --mem-sync stream
rec m_device_full $M --partitions 12 --workers-per-gpu 3 --vram-budget 139GiB --lock-mode two-lock --mem-sync device
rec m_stream_full $M --partitions 12 --workers-per-gpu 3 --vram-budget 139GiB --lock-mode two-lock --mem-sync stream
pack
log "done"
