#!/usr/bin/env bash
# What issue 5 still needs on the GPU, in one unattended device call of ~6 minutes (hard limits
# add up to at most 170 + budget + 150 s, ~8 min; prepared
# 2026-11-30; not yet run on a GPU). From the repo root:
#   OUT=/dir PYTHONPATH=. bash benchmarks/gpu_issue5_next.sh
# Steps (each time-boxed; results land in $OUT as they are made):
#   1. GPU tests: fixed-base G1/G2 vs py_arkworks 2^8..2^20 (tests/gpu/test_fixed_base_gpu.py), and
#      setup on the GPU == setup on the CPU, same key bytes, proof verifies (tests/gpu/test_gpu_setup.py)
#      -> $OUT/pytest_fixed_base_setup.txt (also warms CuPy's kernel cache for step 2);
#   2. a real partition's GPU section (the circuit's own bit-heavy witness) at 2^20, 2^22, 2^24,
#      setup on the GPU, proofs verified -> $OUT/gpu_section.json (rewritten after every stage),
#      $OUT/gpu_section.txt (progress). A size whose extrapolated cost would overrun the budget is
#      skipped with a row saying so. The G2 all-cores CPU baseline (bench_cpu_msm.py --group g2) is
#      not part of this call.
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
TOTAL=${ISSUE5_TOTAL_S:-360}   # seconds for the whole call (the device limit is 600)
T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/log.txt"; }
{ nvidia-smi; nproc; free -g; python3 -c "import sys, numpy, cupy; print(sys.version, numpy.__version__, cupy.__version__)"; } \
  > "$OUT/machine.txt" 2>&1

log "1. GPU tests: fixed base, setup"
timeout 170 python3 -m pytest -m gpu tests/gpu/test_fixed_base_gpu.py tests/gpu/test_gpu_setup.py -q -s \
  -p no:cacheprovider --durations=15 > "$OUT/pytest_fixed_base_setup.txt" 2>&1
log "pytest exit $?: $(grep -E 'passed|failed|error' "$OUT/pytest_fixed_base_setup.txt" | tail -1)"
grep -E "FIXED_BASE_TEST_SEED|fixed base 2\^" "$OUT/pytest_fixed_base_setup.txt" | sort -u | tee -a "$OUT/log.txt"

LEFT=$(( TOTAL - ($(date +%s) - T0) ))
[ "$LEFT" -lt 60 ] && LEFT=60
log "2. section benchmark 2^20, 2^22, 2^24 (budget ${LEFT}s, hard limit $(( LEFT + 150 ))s)"
timeout $(( LEFT + 150 )) python3 benchmarks/bench_gpu_section.py --logs 20,22,24 --reps 3 --budget-s "$LEFT" \
  --out "$OUT/gpu_section.json" > "$OUT/gpu_section.txt" 2>&1
log "section exit $?"
grep -E '^\{' "$OUT/gpu_section.txt" | tee -a "$OUT/log.txt"
log "done"
