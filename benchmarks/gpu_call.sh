#!/usr/bin/env bash
# A device call's driver: the steps named, in order, each writing under $OUT/w, and every 15 s
# (and at the end) one tarball of it, $OUT/results.tar, so that what a call cut short had made
# still comes back whole (the device tool returns at most 8 files).
#   OUT=... bash benchmarks/gpu_call.sh check disciplines22 ...
# Steps: check (benchmarks/gpu_check.sh), settings (the fastest kernel-settings variant of the
# check's section bench, this call's or a warm machine's last, exported as C2TUI_* for the steps
# after it), disciplines<N> (bench_disciplines at 2^N until
# DEADLINE, epoch s), host_ram (gpu_host_ram_startup: 2^22 host-RAM budget, 2^24 start-up).
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
W="$OUT/w"
mkdir -p "$W"
snap() { tar -cf "$OUT/r.tmp" -C "$W" . 2>/dev/null && mv "$OUT/r.tmp" "$OUT/results.tar"; }
(while sleep 15; do snap; done) &
SNAPPER=$!
DEADLINE=${DEADLINE:-$(( $(date +%s) + 560 ))}
for step in "$@"; do
  left=$(( DEADLINE - $(date +%s) ))
  echo "=== $step ($left s left) ==="
  case "$step" in
    check) OUT="$W" bash benchmarks/gpu_check.sh
      # kept on the (warm) machine for a later call's `settings` step
      mkdir -p .cache && cp "$W/section.json" .cache/last_section.json 2>/dev/null ;;
    settings)  # the later runs use the fastest section variant measured (its results equal)
      src="$W/section.json"; [ -f "$src" ] || src=.cache/last_section.json
      picked=$(python3 benchmarks/pick_settings.py "$src"); echo "$picked"; eval "$picked" ;;
    disciplines*) n=${step#disciplines}
      python3 benchmarks/bench_disciplines.py --log2 "$n" --seconds "${SECONDS_A_RUN:-12}" \
        --runs "${RUNS:-single,narrow,stream,reserved,device}" --budget-s "$(( left - 10 ))" --out-dir "$W/d$n" ;;
    host_ram) python3 benchmarks/gpu_host_ram_startup.py --out-dir "$W/hr" --cache-dir .cache/keys \
        --seconds 20 --deadline-s "$(( left - 10 ))" ;;
    *) echo "unknown step $step" ;;
  esac
  echo "=== $step rc $? ==="
  snap
done
kill "$SNAPPER" 2>/dev/null
snap
