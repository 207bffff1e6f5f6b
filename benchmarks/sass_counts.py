"""Count the SASS instructions of the field products, the XYZZ formulas and the kernels, by
opcode class, with registers and spills: the numbers behind docs/kernels.md's roofline table.

  python benchmarks/sass_counts.py --out FILE.json [--variants eo_sq,eo_k] [--compiler nvcc|nvrtc]
                                   [--modules] [--disasm DIR] [--arch sm_90]

--compiler nvcc (here, no GPU): `nvcc -arch=sm_90 -cubin` (C2TUI_NVCC or /usr/local/bin/nvcc).
--compiler nvrtc: NVRTC, the compiler the prover uses, asked for the cubin directly
(benchmarks/nvrtc_cubin.py: CuPy's compile_using_nvrtc on the GPU machine, else libnvrtc through
ctypes, which needs no GPU: `pip install nvidia-cuda-nvrtc`); the JSON's "compiled" says which. The disassembler is nvdisasm (names every callee: the
Fp products and curve formulas are calls in the MSM builds) from --disasm, PATH, CUDA_HOME or the
nvidia-cuda-nvdisasm wheel; cuobjdump -res-usage gives registers/stack per function.

Per product variant: benchmarks/sass_probe.cu (each product and formula a function of its own),
and with --modules the real ntt.cu and msm_g1.cu (registers, stack and spills of every kernel).
The pipe model (docs/kernels.md): on sm_90 a warp's IMAD.WIDE / IMAD.HI occupies the integer
multiply pipe of its SM sub-partition 4 cycles, an IMAD (incl. .X, .MOV, .SHL, .IADD) about 1
(calibrated on the measured Fr product); the other integer ops (IADD3, LOP3, SEL, SHF, ISETP,
...) go to the ALU pipe at 2 cycles a warp; one instruction issues a cycle. A product's floor is
max(IMAD cycles, ALU cycles, issue); the H200's measured products fit IMAD cycles + ALU
instructions better (docs/kernels.md, "Measured against the counts"), reported beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import harness  # noqa: F401  (the repository root on sys.path)

from prover.kernels.loader import CUDA_DIR, headers_digest

HERE = Path(__file__).resolve().parent
PROBE = HERE / "sass_probe.cu"
# MSM build of the probe and of msm_g1.cu: Fp products are calls (the default g1_variant "call")
PROBE_DEFINES = ("FP_MUL_CALL=1",)
# --modules: (key in the JSON, source, defines); ntt.cu+NTT_R4 is ntt_radix=4's build
MODULES = (("ntt.cu", "ntt.cu", ()), ("ntt.cu+NTT_R4", "ntt.cu", ("NTT_R4",)), ("msm_g1.cu", "msm_g1.cu", PROBE_DEFINES))
# H200 (SXM): 132 SMs x 4 sub-partitions, boost clock (the measured rates say it holds under load)
SMS, SUBS, CLOCK_HZ = 132, 4, 1.98e9
HBM_BYTES_S = 4.8e12

_FUNC_RE = re.compile(r"^\s*\.type\s+(\S+),@function")
_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


def log(msg: str) -> None:
    print(f"[sass_counts {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ------------------------------------------------------------------------------ tools --
def find_tool(name: str, hint: str | None = None) -> str | None:
    cands = [Path(hint) / name] if hint else []
    w = shutil.which(name)
    if w:
        cands.append(Path(w))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            cands.append(Path(os.environ[env]) / "bin" / name)
    cands += [Path("/usr/local/cuda/bin") / name, Path(sys.prefix) / "bin" / name]
    for site in map(Path, sys.path):
        cands += list((site / "nvidia").glob(f"cu*/bin/{name}")) if (site / "nvidia").is_dir() else []
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def compile_nvcc(src: Path, defines: tuple[str, ...], out: Path, arch: str = "sm_90") -> str:
    nvcc = os.environ.get("C2TUI_NVCC") or find_tool("nvcc") or "/usr/local/bin/nvcc"
    cmd = [nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-I" + str(CUDA_DIR), "-std=c++17",
           *("-D" + d for d in defines), "-o", str(out), str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"nvcc failed on {src.name}: {r.stderr[-2000:]}")
    return r.stderr  # ptxas -v


def compile_nvrtc(src: Path, defines: tuple[str, ...], out: Path, arch: str = "sm_90") -> str:
    """NVRTC, the compiler the prover uses (nvrtc_cubin.py: CuPy's compile_using_nvrtc, else
    libnvrtc through ctypes; CuPy's disk cache is not read: CuPy 14 fixes its directory at
    import). The header hash is stamped into the source as prover.kernels.loader does."""
    from nvrtc_cubin import nvrtc_cubin

    code = f"// headers {headers_digest()}\n" + src.read_text()
    opts = ("-I" + str(CUDA_DIR), "-std=c++17", *("-D" + d for d in defines))
    cubin, how = nvrtc_cubin(code, opts, arch)
    out.write_bytes(cubin)
    COMPILED[out.name] = how
    return ""  # NVRTC has no ptxas -v log: registers and stack come from cuobjdump -res-usage


COMPILED: dict[str, dict] = {}  # cubin name -> how NVRTC made it (path, version, options)


# ---------------------------------------------------------------------------- parsing --
def opclass(insn: str) -> str:
    """The opcode class counted: IMAD.WIDE (incl. .U32/.X), IMAD.HI, IMAD (the rest), else the
    mnemonic (predicate guard and modifiers dropped, e.g. IADD3.X -> IADD3, LDG.E.128 -> LDG)."""
    words = insn.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    op = words[0] if words else "?"
    base = op.split(".")[0]
    if base == "IMAD":
        mods = op.split(".")[1:]
        if "WIDE" in mods:
            return "IMAD.WIDE"
        if "HI" in mods:
            return "IMAD.HI"
        return "IMAD"
    return base


def parse_nvdisasm(text: str) -> dict[str, list[str]]:
    """{function (kernel, or '$kernel$callee'): [instruction text, ...]} in address order."""
    funcs: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        m = _FUNC_RE.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = _INSN_RE.match(line)
        if m and cur is not None:
            funcs[cur].append(m.group(1))
    return funcs


def callee(name: str) -> str:
    """'$kernel$_ZN2FeI3FpPE8mul_callES1_' -> '_ZN2FeI3FpPE8mul_callES1_' (the callee's own name)."""
    return name.split("$")[-1] if name.startswith("$") else name


def res_usage(cuobjdump: str | None, cubin: Path) -> dict[str, dict]:
    if not cuobjdump:
        return {}
    r = subprocess.run([cuobjdump, "-res-usage", str(cubin)], capture_output=True, text=True)
    out, fn = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            fn = m.group(1)
            continue
        if fn and "REG:" in line:
            out[fn] = {k.lower(): int(v) for k, v in re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", line)}
            fn = None
    return out


def ptxas_spills(log_text: str) -> dict[str, dict]:
    """From ptxas -v: per function, bytes of stack frame / spill stores / spill loads, registers."""
    out, fn = {}, None
    for line in log_text.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([^' ]+)'?", line)
        if m:
            fn = m.group(1).rstrip(":")
            out.setdefault(fn, {})
            continue
        if fn:
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
            if m:
                out[fn].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
            m = re.search(r"Used (\d+) registers", line)
            if m:
                out[fn]["regs"] = int(m.group(1))
    return out


# ------------------------------------------------------------------------------ model --
IMAD4 = ("IMAD.WIDE", "IMAD.HI")
ALU = ("IADD3", "LOP3", "SEL", "SHF", "ISETP", "IABS", "LEA", "PRMT", "FLO", "POPC", "BREV", "PLOP3", "P2R", "R2P",
       "VIADD", "IMNMX", "VIMNMX", "BMSK", "SGXT", "LOP")
FP64 = ("DFMA", "DADD", "DMUL", "DSETP", "F2I", "I2F", "F2F")


def pipe_cycles(c: Counter) -> dict:
    """Warp cycles on one SM sub-partition: integer multiply pipe, ALU pipe, FP64 pipe, issue.
    Calibrated on the H200's measured products: the eo_sq Fr product (128 IMAD.WIDE + 26 IMAD)
    at 6.11e10/s is 537 cycles a warp = 4 x 128 + 1 x 26, so a plain IMAD costs the wide pipe
    about one cycle (ptxas's IMAD.MOV/IADD/SHL also issue to the FMA-lite half)."""
    imad = 4 * sum(c[k] for k in IMAD4) + c["IMAD"]
    alu = 2 * sum(c[k] for k in ALU)
    fp64 = 2 * sum(c[k] for k in FP64)  # H200: 64 FP64 FMA a clock an SM = 16 a sub-partition
    issue = sum(c.values())
    bound = max(imad, alu, fp64, issue)
    # the H200's products (call A, 2026-12-03; docs/kernels.md "Measured against the counts") cost
    # about IMAD cycles + one cycle per ALU instruction, not the max(): both are reported
    summed = imad + alu // 2
    return {"imad_cycles": imad, "alu_cycles": alu, "fp64_cycles": fp64, "issue_cycles": issue, "bound_cycles": bound,
            "bound_by": max((imad, "imad"), (alu, "alu"), (fp64, "fp64"), (issue, "issue"))[1],
            "floor_per_s": SMS * SUBS * CLOCK_HZ * 32 / bound if bound else None,
            "sum_cycles": summed, "sum_per_s": SMS * SUBS * CLOCK_HZ * 32 / summed if summed else None}


def summarize(insns: list[str]) -> dict:
    c = Counter(opclass(i) for i in insns)
    return {"total": sum(c.values()), "classes": dict(c.most_common()), **pipe_cycles(c)}


def find(funcs: dict[str, list[str]], kernel: str, needle: str) -> str | None:
    for name in funcs:
        if name.startswith(f"${kernel}$") and needle in name:
            return name
    return None


def probe_counts(funcs: dict[str, list[str]]) -> dict:
    """The products (probe_*), and each XYZZ formula = its own body + the products it calls."""
    out: dict = {}
    for op in ("fr_mul", "fr_sqr", "fr_add", "fr_sub", "fp_mul", "fp_sqr", "fp_add", "fp_sub"):
        name = find(funcs, "sass_probe", f"probe_{op}")
        if name:
            out[op] = summarize(funcs[name])
    mul = find(funcs, "sass_probe", "8mul_call")
    sqr = find(funcs, "sass_probe", "8sqr_call")
    if mul:
        out["fp_mul_call"] = summarize(funcs[mul])
    if sqr:
        out["fp_sqr_call"] = summarize(funcs[sqr])
    mul2 = find(funcs, "sass_probe", "9mul2_call")
    if mul2:
        out["fp_mul2_call"] = summarize(funcs[mul2])
    # each formula: its own body (static: the rare branches' code included) + every product it
    # calls (CALL targets named *mul_call / *sqr_call / *mul2_call), counted once a call site
    formulas = {"xyzz_madd": "10add_affine", "xyzz_add": "4XyzzI2FeI3FpPEE3add", "xyzz_dbl": "4XyzzI2FeI3FpPEE3dbl"}
    for key, needle in formulas.items():
        name = find(funcs, "sass_probe", needle)
        if not name:
            continue
        body = Counter(opclass(i) for i in funcs[name])
        tot, products = Counter(body), Counter()
        for i in funcs[name]:
            if not i.split()[0].startswith("CALL"):
                continue
            m = re.search(r"\(\$?(\S+?)\)", i)
            target = next((f for f in funcs if m and f.endswith(m.group(1).split("$")[-1])), None)
            kind = next((k for k in ("mul2_call", "sqr_call", "mul_call") if target and k in target), None)
            if kind:
                products[kind] += 1
                tot.update(Counter(opclass(x) for x in funcs[target]))
        out[key] = {"body": dict(body.most_common()), "body_total": sum(body.values()), "calls": dict(products),
                    "total": sum(tot.values()), "classes": dict(tot.most_common()), **pipe_cycles(tot)}
    return out


def module_table(funcs: dict[str, list[str]], usage: dict, spills: dict) -> dict:
    out = {}
    for name, insns in funcs.items():
        if name.startswith("$"):
            continue
        out[name] = {"static_insns": len(insns), **usage.get(name, {}),
                     **{k: v for k, v in spills.get(name, {}).items() if k != "regs"}}
    return out


def disassemble(nvdisasm: str, cubin: Path) -> dict[str, list[str]]:
    r = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"nvdisasm failed: {r.stderr[-500:]}")
    return parse_nvdisasm(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", default="eo_sq")
    ap.add_argument("--compiler", choices=("nvcc", "nvrtc"), default="nvcc")
    ap.add_argument("--modules", action="store_true", help="also ntt.cu (radix 2 and 4) and msm_g1.cu (registers, spills)")
    ap.add_argument("--disasm", default=None, help="directory holding nvdisasm / cuobjdump")
    ap.add_argument("--arch", default="sm_90", help="the architecture compiled for (nvcc -arch, NVRTC --gpu-architecture)")
    args = ap.parse_args()
    nvdisasm, cuobjdump = find_tool("nvdisasm", args.disasm), find_tool("cuobjdump", args.disasm)
    if not nvdisasm:
        print("sass_counts: no nvdisasm found (pip install nvidia-cuda-nvdisasm, or --disasm DIR)", file=sys.stderr)
        return 2
    comp = compile_nvcc if args.compiler == "nvcc" else compile_nvrtc
    res: dict = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "compiler": args.compiler,
                 "nvdisasm": nvdisasm, "model": {"sms": SMS, "subpartitions": SUBS, "clock_hz": CLOCK_HZ,
                                                 "imad_wide_cycles": 4, "imad_cycles": 1, "alu_cycles": 2},
                 "variants": {}}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as td:
        for v in [x for x in args.variants.split(",") if x]:
            row: dict = {}
            try:
                cub = Path(td) / f"probe_{v}.cubin"
                vlog = comp(PROBE, PROBE_DEFINES + (f"FIELD_MUL={v}",), cub, args.arch)
                row["probe"] = probe_counts(disassemble(nvdisasm, cub))
                row["probe_resources"] = {**res_usage(cuobjdump, cub)}
                if vlog:
                    row["probe_ptxas"] = ptxas_spills(vlog)
                if args.modules:
                    for key, mod, defs in MODULES:
                        mc = Path(td) / f"{key.replace('+', '_')}_{v}.cubin"
                        mlog = comp(CUDA_DIR / mod, defs + (f"FIELD_MUL={v}",), mc, args.arch)
                        row[key] = module_table(disassemble(nvdisasm, mc), res_usage(cuobjdump, mc), ptxas_spills(mlog))
            except Exception as e:  # one variant's failure is reported, the others still counted
                row["error"] = f"{e.__class__.__name__}: {str(e)[-1500:]}"
            res["variants"][v] = row
            res["compiled"] = COMPILED  # nvrtc: which path, NVRTC version and options made each cubin
            out.write_text(json.dumps(res, indent=1))
            p = row.get("probe", {})
            log(f"{v}: " + ", ".join(f"{k} {p[k]['total']} ({p[k]['bound_cycles']} cyc)" for k in
                                     ("fr_mul", "fr_sqr", "fp_mul", "fp_sqr", "xyzz_madd") if k in p)
                + (f"  ERROR {row['error'][:200]}" if "error" in row else ""))
    print(table(res))
    return 0 if all("error" not in r for r in res["variants"].values()) else 1


def table(res: dict) -> str:
    lines = ["| variant | op | SASS | IMAD.WIDE+HI | IMAD | IADD3 | other | IMAD-pipe cyc/warp | floor /s | "
             "IMAD + ALU insns cyc | rate /s at that |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for v, row in res["variants"].items():
        for op in ("fr_mul", "fr_sqr", "fp_mul", "fp_sqr", "xyzz_madd", "xyzz_add", "xyzz_dbl"):
            s = row.get("probe", {}).get(op)
            if not s:
                continue
            c = s["classes"]
            wide = c.get("IMAD.WIDE", 0) + c.get("IMAD.HI", 0)
            other = s["total"] - wide - c.get("IMAD", 0) - c.get("IADD3", 0)
            summed = s.get("sum_cycles", s["imad_cycles"] + s["alu_cycles"] // 2)  # JSON of before the field
            lines.append(f"| {v} | {op} | {s['total']} | {wide} | {c.get('IMAD', 0)} | {c.get('IADD3', 0)} | {other} | "
                         f"{s['imad_cycles']} | {s['floor_per_s']:.3g} | {summed} | "
                         f"{SMS * SUBS * CLOCK_HZ * 32 / summed:.3g} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
