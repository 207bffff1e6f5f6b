#!/usr/bin/env bash
# Issue 41's first device call (2026-12-08): the new GPU paths checked, then the seed's own size.
#   device: nvidia-h200, needs_h200 (the 2^27 key alone is 69 GiB); timeout_s 600
#   command: OUT=$OUT bash benchmarks/gpu_call41.sh            (wheels installed first, see gpu-wheels)
# 1. smoke: the GPU tests of what no device has run yet (written 2026-12-07 without one): the R1CS
#    kernel through z's packed form bit-equal to the host products, a native 2^22 engine run with
#    a/b/c made on the GPU under every discipline, the staged NTT-H over the kernel's a, b, c
#    ($OUT/smoke.txt). 240 s at most.
# 2. host27: benchmarks/gpu_host27.py at 2^27 with the time left (both arms where the smoke
#    passed; the host arm alone where it failed: abc gpu would only fail its proofs).
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
start=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,power.limit --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 240 python3 -m pytest -m gpu tests/gpu/test_r1cs_gpu.py tests/gpu/test_abc_gpu.py \
  tests/gpu/test_engine_staged_gpu.py -n 4 -q -rfE --tb=short --durations=10 -p no:cacheprovider \
  > "$OUT/smoke.txt" 2>&1
smoke=$?
tail -25 "$OUT/smoke.txt"
echo "smoke rc $smoke after $(( $(date +%s) - start )) s"
arms=gpu,host; [ "$smoke" -eq 0 ] || arms=host
left=$(( ${CALL_S:-585} - ($(date +%s) - start) ))
echo "host27: arms $arms, budget $left s"
python3 benchmarks/gpu_host27.py --out-dir "$OUT/h27" --arms "$arms" --budget-s "$(( left - 15 ))" \
  --seconds "${GPU_SECONDS:-170}" --host-seconds "${HOST_SECONDS:-70}" 2>&1 | tee "$OUT/host27.txt" | tail -60
