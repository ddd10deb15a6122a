"""Issue 27: ``ptxgen lint`` on PTX that nobody here wrote.

The oracle for "clean" is code the compilers made from CUTLASS's own MMA atoms and
descriptor builders (tests/lint/cutlass_sm90.cu and cutlass_sm100.cu use the nvidia-cutlass
wheel's CuTe headers; their wgmma / tcgen05.mma descriptors, instruction descriptor and
shared-memory layouts are CUTLASS's) and the project's examples, compiled to PTX by nvcc
13.0 and 13.5. Planted bugs are edits of copies of that PTX, each made with the tables'
bit positions (not with ptxgen), and must be found at the line that was edited. The known
public cases (pre-release spellings, a misspelt wgmma type, a block-scaled M spilled into
bit 26) are small hand-written fixtures.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import toolkits
from cpp import harness

from conftest import ROOT, run_cli
from ptxgen import cli

HERE = ROOT / "tests" / "lint"
INCLUDE = ROOT / "generated" / "include"

#: (name, source, -arch, toolkit release): compiled to PTX once per session.
BUILDS = [
    ("cutlass_sm90_13.0", HERE / "cutlass_sm90.cu", "sm_90a", "13.0"),
    ("cutlass_sm90_13.5", HERE / "cutlass_sm90.cu", "sm_90a", "13.5"),
    ("cutlass_sm100_13.0", HERE / "cutlass_sm100.cu", "sm_100a", "13.0"),
    ("cutlass_sm100_13.5", HERE / "cutlass_sm100.cu", "sm_100a", "13.5"),
    ("example_tcgen05", ROOT / "examples" / "tcgen05_gemm" / "gemm.cu", "sm_100a", "13.0"),
    ("example_wgmma", ROOT / "examples" / "wgmma_gemm" / "gemm.cu", "sm_90a", "13.0"),
    ("example_sparse", ROOT / "examples" / "sparse_gemm" / "gemm_sp.cu", "sm_90a", "13.0"),
]


#: The builds, once per process: a module fixture set up again (the file's tests not run
#: in a row on an xdist worker) does not compile again.
_BUILT: dict[str, Path] = {}


@pytest.fixture(scope="module")
def ptx(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not _BUILT:
        _BUILT.update(_build(tmp_path_factory))
    return _BUILT


def _build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("lint")
    cutlass = harness.cutlass_include()
    # CUTLASS includes <cccl/cuda/std/...>: CUDA 13.0's nvcc brings CCCL, the 13.5 wheels
    # do not, so the 13.5 builds see the machine's CCCL (header-only) through a link.
    nvcc13 = toolkits.require("nvcc", "13.0")
    where = subprocess.run([nvcc13, "-E", "-x", "cu", "-", "-M"],
                           input="#include <cuda/std/utility>\n",
                           capture_output=True, text=True, check=True).stdout
    cccl = Path(re.search(r"(\S+/cccl)/cuda/std/utility", where).group(1))  # type: ignore[union-attr]
    (out / "cccl-only").mkdir()
    (out / "cccl-only" / "cccl").symlink_to(cccl)

    def build(item: tuple[str, Path, str, str]) -> tuple[str, Path]:
        name, src, arch, release = item
        nvcc = toolkits.require("nvcc", release)
        dst = out / f"{name}.ptx"
        proc = subprocess.run([nvcc, "-std=c++17", "-O3", f"-arch={arch}", f"-I{cutlass}",
                               f"-I{INCLUDE}", f"-I{ROOT / 'examples'}",
                               *([f"-I{out / 'cccl-only'}", f"-I{cccl}"]
                                 if release != "13.0" else []),
                               "-ptx", str(src),
                               "-o", str(dst)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return name, dst

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(build, BUILDS))


def lint(*args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    """``ptxgen lint --json ARGS`` in this process (the CLI's own tests run it as a user
    does; here a process per call would be most of the time)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["lint", "--json", *args])
    assert code in (0, 1), err.getvalue()
    return code, json.loads(out.getvalue())


