"""NVRTC-dialect CUDA source -> a host shared library of kernel launchers (g++), cached on disk.

1. `g++ -E` over the source with native/cudaemu.h force-included and the options' -I/-D: macro-
   made kernels (MSM_INSTANTIATE) are plain text afterwards, and __global__/__shared__ are kept
   as marker tokens.
2. Every `extern "C" __global__ void name(...) {` found there gets a launcher
   `cudaemu_launch__name` and a `cudaemu_signature__name` (the parameters' kinds, sizes and
   pointee alignments, from the compiler's own view of the types); `extern __shared__ T x[];`
   becomes a pointer to the launch's dynamic buffer, any other __shared__ a static.
3. One `g++ -shared` of that text plus native/runtime.cpp (the fiber scheduler), cached under
   config.cache_dir by a hash of everything that goes into it (each entry keeps kernel.cu and
   generated.cpp, what g++ compiled, for reading).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tests.helpers.cudaemu.config import config
from tests.helpers.cudaemu.errors import CompileException

NATIVE = Path(__file__).resolve().parent / "native"
VERSION = "1"  # bump when the generated code changes meaning (part of the cache key)

GLOBAL, SHARED = "__cudaemu_global__", "__cudaemu_shared__"
# NVRTC options with no meaning on the host: the device's architecture, codegen and debug switches
_DROPPED = ("--gpu-architecture", "-arch", "--use_fast_math", "-use_fast_math", "-lineinfo", "--generate-line-info",
            "-G", "--device-debug", "--fmad", "-fmad", "-ftz", "--ftz", "-prec-div", "--prec-div", "-prec-sqrt",
            "--prec-sqrt", "--maxrregcount", "-maxrregcount", "-dopt", "--dopt", "--extra-device-vectorization",
            "-default-device", "--device-as-default-execution-space", "-rdc", "--relocatable-device-code",
            "-dlto", "--dlink-time-opt", "--device-int128", "-restrict", "--restrict", "-ewp",
            "--extensible-whole-program", "-w", "--disable-warnings")


@dataclass(frozen=True)
class Built:
    library: Path
    kernels: dict[str, tuple[str, ...]]  # kernel name -> its parameters' declarations (for messages)


def gxx() -> str | None:
    return shutil.which(os.environ.get("CUDAEMU_CXX", "g++"))


@functools.lru_cache(maxsize=1)
def _compiler_id() -> str:
    cxx = gxx()
    if cxx is None:
        raise CompileException("g++ not found: the CUDA emulator compiles kernels with it (CUDAEMU_CXX names another)")
    return subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def host_flags(options: Sequence[str]) -> tuple[list[str], str]:
    """NVRTC options -> (g++ preprocessor flags, -std); refuses an option it does not know, so that
    a new build switch is not silently ignored."""
    out, std = [], "c++17"
    it = iter(options)
    for opt in it:
        if opt in ("-I", "--include-path", "-D", "--define-macro"):
            opt = opt + "=" + next(it) if opt.startswith("--") else opt + next(it)
        if opt.startswith("--include-path="):
            out.append("-I" + opt.split("=", 1)[1])
        elif opt.startswith("--define-macro="):
            out.append("-D" + opt.split("=", 1)[1])
        elif opt.startswith(("-I", "-D", "-U")):
            out.append(opt)
        elif opt.startswith(("-std=", "--std=")):
            std = opt.split("=", 1)[1]
        elif opt.split("=", 1)[0] in _DROPPED:
            continue
        else:
            raise CompileException(f"NVRTC option {opt!r} is not known to the CUDA emulator "
                                   "(tests/helpers/cudaemu/build.py: drop it there or map it to g++)")
    return out, std


def _native_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(NATIVE.iterdir()):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def cache_key(code: str, options: Sequence[str]) -> str:
    blob = json.dumps([VERSION, code, list(options), config.opt, config.sanitize, _native_digest(), _compiler_id()])
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def build(code: str, options: Sequence[str]) -> Built:
    """The library for (code, options): from the disk cache, else compiled now."""
    key = cache_key(code, options)
    final = config.cache_dir / key
    meta = final / "kernels.json"
    if meta.exists():
        return Built(final / "kernels.so", {k: tuple(v) for k, v in json.loads(meta.read_text()).items()})
    config.cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=config.cache_dir, prefix="tmp-") as tmp:
        work = Path(tmp)
        kernels = _compile(code, options, work)
        (work / "kernels.json").write_text(json.dumps(kernels))
        out = work / "out"
        out.mkdir()
        for name in ("kernels.so", "kernels.json", "kernel.cu", "generated.cpp"):
            os.replace(work / name, out / name)
        try:
            os.rename(out, final)  # atomic: a concurrent build of the same key wins or loses whole
        except OSError:
            if not meta.exists():
                raise
    return Built(final / "kernels.so", {k: tuple(v) for k, v in kernels.items()})


def _run(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        msg = r.stderr.strip()
        if len(msg) > 6000:
            msg = msg[:6000] + "\n..."
        raise CompileException(f"{what} failed ({' '.join(cmd[:3])} ...):\n{msg}")


def _compile(code: str, options: Sequence[str], work: Path) -> dict[str, list[str]]:
    cxx = gxx()
    if cxx is None:
        raise CompileException("g++ not found: the CUDA emulator compiles kernels with it")
    flags, std = host_flags(options)
    src = work / "kernel.cu"  # NVRTC sees a string: includes resolve through -I only, as here
    src.write_text('#line 1 "kernel.cu"\n' + code)  # messages name the source, not this temporary folder
    pre = work / "kernel.ii"
    _run([cxx, "-E", f"-std={std}", "-x", "c++", "-I", str(NATIVE), "-include", "cudaemu.h", *flags, str(src),
          "-o", str(pre)], "preprocessing")
    text = pre.read_text()
    kernels = find_kernels(text)
    gen = work / "generated.cpp"
    gen.write_text(rewrite(text) + launchers(kernels))
    sanitize = [f"-fsanitize={config.sanitize}"] if config.sanitize else []
    # -fno-strict-aliasing: the kernels reinterpret u32 rows as uint4 and field structs, as CUDA code does
    _run([cxx, f"-std={std}", *config.opt.split(), "-g0", "-shared", "-fPIC", "-fvisibility=hidden",
          "-fno-strict-aliasing", *sanitize, "-I", str(NATIVE), "-x", "c++", str(gen), str(NATIVE / "runtime.cpp"),
          "-o", str(work / "kernels.so")], "compiling the kernels for the host")
    return {name: list(params) for name, params in kernels.items()}


# ------------------------------------------------------------------- preprocessed text ----
_KERNEL = re.compile(r'extern\s*"C"\s*' + GLOBAL + r'\s+void\s+(\w+)\s*\(')
_EXTERN_SHARED = re.compile(r"(?:extern\s+" + SHARED + r"|" + SHARED + r"\s+extern)"
                            r"\s+([^;{}]*?)\s*\b(\w+)\s*\[\s*\]\s*;")
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")


def _close_paren(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
    raise CompileException("unbalanced parentheses in a kernel's parameter list")


def _split_params(params: str) -> tuple[str, ...]:
    out, depth, cur = [], 0, []
    for c in params:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    parts = tuple(" ".join(p.split()) for p in out)
    return () if parts in (("",), ("void",)) else parts


def _next_token(text: str, i: int) -> str:
    """The first character at or after i that is not blank or inside a line marker."""
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text[i] == "#" and (i == 0 or text[i - 1] == "\n"):
            i = text.find("\n", i) + 1 or len(text)
        else:
            return text[i]
    return ""


def find_kernels(text: str) -> dict[str, tuple[str, ...]]:
    """extern "C" __global__ definitions (declarations without a body are skipped)."""
    out: dict[str, tuple[str, ...]] = {}
    for m in _KERNEL.finditer(text):
        close = _close_paren(text, m.end() - 1)
        if _next_token(text, close + 1) == "{":
            out[m.group(1)] = _split_params(text[m.end():close])
    return out


def _brace_depth(text: str, end: int) -> int:
    return text.count("{", 0, end) - text.count("}", 0, end)


def rewrite(text: str) -> str:
    def extern_shared(m: re.Match) -> str:
        ty = _ATTRIBUTE.sub("", m.group(1)).strip()
        name = m.group(2)
        if _brace_depth(text, m.start()) > 0:  # in a function (the usual place): a local pointer
            return f"{ty}* const {name} = reinterpret_cast<{ty}*>(cudaemu_dynamic_shared());"
        # at file scope: every later use reads the current launch's buffer
        return f"\n#define {name} (reinterpret_cast<{ty}*>(cudaemu_dynamic_shared()))\n"

    text = _EXTERN_SHARED.sub(extern_shared, text)
    return text.replace(SHARED, "static").replace(GLOBAL, "")


def launchers(kernels: dict[str, tuple[str, ...]]) -> str:
    lines = ["\n// ---- generated by tests/helpers/cudaemu/build.py ----"]
    vis = '__attribute__((visibility("default")))'
    for name in kernels:  # ::name: the kernel, whatever a launcher's own names are
        lines.append(
            f'extern "C" {vis} int cudaemu_launch__{name}(const unsigned int* cudaemu_g, const unsigned int* cudaemu_b, '
            f"unsigned long long cudaemu_s, void** cudaemu_a, int cudaemu_o, unsigned long long cudaemu_seed, "
            f"const char** cudaemu_e) {{ return cudaemu::launch(&::{name}, cudaemu_g, cudaemu_b, cudaemu_s, cudaemu_a, "
            f"cudaemu_o, cudaemu_seed, cudaemu_e); }}")
        lines.append(f'extern "C" {vis} int cudaemu_signature__{name}(int* cudaemu_k, int* cudaemu_z, int cudaemu_m) '
                     f"{{ return cudaemu::signature(&::{name}, cudaemu_k, cudaemu_z, cudaemu_m); }}")
    return "\n".join(lines) + "\n"
