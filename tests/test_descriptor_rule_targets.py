"""Descriptor rules that depend on the target (spec ``descriptor_rules`` with ``targets`` /
``except_targets``): the shared memory descriptor's byte address mode of the leading
dimension stride (Table 40 bit 52, ``lbo_mode = 1``), which the PTX ISA gives to sm_103a
only, in the operands that read a shared memory descriptor (tcgen05.mma ``a_desc`` /
``b_desc``, tcgen05.cp ``s_desc``).

Oracles: the PTX ISA text (seed 003: Table 40's bit 52 row and the Target ISA Note that
names the targets), the CuTe DSL 4.8.1 (the words its Tcgen05SmemDesc wrote with and
without ``leading_dim_mode``, tests/fixtures/dsl/descriptor_words.jsonl; the DSL source
itself where it is installed), CUTLASS's UMMA::SmemDescriptor bit-field (g++), and nvcc
13.0, which must refuse a static_assert on the check for sm_100a and accept it for
sm_103a. The spec's validation refuses target selections that mean nothing, at
file:line:col.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import GXX_FLAGS, NVCC_FLAGS
from test_validate import edit, errors, line_of

from ptxgen.isa import ptx
from ptxgen.isa.ptx import PtxFormError, descriptor_problems
from ptxgen.isa.smem_desc import SmemDesc
from seed_tables import seed003, seed_text

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "dsl" / "descriptor_words.jsonl"
DSL_SOURCE = Path("/work/toolkits/cutlass-dsl-4.8.1/nvidia_cutlass_dsl/dsl_packages/cutlass/"
                  "experimental/primitives/descriptors.py")

MMA = "tcgen05.mma.cta_group::1.kind::f16"
CP = "tcgen05.cp.cta_group::1.128x256b"
TARGETS = ptx.instruction_set().targets


def isa_lbo_targets() -> set[str]:
    """The targets the PTX ISA's Target ISA Note of the shared memory descriptor gives
    the byte address mode of the leading dimension stride to (seed 003)."""
    text = seed_text("003")
    note = text[text.index("Target ISA Note"):]
    line = next(ln for ln in note.splitlines() if "byte address mode" in ln)
    return set(re.findall(r"`(sm_\w+)`", line))


def isa_lbo_bit() -> int:
    """Table 40's row of the leading dimension stride mode: its bit (one bit)."""
    rows = seed003("Table 40").rows
    (row,) = [r for r in rows if "Leading dimension stride mode" in " ".join(r)]
    assert row[1] == "1", row
    return int(row[0])


def word(lbo_mode: int) -> int:
    return SmemDesc(start_address=0x400, leading_byte_offset=16, stride_byte_offset=1024,
                    swizzle="128b", lbo_mode=lbo_mode).encode()


def where_supported(opcode: str) -> list[str]:
    found = ptx.support(opcode)
    assert found.valid, found.problems
    out = {t for f in found.forms for t in f.support.targets}
    return [t for t in TARGETS.names if t in out]


def test_the_isa_gives_the_mode_to_sm_103a_at_bit_52() -> None:
    """The spec's facts against the seed: the field is bit 52, the note names sm_103a."""
    assert isa_lbo_targets() == {"sm_103a"}
    bit = isa_lbo_bit()
    assert bit == 52
    assert word(1) ^ word(0) == 1 << bit
    assert SmemDesc.decode(1 << bit | 1 << 46).lbo_mode == 1