@pytest.mark.parametrize("name", [b[0] for b in BUILDS])
def test_compiler_output_lints_clean(name: str, ptx: dict[str, Path]) -> None:
    code, report = lint(str(ptx[name]))
    assert report["findings"] == [] and code == 0
    s = report["summary"]
    assert s["checked"] > 0 and s["skipped"] > 0
    if "sm100" in name or "tcgen05" in name:
        # the instruction and smem descriptors of tcgen05.mma were read, not skipped
        assert s["descriptors"] > 0


# -- planted bugs -------------------------------------------------------------------------

def _edit(src: Path, dst: Path, pattern: str, change) -> int:  # type: ignore[no-untyped-def]
    """Apply ``change(match)`` to the first line matching ``pattern``; its line number."""
    lines = src.read_text().split("\n")
    for i, line in enumerate(lines):
        m = re.search(pattern, line)
        if m:
            lines[i] = change(line, m)
            dst.write_text("\n".join(lines))
            return i + 1
    raise AssertionError(f"{pattern!r} not in {src}")


def _idesc_line(src: Path) -> tuple[str, int]:
    """The register and the line of the constant instruction descriptor of the first
    tcgen05.mma (written by ``mov.b32 %rN, <constant>;``)."""
    text = src.read_text()
    mma = re.search(r"tcgen05\.mma\.\S+\s+\[[^]]+\],\s*%rd\d+,\s*%rd\d+,\s*(%r\d+)", text)
    assert mma is not None
    reg = mma.group(1)
    return reg, next(i + 1 for i, line in enumerate(text.split("\n"))
                     if re.search(rf"mov\.b32\s+{re.escape(reg)},\s*\d+;", line))


def _mma_line(path: Path, after: int = 0) -> int:
    return next(i + 1 for i, line in enumerate(path.read_text().split("\n"))
                if i + 1 > after and "tcgen05.mma" in line)


def _findings(path: Path, *args: str) -> list[dict]:  # type: ignore[type-arg]
    code, report = lint(str(path), *args)
    assert code == (1 if report["findings"] else 0)
    return report["findings"]  # type: ignore[no-any-return]


def _set_idesc(word_of):  # type: ignore[no-untyped-def]
    def change(line: str, m: re.Match[str]) -> str:
        old = int(m.group(1))
        return line.replace(m.group(1), str(word_of(old)))
    return change


def test_idesc_m_the_cta_group_cannot_take(ptx: dict[str, Path], tmp_path: Path) -> None:
    src = ptx["cutlass_sm100_13.0"]
    reg, line = _idesc_line(src)
    dst = tmp_path / "m256.ptx"
    # Table 42: M >> 4 in bits 24-28; M = 256 needs .cta_group::2
    _edit(src, dst, rf"mov\.b32\s+{re.escape(reg)},\s*(\d+);",
          _set_idesc(lambda w: (w & ~(0x1F << 24)) | ((256 >> 4) << 24)))
    found = _findings(dst)
    assert found, "M = 256 on .cta_group::1 not found"
    assert {f["rule"] for f in found} == {"descriptor-rule"}
    assert all(f["line"] > line for f in found)
    assert found[0]["line"] == _mma_line(dst, line)
    assert "m = 256" in found[0]["message"]


def test_idesc_reserved_bit(ptx: dict[str, Path], tmp_path: Path) -> None:
    src = ptx["cutlass_sm100_13.5"]
    reg, line = _idesc_line(src)
    dst = tmp_path / "reserved.ptx"
    _edit(src, dst, rf"mov\.b32\s+{re.escape(reg)},\s*(\d+);",
          _set_idesc(lambda w: w | 1 << 6))  # Table 42: bit 6 is reserved
    found = _findings(dst)
    assert [f["rule"] for f in found][:1] == ["descriptor-reserved"]
    assert found[0]["line"] == _mma_line(dst, line) and "6" in found[0]["message"]


def test_misspelt_kind(ptx: dict[str, Path], tmp_path: Path) -> None:
    src = ptx["cutlass_sm100_13.0"]
    dst = tmp_path / "kind.ptx"
    line = _edit(src, dst, r"tcgen05\.mma\.cta_group::1\.kind::f16",
                 lambda s, m: s.replace("kind::f16", "kind::f61"))
    found = _findings(dst)
    assert [(f["line"], f["rule"]) for f in found] == [(line, "form")]
    assert found[0]["valid"] == ".kind::f16"


