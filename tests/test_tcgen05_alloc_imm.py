"""The immediate overloads of tcgen05_alloc / tcgen05_dealloc (spec ``immediate_overload`` on
their nCols): ``tcgen05_alloc<1, ...>(dst, imm<64>)`` writes nCols into the instruction (an
"n" asm operand) and ``imm<48>`` fails to compile with a static_assert naming the allowed
values.

Oracles: ptxas 13.5 (the PTX ISA's rule: a power of 2 in [32, 512]; with .exclusive a
multiple of 32, past 2^31 - 1 up to 4294967264) decides, value by value, which immediates
the hand-written instruction may take, and the C++ overload must refuse exactly the others
(nvcc 13.0); the PTX that nvcc 13.0 writes for the wrapper is the PTX it writes for
hand-written asm, and it assembles with ptxas 13.0 and 13.5 (.exclusive past int: nvcc and
ptxas 13.5). ptxas 13.0 is more lenient for tcgen05.dealloc (any multiple of 32,
the spec's immediate deviation); the wrappers follow the ISA.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import toolkits
from ptxas import same_ptx

INCLUDE = Path(__file__).resolve().parent.parent / "generated" / "include"

# immediates of imm<V> (a long long): around the ISA's values, and past int (2^31 - 1) up
# to and past .exclusive's largest, 4294967264 (2^32 wraps to 0 in ptxas)
CANDIDATES = (-1, 0, 16, 32, 48, 64, 96, 128, 256, 512, 544, 1024, 4096, 2147483616,
              2147483648, 2147483680, 4294967232, 4294967264, 4294967295, 4294967296)

# (name, hand-written PTX with {v}, C++ call with {v})
CASES = [
    ("alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], {v};",
     "tcgen05_alloc<1, tcgen05_alloc_ss::shared_cta>(s, imm<{v}>);"),
    ("dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 r0, {v};",
     "tcgen05_dealloc<1>(s, imm<{v}>);"),
    ("alloc_exclusive",
     "tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [r0], {v};",
     "tcgen05_alloc_exclusive<1, tcgen05_alloc_ss::shared_cta>(s, imm<{v}>);"),
]
ALLOWED_TEXT = {"alloc": "32, 64, 128, 256 or 512", "dealloc": "32, 64, 128, 256 or 512",
                "alloc_exclusive": "32 to 4294967264 in steps of 32"}


def ptxas_accepts(tmp_path: Path, ptxas: str, ptx: str, version: str) -> bool:
    src = tmp_path / "h.ptx"
    src.write_text(f".version {version}\n.target sm_100a\n.address_size 64\n"
                   f".visible .entry k() {{\n  .reg .b32 r<2>;\n  {ptx}\n  ret;\n}}\n")
    proc = subprocess.run([ptxas, "-arch=sm_100a", str(src), "-o", os.devnull],
                          capture_output=True, text=True, check=False)
    return proc.returncode == 0


def test_the_immediate_overload_refuses_what_ptxas_refuses(tmp_path: Path) -> None:
    """Each candidate nCols: the C++ overload compiles exactly when ptxas 13.5 assembles
    the hand-written instruction; each refusal names the allowed values."""
    ptxas = toolkits.require("ptxas", "13.5")
    nvcc = toolkits.require("nvcc", "13.0")
    lines = ["#include <ptxgen/ptx/tcgen05_tmem.hpp>", "using namespace ptxgen::ptx;"]
    where: dict[int, tuple[str, int]] = {}
    want_refused: set[tuple[str, int]] = set()
    for name, ptx, call in CASES:
        version = "9.4" if "exclusive" in name else "8.6"
        for v in CANDIDATES:
            if not ptxas_accepts(tmp_path, ptxas, ptx.format(v=v), version):
                want_refused.add((name, v))
            where[len(lines) + 1] = (name, v)
            lines.append(f"__global__ void k_{name}_{str(v).replace('-', 'm')}(unsigned s) "
                         f"{{ {call.format(v=v)} }}")
    # the ptxas verdicts themselves: the ISA's powers of 2, .exclusive's multiples of 32
    assert {v for n, v in want_refused if n == "alloc"} == set(CANDIDATES) - {
        32, 64, 128, 256, 512}
    assert {v for n, v in want_refused if n == "alloc_exclusive"} == {-1, 0, 16, 48,
                                                                      4294967295, 4294967296}
    src = tmp_path / "k.cu"
    src.write_text("\n".join(lines) + "\n")
    proc = subprocess.run([nvcc, "-std=c++17", "-arch=sm_100a", "-ptx", f"-I{INCLUDE}",
                           str(src), "-o", str(tmp_path / "k.ptx")],
                          capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    refused: set[tuple[str, int]] = set()
    for block in re.split(r"\n(?=\S.*error)", out):
        m = re.search(r"at line (\d+) of \S*k\.cu", block)
        if m is None:
            continue
        name, v = where[int(m.group(1))]
        assert "static assertion failed" in block, block
        assert f"immediate ncols is out of range for this form; allowed: {ALLOWED_TEXT[name]}" \
            in block, block
        refused.add((name, v))
    assert refused == want_refused, out


HAND = r"""
__global__ void k(unsigned s, unsigned t) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 64;"
               :: "r"(s) : "memory");
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 64;" :: "r"(t) : "memory");
}
"""
MINE = r"""
#include <ptxgen/ptx/tcgen05_tmem.hpp>
using namespace ptxgen::ptx;
__global__ void k(unsigned s, unsigned t) {
  tcgen05_alloc<1, tcgen05_alloc_ss::shared_cta>(s, imm<64>);
  tcgen05_dealloc<1>(t, imm<64>);
}
"""


def _body(ptx: str) -> list[str]:
    """The instructions of the kernel (comments, directives and the header left out)."""
    start = ptx.index(".entry")
    return [ln.strip() for ln in ptx[start:].splitlines()
            if ln.strip() and not ln.strip().startswith(("//", "."))]


def test_imm_64_is_the_hand_written_ptx_and_assembles(tmp_path: Path) -> None:
    nvcc = toolkits.require("nvcc", "13.0")
    texts = []
    for name, source in (("hand", HAND), ("mine", MINE)):
        src = tmp_path / f"{name}.cu"
        src.write_text(source)
        subprocess.run([nvcc, "-std=c++17", "-arch=sm_100a", "-ptx", f"-I{INCLUDE}",
                        str(src), "-o", str(tmp_path / f"{name}.ptx")],
                       check=True, capture_output=True, text=True)
        texts.append((tmp_path / f"{name}.ptx").read_text())
    mine = _body(texts[1])
    # the same instructions, registers renamed and the "C" operand's dead zero move left
    # out (tests/ptxas/same_ptx.py)
    assert (same_ptx.normalized(texts[1][texts[1].index(".entry"):], "k")
            == same_ptx.normalized(texts[0][texts[0].index(".entry"):], "k"))
    assert any(re.fullmatch(r"tcgen05\.alloc\.cta_group::1\.sync\.aligned\.shared::cta\.b32 "
                            r"\[%r\d+\], 64;", ln) for ln in mine), mine
    assert any(re.fullmatch(r"tcgen05\.dealloc\.cta_group::1\.sync\.aligned\.b32 %r\d+, 64;",
                            ln) for ln in mine), mine
    for ptxas in toolkits.all_ptxas():
        rc, out = toolkits.assemble_file(ptxas, tmp_path / "mine.ptx", "sm_100a")
        assert rc == 0, (ptxas, out)


def test_the_register_overload_is_still_there(tmp_path: Path) -> None:
    """A run-time nCols still takes the register overload (no static check)."""
    nvcc = toolkits.require("nvcc", "13.0")
    src = tmp_path / "r.cu"
    src.write_text("#include <ptxgen/ptx/tcgen05_tmem.hpp>\nusing namespace ptxgen::ptx;\n"
                   "__global__ void k(unsigned s, unsigned n) {\n"
                   "  tcgen05_alloc<1, tcgen05_alloc_ss::shared_cta>(s, n + 48u);\n}\n")
    subprocess.run([nvcc, "-std=c++17", "-arch=sm_100a", "-ptx", f"-I{INCLUDE}", str(src),
                    "-o", str(tmp_path / "r.ptx")], check=True, capture_output=True, text=True)
    assert re.search(r"tcgen05\.alloc\.cta_group::1\.sync\.aligned\.shared::cta\.b32 "
                     r"\[%r\d+\], %r\d+;", (tmp_path / "r.ptx").read_text())


def test_an_immediate_overload_needs_an_immediate_register(spec_copy: Path) -> None:
    """immediate_overload on an operand that takes no immediate is refused at its value."""
    from test_validate import edit, errors

    rel = "instructions/tcgen05_tmem.yaml"
    old = ("        descriptor: {name: tmem_addr}\n        description: Tensor Memory address "
           "returned by the allocation")
    edit(spec_copy, rel, old, old.replace("\n", "\n        immediate_overload: true\n", 1))
    text = (spec_copy / rel).read_text().splitlines()
    line = next(i for i, ln in enumerate(text, 1) if "immediate_overload: true" in ln
                and "tmem_addr" in text[i - 2])
    errs = errors(spec_copy)
    assert any(e.endswith(f"{rel}:{line}:29: operand 'taddr': an immediate overload needs a "
                          "register operand with immediate: allowed and its immediate_values")
               for e in errs), errs


WIDE = r"""
#include <ptxgen/ptx/tcgen05_tmem.hpp>
using namespace ptxgen::ptx;
__global__ void k(unsigned s) {
#ifdef HAND
  asm volatile("tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%0], "
               "2147483680;" :: "r"(s) : "memory");
  asm volatile("tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%0], "
               "4294967264;" :: "r"(s) : "memory");
#else
  tcgen05_alloc_exclusive<1, tcgen05_alloc_ss::shared_cta>(s, imm<2147483680u>);
  tcgen05_alloc_exclusive<1, tcgen05_alloc_ss::shared_cta>(s, imm<4294967264>);
#endif
}
"""


def test_exclusive_ncols_past_int_is_the_hand_written_ptx(tmp_path: Path) -> None:
    """An .exclusive nCols past 2^31 - 1 (ptxas 13.5 assembles it up to 4294967264) takes the
    immediate overload: nvcc 13.5 writes the hand-written instruction's PTX (the full value,
    not a wrapped int) and ptxas 13.5 assembles it."""
    nvcc = toolkits.require("nvcc", "13.5")
    ptxas = toolkits.require("ptxas", "13.5")
    src = tmp_path / "wide.cu"
    src.write_text(WIDE)
    texts = []
    for name, extra in (("hand", ["-DHAND"]), ("mine", [])):
        subprocess.run([nvcc, "-std=c++17", "-arch=sm_100a", "-ptx", f"-I{INCLUDE}", *extra,
                        str(src), "-o", str(tmp_path / f"{name}.ptx")],
                       check=True, capture_output=True, text=True)
        texts.append((tmp_path / f"{name}.ptx").read_text())
    assert (same_ptx.normalized(texts[1][texts[1].index(".entry"):], "k")
            == same_ptx.normalized(texts[0][texts[0].index(".entry"):], "k"))
    mine = _body(texts[1])
    for v in (2147483680, 4294967264):
        assert any(re.fullmatch(r"tcgen05\.alloc\.exclusive\.cta_group::1\.sync\.aligned\."
                                rf"shared::cta\.b32 \[%r\d+\], {v};", ln) for ln in mine), mine
    rc, out = toolkits.assemble_file(ptxas, tmp_path / "mine.ptx", "sm_100a")
    assert rc == 0, out
