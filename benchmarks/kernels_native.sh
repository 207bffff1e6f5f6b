#!/usr/bin/env bash
# Issue 38's one device call (~7 min on one H200; every step time-boxed, all inside DEADLINE):
#   1. (background, CPU) SASS counts of the products and kernels, compiled by this machine's
#      NVRTC and read by nvdisasm/cuobjdump (sass_counts.py --compiler nvrtc)
#   2. correctness of every variant on the GPU: the product variants against Python integers and
#      the real kernels per variant (tests/gpu/test_field_variants_gpu.py), the conformance suite
#      on the `cuda` and `cuda-eok2` backends (every primitive, 2^8..2^CONFORMANCE_MAX_LOG)
#   3. the products' rates per variant (bench_field.py)
#   4. sppark's peer benchmark (.peer/run.sh: MSM 2^22/2^24, NTT 2^22/2^24)
#   5. old against new, interleaved (bench_variants.py: NTT natural / NR / NTT-H, G1 MSM plain and
#      precomputed), median and 95% interval, results equal across variants
#   6. the composed section at SECTION_LOGS (default 24) enqueued whole: the baseline against the
#      settings step 5 measured fastest (variants_table.py --pick; eo_k2 + radix 4 when step 5
#      gave nothing), results equal bit for bit
#   7. the R1CS products of a partition (R1CS_LOG, default 20: 2^22's circuit takes the host ~40 s
#      to make), host kernel against the GPU kernel (bench_r1cs_gpu.py), when >= 35 s are left
#   8. the short table (variants_table.py) into $OUT/summary.txt, printed last
# Results: $OUT/w/* as made, tarred every 15 s into $OUT/results.tar; summary.txt beside it.
# Run (repository root; carry .whl and .peer):
#   cp -r ../shared/peer .peer && ../shared/tools/gpu-wheels nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump \
#     pytest-xdist execnet
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD && OUT=$OUT bash benchmarks/kernels_native.sh
# Env: DEADLINE (epoch s; default start + 540), VARIANTS (bench_variants --variants), SECTION_LOGS,
#      CONFORMANCE_MAX_LOG (default 16), SKIP_TESTS=1, SKIP_PEER=1, REPS (default 7).
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="${PYTHONPATH:-$PWD}"
case ":$PYTHONPATH:" in *":$PWD:"*) ;; *) export PYTHONPATH="$PYTHONPATH:$PWD" ;; esac
T0=$(date +%s)
DEADLINE=${DEADLINE:-$(( T0 + 540 ))}
W="$OUT/w"
mkdir -p "$W"
log() { echo "[+$(( $(date +%s) - T0 ))s] $*" | tee -a "$W/steps.log"; }
left() { echo $(( DEADLINE - $(date +%s) )); }
box() { local want=$1 l; l=$(left); [ "$want" -lt "$l" ] && echo "$want" || echo $(( l > 5 ? l - 5 : 1 )); }
snap() { tar -cf "$OUT/r.tmp" -C "$W" . 2>/dev/null && mv "$OUT/r.tmp" "$OUT/results.tar"; }
(while sleep 15; do snap; done) &
SNAPPER=$!
trap 'kill $SNAPPER 2>/dev/null; snap' EXIT

log "$(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader 2>&1); $(nproc) CPUs; python $(python3 -V 2>&1)"
python3 -c "import cupy, pydantic, py_arkworks_bls12381; print('cupy', cupy.__version__)" 2>&1 | tee -a "$W/steps.log"

# 1. SASS counts (CPU and NVRTC only) beside the GPU steps
timeout "$(box 300)" python3 benchmarks/sass_counts.py --compiler nvrtc --variants eo_sq,eo_k,eo_k2,eo_sq2 --modules \
  --out "$W/sass_counts.json" > "$W/sass_counts.log" 2>&1 &
SASS=$!