def test_swizzle_the_layout_lacks(ptx: dict[str, Path], tmp_path: Path) -> None:
    src = ptx["cutlass_sm100_13.0"]
    dst = tmp_path / "swizzle.ptx"
    # Table 40: swizzle in bits 61-63; codes 3, 5 and 7 are not in the table
    _edit(src, dst, r"or\.b64\s+%rd\d+,\s*%rd\d+,\s*(\d+);",
          _set_idesc(lambda w: (w & ~(7 << 61)) | (5 << 61)))
    found = _findings(dst)
    assert found and {f["rule"] for f in found} == {"descriptor-field"}
    assert all("swizzle: code 5" in f["message"] for f in found)


def test_the_module_target_and_version_decide(ptx: dict[str, Path], tmp_path: Path) -> None:
    src = ptx["cutlass_sm100_13.0"]
    found = _findings(src, "--target", "sm_90a")
    assert found and {f["rule"] for f in found} == {"unsupported"}
    assert "sm_90a" in found[0]["message"]
    dst = tmp_path / "old.ptx"
    _edit(src, dst, r"^\.version (\d+\.\d+)", lambda s, m: ".version 8.5")
    found = _findings(dst)
    assert found and {f["rule"] for f in found} <= {"unsupported", "target"}


# -- the public cases, rebuilt as small fixtures --------------------------------------------

HEAD = ".version {v}\n.target {t}\n.address_size 64\n.visible .entry k()\n{{\n"


def _fixture(tmp_path: Path, body: str, target: str = "sm_90a", version: str = "8.7") -> Path:
    p = tmp_path / "k.ptx"
    p.write_text(HEAD.format(v=version, t=target) + body + "\nret;\n}\n")
    return p


@pytest.mark.parametrize("text, rule, valid", [
    ("wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m.e5m {%f1}, %rd1, %rd2, p, 1, 1;",
     "form", ""),
    ("elect.one.sync %r1|%p1, 0xffffffff;", "unknown-instruction", "elect.sync"),
    ("mbarrier.arrive.expect_copy.shared.b64 %rd3, [%rd1], 16;", "form", ""),
    ("fence.proxy.async.global::cta;", "form", ""),
])
def test_public_cases(tmp_path: Path, text: str, rule: str, valid: str) -> None:
    found = _findings(_fixture(tmp_path, text))
    assert [(f["line"], f["rule"]) for f in found] == [(6, rule)]
    assert valid in found[0]["valid"]


def test_block_scaled_m64_spilled_into_bit_26(tmp_path: Path) -> None:
    """Table 43 keeps M >> 7 in bits 27-28 and bit 26 reserved; an encoder that writes
    M >> 4 in bits 24-28 (CUTLASS's layout) with M = 64 sets bit 26."""
    word = (1 << 23) | (1 << 26) | ((128 >> 3) << 17)  # ue8m0, "M = 64" spilled, N = 128
    body = (f"mov.b32 %r1, {word};\n"
            "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X "
            "[%r2], %rd1, %rd2, %r1, [%r3], [%r4], p;")
    found = _findings(_fixture(tmp_path, body, "sm_100a", "8.7"))
    assert found and found[0]["line"] == 7 and found[0]["rule"] == "descriptor-reserved"
    assert "26" in found[0]["message"]


def test_unknown_instructions_are_counted_not_findings(tmp_path: Path) -> None:
    # bra and foo are no family of the spec; mov and ld are families the spec has a part of
    # (their `partial`), and these texts are none of the forms it has: maybe a missing one
    body = ("mov.b32 %r3, %r1;\nld.param.u64 %rd1, [p];\nbra.uni L1;\nfoo.bar %r1;\n"
            "L1:\nmov.u32 %r1, %laneid;\nbar.sync 0;")
    code, report = lint(str(_fixture(tmp_path, body)))
    assert code == 0 and report["findings"] == []
    s = report["summary"]
    assert (s["skipped"], s["checked"]) == (5, 2)  # and ret; %laneid and bar.sync are read


