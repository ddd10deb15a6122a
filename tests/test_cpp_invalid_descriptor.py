"""Issue 12: an invalid descriptor field is never a silently different word in C++.

* Wherever the value is a constant (a constexpr variable, a with_ chain, a static_assert,
  a template argument, and so the argument of a wrapper built from a constexpr
  descriptor) it is a compile error naming the field: nvcc for sm_100a and g++.
* At run time encode()/decode()/masks()/base_offset_for() stop the thread: the PTX of a
  device function carries a trap on the invalid path (nvcc, sm_100a), a host program dies
  with SIGILL (g++); encode_checked() reports the field instead.

The issue's own example (with_n(12) given to tcgen05_mma) compiled with today's main and
emitted N = 8 (0x08020090)."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import GXX_FLAGS, NVCC_FLAGS

F16 = """#include "ptxgen/ptxgen.hpp"
using ptxgen::InstrDescF16;
"""
ISSUE = """#include "ptxgen/ptx.hpp"
__global__ void k(unsigned d, unsigned long long a, unsigned long long b) {
  constexpr auto idesc = InstrDescF16{}.with_dtype(InstrDescF16::Dtype::F32)
      .with_atype(InstrDescF16::Atype::BF16).with_btype(InstrDescF16::Btype::BF16)
      .with_m(128).with_n(N_VALUE);
  ptxgen::ptx::tcgen05_mma<1, ptxgen::ptx::tcgen05_mma_kind::f16>(d, a, b, idesc.encode(), true);
}
"""

# (name, source after F16, the compile-error reason the diagnostic must name)
CONSTANT_CASES = [
    ("constexpr_chain", "constexpr auto d = InstrDescF16{}.with_m(128).with_n(12);",
     "n_not_a_multiple_of_8"),
    ("chain_pair", "constexpr auto d = InstrDescF16{}.with_m(32).with_n(8);",
     "n_is_not_an_N_of_tcgen05_mma_shapes_with_this_m"),
    ("chain_other_order", "constexpr auto d = InstrDescF16{}.with_n(8).with_m(256);",
     "n_is_not_an_N_of_tcgen05_mma_shapes_with_this_m"),
    ("n_left_out", "constexpr auto w = InstrDescF16{}.with_m(128).encode();",
     "n_is_not_an_N_of_tcgen05_mma_shapes_with_this_m"),
    ("m_left_out", "static_assert(InstrDescF16{}.with_n(64).encode() != 0u, \"\");",
     "m_is_not_the_M_of_tcgen05_mma_shapes_of_this_kind"),
    ("template_argument", "template <unsigned W> struct word {};\n"
     "word<InstrDescF16{}.with_m(512 - 16).with_n(64).encode()> w;", "m_is_not_the_M_of"),
    ("decode", "constexpr auto d = InstrDescF16::decode(0x084004D0u);", "reserved_bits_not_zero"),
]


def _nvcc(tmp_path: Path, source: str, *extra: str, ok: bool = False,
          name: str = "k.cu") -> subprocess.CompletedProcess[str]:
    src = tmp_path / name
    src.write_text(source)
    return harness.run([harness.tool("nvcc"), *NVCC_FLAGS, "-arch=sm_100a", *extra, str(src)],
                       ok=ok, cwd=tmp_path)


def test_issue_example_is_a_compile_error_naming_n(tmp_path: Path) -> None:
    proc = _nvcc(tmp_path, F16 + ISSUE, "-DN_VALUE=12", "-c", "-o", "k.o")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "n_not_a_multiple_of_8" in out, out
    assert re.search(r"k\.cu\(\d+\): error: expression must have a constant value", out), out


def test_issue_example_with_a_valid_n_emits_the_word(tmp_path: Path) -> None:
    """N = 256: the wrapper gets the immediate 0x08400490 (= 138413200), no trap."""
    _nvcc(tmp_path, F16 + ISSUE, "-DN_VALUE=256", "-ptx", "-o", "k.ptx", ok=True)
    ptx = (tmp_path / "k.ptx").read_text()
    assert re.search(r"mov\.b32\s+%r\d+, 138413200;", ptx), ptx
    assert "tcgen05.mma.cta_group::1.kind::f16" in ptx
    assert "trap;" not in ptx


@pytest.mark.parametrize(("name", "source", "reason"), CONSTANT_CASES,
                         ids=[c[0] for c in CONSTANT_CASES])
def test_constants_are_compile_errors_nvcc(tmp_path: Path, name: str, source: str,
                                           reason: str) -> None:
    proc = _nvcc(tmp_path, F16 + source + "\n", "-x", "cu", "-c", "-o", "k.o")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, name
    assert reason in out, out


@pytest.mark.parametrize(("name", "source", "reason"), CONSTANT_CASES,
                         ids=[c[0] for c in CONSTANT_CASES])
def test_constants_are_compile_errors_gxx(tmp_path: Path, name: str, source: str,
                                          reason: str) -> None:
    src = tmp_path / "k.cpp"
    src.write_text(F16 + source + "\n")
    proc = harness.run([harness.tool("g++"), *GXX_FLAGS, "-fsyntax-only", str(src)], ok=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, name
    assert reason in out, out


RUNTIME = F16 + """#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  const char* what = argv[1];
  volatile unsigned n = 12u + static_cast<unsigned>(argc) - 2u;  // 12, unknown to the compiler
  InstrDescF16 d = InstrDescF16{}.with_m(128).with_n(64);
  d.n = n;  // invalid at run time
  const auto r = d.encode_checked();
  std::printf("checked %s %s\\n", ptxgen::errc_name(r.error), InstrDescF16::field_name(r.field));
  std::fflush(stdout);
  unsigned long long out = 0;
  if (!std::strcmp(what, "encode")) out = d.encode();
  if (!std::strcmp(what, "decode")) out = InstrDescF16::decode(0x084004D0u + n - 12u).n;
  if (!std::strcmp(what, "masks"))
    out = ptxgen::ZeroColumnMaskDesc{}.masks(100u + n, 64u).count;
  if (!std::strcmp(what, "base_offset"))
    out = ptxgen::SmemDesc::base_offset_for(0x410u + n - 12u,
                                            ptxgen::SmemDesc::Swizzle::SWIZZLE_128B);
  if (!std::strcmp(what, "valid")) out = d.with_n(64u + n - 12u).encode();
  std::printf("returned %#llx\\n", out);
  return 0;
}
"""


@pytest.fixture(scope="module")
def host_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trap") / "prog"
    src = out.with_suffix(".cpp")
    src.write_text(RUNTIME)
    harness.run([harness.tool("g++"), *GXX_FLAGS, "-O2", str(src), "-o", str(out)])
    return out


@pytest.mark.parametrize("what", ["encode", "decode", "masks", "base_offset"])
def test_run_time_invalid_descriptor_traps_on_the_host(host_program: Path, what: str) -> None:
    proc = subprocess.run([str(host_program), what], capture_output=True, text=True,
                          check=False)
    assert proc.stdout.startswith("checked not_a_multiple n\n"), proc.stdout
    assert "returned" not in proc.stdout
    assert proc.returncode == -signal.SIGILL, (proc.returncode, proc.stdout)


def test_run_time_valid_descriptor_encodes(host_program: Path) -> None:
    proc = subprocess.run([str(host_program), "valid"], capture_output=True, text=True,
                          check=True)
    # Table 42: M >> 4 = 8 in bits 24-28, N >> 3 = 8 in bits 17-22, every other field 0
    assert proc.stdout.splitlines()[-1] == f"returned {8 << 24 | 8 << 17:#x}"


def test_run_time_invalid_descriptor_traps_on_the_device(tmp_path: Path) -> None:
    """sm_100a: encode() of a descriptor built at run time branches to a trap on the invalid
    path; the PTX then stores the word (N >> 3 of a valid N)."""
    body = F16 + """
__global__ void k(unsigned* out, unsigned n) {
  out[0] = InstrDescF16{}.with_m(128).with_n(n).encode();
}
"""
    _nvcc(tmp_path, body, "-ptx", "-o", "k.ptx", ok=True)
    ptx = (tmp_path / "k.ptx").read_text()
    assert ptx.count("trap;") == 1, ptx
    assert re.search(r"@%p\d+ bra|@!%p\d+ bra", ptx), ptx  # the trap is on a branch