# 2. correctness of every variant
if [ -z "${SKIP_TESTS:-}" ]; then
  XD=""; python3 -c "import xdist" 2>/dev/null && XD="-n 12"
  CONFORMANCE_MAX_LOG=${CONFORMANCE_MAX_LOG:-16} timeout "$(box 130)" python3 -m pytest -m gpu -p no:cacheprovider $XD \
    -vv -rfE --tb=short tests/gpu/test_field_variants_gpu.py tests/gpu/test_r1cs_gpu.py tests/backends/test_conformance.py \
    -k "not emulated and not steps and not affine" > "$W/pytest.txt" 2>&1
  log "pytest rc $?: $(grep -cE ' PASSED' "$W/pytest.txt") passed, $(grep -cE ' FAILED' "$W/pytest.txt") failed"
  grep -E "^(FAILED|ERROR)" "$W/pytest.txt" | head -20
fi

# 3. the products' rates
timeout "$(box 45)" python3 benchmarks/bench_field.py --variants eo_sq,eo_k,eo_k2 --n 2048 \
  --out "$W/field.json" > "$W/field.log" 2>&1
log "bench_field rc $?"; grep -E "summary|^\[bench_field.*\]   " "$W/field.log" | tail -6

# 4. the peer, in the same call
if [ -z "${SKIP_PEER:-}" ] && [ -x .peer/run.sh ]; then
  timeout "$(box 90)" .peer/run.sh --msm 22,24 --ntt 22,24 --reps 5 > "$W/sppark.jsonl" 2> "$W/sppark.log"
  log "sppark rc $?"; grep -E '"ms"' "$W/sppark.jsonl" | sed -E 's/"x":"[^"]*",?//' | cut -c1-160
else
  log "no .peer (or SKIP_PEER): the peer's figures are missing from this call"
fi

# 5. old against new, interleaved
V=${VARIANTS:-"base:;eo_k:field_mul=eo_k;eo_k2:field_mul=eo_k2;eo_sq2:field_mul=eo_sq2;r4:ntt_radix=4;eo_k_r4:field_mul=eo_k,ntt_radix=4"}
B=$(box 150)
timeout "$B" python3 benchmarks/bench_variants.py --out "$W/variants.json" --variants "$V" --ntt 22,24 --ntt-h 24 \
  --msm 22,24 --msm-pre 24 --g2 "" --reps "${REPS:-7}" --deadline "$(( $(date +%s) + B - 15 ))" > "$W/variants.log" 2>&1
log "bench_variants rc $?"; grep -E "bench_variants" "$W/variants.log" | cut -c1-400

# 6. the composed section: baseline against the fastest settings measured above
PICK=$(python3 benchmarks/variants_table.py "$W" --pick 2>/dev/null)
SV="base:;picked:${PICK:-field_mul=eo_k2,ntt_radix=4}"
log "section variants: $SV"
if [ -n "${SECTION_LOGS-24}" ] && [ "$(left)" -gt 60 ]; then
  timeout "$(box 160)" python3 benchmarks/bench_gpu_section.py --logs "${SECTION_LOGS-24}" --stand-in-from 20 --reps 3 \
    --variants "$SV" --out "$W/section.json" > "$W/section.log" 2>&1
  log "section rc $?"; grep -E "run 3|Error|error" "$W/section.log" | cut -c1-300
fi

# 7. the R1CS products of a partition: the host kernel against the GPU's (issue 38, host side)
if [ "$(left)" -gt 35 ]; then
  timeout "$(box 60)" python3 benchmarks/bench_r1cs_gpu.py --log "${R1CS_LOG:-20}" --out "$W/r1cs.json" > "$W/r1cs.log" 2>&1
  log "r1cs rc $?"; tail -1 "$W/r1cs.log" | cut -c1-400
fi

wait "$SASS"; log "sass_counts rc $?"; tail -3 "$W/sass_counts.log"
python3 benchmarks/variants_table.py "$W" > "$OUT/summary.txt" 2>&1
cp "$OUT/summary.txt" "$W/summary.txt"
log "done"
cat "$OUT/summary.txt"
