"""The kernel settings a device call's later runs should use, from bench_gpu_section.py's rows:
the variant with the shortest section enqueued whole at the largest size measured, among those
whose group elements equal the first variant's. Prints `export C2TUI_<FIELD>=<value>` lines
(nothing when the file or a usable row is missing: the defaults stand).

    eval "$(python3 benchmarks/pick_settings.py section.json)"
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from prover.settings import KernelSettings


def pick(doc: dict | list) -> tuple[str, dict[str, str]] | None:
    rows = [r for r in (doc if isinstance(doc, list) else doc.get("rows", [])) if r.get("variants")]
    if not rows:
        return None
    top = max(rows, key=lambda r: r["log2"])
    ok = {k: v for k, v in top["variants"].items() if v.get("equal_to_first", True) and "enqueued_whole_s" in v}
    if not ok:
        return None
    name = min(ok, key=lambda k: ok[k]["enqueued_whole_s"])
    return name, ok[name]["settings"]


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if path is None or not path.exists():
        print("# no section results: the defaults stand")
        return 0
    got = pick(json.loads(path.read_text()))
    if got is None:
        print("# no usable section row: the defaults stand")
        return 0
    name, settings = got
    print(f"# fastest section: {name} {settings}")
    for field, value in settings.items():
        print(f"export {KernelSettings.env_name(field)}={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
