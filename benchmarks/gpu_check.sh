#!/usr/bin/env bash
# One device call (~5 min on the H200): the GPU suite on the code as it stands, then the kernels
# beside sppark (the peer) in the same call, so every kernel figure has the peer's next to it,
# then the composed GPU section with the kernel variants of issue 25 on and off.
#   OUT=/dir bash benchmarks/gpu_check.sh                     # after the wheels are installed
# Env: SKIP_TESTS=1, TEST_TIMEOUT (s, default 200), TEST_WORKERS (xdist, default 14; -vv because
#      pyproject's -q would otherwise hide which test a cut run had reached),
#      SECTION_LOGS (default 22,24; empty: skip), MSM_ACC (bench_kernels --msm-acc, e.g. xyzz,affine:
#      the MSMs' first accumulation levels side by side, G1 at 20,22,24 and G2 at 22; default empty).
# Steps, each time-boxed, results under $OUT as they are made:
#   1. pytest -m gpu tests/gpu tests/backends (conformance up to 2^22), xdist, one line a test
#   2. sppark: G1 MSM 2^20/22/24, Fr NTT 2^22/24 (.peer/run.sh; copy ../shared/peer to .peer)
#   3. ours: NTT (natural, fused and not), NTT-H (fused and not), G1 MSM (plain, precomputed,
#      stage split), G2 MSM; the peer's rows and our/peer ratios in the same JSON
#   4. the composed section (NTT-H + G1 MSMs + B_G2, stand-in keys) at SECTION_LOGS, per kernel
#      variant (SECTION_VARIANTS): steps (ntt_fused=0, msm_lanes=1: the kernels before issue 25),
#      fused (msm_lanes=1), the defaults, and first-level MSM pieces of 64 and 128 entries
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
T0=$(date +%s)
log() { echo "[+$(( $(date +%s) - T0 ))s] $*"; }
log "$(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu \
  --format=csv,noheader 2>&1); $(nproc) CPUs"
if [ -z "${SKIP_TESTS:-}" ]; then
  CONFORMANCE_MAX_LOG=22 timeout "${TEST_TIMEOUT:-200}" python3 -m pytest -m gpu tests/gpu tests/backends \
    -n "${TEST_WORKERS:-14}" -vv -rfE --tb=short -p no:cacheprovider --durations=15 > "$OUT/pytest_gpu.txt" 2>&1
  log "pytest rc $?: $(grep -cE ' PASSED' "$OUT/pytest_gpu.txt") passed, $(grep -cE ' FAILED' "$OUT/pytest_gpu.txt") failed"
  grep -E "^(FAILED|ERROR)" "$OUT/pytest_gpu.txt" | head -20
fi
if [ -x .peer/run.sh ]; then
  timeout 120 .peer/run.sh --msm 20,22,24 --ntt 22,24 --reps 5 > "$OUT/sppark.jsonl" 2> >(sed 's/^/  sppark: /')
  log "sppark rc $?"; grep -E '"ms"' "$OUT/sppark.jsonl" | sed -E 's/"x":"[^"]*",?//' | cut -c1-160
else
  log "no .peer: the peer's figures are missing from this call"
fi
KT=180; [ -n "${MSM_ACC:-}" ] && KT=260  # --msm-acc adds 3 precomputes and ~100 MSMs (~20 s)
timeout $KT python3 benchmarks/bench_kernels.py --out "$OUT" --name kernels.json --ntt 22,24 --ntt-variants c \
  --msm 20,22,24 --msm-variants call --precompute --skip-fixed-base --g2 22 --cpu-msm "" --cpu-g2 "" \
  --section "" --reps 5 --peer "$OUT/sppark.jsonl" --msm-acc "${MSM_ACC:-}" > "$OUT/kernels.log" 2>&1
log "kernels rc $?"; grep -E "NTT|MSM|precomputed|breakdown|Error|error" "$OUT/kernels.log" | cut -c1-300
if [ -n "${SECTION_LOGS-22,24}" ]; then
  timeout 200 python3 benchmarks/bench_gpu_section.py --logs "${SECTION_LOGS-22,24}" --stand-in-from 20 --reps 5 \
    --variants "${SECTION_VARIANTS:-steps:ntt_fused=0,msm_lanes=1;fused:msm_lanes=1;defaults:;piece64:msm_piece=64;piece128:msm_piece=128}" \
    --out "$OUT/section.json" \
    > "$OUT/section.log" 2>&1
  log "section rc $?"; grep -E "run 5|Error|error" "$OUT/section.log" | cut -c1-300
fi
log "done"