def test_partial_families_still_judge_the_forms_they_have(tmp_path: Path) -> None:
    # st is a family the spec has a part of: the forms it has are still checked, for their
    # target and version too
    ok = _fixture(tmp_path, "st.release.sys.global.u32 [%rd1], %r1;", "sm_90a", "8.7")
    code, report = lint(str(ok))
    assert (code, report["summary"]["checked"]) == (0, 1)
    old = _fixture(tmp_path, "st.release.sys.global.u32 [%rd1], %r1;", "sm_60", "6.0")
    assert {f["rule"] for f in _findings(old, "--target", "sm_75")} == {"unsupported"}


def test_text_output_and_exit_codes(ptx: dict[str, Path], tmp_path: Path) -> None:
    p = _fixture(tmp_path, "fence.proxy.async.global::cta;")
    r = run_cli("lint", str(p))
    assert r.code == 1
    assert r.out.startswith(f"{p}:6:1: fence.proxy.async.global::cta: not a valid form")
    r = run_cli("lint", str(tmp_path / "missing.ptx"))
    assert r.code == 2 and r.err.startswith("ptxgen: error:") and "\n" not in r.err.strip()
    r = run_cli("lint", str(p), "--target", "sm100a")
    assert r.code == 2 and "did you mean 'sm_100a'" in r.err


# -- CUDA / C++ sources: inline asm, each #if branch -----------------------------------------

SOURCE = r'''#include <cstdint>
__device__ void f(uint64_t a, uint64_t b, uint32_t idesc, uint32_t tmem, float x) {
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
               "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}\n"
               :: "r"(tmem), "l"(a), "l"(b), "r"(idesc), "r"(1));
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("elect.one.sync %0|%%p1, 0xffffffff;" : "=r"(idesc));
#elif __CUDA_ARCH__ >= 900
  asm volatile("tcgen05.fence::before_thread_sync;");
#else
  asm("fence.proxy.async.global::cta;");
#endif
#ifndef __CUDA_ARCH__
  asm("this is host code, never PTX");
#endif
  asm volatile(R"(wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;)");
}
'''


