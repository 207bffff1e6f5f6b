#!/usr/bin/env bash
# Issue 12's native runs in ONE device call (<= 10 min) on a two-GPU host: bench_native (by
# default 2^24: single / two-lock+device / two-lock+stream, whole card then tight budget) on
# GPU 0, while the GPU tests run on GPU 1 during its key setup (~250 s at 2^24). On the GPU
# machine, from the repo root:
#   export PYTHONPATH=/tmp/site:$PWD; OUT=/dir bash benchmarks/gpu_native_runs.sh
# Env: LOG2 (24), BENCH_GPUS (0; "0,1" with TWO_GPU=on for the two-GPU run last), TWO_GPU (off),
# BUDGET_S (575, the whole script), RUN_SECONDS (20), WORKERS (12), BUDGETS (card,tight),
# RUNS (single,device,stream), TESTS (the GPU test files; "" skips them).
# Everything lands in $OUT/w, packed into $OUT/native.tar.gz every 20 s and at the end.
set -uo pipefail
TESTPID=
OUT=${OUT:?set OUT}
W=$OUT/w
mkdir -p "$W"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
T0=$(date +%s)
END=$((T0 + ${BUDGET_S:-575}))
pack() { tar -C "$OUT" -czf "$OUT/native.tar.gz.tmp" w && mv "$OUT/native.tar.gz.tmp" "$OUT/native.tar.gz"; }
( while sleep 20; do pack; done ) & PACKER=$!
{ nvidia-smi; nproc; free -g; } > "$W/machine.txt" 2>&1
python3 -c "import sys, cupy, numba; print(sys.version, 'cupy', cupy.__version__, 'numba', numba.__version__, 'gpus', cupy.cuda.runtime.getDeviceCount())" > "$W/versions.txt" 2>&1
NGPU=$(nvidia-smi -L | wc -l)
TESTS=${TESTS-tests/gpu/test_gpu_proof.py tests/gpu/test_pinned_pool_gpu.py tests/gpu/test_msm_precomputed_gpu.py tests/gpu/test_engine_staged_gpu.py tests/gpu/test_cuda_device.py}
if [ -n "$TESTS" ]; then
  # on the other GPU when there is one; after the bench otherwise
  if [ "$NGPU" -ge 2 ]; then
    ( CUDA_VISIBLE_DEVICES=1 timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider $TESTS > "$W/pytest_gpu.txt" 2>&1; echo "exit $?" >> "$W/pytest_gpu.txt" ) & TESTPID=$!
  fi
fi
LOG2=${LOG2:-24}
CUDA_VISIBLE_DEVICES=${BENCH_GPUS:-0} timeout $((END - $(date +%s))) python3 benchmarks/bench_native.py --log2 "$LOG2" \
  --seconds "${RUN_SECONDS:-20}" --workers "${WORKERS:-12}" --runs "${RUNS:-single,device,stream}" \
  --budgets "${BUDGETS:-card,tight}" --two-gpu "${TWO_GPU:-off}" --deadline "$END" --out-dir "$W" > "$W/native_$LOG2.txt" 2>&1
echo "bench exit $? at +$(( $(date +%s) - T0 ))s" >> "$W/native_$LOG2.txt"
if [ -n "$TESTS" ] && [ "$NGPU" -lt 2 ] && [ $((END - $(date +%s))) -gt 60 ]; then
  timeout $((END - $(date +%s))) python3 -m pytest -m gpu -q -p no:cacheprovider $TESTS > "$W/pytest_gpu.txt" 2>&1
fi
[ -n "${TESTPID:-}" ] && wait "$TESTPID"
kill $PACKER 2>/dev/null
gzip -f "$W"/*.jsonl 2>/dev/null
pack
tail -3 "$W/pytest_gpu.txt" 2>/dev/null; cat "$W/native_$LOG2.txt"
