#!/usr/bin/env bash
# One device call (~5 min on the H200): the GPU suite on the code as it stands, then the kernels
# beside sppark (the peer) in the same call, so every kernel figure has the peer's next to it.
#   OUT=/dir bash benchmarks/gpu_check.sh                     # after the wheels are installed
# Env: MSM_VARIANTS (bench_kernels --msm-variants, default "call"), SKIP_TESTS=1, TEST_TIMEOUT.
# Steps, each time-boxed, results under $OUT as they are made:
#   1. sppark: G1 MSM 2^20/22/24, Fr NTT 2^22/24 (.peer/run.sh; copy ../shared/peer to .peer)
#   2. ours: NTT, NTT-H, G1 MSM (plain and precomputed, with the stage split), G2 MSM
#   3. pytest -m gpu tests/gpu tests/backends (conformance up to 2^22)
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
T0=$(date +%s)
log() { echo "[+$(( $(date +%s) - T0 ))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu \
  --format=csv > "$OUT/nvidia_smi.txt" 2>&1
log "$(tail -1 "$OUT/nvidia_smi.txt"); $(nproc) CPUs"
if [ -x .peer/run.sh ]; then
  timeout 120 .peer/run.sh --msm 20,22,24 --ntt 22,24 --reps 5 > "$OUT/sppark.jsonl" 2> "$OUT/sppark.err"
  log "sppark rc $?"; cat "$OUT/sppark.jsonl"
else
  log "no .peer: the peer's figures are missing from this call"
fi
timeout 180 python3 benchmarks/bench_kernels.py --out "$OUT" --name kernels.json --ntt 22,24 --ntt-variants c \
  --msm 20,22,24 --msm-variants "${MSM_VARIANTS:-call}" --precompute --skip-fixed-base --g2 22 --cpu-msm "" \
  --cpu-g2 "" --section "" --reps 5 > "$OUT/kernels.log" 2>&1
log "kernels rc $?"; grep -E "NTT|MSM|precomputed|breakdown|split" "$OUT/kernels.log" | cut -c1-300
if [ -z "${SKIP_TESTS:-}" ]; then
  CONFORMANCE_MAX_LOG=22 timeout "${TEST_TIMEOUT:-240}" python3 -m pytest -m gpu tests/gpu tests/backends -q \
    -p no:cacheprovider --durations=12 > "$OUT/pytest_gpu.txt" 2>&1
  log "pytest rc $?: $(grep -E 'passed|failed|error' "$OUT/pytest_gpu.txt" | tail -1)"
  grep -E "^(FAILED|ERROR)" "$OUT/pytest_gpu.txt" | head -20
fi
log "done"
