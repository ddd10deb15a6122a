"""Issue 12: C++ wrapper errors a user can act on (nvcc 13.0, and g++ for the host-only
descriptor headers).

* A wrong qualifier value, array length or register type is a static_assert that says what
  the form needs, in every wrapper family: the allowed values of N, the register count
  (the numbers are the template arguments of the failing check, which nvcc prints) and
  the register type; never the 15-line "no instance of overloaded function matches".
* No static_assert message has a backtick (nvcc prints them as "?").
* Template parameters carry a prefix, so that a user's -DV=3 / -DN=7 leaves them alone.
* The unsupported-target failure (an unresolved extern in ptxas, with no source line) can
  be traced to the call with the recipe of the README: -lineinfo PTX and the inlined_at
  of the call.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import GXX_FLAGS, INCLUDE, NVCC_FLAGS

ROOT = Path(__file__).resolve().parents[1]
WG = ("wgmma_mma_async<{n}, wgmma_mma_async_dtype::{dt}, wgmma_mma_async_atype::{at}, "
      "wgmma_mma_async_btype::{at}>(d, ad, bd, true, imm<1>, imm<1>, imm<0>, imm<0>);")
MMA = ("mma_sync<mma_sync_shape::m16n8k16, mma_sync_alayout::row, mma_sync_blayout::col, "
       "mma_sync_dtype::f32, mma_sync_atype::bf16, mma_sync_btype::bf16, mma_sync_ctype::f32>"
       "(d, a, b, c);")
SP = ("mma_sp<mma_sp_shape::m16n8k32, mma_sp_dtype::f32, mma_sp_atype::f16, mma_sp_btype::f16, "
      "mma_sp_ctype::f32>(d, a, b, c, e, imm<0>);")

# (name, arch, declarations and call, what the diagnostic must say)
CASES = [
    ("wgmma_n_130", "sm_90a", "float d[65];\n" + WG.format(n=130, dt="f32", at="bf16"),
     [r"template parameter PtxgenN \(qualifier n\) must be 8 to 256 in steps of 8"]),
    ("wgmma_float_d32_n128", "sm_90a", "float d[32];\n" + WG.format(n=128, dt="f32", at="bf16"),
     [r"operand d: the array has PtxgenGiven elements where this form needs PtxgenNeeded",
      r"PtxgenNeeded=64UL, PtxgenGiven=32UL"]),
    ("wgmma_f16_acc_in_float", "sm_90a", "float d[32];\n" + WG.format(n=128, dt="f16", at="f16"),
     [r"operand d: the element type of the array \(PtxgenGiven\) is not the register type",
      r"std::uint32_t with dtype = f16", r"PtxgenNeeded=uint32_t, PtxgenGiven=float"]),
    ("wgmma_int_d64", "sm_90a", "int d[64];\n" + WG.format(n=128, dt="f32", at="bf16"),
     [r"PtxgenNeeded=float, PtxgenGiven=int"]),
    ("mma_sync_short_d", "sm_80", "float d[2], c[4]; std::uint32_t a[4], b[2];\n" + MMA,
     [r"mma.sync.aligned: operand d: the array has PtxgenGiven elements",
      r"PtxgenNeeded=4UL, PtxgenGiven=2UL"]),
    ("mma_sync_int_a", "sm_80", "float d[4], c[4]; int a[4]; std::uint32_t b[2];\n" + MMA,
     [r"mma.sync.aligned: operand a: the element type", r"PtxgenNeeded=uint32_t, PtxgenGiven=int"]),
    ("mma_sp_short_c", "sm_80",
     "float d[4], c[2]; std::uint32_t a[4], b[4], e = 0;\n" + SP,
     [r"mma.sp.sync.aligned: operand c: the array has", r"PtxgenNeeded=4UL, PtxgenGiven=2UL"]),
    ("ldmatrix_x4_into_2", "sm_80", "std::uint32_t r[2];\n"
     "ldmatrix<ldmatrix_shape::m8n8, ldmatrix_num::x4, ldmatrix_type::b16>(r, p);",
     [r"ldmatrix.sync.aligned: operand d: the array has", r"PtxgenNeeded=4UL, PtxgenGiven=2UL"]),
    ("stmatrix_float", "sm_90a", "float r[1] = {};\n"
     "stmatrix<stmatrix_shape::m8n8, stmatrix_num::x1, stmatrix_type::b16>(q, r);",
     [r"stmatrix.sync.aligned: operand r: the element type",
      r"PtxgenNeeded=uint32_t, PtxgenGiven=float"]),
    ("tcgen05_lanes", "sm_100a", "std::uint32_t lanes[4] = {};\n"
     "tcgen05_mma<2, tcgen05_mma_kind::f16>(0u, ad, bd, 0u, lanes, true);",
     [r"tcgen05.mma: operand disable_output_lane: the array has",
      r"PtxgenNeeded=8UL, PtxgenGiven=4UL"]),
    ("tcgen05_cta_group_3", "sm_100a",
     "tcgen05_mma<3, tcgen05_mma_kind::f16>(0u, ad, bd, 0u, true);",
     [r"template parameter PtxgenCtaGroup \(qualifier cta_group\) must be 1 or 2"]),
]

PROGRAM = """#include <cstdint>
#include "ptxgen/ptx.hpp"
using namespace ptxgen::ptx;
"""
KERNEL = """__global__ void k_%s(unsigned long long ad, unsigned long long bd, const void* p,
                     void* q) {
%s
}
"""


#: Cases whose second error (an asm operand of the wrong size, after the static_assert) ends
#: nvcc's instantiation of the translation unit: each gets one of its own.
ALONE = {"stmatrix_float"}


def _unit(name: str, arch: str) -> str:
    return f"{arch}-{name}" if name in ALONE else arch


@pytest.fixture(scope="module")
def diagnostics(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, list[str]]]:
    """{case: (nvcc's exit status, its error messages in order)}: one translation unit per
    -arch with one kernel per case (nvcc reports every failing instantiation; each error
    names the line of the call it comes from: ``at line N of <file>``)."""
    tmp = tmp_path_factory.mktemp("wrapper_errors")
    out: dict[str, tuple[int, list[str]]] = {}
    for unit in sorted({_unit(c[0], c[1]) for c in CASES}):
        arch = unit.split("-")[0]
        src = tmp / f"{unit}.cu"
        text, spans = PROGRAM, []
        for name, a, body, _ in CASES:
            if _unit(name, a) == unit:
                first = text.count("\n") + 1
                text += KERNEL % (name, body)
                spans.append((name, first, text.count("\n")))
        src.write_text(text)
        proc = harness.run([harness.tool("nvcc"), "-std=c++17", f"-I{INCLUDE}",
                            f"-arch={arch}", "-c", str(src), "-o", str(tmp / f"{arch}.o")],
                           ok=False)
        errors: dict[str, list[str]] = {name: [] for name, _, _ in spans}
        for block in re.split(r"\n(?=\S+\(\d+\): error)", proc.stdout + proc.stderr):
            lines = [int(n) for n in re.findall(rf"at line (\d+) of {re.escape(str(src))}",
                                                block)]
            lines += [int(n) for n in re.findall(rf"^{re.escape(str(src))}\((\d+)\)",
                                                 block, flags=re.M)]
            for name, first, last in spans:
                if any(first <= n <= last for n in lines):
                    errors[name].append(block)
        for name in errors:
            out[name] = (proc.returncode, errors[name])
    return out


@pytest.mark.parametrize(("name", "arch", "body", "needles"), CASES, ids=[c[0] for c in CASES])
def test_wrong_operands_are_static_asserts(diagnostics: dict[str, tuple[int, list[str]]],
                                           name: str, arch: str, body: str,
                                           needles: list[str]) -> None:
    code, errors = diagnostics[name]
    out = "\n".join(errors)
    assert code != 0 and errors, f"no error from the call of case {name}"
    # the first error is the one that says what is wrong
    assert "static assertion failed" in errors[0].split("error:", 1)[1], out
    for needle in needles:
        assert re.search(needle, out), (needle, out)
    assert "no instance of overloaded function" not in out, out
    assert "?" not in re.findall(r'static assertion failed with "([^"]*)"', out)[0], out


def _messages(text: str) -> list[str]:
    """The string literals of every static_assert in a generated header."""
    return re.findall(r'static_assert\([^;]*?,\s*"((?:[^"\\]|\\.)*)"\)', text, flags=re.S)


def test_no_static_assert_message_has_a_backtick() -> None:
    headers = sorted((INCLUDE / "ptxgen").rglob("*.hpp"))
    messages = [m for h in headers for m in _messages(h.read_text())]
    assert len(messages) > 100
    assert [m for m in messages if "`" in m] == []


MACROS = ["-DV=3", "-DN=7", "-DKind=1", "-DF=2", "-DD=5", "-DReason=6", "-DCode=4", "-DI=8"]
USE = """#include "ptxgen/ptxgen.hpp"
#include "ptxgen/ptx.hpp"
#include "ptxgen/ptx/descriptor_rules.hpp"
using namespace ptxgen::ptx;
constexpr auto idesc = ptxgen::InstrDescF16{}.with_dtype(ptxgen::InstrDescF16::Dtype::F32)
    .with_m(128).with_n(256);
static_assert(tcgen05_mma_idesc_problem<1, tcgen05_mma_kind::f16>(idesc.encode()) == nullptr, "");
__global__ void k(unsigned long long a, unsigned long long b, float* out) {
  float d[64] = {};
  wgmma_mma_async<128, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::bf16,
                  wgmma_mma_async_btype::bf16>(d, a, b, true, imm<1>, imm<1>, imm<0>, imm<0>);
  fence_operand(d);
  out[0] = d[0] + static_cast<float>(idesc.encode());
}
"""


def test_user_macros_do_not_hit_template_parameters(tmp_path: Path) -> None:
    """Single-letter and common macro names a user may define (-DV=3 -DN=7 ...) do not
    reach any name of the headers (nvcc, every header)."""
    src = tmp_path / "macros.cu"
    src.write_text(USE)
    harness.run([harness.tool("nvcc"), *NVCC_FLAGS, "-arch=sm_90a", *MACROS, "-c", str(src),
                 "-o", str(tmp_path / "macros.o")])


def test_user_macros_do_not_hit_the_descriptor_headers_gxx(tmp_path: Path) -> None:
    src = tmp_path / "macros.cpp"
    src.write_text('#include "ptxgen/ptxgen.hpp"\n'
                   "static_assert(ptxgen::SmemDesc{}.encode() != 0u, \"\");\n"
                   "int main() { return static_cast<int>(ptxgen::InstrDescF16{}.with_m(64)"
                   ".with_n(8).encode_checked().error); }\n")
    harness.run([harness.tool("g++"), *GXX_FLAGS, *MACROS, "-DT=9", str(src), "-o",
                 str(tmp_path / "macros")])


# The recipe of the README ("Which call is it?"): the PTX pass succeeds, and the inlined_at
# of the .loc before each call of an unresolved ptxgen_unsupported_target_ function names
# the user's file and line (the .file table is at the end of the PTX, hence two passes).
RECIPE = (r"""awk 'NR==FNR{if($1==".file")f[$2]=$3;next} """
          r"""/inlined_at/{n=split($0,a," ");if(f[a[n-2]]!~/ptxgen\//)at=f[a[n-2]]":"a[n-1]} """
          r"""/^[ \t]*ptxgen_unsupported_target/{print at": "$1}' k.ptx k.ptx""")


def test_readme_recipe_finds_the_unsupported_call(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(USE)
    call = "  wgmma_mma_async<128, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::bf16,"
    line = USE.splitlines().index(call) + 1
    nvcc = harness.tool("nvcc")
    proc = harness.run([nvcc, "-std=c++17", f"-I{INCLUDE}", "-arch=sm_80", "-c", str(src), "-o",
                        str(tmp_path / "k.o")], ok=False)
    assert "Unresolved extern function 'ptxgen_unsupported_target_wgmma_mma_async" in \
        proc.stdout + proc.stderr
    harness.run([nvcc, "-std=c++17", f"-I{INCLUDE}", "-arch=sm_80", "-lineinfo", "-ptx",
                 str(src), "-o", str(tmp_path / "k.ptx")])
    found = subprocess.run(RECIPE, shell=True, cwd=tmp_path, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert found and all(f'"{src}":{line}:' in f for f in found), (found, line)
    readme = (ROOT / "README.md").read_text()
    assert RECIPE.removesuffix(" k.ptx k.ptx") in readme
