#!/usr/bin/env bash
# Issue 12's native runs in ONE device call (<= 9 min): real kernels only (profile native, no
# modelled time, no spin kernels), proofs verified. On the GPU machine, from the repo root:
#   export PYTHONPATH=/tmp/site:$PWD; OUT=/dir bash benchmarks/gpu_native.sh
# Env: BUDGET_S (540, the whole script), RUN_SECONDS (25 a run), WORKERS (8 a GPU), PYTEST_FAST_S
# (120), CPU_PHASES_S (90; 0 skips), RUNS (single,device,stream; bench_native's names, e.g.
# stream_pageable), BUDGETS (card,tight), LOG24 (1; 0 skips 2^24), PYTEST_ALL (1; 0 skips).
# Steps by value: gpu tests (fast subset), host phases on 16 threads, the 2^22 engine runs
# (single / two-lock+device / two-lock+stream; whole card and a tight budget), two GPUs when
# visible, then 2^24 only if the time left allows it. Everything lands in $OUT/work, packed
# into $OUT/gpu_native.tar.gz after each step (a run cut short still brings back what it did).
echo "== nvidia-smi / nproc"; nvidia-smi; nproc
set -uo pipefail
OUT=${OUT:?set OUT}
W=$OUT/work
mkdir -p "$W"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # this checkout first, then the wheels
T0=$(date +%s)
END=$((T0 + ${BUDGET_S:-540}))   # the whole script's deadline (the device call allows 600 s)
SECS=${RUN_SECONDS:-25}          # each engine run before draining
WORKERS=${WORKERS:-8}            # workers per GPU: see bench_native's "workers:" line for why
left() { echo $((END - $(date +%s))); }
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$W/log.txt"; }
pack() { tar -C "$OUT" -czf "$OUT/gpu_native.tar.gz.tmp" work && mv "$OUT/gpu_native.tar.gz.tmp" "$OUT/gpu_native.tar.gz"; }
nvidia-smi > "$W/nvidia-smi.txt" 2>&1; nproc > "$W/nproc.txt"
python3 -c "import sys, cupy, numba, numpy, pydantic; print(sys.version, 'cupy', cupy.__version__, 'numba', numba.__version__, 'gpus', cupy.cuda.runtime.getDeviceCount())" 2>&1 | tee -a "$W/log.txt"

# 1. GPU tests, fast subset: the staged NTT-H engine test + proofs equal to the CPU's
log "pytest gpu (fast subset)"
timeout "${PYTEST_FAST_S:-120}" python3 -m pytest -m gpu -x -q -p no:cacheprovider tests/gpu/test_engine_staged_gpu.py \
  tests/gpu/test_gpu_proof.py > "$W/pytest_gpu_fast.txt" 2>&1
log "pytest fast exit $?: $(tail -2 "$W/pytest_gpu_fast.txt" | tr "\n" " ")"; pack

# 2. host phases per partition, 1 and 16 threads (rows written as each size completes)
[ "${CPU_PHASES_S:-90}" -gt 0 ] && log "bench_cpu_phases 20,22,24" && timeout "${CPU_PHASES_S:-90}" python3 benchmarks/bench_cpu_phases.py --sizes 20,22,24 --threads 16 --json \
  --repeat 2 --out "$W/cpu_phases_h200.json" > "$W/cpu_phases.txt" 2>&1
[ "${CPU_PHASES_S:-90}" -gt 0 ] && { log "cpu phases exit $?"; tail -5 "$W/cpu_phases.txt" | tee -a "$W/log.txt"; pack; }

# 3. + 4. 2^22 engine runs (one process: circuit and keys once), then 2 GPUs when visible
log "bench_native 2^22 ($(left)s left)"
timeout "$(( $(left) - 20 ))" python3 benchmarks/bench_native.py --log2 22 --seconds "$SECS" --workers "$WORKERS" \
  --runs "${RUNS:-single,device,stream}" --budgets "${BUDGETS:-card,tight}" --two-gpu auto --deadline "$((END - 20))" --out-dir "$W" \
  2>&1 | tee "$W/native_22.txt"
log "native 2^22 exit ${PIPESTATUS[0]}"; pack

# 5. 2^24 on the whole card, single and two-lock+stream, only if its setup and two runs can fit
if [ "${LOG24:-1}" = 1 ] && [ "$(left)" -gt 200 ]; then
  log "bench_native 2^24 ($(left)s left)"
  timeout "$(( $(left) - 10 ))" python3 benchmarks/bench_native.py --log2 24 --seconds "$SECS" --workers "$WORKERS" \
    --runs single,stream --budgets card --two-gpu off --deadline "$((END - 10))" --out-dir "$W" \
    2>&1 | tee "$W/native_24.txt"
  log "native 2^24 exit ${PIPESTATUS[0]}"
else
  log "2^24 skipped: $(left)s left"
fi
pack
# 6. the rest of the GPU tests with what is left
if [ "${PYTEST_ALL:-1}" = 1 ] && [ "$(left)" -gt 40 ]; then
  timeout "$(( $(left) - 5 ))" python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu > "$W/pytest_gpu_all.txt" 2>&1
  log "pytest gpu all exit $?: $(tail -2 "$W/pytest_gpu_all.txt" | tr "\n" " ")"
fi
pack
log "done"
