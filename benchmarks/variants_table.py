"""The short table of benchmarks/kernels_native.sh (issue 38's device call), from what it wrote:
bench_variants.py's figures beside sppark's rows of the same call, bench_field.py's product
rates, the section's variants, the GPU tests' tally; and `--pick` (the settings the section
compares against the baseline: the MSM's fastest field product, then the NTT's faster radix
with that product's Fr class).

  python benchmarks/variants_table.py DIR            # the table (markdown), from DIR's files
  python benchmarks/variants_table.py DIR --pick     # e.g. "field_mul=eo_k2,ntt_radix=4"
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SAME_FR = {"eo_k2": "eo_k", "eo_sq2": "eo_sq"}
PEER = {"ntt_nat": "ntt_fr", "ntt_nr": "ntt_fr_nr", "msm_g1": "g1_msm"}


def load(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def peer_rows(d: Path) -> dict:
    out = {}
    try:
        for line in (d / "sppark.jsonl").read_text().splitlines():
            if line.strip().startswith("{"):
                r = json.loads(line)
                if "ms" in r:
                    out[(r.get("op"), r.get("log2"))] = r["ms"]
    except (OSError, ValueError):
        pass
    return out


def figure(res: dict, prefix: str) -> dict | None:
    """The largest size of a figure kind, e.g. 'msm_g1' -> the msm_g1_2^24 row."""
    rows = [f for f in res.get("figures", []) if re.fullmatch(prefix + r"_2\^\d+", f["figure"])]
    return max(rows, key=lambda f: int(f["figure"].rsplit("^", 1)[1])) if rows else None


def pick(res: dict) -> str:
    settings = res.get("variants", {})
    msm = figure(res, "msm_g1") or figure(res, "msm_g1_pre")
    ok = lambda f: {k: v for k, v in f["variants"].items() if v.get("equal_to_first")}  # noqa: E731
    best = dict(settings.get(min(ok(msm), key=lambda k: ok(msm)[k]["median"]), {})) if msm and ok(msm) else {}
    fm = best.get("field_mul", "eo_sq")
    ntt = figure(res, "ntt_h") or figure(res, "ntt_nat")
    if ntt:
        same = {k: v for k, v in ok(ntt).items()
                if SAME_FR.get(settings.get(k, {}).get("field_mul", "eo_sq"), settings.get(k, {}).get("field_mul", "eo_sq"))
                == SAME_FR.get(fm, fm)}
        if same:
            r = settings.get(min(same, key=lambda k: same[k]["median"]), {}).get("ntt_radix", 2)
            if r != 2:
                best["ntt_radix"] = r
    best = {k: v for k, v in best.items() if k in ("field_mul", "ntt_radix")}
    return ",".join(f"{k}={v}" for k, v in best.items())


def table(d: Path) -> str:
    lines = []
    res = load(d / "variants.json") or {}
    peer = peer_rows(d)
    if res.get("figures"):
        names = list(res["variants"])
        lines.append("| figure (ms, median [95%]) | " + " | ".join(names) + " | sppark |")
        lines.append("|---" * (len(names) + 2) + "|")
        for f in res["figures"]:
            kind, L = f["figure"].rsplit("_2^", 1)
            cells = []
            for n in names:
                v = f["variants"].get(n)
                cells.append("" if v is None else f"{v['median']:.3f} [{v['lo']:.2f},{v['hi']:.2f}]"
                             + ("" if v.get("equal_to_first") else " DIFFERS"))
            pm = peer.get((PEER.get(kind), int(L)))
            lines.append(f"| {f['figure']} | " + " | ".join(cells) + f" | {pm if pm else ''} |")
        lines.append(f"picked for the section: {pick(res) or '(baseline)'}")
    fb = load(d / "field.json")
    if fb:
        lines.append("\n| product variant | correct | Fr mul/s | Fp mul/s (call) | Fr sqr/s | Fp sqr/s |")
        lines.append("|---|---|---|---|---|---|")
        for v, r in fb.get("variants", {}).items():
            p = r.get("products_per_s", {})
            lines.append(f"| {v} | {r.get('correct')} | {p.get('fr_chain', 0):.3g} | {p.get('fp_chain_call', 0):.3g} | "
                         f"{p.get('fr_sqr_chain', 0):.3g} | {p.get('fp_sqr_chain', 0):.3g} |")
    sec = load(d / "section.json")
    if sec:
        lines.append("\n| section 2^L (s, median) | variant | NTT-H | G1 MSMs | B_G2 | enqueued whole | equal |")
        lines.append("|---|---|---|---|---|---|---|")
        for row in sec:
            for name, v in row.get("variants", {}).items():
                sp = v.get("split_s", {})
                lines.append(f"| 2^{row['log2']} | {name} | {sp.get('ntt_h', '')} | {sp.get('msm_g1', '')} | "
                             f"{sp.get('b_g2', '')} | {v.get('enqueued_whole_s', '')} | {v.get('equal_to_first', True)} |")
            if "error" in row:
                lines.append(f"| 2^{row['log2']} | ERROR {row['error'][:120]} |")
    try:
        t = (d / "pytest.txt").read_text()
        tail = [x for x in t.splitlines() if re.search(r"\d+ (passed|failed)", x)]
        lines.append("\nGPU tests: " + (tail[-1].strip("= ") if tail else "no summary line (cut?)"))
    except OSError:
        lines.append("\nGPU tests: not run")
    r1 = load(d / "r1cs.json")
    for row in (r1 or {}).get("rows", []):
        lines.append(f"R1CS products 2^{row.get('log2')}: host {row.get('host_matvecs_ms')} ms ({row.get('host_matvecs_cpu_ms')} "
                     f"CPU ms, one thread), GPU {row.get('gpu_matvecs_ms')} ms + z upload {row.get('gpu_upload_zpack_ms', row.get('gpu_upload_z_cls_ms'))} "
                     f"ms, equal={row.get('equal')}")
    sc = load(d / "sass_counts.json")
    if sc:
        for v, r in sc.get("variants", {}).items():
            p = r.get("probe", {})
            lines.append(f"SASS {v}: " + ", ".join(f"{k} {p[k]['total']} insns / {p[k]['imad_cycles']} IMAD cyc"
                                                   for k in ("fr_mul", "fp_mul", "xyzz_madd") if k in p)
                         + (f" ERROR {r['error'][:100]}" if "error" in r else ""))
    return "\n".join(lines)


def main() -> int:
    d = Path(sys.argv[1])
    if "--pick" in sys.argv:
        print(pick(load(d / "variants.json") or {}))
        return 0
    print(table(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
