#!/usr/bin/env bash
# Issue 27's native part in ONE device call (< 10 min) on nvidia-h200-x8 (or -x4): Ray fleets of
# 1, 4 (and 8) nodes on one machine, a GPU each, native 2^22, two-lock + stream, 8 workers a GPU,
# every proof verified (benchmarks/bench_fleet_native.py; its docstring has the details):
#   1. the key set up once in a child process into the key cache; every host loads it from there
#   2. local:1, local:4 (, local:8), 20 s steady each: the scaling ratios and a RESULTS table per
#      run and GPU (compute held share and NVML utilisation in the steady window)
#   3. local:N (the largest) again with the real dashboard attached in its own process
#      (`c2tui attach`, 200x60 pty, 10 Hz) for the middle third of 30 s: its cost to throughput
#      against the windows before and after it, and the fleet view rendered from that recording
#   4. local:4 with a worker node removed halfway: exactly-once read back from the recording
# Steps 3-4 are skipped, and said so, when the deadline would not hold them.
#
# Device command (carry .whl and .ray: ../shared/tools/gpu-wheels, benchmarks/ray_for_device.sh):
#   bash benchmarks/gpu_fleet_scale.sh
# Here, no GPU (the logic on the sim backend, small; ~3-5 min on 2 loaded cores):
#   BACKEND=sim LOG2=8 NODES=1,2 KILL=2 WORKERS=2 SECONDS_RUN=4 ATTACH_S=9 KILL_S=8 \
#     OUT=/tmp/fleet_scale PYTHON=.venv/bin/python bash benchmarks/gpu_fleet_scale.sh
# Everything lands in $OUT/fleet: fleet_native.json (written after every run), the log, the
# recordings gzipped (copy them to benchmarks/recordings/h200/fleet/), fleet_view.svg/.png.
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
T0=$(date +%s)
D=$((T0 + ${BUDGET_S:-565}))  # the bench's deadline; the device call allows 600 s
mkdir -p "$OUT/fleet"
if [ -f .ray/ray-core.tar.xz ] && ! "$PY" -c "import ray" 2>/dev/null; then  # the device: no Ray, no network
  mkdir -p /tmp/site && tar -xJf .ray/ray-core.tar.xz -C /tmp/site && \
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
      .whl/*.whl .ray/wheels/*.whl || exit 3
  export PYTHONPATH=/tmp/site
fi
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0
BACKEND=${BACKEND:-cuda}
if [ "$BACKEND" = cuda ]; then
  nvidia-smi > "$OUT/fleet/nvidia_smi.txt" 2>&1
  GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  DEFAULT_NODES=$([ "$GPUS" -ge 8 ] && echo 1,4,8 || { [ "$GPUS" -ge 4 ] && echo 1,4 || echo 1,"$GPUS"; })
fi
NODES=${NODES:-$DEFAULT_NODES}
ATTACH=${ATTACH:-${NODES##*,}}  # the largest fleet of the list
KILL=${KILL:-$([ "$ATTACH" -ge 4 ] && echo 4 || echo "$ATTACH")}  # a fleet that has worker nodes to lose
echo "fleet scale: backend $BACKEND, nodes $NODES, attach local:$ATTACH, kill local:$KILL (0: none), $(nproc) CPUs" | tee "$OUT/fleet/log.txt"
timeout $((D + 20 - $(date +%s))) "$PY" benchmarks/bench_fleet_native.py --backend "$BACKEND" --log2 "${LOG2:-22}" \
  --workers "${WORKERS:-8}" --seconds "${SECONDS_RUN:-20}" --nodes "$NODES" --attach "$ATTACH" \
  --attach-seconds "${ATTACH_S:-30}" --kill "$KILL" --kill-seconds "${KILL_S:-16}" --out-dir "$OUT/fleet" \
  --deadline "$D" 2>&1 | tee -a "$OUT/fleet/log.txt"
echo "bench exit ${PIPESTATUS[0]}" | tee -a "$OUT/fleet/log.txt"
rm -f "$OUT"/fleet/*.screen  # the attached client's terminal bytes (MBs): its figures are in the JSON
# the fleet view from the attached run's recording, at the middle of its attached window
REC=$OUT/fleet/fleet_local${ATTACH}_attached.jsonl
if [ -f "$REC" ]; then
  AT=$("$PY" -c "import json,sys; r=[r for r in json.load(open(sys.argv[1]))['runs'] if r.get('during')=='attached' and 'attached' in r]; w=r[0]['attached']['windows'][1]; print(round((w['t0']+w['t1'])/2, 1))" "$OUT/fleet/fleet_native.json" 2>/dev/null || echo 30)
  for ext in svg png; do
    timeout 60 "$PY" -m c2tui screenshot "$REC" --at "$AT" --size 200x60 -o "$OUT/fleet/fleet_view.$ext" 2>&1 | tail -1
  done
fi
for f in "$OUT"/fleet/*.jsonl; do [ -f "$f" ] && gzip -6f "$f"; done
ls -la "$OUT/fleet"