def test_bit_position_agrees_with_the_cute_dsl() -> None:
    """The words the DSL's Tcgen05SmemDesc wrote for leading_dim_mode = 1 and = 0, all
    other arguments zero (version 1): they differ in bit 52 only, which ptxgen's field is."""
    by_mode = {}
    for line in FACTS.read_text().splitlines():
        rec = json.loads(line)
        a = rec.get("args", {})
        if rec.get("class") == "Tcgen05SmemDesc" and a["version"] == 1 and not any(
                a[k] for k in ("start_address", "leading_byte_offset", "stride_byte_offset",
                               "base_offset", "layout", "k_segment_offset")):
            by_mode[a["leading_dim_mode"]] = int(rec["word"], 16)
    assert set(by_mode) == {0, 1}, by_mode
    assert by_mode[1] ^ by_mode[0] == 1 << isa_lbo_bit()
    assert SmemDesc(lbo_mode=1).encode() == by_mode[1]
    assert SmemDesc(lbo_mode=0).encode() == by_mode[0]
    if DSL_SOURCE.is_file():  # the DSL's own bit-field comment, where it is installed
        doc = DSL_SOURCE.read_text(encoding="utf-8")
        m = re.search(r"\[(\d+):(\d+)\)\s+leading dimension mode", doc)
        assert m is not None and (int(m[1]), int(m[2])) == (52, 53), m


@pytest.mark.parametrize("opcode,operands", [(MMA, ("a_desc", "b_desc")), (CP, ("s_desc",))])
def test_python_rule_fires_only_off_sm_103a(opcode: str, operands: tuple[str, ...]) -> None:
    """On every target of the form but the ISA's, lbo_mode = 1 breaks the rule (one
    problem per operand, naming it); on the ISA's target it does not; lbo_mode = 0 never;
    without a target the rule is not checked."""
    allowed = isa_lbo_targets()
    targets = where_supported(opcode)
    assert allowed <= set(targets) and len(targets) > len(allowed)
    for target in targets:
        for name in operands:
            assert descriptor_problems(opcode, target=target, **{name: word(0)}) == []
            got = descriptor_problems(opcode, target=target, **{name: word(1)})
            if target in allowed:
                assert got == [], (target, got)
            else:
                (msg,) = got
                assert f"({name}: lbo_mode = 1; allowed: 0)" in msg and "sm_103a" in msg, msg
    assert descriptor_problems(opcode, **{n: word(1) for n in operands}) == []


def test_python_unknown_target_is_refused() -> None:
    with pytest.raises(PtxFormError, match=r"unknown target 'sm103a' \(did you mean "
                                           r"'sm_103a'\?\)"):
        descriptor_problems(MMA, target="sm103a", a_desc=word(0))


def test_the_mma_descriptor_operands_are_linked() -> None:
    """a_desc and b_desc read a Table 40 descriptor, as tcgen05.cp's s_desc does."""
    mma = ptx.instruction_set().get("tcgen05_mma")
    cp = ptx.instruction_set().get("tcgen05_cp")
    assert mma.descriptor_links["a_desc"] == ("smem_desc", None)
    assert mma.descriptor_links["b_desc"] == ("smem_desc", None)
    assert cp.descriptor_links["s_desc"] == ("smem_desc", None)
    # a word no shared memory descriptor has (version constant 0) is reported as such
    (msg,) = descriptor_problems(MMA, b_desc=0)
    assert msg.startswith("b_desc: "), msg


# -- C++ ---------------------------------------------------------------------------------

