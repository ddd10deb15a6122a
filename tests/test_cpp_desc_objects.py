"""Issue 28: the wrappers take the descriptor objects themselves (tests/cpp/desc_objects.cu).

With nvcc 13.0 and 13.5: a constant descriptor object (``static_desc<obj>{}``) gives the
same PTX as the call with its word, for every descriptor family with object overloads (the
tcgen05 instruction descriptor, shared memory descriptors and Tensor Memory addresses on
sm_100a, the wgmma descriptors on sm_90a); one that breaks a descriptor rule of the form
(M = 256 with .cta_group::1, lbo_mode = 1 off sm_103a, an unaligned tcgen05.shift lane), an
object of another kind (an InstrDescI8 for .kind::f16, a run-time one too) or of another
descriptor fails with the static_assert naming the rule; a run-time object costs nothing
with NDEBUG (the same PTX as encode_unchecked()'s word) and is checked without it (the rule
printed, then trap); nvcc's generic compute_90 pass of an sm_90a build is not broken by the
overloads; an object without descriptor_rules.hpp is refused naming it; in C++20
``static_desc_v<obj>`` takes any constant object, a temporary too (class-type template arguments).
Eleven nvcc runs of one small TU in all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import toolkits
from cpp import harness

from ptxgen import support

SRC = Path(__file__).resolve().parent / "cpp" / "desc_objects.cu"
FLAGS = ("-std=c++17", "-Werror", "all-warnings", f"-I{harness.INCLUDE}")


def compile_ptx(release: str, tmp_path: Path, case: int, arch: str, *extra: str,
                ok: bool = True) -> tuple[str, str]:
    """(PTX, diagnostics) of ``desc_objects.cu`` with ``-DCASE=case``."""
    out = tmp_path / f"case{case}.ptx"
    flags = [f for f in FLAGS if not any(e.startswith("-std=") for e in extra)
             or not f.startswith("-std=")]
    proc = harness.run([toolkits.require("nvcc", release), *flags, f"-DCASE={case}", *extra,
                        harness.gencode(arch) if arch.startswith("sm_") else f"-arch={arch}",
                        "-ptx", str(SRC), "-o", str(out)], ok=ok)
    return (out.read_text() if ok else ""), proc.stdout + proc.stderr


def bodies(ptx: str) -> dict[str, str]:
    """Each kernel's PTX, its name taken out of its parameter names."""
    out = {}
    for m in re.finditer(r"\.entry (\w+)\((.*?)\n\}", ptx, re.S):
        out[m.group(1)] = m.group(2).replace(m.group(1), "K")
    return out


def same(ptx: str, pairs: tuple[str, ...]) -> dict[str, str]:
    k = bodies(ptx)
    for name in pairs:
        assert f"raw_{name}" in k and f"obj_{name}" in k, sorted(k)
        assert k[f"obj_{name}"] == k[f"raw_{name}"], name
    return k


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_constant_objects_give_the_words_ptx(release: str, tmp_path: Path) -> None:
    # 13.0 with NDEBUG: a run-time object is its word, nothing more; 13.5 without: checked
    ndebug = release == "13.0"
    ptx, _ = compile_ptx(release, tmp_path, 1, "sm_100a", *(["-DNDEBUG"] if ndebug else []))
    k = same(ptx, ("mma", "desc", "cp", "shift", *(["rt"] if ndebug else [])))
    assert "tcgen05.mma.cta_group::1.kind::f16" in k["obj_mma"]
    if not ndebug:
        assert "trap" in k["obj_rt"] and "vprintf" in k["obj_rt"]
        assert "trap" not in k["raw_rt"] and "vprintf" not in k["raw_rt"]
    ptx, _ = compile_ptx(release, tmp_path, 3, "sm_90a")
    assert "wgmma.mma_async" in same(ptx, ("wgmma",))["obj_wgmma"]


KIND = (r'"ptxgen: tcgen05\.mma: idesc: the descriptor object is of another \.kind than the '
        r"wrapper's")
