"""The type checker against its committed baseline: mypy's error count over prover/ and c2tui/
may only go down. `.ci/mypy-baseline` holds the count main had when it last went down; a change
that adds an error fails here with the list, and one that removes some says so (lower the file).
Config: [tool.mypy] in pyproject.toml."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline"


def main() -> int:
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    text = out.stdout + out.stderr
    m = re.search(r"Found (\d+) errors?", text)
    if m is None and "Success" not in text:
        print(f"typecheck: mypy did not run:\n{text[-2000:]}", file=sys.stderr)
        return 2
    n = int(m.group(1)) if m else 0
    base = int(BASELINE.read_text().split()[0])
    if n > base:
        print(text[-8000:])
        print(f"typecheck: {n} mypy errors, above the baseline of {base} (.ci/mypy-baseline): fix what the change added")
        return 1
    note = f"; lower .ci/mypy-baseline to {n}" if n < base else ""
    print(f"typecheck: {n} mypy errors, baseline {base}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