def cpp_program(targets: list[str]) -> str:
    lines = ['#include <cstdio>', '#include <cstring>',
             '#include "ptxgen/ptx/descriptor_rules.hpp"',
             'using namespace ptxgen::ptx;',
             'static const char* id(const char* m) {',
             '  return m ? std::strrchr(m, \'[\') + 1 : "ok]";', '}', 'int main() {']
    for t in targets:
        for mode in (0, 1):
            w = word(mode)
            idx = f'target_index("{t}")'
            lines.append(f'  std::printf("%s %s %s\\n", id(tcgen05_mma_a_desc_problem<{idx}>'
                         f'({w:#x}ull)), id(tcgen05_mma_b_desc_problem<{idx}>({w:#x}ull)), '
                         f'id(tcgen05_cp_s_desc_problem<{idx}>({w:#x}ull)));')
    # host code: the target is not known, the rule is not checked
    lines.append(f'  std::printf("%s\\n", id(tcgen05_mma_a_desc_problem({word(1):#x}ull)));')
    lines.append('  static_assert(target_index("sm_103a") >= 0 && '
                 'target_index("sm_999a") == -1, "target_index");')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def test_cpp_checks_agree_with_the_isa_on_every_target(tmp_path: Path) -> None:
    """g++: for each target of tcgen05.mma and tcgen05.cp, named with target_index, the
    C++ checks fire for lbo_mode = 1 exactly off the ISA's targets; host code checks no
    target-dependent rule."""
    if not harness.has("g++"):
        harness.unavailable("g++")
    targets = sorted(set(where_supported(MMA)) | set(where_supported(CP)),
                     key=TARGETS.names.index)
    src = tmp_path / "rules.cpp"
    src.write_text(cpp_program(targets))
    exe = tmp_path / "rules"
    harness.run(["g++", *GXX_FLAGS, str(src), "-o", str(exe)])
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    got = [ln.replace("]", "").split() for ln in out.splitlines()]
    allowed = isa_lbo_targets()
    want = []
    for t in targets:
        want.append(["ok", "ok", "ok"])
        want.append(["ok"] * 3 if t in allowed else
                    ["lbo-mode-absolute-a", "lbo-mode-absolute-b", "lbo-mode-absolute"])
    want.append(["ok"])
    assert got == want


KERNEL = r"""
#include "ptxgen/ptx/descriptor_rules.hpp"
#include "ptxgen/smem_desc.hpp"
constexpr auto desc = ptxgen::SmemDesc{}.with_start_address(0x400)
    .with_leading_byte_offset(16).with_stride_byte_offset(1024)
    .with_swizzle(ptxgen::SmemDesc::Swizzle::SWIZZLE_128B).with_lbo_mode(LBO_MODE);
__global__ void k(unsigned long long* out) {
    static_assert(ptxgen::ptx::tcgen05_mma_a_desc_problem(desc.encode()) == nullptr,
                  "lbo_mode on this target");
    out[0] = desc.encode();
}
"""


@pytest.mark.parametrize("arch,lbo_mode,ok", [("sm_100a", 0, True), ("sm_100a", 1, False),
                                              ("sm_103a", 1, True), ("sm_103a", 0, True)])
def test_nvcc_static_assert_by_target(tmp_path: Path, arch: str, lbo_mode: int,
                                      ok: bool) -> None:
    """nvcc 13.0: a static_assert on the check in a kernel, with the target the pass
    compiles (PTXGEN_PTX_TARGET): lbo_mode = 1 fails for sm_100a only."""
    assert (arch in isa_lbo_targets() or lbo_mode == 0) == ok
    nvcc = harness.tool("nvcc")
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    proc = harness.run([nvcc, *NVCC_FLAGS, harness.gencode(arch), f"-DLBO_MODE={lbo_mode}",
                        "-ptx", str(src), "-o", str(tmp_path / "k.ptx")], ok=ok)
    if not ok:
        assert proc.returncode != 0
        assert 'static assertion failed with "lbo_mode on this target"' in (
            proc.stdout + proc.stderr), proc.stdout + proc.stderr


def test_cpp_reads_sm_107a_words_with_its_layout(tmp_path: Path) -> None:
    """A start address above 256 KiB (bit 14) exists only in the sm107 layout (the DSL
    compiler's 15-bit mask on sm_107a): the target-aware check reads it there and calls
    it invalid on sm_100a, as descriptor_problems does with the same target."""
    from ptxgen.isa.smem_desc import SmemDescSm107

    w = SmemDescSm107(start_address=0x40000, leading_byte_offset=16, stride_byte_offset=1024,
                      swizzle="128b").encode()
    assert descriptor_problems(MMA, target="sm_107a", a_desc=w) == []
    (msg,) = descriptor_problems(MMA, target="sm_100a", a_desc=w)
    assert msg.startswith("a_desc: ")
    if not harness.has("g++"):
        harness.unavailable("g++")
    src = tmp_path / "v.cpp"
    src.write_text('#include "ptxgen/ptx/descriptor_rules.hpp"\n'
                   'using namespace ptxgen::ptx;\n'
                   f'static_assert(tcgen05_mma_a_desc_problem<target_index("sm_107a")>'
                   f'({w:#x}ull) == nullptr, "sm_107a");\n'
                   f'static_assert(tcgen05_mma_a_desc_problem<target_index("sm_100a")>'
                   f'({w:#x}ull) != nullptr, "sm_100a");\n'
                   'int main() { return 0; }\n')
    harness.run(["g++", *GXX_FLAGS, "-c", str(src), "-o", str(tmp_path / "v.o")])


