#!/usr/bin/env bash
# Attach in real terminals (tmux): `c2tui record --listen` in one pane (its progress line is
# its header), `c2tui attach` in another. `m` pressed in the attach pane must change mem_sync
# in both headers; `q` there detaches while the prover goes on; Ctrl-C in the record pane
# ends the run cleanly (socket removed, recording readable, the change recorded as attach:NAME).
# Usage: benchmarks/tmux_attach_smoke.sh [OUT.json]   (needs tmux)
set -euo pipefail
source "$(dirname "$0")/tmux_common.sh"
OUT=${1:-benchmarks/results/tui_tmux_attach.json}

S="c2tui-attach-$$"
DIR=$(mktemp -d)
trap 'tmux kill-session -t "$S" 2>/dev/null || true; rm -rf "$DIR"' EXIT
SOCK="$DIR/prover.sock"
tmux new-session -d -s "$S" -x 160 -y 60 \
  "TERM=xterm-256color $PY -m c2tui record --backend sim --profile tiny --time-scale 0.3 --duration 300 -o $DIR/run.jsonl --listen $SOCK; echo RECORD-EXIT=\$?; sleep 60"
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
tmux split-window -v -l 52 -t "$S" \
  "TERM=xterm-256color $PY -m c2tui attach $SOCK --name tmux; echo ATTACH-EXIT=\$?; sleep 60"

"$PY" - "$S" "$DIR" "$OUT" <<'PYEOF'
import json, re, subprocess, sys, time
session, tmp, out = sys.argv[1:4]
rec_pane, att_pane = f"{session}:0.0", f"{session}:0.1"

def cap(p: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", p], capture_output=True, text=True).stdout

def until(pred, limit=20.0):
    end = time.time() + limit
    while time.time() < end:
        r = pred()
        if r:
            return r
        time.sleep(0.25)
    return None

res = {"seen": {}}
t0 = time.time()
res["seen"]["attach_header_device"] = bool(until(lambda: re.search(r"mem_sync\s+device", cap(att_pane))))
res["seen"]["record_header_device"] = bool(until(lambda: "/device" in cap(rec_pane)))
subprocess.run(["tmux", "send-keys", "-t", att_pane, "m"])
res["seen"]["attach_header_stream"] = bool(until(lambda: re.search(r"mem_sync\s+stream", cap(att_pane))))
res["seen"]["record_header_stream"] = bool(until(lambda: "/stream" in cap(rec_pane)))
res["switch_seen_in_both_s"] = round(time.time() - t0, 2)
subprocess.run(["tmux", "send-keys", "-t", att_pane, "q"])
res["attach_exit"] = until(lambda: (m := re.search(r"ATTACH-EXIT=(\d+)", cap(att_pane))) and int(m.group(1)) + 1000)
res["attach_exit"] = None if res["attach_exit"] is None else res["attach_exit"] - 1000
line = cap(rec_pane)
res["record_still_running"] = "RECORD-EXIT" not in line
subprocess.run(["tmux", "send-keys", "-t", rec_pane, "C-c"])
rc = until(lambda: (m := re.search(r"RECORD-EXIT=(\d+)", cap(rec_pane))) and int(m.group(1)) + 1000, 60)
res["record_exit"] = None if rc is None else rc - 1000
import os
res["socket_removed"] = not os.path.exists(f"{tmp}/prover.sock")
changes = []
with open(f"{tmp}/run.jsonl") as f:
    next(f)
    for l in f:
        d = json.loads(l)
        if d["kind"] == "mode_change":
            changes.append([d["knob"], d["new"], d["source"]])
res["recorded_changes"] = changes
res["ok"] = (all(res["seen"].values()) and res["attach_exit"] == 0 and res["record_still_running"]
             and res["record_exit"] == 3 and res["socket_removed"] and ["mem_sync", "stream", "attach:tmux"] in changes)
print(json.dumps(res, indent=1))
if not res["ok"]:
    print("---- record pane ----\n" + cap(rec_pane) + "\n---- attach pane ----\n" + cap(att_pane), file=sys.stderr)
with open(out, "w") as f:
    json.dump(res, f, indent=1)
sys.exit(0 if res["ok"] else 1)
PYEOF