def test_sources_every_branch_is_read(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    found = _findings(src)
    # typos in branches no single build compiles together, at their own line and column
    assert [(f["line"], f["col"], f["rule"]) for f in found] == [
        (9, 17, "unknown-instruction"), (13, 8, "form")]
    _, report = lint(str(src))
    s = report["summary"]
    # the host-only branch is not read; every other statement is counted
    assert (s["instructions"], s["skipped"]) == (8, 0)


def test_sources_support_where_the_guard_compiles_the_branch(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    # on sm_90: only __CUDA_ARCH__ >= 900 holds, and tcgen05.fence is not there
    found = [f for f in _findings(src, "--target", "sm_90") if f["rule"] == "unsupported"]
    assert [(f["line"], f["col"]) for f in found] == [(11, 17), (18, 19), (19, 1)]
    # on sm_100a the first branch is compiled: supported there
    found = [f for f in _findings(src, "--target", "sm_100a") if f["rule"] == "unsupported"]
    assert [(f["line"], f["col"]) for f in found] == [(18, 19), (19, 1)]


GUARDS = [
    "defined(__CUDA_ARCH__)", "__CUDA_ARCH__ >= 900",
    "__CUDA_ARCH__ >= 1000 && __CUDA_ARCH__ < 1100",
    "defined(__CUDA_ARCH_FEAT_SM90_ALL)", "defined(__CUDA_ARCH_FEAT_SM100_ALL)",
    "defined(__CUDA_ARCH_FEAT_SM103_ALL)", "defined(__CUDA_ARCH_SPECIFIC__)",
    "defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && __CUDA_ARCH_FAMILY_SPECIFIC__ == 1000",
    "!defined(__CUDA_ARCH_FEAT_SM90_ALL) && (__CUDA_ARCH__ / 100) == 9",
    "__CUDA_ARCH_SPECIFIC__ == 1030 || __CUDA_ARCH__ == 800",
]


@pytest.mark.parametrize("target", ["sm_80", "sm_90", "sm_90a", "sm_100a", "sm_100f",
                                    "sm_103a", "sm_120f"])
def test_guards_agree_with_nvcc(target: str, tmp_path: Path) -> None:
    """nvcc's own device pass for the target is the oracle for the branch each guard
    selects."""
    from ptxgen.lint.guards import allowed

    src = tmp_path / "g.cu"
    src.write_text("".join(f"#if {g}\nYES_{i}\n#else\nNO_{i}\n#endif\n"
                           for i, g in enumerate(GUARDS)))
    nvcc = toolkits.require("nvcc", "13.0")
    arch = target.removeprefix("sm_")
    out = subprocess.run([nvcc, "-E", "-gencode", f"arch=compute_{arch},code={target}",
                          str(src)], capture_output=True, text=True, check=True).stdout
    for i, g in enumerate(GUARDS):
        taken = f"YES_{i}" in out.split()
        assert f"NO_{i}" in out.split() or taken
        assert allowed((g,), target) is taken, (g, target)


def test_unknown_macros_leave_the_branch_open(tmp_path: Path) -> None:
    from ptxgen.lint.guards import allowed

    assert allowed(("defined(CUTE_ARCH_TMA_SM90_ENABLED)",), "sm_90a") is None
    assert allowed(("defined(CUTE_ARCH_X) && __CUDA_ARCH__ < 900",), "sm_90a") is False
    assert allowed(("MY_FLAG(3) || __CUDA_ARCH__ >= 900",), "sm_90a") is True


def test_sm107a_sparsity_version(tmp_path: Path) -> None:
    """PTX ISA 9.4, Table 53 bit 12: a sparse .kind::mxf4nvf4 word must carry sparsity
    version v1 on sm_107a and v0 on sm_100a; the same word with bit 12 clear is found on
    sm_107a only."""
    word = (1 << 2) | (1 << 7) | (1 << 10) | ((128 >> 3) << 17) | ((128 >> 7) << 27)
    # sparse, e2m1 x e2m1, N = 128, M = 128 (Table 43's fields; bit 12 clear: v0)
    body = (".reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred p;\n"
            f"mov.b32 %r1, {word};\n"
            "tcgen05.mma.sp.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X "
            "[%r2], %rd1, %rd2, [%r5], %r1, [%r3], [%r4], p;")
    found = _findings(_fixture(tmp_path, body, "sm_107a", "9.4"))
    assert [(f["line"], f["rule"]) for f in found] == [(10, "descriptor-rule")]
    assert "sparsity version v1" in found[0]["message"]
    assert _findings(_fixture(tmp_path, body, "sm_100a", "9.4")) == []
    v1 = _fixture(tmp_path, body.replace(f"{word};", f"{word | 1 << 12};"), "sm_107a", "9.4")
    assert _findings(v1) == []


def test_suggest_names_the_wrapper_and_builder(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    _, report = lint(str(src), "--suggest")
    by_line = {(s["line"], s["col"]): s for s in report["suggestions"]}
    mma = by_line[(5, 17)]
    assert mma["opcode"] == "tcgen05.mma.cta_group::1.kind::f16"
    assert mma["cpp"].startswith("ptxgen::ptx::tcgen05_mma</*cta_group=*/1, "
                                 "/*kind=*/tcgen05_mma_kind::f16")
    assert mma["python"].startswith('ptxgen.isa.ptx.tcgen05_mma(cta_group=1, kind="f16"')
    # the wrappers named are the generated headers' own
    header = (INCLUDE / "ptxgen" / "ptx" / "tcgen05_mma.device.hpp").read_text()
    assert "tcgen05_mma(" in header
    # invalid statements get a finding, not a suggestion
    assert (9, 17) not in by_line and (13, 8) not in by_line


@pytest.mark.parametrize("swizzle, base, problem", [(2, 0, None), (4, 0, "64b"), (2, 3, "3")])
def test_absolute_leading_dimension_takes_128b_swizzle_and_base_0(
        tmp_path: Path, swizzle: int, base: int, problem: str | None) -> None:
    """PTX ISA 9.4 9.7.18.3.1.2.1: the byte address mode of the leading dimension stride
    (Table 49 bit 52, sm_103a) takes only the 128-Byte swizzle (code 2 in bits 61-63) and
    matrix base offset 0 (bits 49-51); Table 49's fixed 0b001 is bits 46-48."""
    word = (1 << 52) | (swizzle << 61) | (base << 49) | (1 << 46) | (64 << 32) | (1 << 16)
    body = (f"mov.b64 %rd1, {word};\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r1, p;")
    found = _findings(_fixture(tmp_path, body, "sm_103a", "8.8"))
    if problem is None:
        assert found == []
        return
    (f,) = found
    assert (f["line"], f["rule"]) == (7, "descriptor-rule")
    assert "lbo_mode = 1" in f["message"] and "a_desc" in f["message"]
    assert f"= {word:#x}" in f["message"]


# -- the byte offsets of shared memory descriptors against the tile (9.7.18.3, 9.7.15.5.1) --

def _set_desc(clear: int, set_: int = 0):  # type: ignore[no-untyped-def]
    def change(line: str, m: re.Match[str]) -> str:
        return line.replace(m.group(1), str((int(m.group(1)) & ~clear) | set_))
    return change


SBO = ((1 << 14) - 1) << 32  # bits 32-45 (Tables 40/49 and the wgmma descriptor)
LBO = ((1 << 14) - 1) << 16  # bits 16-29


@pytest.mark.parametrize("build, opcode, clear, field, why", [
    # CUTLASS's K-major 128B-swizzled bf16 tiles: A of wgmma m64 has 8 groups of 8 rows
    ("cutlass_sm90_13.0", "wgmma.mma_async", SBO, "stride_byte_offset", "64 rows of A"),
    # without swizzling, K-major: the two 16-byte columns of K need the leading offset
    ("cutlass_sm90_13.5", "wgmma.mma_async", LBO | 3 << 62, "leading_byte_offset",
     "32 bytes of K are 2 columns"),
    # tcgen05.mma M = 128 (instruction descriptor transpose bits 0: K-major)
    ("cutlass_sm100_13.0", "tcgen05.mma", SBO, "stride_byte_offset", "rows of A are"),
])
def test_zero_byte_offset_the_tile_needs(ptx: dict[str, Path], tmp_path: Path, build: str,
                                         opcode: str, clear: int, field: str,
                                         why: str) -> None:
    src = ptx[build]
    dst = tmp_path / "offset.ptx"
    # the first descriptor constant OR'ed into a shared memory address (bit 62 or 46 set)
    line = _edit(src, dst, r"or\.b64\s+%rd\d+,\s*%rd\d+,\s*(46\d{17});", _set_desc(clear))
    found = _findings(dst)
    assert found and {f["rule"] for f in found} == {"descriptor-offset"}
    first = found[0]
    assert first["line"] == next(i + 1 for i, t in enumerate(dst.read_text().split("\n"))
                                 if i + 1 > line and opcode in t)
    assert "a_desc" in first["message"] and f"{field} = 0" in first["message"]
    assert why in first["message"]


def test_byte_offsets_of_an_mn_major_tile(tmp_path: Path) -> None:
    """wgmma with imm-trans-b = 1 (B MN-major, bf16, N = 128, 128B swizzle): LBO steps over
    the 128-byte swizzle rows of N (256 bytes: 2), SBO over the 8-column groups of K (16
    elements: 2); K-major A needs only SBO."""
    good = (1 << 62) | (64 << 32) | (128 << 16)  # SBO 1024 B, LBO 2048 B (encoded >> 4)
    no_lbo = good & ~LBO
    body = (f"mov.b64 %rd1, {good};\nmov.b64 %rd2, {no_lbo};\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
            + ", ".join(f"%f{i}" for i in range(64)) + "}, %rd1, %rd2, p, 1, 1, 0, 1;")
    found = _findings(_fixture(tmp_path, body, "sm_90a", "8.0"))
    assert [(f["line"], f["rule"]) for f in found] == [(8, "descriptor-offset")]
    assert "b_desc" in found[0]["message"] and "leading_byte_offset = 0" in found[0]["message"]
    assert "MN-major, 128b swizzle" in found[0]["message"]
    assert "256 bytes of the M/N dimension of B are 2 swizzle rows" in found[0]["message"]
    # transposed back to K-major, B needs no leading offset (swizzled: "assumed to be 1")
    body = body.replace("0, 1;", "0, 0;")
    assert _findings(_fixture(tmp_path, body, "sm_90a", "8.0")) == []