# -- validation ---------------------------------------------------------------------------

MMA_SPEC = "instructions/tcgen05_mma.yaml"


def test_unknown_target_selector_is_refused(spec_core: Path) -> None:
    edit(spec_core, MMA_SPEC, "except_targets: [sm_103a]", "except_targets: [sm_103x]")
    line = line_of(spec_core, MMA_SPEC, "except_targets: [sm_103x]")
    errs = [e for e in errors(spec_core) if "sm_103x" in e]
    assert errs and all(f"{MMA_SPEC}:{line}:" in e for e in errs), errs


def test_target_selection_that_says_nothing_is_refused(spec_core: Path) -> None:
    """except_targets naming a target without the instruction (sm_90a), and targets
    naming every target of the forms, are errors at the key."""
    edit(spec_core, MMA_SPEC, "except_targets: [sm_103a]", "except_targets: [sm_90a]")
    edit(spec_core, MMA_SPEC, "except_targets: [sm_103a]", "targets: [sm_100f, sm_101f, "
         "sm_100a, sm_101a, sm_110f, sm_107a, sm_103a, sm_110a]")
    errs = errors(spec_core)
    l1 = line_of(spec_core, MMA_SPEC, "except_targets: [sm_90a]")
    l2 = line_of(spec_core, MMA_SPEC, "targets: [sm_100f, sm_101f")
    # at the key's value (the list)
    c1 = (spec_core / MMA_SPEC).read_text().splitlines()[l1 - 1].index("[") + 1
    c2 = (spec_core / MMA_SPEC).read_text().splitlines()[l2 - 1].index("[") + 1
    assert any(f"{MMA_SPEC}:{l1}:{c1}: descriptor rule 'lbo-mode-absolute-a' holds on every "
               "target of its forms: except_targets selects none of them (sm_100a," in e
               for e in errs), errs
    assert any(f"{MMA_SPEC}:{l2}:{c2}: descriptor rule 'lbo-mode-absolute-b' holds on every "
               "target of its forms: targets selects all of them (sm_100a," in e
               for e in errs), errs


def test_targets_and_except_targets_exclude_each_other(spec_core: Path) -> None:
    edit(spec_core, MMA_SPEC, "except_targets: [sm_103a]",
         "except_targets: [sm_103a]\n        targets: [sm_100a]")
    assert any(MMA_SPEC in e for e in errors(spec_core))


def test_version_views_keep_the_rule_on_the_targets_that_exist() -> None:
    """Before sm_103a exists (PTX ISA 8.7) the rule holds on every target of the view and
    is still target-dependent (written sm_75+); from 8.8 on it is the spec's."""
    from ptxgen.model import versions
    from ptxgen.pipeline import load_model

    spec = load_model(ROOT / "spec")
    for version, selectors, excepted in (("8.7", ("sm_75+",), ()),
                                         ("9.0", (), ("sm_103a",))):
        view = versions.at(spec, version)
        assert view.instructions is not None
        (rule,) = view.instructions.get("tcgen05_cp").descriptor_rules[:1]
        assert (rule.selectors, rule.except_selectors) == (selectors, excepted)
        assert rule.targets == frozenset(view.instructions.targets.names) - set(excepted)
        assert not rule.applies_on(None)
