"""The instruction descriptor check (tcgen05.mma ``idesc``) reads the word with the layout
of the target: sm_107a / sm_107f's (the sm107 layout, PTX ISA 9.4) there, Tables 42-44
elsewhere; a kind without a layout on the target (.kind::ti16 off sm_107a/f, .kind::i8 on
them) or a word only the other layout takes (sm_107a's K = 64 bits) is refused with a
message that names where it is valid, in Python (``descriptor_problems(..., target=)``)
and in C++ (``tcgen05_mma_idesc_problem<..., Target>``).

Oracles:
* ptxas 13.5: which targets assemble ``.kind::ti16`` (and refuse ``.kind::i8``), with
  its messages ("Feature '.kind::ti16' not supported on .target 'sm_100a'");
* the CuTe DSL 4.8.1 compiler's words for its sm_107a and sm_100a MMA atoms
  (tests/fixtures/dsl/descriptor_words.jsonl): valid on the target it wrote them for;
* the PTX ISA 9.0 Tables 42-44 (seed 000): the bits they mark reserved, which a word
  may not set on the targets those tables apply to;
* nvcc 13.5: a static_assert on the check in a kernel passes for ``-arch=sm_107a`` and
  fails for ``-arch=sm_100a`` (nvcc 13.0 does not know sm_107a).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import toolkits
from cpp import harness
from cpp.harness import GXX_FLAGS, NVCC_FLAGS
from test_cpp_descriptor_rules import NAMES, cpp_arg

from ptxgen.isa import InstrDescSm107Ti16, ptx
from ptxgen.isa.ptx import descriptor_problems
from seed_tables import seed000

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "dsl" / "descriptor_words.jsonl"
INS = ptx.instruction_set().get("tcgen05_mma")
TARGETS = ptx.instruction_set().targets.names
# every target tcgen05.mma (and so its idesc operand) has, in the spec's order
MMA_TARGETS = [t for t in TARGETS if t in INS.operand_targets("idesc")]
TI16 = "tcgen05.mma.cta_group::1.kind::ti16"
# the .kind::ti16 codes (dtype S32 = 2, atype/btype S1Z4M11 = 3: third-party readings of
# PTX ISA 9.4 Table 51, note t51-ti16), M = 128, N = 256, dense
TI16_WORD = InstrDescSm107Ti16(dtype=2, atype=3, btype=3, m=128, n=256).encode()
BASELINE_TABLE = {"f16": 42, "tf32": 42, "f8f6f4": 42, "i8": 42, "mxf8f6f4": 43, "mxf4": 44,
                  "mxf4nvf4": 44}


def seed_reserved_mask(table: int) -> int:
    """The bits PTX ISA 9.0 Table ``table`` (seed 000) marks reserved."""
    mask = 0
    for row in seed000(table).rows:
        if row[2] == "Reserved":
            lo, _, hi = row[0].partition("-")
            for bit in range(int(lo), int(hi or lo) + 1):
                mask |= 1 << bit
    return mask


def ptxas_13_5_targets() -> dict[str, str]:
    """{target: ptxas 13.5's messages ('' when it assembles)} for .kind::ti16, over the
    targets of tcgen05.mma that ptxas 13.5 knows."""
    ptxas = toolkits.require("ptxas", "13.5")
    out = {}
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for t in MMA_TARGETS:
            rc, msg = toolkits.assemble(ptxas, Path(tmp), f"{TI16} [r1], rd1, rd2, r3, p1;",
                                        t, "9.5")
            if "is not defined for option 'gpu-name'" in msg:
                continue  # sm_101a / sm_101f: renamed sm_110a / sm_110f, gone from 13.5
            out[t] = "" if rc == 0 else msg
    return out


def form_params(opcode: str) -> dict[str, str]:
    found = ptx.support(opcode)
    assert found.valid, found.problems
    return dict(found.forms[0].params)


def cpp_results(tmp_path: Path, cases: list[tuple[str, str | None, int]]) -> list[str]:
    """The C++ check's answer ('ok' or the message) for (opcode, target or None for host
    code, word), compiled with g++."""
    if not harness.has("g++"):
        harness.unavailable("g++")
    lines = ['#include <cstdio>', '#include "ptxgen/ptx/descriptor_rules.hpp"',
             'using namespace ptxgen::ptx;',
             'static void show(const char* m) { std::puts(m ? m : "ok"); }', 'int main() {']
    for opcode, target, word in cases:
        params = form_params(opcode)
        # the checker's qualifiers: NAMES, then .decompress::lut::b (PTX ISA 9.4, last)
        targs = ", ".join(cpp_arg(n, params[n]) for n in (*NAMES, "decompress"))
        if target is not None:
            targs += f', target_index("{target}")'
        lines.append(f"  show(tcgen05_mma_idesc_problem<{targs}>({word:#x}u));")
    lines += ["  return 0;", "}"]
    src = tmp_path / "idesc.cpp"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "idesc"
    harness.run(["g++", *GXX_FLAGS, str(src), "-o", str(exe)])
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_ti16_where_ptxas_takes_it(tmp_path: Path) -> None:
    """ptxas 13.5 assembles .kind::ti16 on sm_107a and sm_107f only; on exactly those
    targets the Python and C++ checks take a .kind::ti16 word, elsewhere both refuse it
    naming the targets that have it. Without a target (host code) it is read with its
    only layout."""
    by_ptxas = ptxas_13_5_targets()
    assert {"sm_100a", "sm_103a", "sm_107a", "sm_110a"} <= set(by_ptxas), by_ptxas
    for t, msg in by_ptxas.items():
        assert msg == "" or f"Feature '.kind::ti16' not supported on .target '{t}'" in msg, msg
    takes = {t for t, msg in by_ptxas.items() if msg == ""}
    assert takes == {"sm_107a", "sm_107f"}
    targets = list(by_ptxas)
    cpp = cpp_results(tmp_path, [(TI16, t, TI16_WORD) for t in targets] + [(TI16, None,
                                                                            TI16_WORD)])
    for t, got in zip(targets, cpp, strict=False):
        problems = descriptor_problems(TI16, target=t, idesc=TI16_WORD)
        if t in takes:
            assert problems == [] and got == "ok", (t, problems, got)
        else:
            (p,) = problems
            assert "ti16" in p and "sm_107a, sm_107f" in p, p
            assert got == ("ptxgen: tcgen05.mma: idesc: instr_desc .kind::ti16 does not exist "
                           "in the baseline tables (every target but sm_107a, sm_107f); it "
                           "exists only in the sm107 layout of sm_107a, sm_107f from PTX ISA "
                           "9.4"), got
    assert cpp[-1] == "ok" and descriptor_problems(TI16, idesc=TI16_WORD) == []


def test_i8_is_refused_where_ptxas_refuses_it(tmp_path: Path) -> None:
    """ptxas 13.5: "Feature '.kind::i8' not supported on .target 'sm_107a'"; the checks
    refuse a .kind::i8 word there and take it on sm_100a (Table 42's S32 / S8 codes)."""
    ptxas = toolkits.require("ptxas", "13.5")
    opcode = "tcgen05.mma.cta_group::1.kind::i8"
    from ptxgen.isa import InstrDescI8
    word = InstrDescI8(dtype=2, atype=1, btype=1, m=128, n=256).encode()
    results = {}
    for t in ("sm_100a", "sm_107a"):
        rc, msg = toolkits.assemble(ptxas, tmp_path, f"{opcode} [r1], rd1, rd2, r3, p1;", t,
                                    "9.5")
        results[t] = rc == 0
        assert rc == 0 or f"Feature '.kind::i8' not supported on .target '{t}'" in msg, msg
    assert results == {"sm_100a": True, "sm_107a": False}
    cpp = cpp_results(tmp_path, [(opcode, "sm_100a", word), (opcode, "sm_107a", word)])
    assert descriptor_problems(opcode, target="sm_100a", idesc=word) == [] and cpp[0] == "ok"
    (p,) = descriptor_problems(opcode, target="sm_107a", idesc=word)
    assert "i8" in p and "sm107" in p, p
    assert cpp[1].startswith("ptxgen: tcgen05.mma: idesc: instr_desc .kind::i8 does not "
                             "exist in the sm107 layout of sm_107a, sm_107f"), cpp[1]


def compiler_words() -> list[dict[str, Any]]:
    return [r for r in map(json.loads, FACTS.read_text(encoding="utf-8").splitlines())
            if r["source"] == "dsl-compiler"]


def test_dsl_compiler_words_by_target(tmp_path: Path) -> None:
    """Every word the DSL compiler wrote is taken on the target it wrote it for; on the
    targets of Tables 42-44 a word that sets a bit the seed's table marks reserved (the
    sm107 K dimension, k_dim_hi, the 2-bit scale type) is refused, naming sm_107a and
    sm_107f, and the others are taken; on sm_107a/f every word is taken (the layouts
    agree where the new fields are 0). Python and C++ give the same answers."""
    words = compiler_words()
    assert {r["arch"] for r in words} == {"sm_100a", "sm_107a"}
    cases, expect = [], []
    sm107_only = 0
    for rec in words:
        word = int(rec["idesc"], 16)
        kind = re.search(r"kind::(\w+)", rec["opcode"])
        assert kind is not None
        reserved = word & seed_reserved_mask(BASELINE_TABLE[kind[1]])
        sm107_only += bool(reserved)
        assert not (reserved and rec["arch"] == "sm_100a"), rec  # sm_100a keeps the tables
        for t in ("sm_100a", "sm_103a", "sm_110a", "sm_107a", "sm_107f"):
            ok = t in ("sm_107a", "sm_107f") or not reserved
            cases.append((rec["opcode"], t, word))
            expect.append(ok)
        cases.append((rec["opcode"], None, word))  # host code: some layout takes it
        expect.append(True)
    assert sm107_only >= 5, sm107_only
    cpp = cpp_results(tmp_path, cases)
    for (opcode, t, word), ok, got in zip(cases, expect, cpp, strict=True):
        problems = descriptor_problems(opcode, target=t, idesc=word)
        if ok:
            assert problems == [] and got == "ok", (opcode, t, hex(word), problems, got)
        else:
            (p,) = problems
            assert p.endswith("the word is valid in the sm107 layout of sm_107a, sm_107f "
                              "from PTX ISA 9.4 only"), p
            assert got.endswith("word in the baseline tables (every target but sm_107a, "
                                "sm_107f); it is valid in the sm107 layout of sm_107a, "
                                "sm_107f from PTX ISA 9.4 only"), got


KERNEL = r"""
#include "ptxgen/ptx/descriptor_rules.hpp"
using namespace ptxgen::ptx;
__global__ void k(unsigned* out) {
    static_assert(tcgen05_mma_idesc_problem<1, tcgen05_mma_kind::KIND>(WORD) == nullptr,
                  "idesc on this target");
    out[0] = WORD;
}
"""


@pytest.mark.parametrize("arch", ["sm_107a", "sm_100a"])
@pytest.mark.parametrize("kind,word", [("f8f6f4", 0x28400010), ("ti16", TI16_WORD)])
def test_nvcc_13_5_static_assert_by_target(tmp_path: Path, arch: str, kind: str,
                                           word: int) -> None:
    """nvcc 13.5 with plain -arch: the DSL compiler's sm_107a K = 64 word and a .kind::ti16
    word pass a static_assert in a kernel for sm_107a (and in the host pass and nvcc's
    generic compute_107 pass, where the target is not known) and fail it for sm_100a."""
    nvcc = toolkits.require("nvcc", "13.5")
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    proc = subprocess.run([nvcc, *NVCC_FLAGS, f"-arch={arch}", f"-DKIND={kind}",
                           f"-DWORD={word:#x}u", "-c", str(src), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    if arch == "sm_107a":
        assert proc.returncode == 0, out[-3000:]
    else:
        assert proc.returncode != 0
        assert 'static assertion failed with "idesc on this target"' in out, out[-3000:]
