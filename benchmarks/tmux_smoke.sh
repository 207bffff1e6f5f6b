#!/usr/bin/env bash
# Smoke test of the real app in a real terminal: start `c2tui run --backend sim` in tmux and,
# within 10 s, see a lock holder, a VRAM bar with live buffers and a phase bar that advances
# (tmux capture-pane, twice a second); then press q - with partitions in flight it asks - and
# x (quit now), and see the app exit with its summary (status 3 after quit now, 0 after a plain q).
# Usage: benchmarks/tmux_smoke.sh [OUT.json]   (needs tmux: apt-get install tmux)
set -euo pipefail
source "$(dirname "$0")/tmux_common.sh"
OUT=${1:-benchmarks/results/tui_tmux_smoke.json}

S="c2tui-smoke-$$"
DIR=$(mktemp -d)
trap 'tmux kill-session -t "$S" 2>/dev/null || true; rm -rf "$DIR"' EXIT
# TERM/colour set explicitly so the result does not depend on the caller's terminal
tmux new-session -d -s "$S" -x 160 -y 48 \
  "TERM=xterm-256color $PY -m c2tui --backend sim --record $DIR/session.jsonl; echo C2TUI-EXIT=\$?; sleep 60"
T0=$(date +%s.%N)

"$PY" - "$S" "$DIR" "$T0" "$OUT" <<'PYEOF'
import json, re, subprocess, sys, time
session, tmp, t0, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
LIMIT = 10.0
lock_re = re.compile(r"\b(mem|compute)\s+● (\S+)")
vram_re = re.compile(r"VRAM [█▓]+")
row_re = re.compile(r"^(s\d+p\d+)\s+\d*\s+\S+\s+([█▌░·]+)")
seen = {}
first_fill: dict[str, int] = {}

def capture(joined: bool = False) -> str:
    # -J joins lines the terminal wrapped (the quit line may be wider than the pane)
    return subprocess.run(["tmux", "capture-pane", "-p", *(["-J"] if joined else []), "-t", session],
                          capture_output=True, text=True).stdout

last = ""
while time.time() - t0 < LIMIT and len(seen) < 3:
    screen = capture()
    last = screen
    now = round(time.time() - t0, 2)
    m = lock_re.search(screen)
    if m and "lock_holder" not in seen:
        seen["lock_holder"] = {"t": now, "lock": m.group(1), "holder": m.group(2)}
    if vram_re.search(screen) and "vram_bar" not in seen:
        seen["vram_bar"] = {"t": now}
    for line in screen.splitlines():
        # rows of the partition table sit inside its border: strip box characters first
        cells = line.split("│")
        for cell in cells:
            r = row_re.match(cell.strip())
            if not r:
                continue
            part, bar = r.group(1), r.group(2)
            fill = bar.count("█") * 2 + bar.count("▌")
            if part in first_fill and fill > first_fill[part] and "phase_bar_advanced" not in seen:
                seen["phase_bar_advanced"] = {"t": now, "part": part, "from": first_fill[part], "to": fill}
            first_fill.setdefault(part, fill)
    time.sleep(0.5)

ok = len(seen) == 3
subprocess.run(["tmux", "send-keys", "-t", session, "q"])
exit_line = ""
dialog = False
for i in range(60):
    time.sleep(0.25)
    cap = capture()
    if not dialog and "in flight:" in cap and "quit now" in cap:
        dialog = True  # q with work in flight asks; x = quit now
        subprocess.run(["tmux", "send-keys", "-t", session, "x"])
    m = re.search(r"C2TUI-EXIT=(\d+)", cap)
    if m:
        cap = capture(joined=True)
        exit_line = [l for l in cap.splitlines() if l.startswith("c2tui:")][:1]
        exit_code = int(m.group(1))
        break
else:
    exit_code = None
# the session's recording (run --record): readable, and each partition abandoned by "quit now" named
import json as _j
notes, ended = [], False
try:
    with open(f"{tmp}/session.jsonl") as f:
        next(f)
        for l in f:
            d = _j.loads(l)
            notes += [d["text"]] if d["kind"] == "note" and d["text"].endswith("(quit now)") else []
            ended = ended or d["kind"] == "run_ended"
except (OSError, StopIteration, ValueError):
    pass
rec_line = bool(exit_line) and "; recording: " in exit_line[0]  # one line: how it went and the recording's path
rec_ok = ended and rec_line and (not dialog or bool(notes))
want_exit = 3 if dialog else 0  # quit now abandons in-flight work: 3, as Ctrl-C (docs/exit-codes.md)
result = {"ok": ok and exit_code == want_exit and rec_ok, "recording_ended": ended, "abandoned_notes": notes, "limit_s": LIMIT, "seen": seen, "quit_exit_code": exit_code, "quit_dialog": dialog,
          "summary_line": exit_line[0] if exit_line else None}
print(json.dumps(result, indent=1))
if not result["ok"]:
    print("---- last screen ----\n" + last, file=sys.stderr)
with open(out, "w") as f:
    json.dump(result, f, indent=1)
sys.exit(0 if result["ok"] else 1)
PYEOF
