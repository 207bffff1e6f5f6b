"""benchmarks/sass_counts.py's parts that run without a GPU: the opcode classes, the nvdisasm
parser, and the NVRTC cubin paths (benchmarks/nvrtc_cubin.py) with CuPy faked; with libnvrtc
and nvdisasm present (pip install nvidia-cuda-nvrtc nvidia-cuda-nvdisasm), a real NVRTC cubin
for sm_90 disassembled and counted."""
from __future__ import annotations

import sys
import types
from collections import Counter

import pytest

import nvrtc_cubin
import sass_counts

ELF = b"\x7fELF\x02\x01\x01" + bytes(57)

NVDISASM_SAMPLE = """
        .type           $k$probe_mul,@function
        /*0000*/                   IMAD.WIDE.U32 R2, R4, R5, RZ ;
        /*0010*/                   IMAD.WIDE.U32.X R6, R4, R7, R2, P0 ;
        /*0020*/              @P1  IADD3.X R8, R8, R9, RZ, P0, !PT ;
        /*0030*/                   IMAD.HI.U32 R10, R4, R5, RZ ;
        /*0040*/                   IMAD.MOV.U32 R11, RZ, RZ, R2 ;
        /*0050*/                   RET.REL.NODEC R20 `(k) ;
        .type           k,@function
        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0010*/                   EXIT ;
"""


def test_opcode_classes_and_the_parser() -> None:
    funcs = sass_counts.parse_nvdisasm(NVDISASM_SAMPLE)
    assert list(funcs) == ["$k$probe_mul", "k"]
    c = Counter(sass_counts.opclass(i) for i in funcs["$k$probe_mul"])
    assert c == {"IMAD.WIDE": 2, "IADD3": 1, "IMAD.HI": 1, "IMAD": 1, "RET": 1}
    s = sass_counts.summarize(funcs["$k$probe_mul"])
    assert s["imad_cycles"] == 4 * 3 + 1 and s["alu_cycles"] == 2 and s["bound_by"] == "imad"
    assert s["sum_cycles"] == 13 + 1  # the model call A's products fit: IMAD cycles + ALU instructions
    assert sass_counts.callee("$k$_ZN2FeI3FpPE8mul_callES1_") == "_ZN2FeI3FpPE8mul_callES1_"
    assert [sass_counts.opclass(i) for i in funcs["k"]] == ["LDG", "EXIT"]


def _fake_cupy(monkeypatch, result) -> list:
    """cupy, cupy.cuda.compiler and cupy._core.core as the GPU machine's CuPy 14 shows them."""
    calls: list = []
    compiler = types.SimpleNamespace(
        compile_using_nvrtc=lambda src, opts, arch: calls.append((opts, arch)) or (result, None),
        _get_nvrtc_version=lambda: (13, 2))
    core = types.SimpleNamespace(assemble_cupy_compiler_options=lambda o: ("-I/cccl",) + o + ("-I/cupy",))
    cupy = types.ModuleType("cupy")
    cuda = types.ModuleType("cupy.cuda")
    cuda.compiler = compiler
    cupy.cuda = cuda
    _core = types.ModuleType("cupy._core")
    _core.core = core
    for name, mod in (("cupy", cupy), ("cupy.cuda", cuda), ("cupy.cuda.compiler", compiler),
                      ("cupy._core", _core), ("cupy._core.core", core)):
        monkeypatch.setitem(sys.modules, name, mod)
    return calls


def test_cupys_nvrtc_gives_the_cubin(monkeypatch) -> None:
    calls = _fake_cupy(monkeypatch, ELF)
    cubin, how = nvrtc_cubin.nvrtc_cubin("src", ("-DX=1",), "sm_90")
    assert cubin == ELF and how["path"] == "cupy.compile_using_nvrtc" and how["nvrtc_version"] == "13.2"
    opts, arch = calls[0]
    assert arch == "90" and opts == ("-I/cccl", "-DX=1", "-I/cupy", "-ftz=true")


def test_ptx_from_cupy_falls_back_to_libnvrtc(monkeypatch) -> None:
    _fake_cupy(monkeypatch, ".version 9.0\n.target sm_90\n")  # CUPY_COMPILE_WITH_PTX=1: PTX text
    monkeypatch.setattr(nvrtc_cubin, "via_ctypes", lambda s, o, a: (ELF, {"path": "ctypes libnvrtc"}))
    assert nvrtc_cubin.nvrtc_cubin("src", (), "sm_90")[1]["path"] == "ctypes libnvrtc"


def test_no_path_says_why_each_failed(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    monkeypatch.setattr(nvrtc_cubin, "find_libnvrtc", lambda: None)
    monkeypatch.delenv("C2TUI_LIBNVRTC", raising=False)
    with pytest.raises(nvrtc_cubin.NoCubin) as e:
        nvrtc_cubin.nvrtc_cubin("src", (), "sm_90")
    assert "via_cupy: no CuPy" in str(e.value) and "no libnvrtc found" in str(e.value)
    with pytest.raises(ValueError):
        nvrtc_cubin.arch_digits("gfx90a")


def test_compile_nvrtc_writes_the_cubin_and_says_how(monkeypatch, tmp_path) -> None:
    seen = {}

    def fake(code, opts, arch):
        seen.update(code=code, opts=opts, arch=arch)
        return ELF, {"path": "fake"}
    monkeypatch.setattr(nvrtc_cubin, "nvrtc_cubin", fake)
    out = tmp_path / "probe_eo_k.cubin"
    assert sass_counts.compile_nvrtc(sass_counts.PROBE, ("FIELD_MUL=eo_k",), out, "sm_90") == ""
    assert out.read_bytes() == ELF and sass_counts.COMPILED["probe_eo_k.cubin"] == {"path": "fake"}
    assert seen["code"].startswith("// headers ") and "-DFIELD_MUL=eo_k" in seen["opts"] and seen["arch"] == "sm_90"


TINY = """
extern "C" __global__ void tiny(const unsigned* a, unsigned long long* o)
{
    o[threadIdx.x] = (unsigned long long)a[threadIdx.x] * a[threadIdx.x + 1] + o[threadIdx.x];
}
"""


@pytest.mark.skipif(not nvrtc_cubin.find_libnvrtc() or not sass_counts.find_tool("nvdisasm"),
                    reason="needs libnvrtc and nvdisasm (pip install nvidia-cuda-nvrtc nvidia-cuda-nvdisasm)")
def test_real_nvrtc_cubin_for_sm90_is_counted(tmp_path) -> None:
    """No GPU: NVRTC compiles for a real architecture and hands back SASS, which nvdisasm reads."""
    cubin, how = nvrtc_cubin.nvrtc_cubin(TINY, ("-std=c++17",), "sm_90", use_cupy=False)
    assert nvrtc_cubin.is_cubin(cubin) and how["path"] == "ctypes libnvrtc"
    path = tmp_path / "tiny.cubin"
    path.write_bytes(cubin)
    funcs = sass_counts.disassemble(sass_counts.find_tool("nvdisasm"), path)
    assert "tiny" in funcs
    assert Counter(sass_counts.opclass(i) for i in funcs["tiny"])["IMAD.WIDE"] >= 1