BAD = {  # kernel of CASE 2 -> the static_assert it must fail with
    "bad_m256": r'"ptxgen: tcgen05\.mma: idesc: \.cta_group::1 with \.kind::f16, \.kind::tf32 '
                r'or \.kind::f8f6f4 takes M = 64 or 128 and N = 8 to 256 in steps of 8 '
                r'\[shape-cta-group-1\]"',
    "bad_lbo_mode": r'"ptxgen: tcgen05\.mma: a_desc: the byte address mode of the leading '
                    r'dimension stride .*\[lbo-mode-absolute-a\]"',
    "bad_cp_lbo_mode": r'"ptxgen: tcgen05\.cp: s_desc: .*\[lbo-mode-absolute\]"',
    "bad_shift_lane": r'"ptxgen: tcgen05\.shift: taddr: the lane of tcgen05\.shift\'s taddr '
                      r'must be aligned to 32.*\[shift-lane-aligned\]"',
    "bad_kind": KIND,
    "bad_kind_rt": KIND,
    "bad_class": r'"ptxgen: tcgen05\.mma: operand idesc takes the instr_desc word, an object '
                 r'of ptxgen/instr_desc\.hpp',
}


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_broken_constant_objects_are_static_asserts(release: str, tmp_path: Path) -> None:
    _, out = compile_ptx(release, tmp_path, 2, "sm_100a", ok=False)
    errors = re.split(r"\n(?=\S+\(\d+\): error)", out)
    assert len([e for e in errors if ": error: " in e]) == len(BAD), out
    src = SRC.read_text().splitlines()
    for kernel, message in BAD.items():
        line = next(i for i, t in enumerate(src, 1) if f" {kernel}(" in t)
        # the error names the rule, and its instantiation chain the kernel's call
        hit = [e for e in errors if re.search("static assertion failed with " + message, e)]
        at = {int(re.findall(r"at line (\d+) of \S*desc_objects\.cu", e)[-1]) for e in hit}
        assert at & {line, line + 1, line + 2, line + 3}, (kernel, out)
    _, out = compile_ptx(release, tmp_path, 4, "sm_90a", ok=False)
    assert re.search(r'static assertion failed with "ptxgen: wgmma\.mma_async\.sync\.aligned: '
                     r"operand b_desc takes the wgmma_desc word", out), out


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_cxx20_takes_the_object_itself(release: str, tmp_path: Path) -> None:
    """C++20 (class-type template arguments): static_desc_v<obj> and static_desc<obj> take any
    constant descriptor object, a temporary or a local constexpr one, with the same PTX and
    the same compile-time checks."""
    ptx, _ = compile_ptx(release, tmp_path, 6, "sm_100a", "-std=c++20")
    assert "tcgen05.mma.cta_group::1.kind::f16" in same(ptx, ("cxx20",))["obj_cxx20"]
    if release == "13.0":
        _, out = compile_ptx(release, tmp_path, 7, "sm_100a", "-std=c++20", ok=False)
        assert re.search("static assertion failed with " + BAD["bad_m256"], out), out
        assert out.count(": error: ") == 1, out


def test_an_object_without_the_rules_header_names_it(tmp_path: Path) -> None:
    """The wrappers leave descriptor_rules.hpp (and the descriptor classes it decodes with)
    out of every TU; an object for an operand with descriptor rules asks for it."""
    _, out = compile_ptx("13.0", tmp_path, 5, "sm_100a", ok=False)
    assert re.search(r'static assertion failed with "ptxgen: tcgen05\.mma: a descriptor object '
                     r"for idesc is checked against the descriptor rules of the form: #include "
                     r'<ptxgen/ptx/descriptor_rules\.hpp> before the call"', out), out
    assert out.count(": error: ") == 1, out


def test_the_generic_pass_of_an_sm_90a_build_compiles(tmp_path: Path) -> None:
    """nvcc -arch=sm_90a also compiles for compute_90, where wgmma does not exist: the
    object calls take the refusing declarations there (an unresolved extern if it runs)."""
    ptx, _ = compile_ptx("13.0", tmp_path, 3, "compute_90")
    assert "wgmma" not in "".join(bodies(ptx).values()).replace(
        "ptxgen_unsupported_target_wgmma", "")


def test_the_old_order_of_idesc_problem_is_deprecated(tmp_path: Path) -> None:
    """``tcgen05_mma_idesc_problem<Kind, CtaGroup>`` (before issue 28) still gives the same
    answer, with a warning that names the wrappers' order (g++, the host)."""
    if not harness.has("g++"):
        harness.unavailable("g++")
    src = tmp_path / "old.cpp"
    src.write_text("""#include "ptxgen/instr_desc.hpp"
#include "ptxgen/ptx/descriptor_rules.hpp"
using namespace ptxgen::ptx;
constexpr auto w = ptxgen::InstrDescF16{}.with_m(256).with_n(64).encode();
constexpr const char* now = tcgen05_mma_idesc_problem<1, tcgen05_mma_kind::f16>(w);
constexpr const char* old = tcgen05_mma_idesc_problem<tcgen05_mma_kind::f16, 1>(w);
static_assert(now != nullptr && detail::str_eq(now, old), "the same check");
""")
    proc = harness.run(["g++", *harness.GXX_FLAGS, "-Wno-error=deprecated-declarations",
                        "-fsyntax-only", str(src)])
    assert re.search(r"old\.cpp:6:.*deprecated.*tcgen05_mma_idesc_problem<kind, cta_group, "
                     r"ws, .*> is deprecated: the qualifiers are in the wrappers' order, "
                     r"tcgen05_mma_idesc_problem<cta_group, kind, ws, ", proc.stderr), proc.stderr
    assert proc.stderr.count("warning:") == 1, proc.stderr


def test_support_prints_the_object_call() -> None:
    code, out = support.run("tcgen05.mma.cta_group::1.kind::f16", None, None, True)
    assert code == 0
    first = json.loads(out)["calls"][0]
    assert first["cpp"].startswith("ptxgen::ptx::tcgen05_mma</*cta_group=*/1, ")
    assert ("(/*d_tmem=*/ptxgen::ptx::static_desc<d_tmem>{}, "
            "/*a_desc=*/ptxgen::ptx::static_desc<a_desc>{}, "
            "/*b_desc=*/ptxgen::ptx::static_desc<b_desc>{}, "
            "/*idesc=*/ptxgen::ptx::static_desc<idesc>{}, "
            "/*enable_input_d=*/enable_input_d);") in first["cpp_objects"]
    assert "idesc: ptxgen/instr_desc.hpp .kind::f16" in first["cpp_objects"]
