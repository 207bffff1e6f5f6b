#!/usr/bin/env bash
# The device call after gpu_call41.sh and gpu_experiment27.sh (2026-12-08): the rest of the GPU
# suite, then issue 41's before/after at 2^22 with the time left.
#   device: nvidia-h200 (or any one GPU); carry [".whl", ".main"]; timeout_s 600
#   command: OUT=$OUT bash benchmarks/gpu_call_rest.sh
# 1. `pytest -m gpu tests/gpu tests/backends` less the three files gpu_call41.sh ran, the
#    conformance cases up to 2^20 (CONFORMANCE_MAX_LOG: their CPU references take the time at
#    2^22), 14 processes, TESTS_S seconds at most ($OUT/gpu_suite.txt).
# 2. gpu_before_after.py --sizes 22 against .main (git archive 915c6e3: a/b/c built on the host),
#    as many pairs as the time left holds ($OUT/ba/).
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
start=$(date +%s)
CONFORMANCE_MAX_LOG=${MAX_LOG:-20} timeout "${TESTS_S:-300}" python3 -m pytest -m gpu tests/gpu tests/backends \
  --deselect tests/gpu/test_r1cs_gpu.py --deselect tests/gpu/test_abc_gpu.py \
  --deselect tests/gpu/test_engine_staged_gpu.py -n 14 -q -rfE --tb=short --durations=15 \
  -p no:cacheprovider > "$OUT/gpu_suite.txt" 2>&1
echo "gpu suite rc $? after $(( $(date +%s) - start )) s"; tail -30 "$OUT/gpu_suite.txt"
left=$(( ${CALL_S:-585} - ($(date +%s) - start) ))
[ "$left" -gt 120 ] || { echo "no time for the before/after ($left s)"; exit 0; }
python3 benchmarks/gpu_before_after.py --before-tree .main --out-dir "$OUT/ba" --sizes 22 \
  --pairs "${PAIRS:-3}" --seconds "${BA_SECONDS:-20}" --budget-s "$(( left - 10 ))" 2>&1 | tail -40
