#!/usr/bin/env bash
# What issue 5 still needs on the GPU, in one device call (prepared 2026-11-30; not yet run):
#   1. setup on the GPU == setup on the CPU (tests/gpu/test_gpu_setup.py);
#   2. the G2 MSM beside py_arkworks on all cores at 2^16..2^22;
#   3. a real partition's GPU section (the circuit's own witness) at 2^18 and 2^20, proofs verified.
#   OUT=/dir bash benchmarks/gpu_issue5_next.sh
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -m gpu tests/gpu/test_gpu_setup.py tests/gpu/test_gpu_proof.py -q -p no:cacheprovider \
  > "$OUT/pytest_setup.txt" 2>&1; echo "pytest exit $?"; tail -2 "$OUT/pytest_setup.txt"
timeout 200 python3 benchmarks/bench_cpu_msm.py --group g2 --logs 16,18,20,22 --out "$OUT/cpu_vs_gpu_msm_g2.json"
timeout 240 python3 benchmarks/bench_gpu_section.py --logs 18,20 --cache-dir "$OUT/keys" --out "$OUT/gpu_section.json"
rm -rf "$OUT/keys"
