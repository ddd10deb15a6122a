"""Rules on descriptor operand values that ptxas cannot check (the operand is a run-time
register): spec/instructions/tcgen05_mma.yaml ``descriptor_rules`` on ``idesc``, checked by
``ptxgen.isa.ptx.descriptor_problems`` with the generated (CUTLASS-checked) decoders, and
the validation of the links between instruction operands and spec/descriptors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_validate import edit, errors, line_of

from ptxgen.isa import DESCRIPTORS, ptx
from ptxgen.isa.instr_desc import InstrDescF16, InstrDescMxf4nvf4
from ptxgen.isa.ptx import PtxFormError, descriptor_problems

TC = "instructions/tcgen05_mma.yaml"
ASHIFT = "tcgen05.mma.cta_group::1.kind::f16.ashift"


def f16_word(**fields: int) -> int:
    base = {"dtype": int(InstrDescF16.Dtype.F32), "n": 64, "m": 128}
    return InstrDescF16(**{**base, **fields}).encode()


def ids(problems: list[str]) -> list[str]:
    return [p.rsplit("[", 1)[1].rstrip("]") for p in problems]


def test_ashift_needs_m_128_or_256() -> None:
    """Seed 002: "Qualifier .ashift is only allowed with M = 128 or M = 256"; every M the
    f16 descriptor can encode is tried (.cta_group::1 itself takes M = 64 or 128 only)."""
    field = next(f for f in InstrDescF16.FIELDS if f.name == "m")
    ms = [m for m in range(0, 512, 16) if _encodes(m)]
    assert ms == [32, 64, 128, 256], ms
    for m in ms:
        got = ids(descriptor_problems(ASHIFT, idesc=f16_word(m=m)))
        expected = ([] if m in (128, 256) else ["ashift-m"]) + \
            ([] if m in (64, 128) else ["shape-cta-group-1"])
        assert got == expected, (m, got, field)
    # without .ashift any M is fine
    assert descriptor_problems("tcgen05.mma.cta_group::1.kind::f16", idesc=f16_word(m=64)) == []


def _encodes(m: int) -> bool:
    try:
        f16_word(m=m)
    except ValueError:
        return False
    return True


def test_message_names_the_field_and_the_allowed_values() -> None:
    (msg,) = descriptor_problems(ASHIFT, idesc=f16_word(m=64))
    assert msg == (".ashift is only allowed with M = 128 or M = 256 "
                   "(idesc: m = 64; allowed: 128, 256) [ashift-m]")


@pytest.mark.parametrize("kind", ["f16", "tf32", "f8f6f4", "i8"])
def test_sparsity_follows_the_opcode(kind: str) -> None:
    cls = DESCRIPTORS["instr_desc"][kind]
    # the first allowed value of every enum field, M = 128, N = 64
    fields = {f.name: min(f.names.values()) for f in cls.FIELDS if f.names}
    fields.update(n=64, m=128)
    dense = cls(**{**fields, "sparsity": int(cls.Sparsity.DENSE)}).encode()
    sparse = cls(**{**fields, "sparsity": int(cls.Sparsity.SPARSE)}).encode()
    sp_op = f"tcgen05.mma.sp.cta_group::1.kind::{kind}"
    op = f"tcgen05.mma.cta_group::1.kind::{kind}"
    assert ids(descriptor_problems(sp_op, idesc=dense)) == ["sp-sparse-idesc"]
    assert descriptor_problems(sp_op, idesc=sparse) == []
    assert ids(descriptor_problems(op, idesc=sparse)) == ["dense-idesc"]
    assert descriptor_problems(op, idesc=dense) == []


def test_scale_vec_spellings_need_k_64_or_128() -> None:
    """Seed 002: .block16 / .block32 alias .scale_vec::4X / ::2X only for K = 64 or 128;
    Table 44's k_dim = 1 is K = 96."""
    def word(k_dim: int, scale_type: str) -> int:
        return InstrDescMxf4nvf4(
            atype=1, btype=1, n=64, m=128, k_dim=k_dim, scale_b_id=0, scale_a_id=0,
            scale_type=int(InstrDescMxf4nvf4.ScaleType[scale_type.upper()])).encode()

    base = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale"
    for spelling, stype in (("scale_vec::4X", "ue4m3"), ("scale_vec::2X", "ue8m0")):
        assert descriptor_problems(f"{base}.{spelling}", idesc=word(0, stype)) == []
        assert ids(descriptor_problems(f"{base}.{spelling}", idesc=word(1, stype))) == [
            "scale-vec-k"]
    for spelling, stype in (("block16", "ue4m3"), ("block32", "ue8m0")):
        assert descriptor_problems(f"{base}.{spelling}", idesc=word(1, stype)) == []


def test_a_word_the_descriptor_refuses_is_reported() -> None:
    (msg,) = descriptor_problems("tcgen05.mma.cta_group::1.kind::f16", idesc=0x40)
    assert msg.startswith("idesc: ") and "reserved" in msg and "bit 6" in msg, msg


def test_invalid_questions_raise() -> None:
    with pytest.raises(PtxFormError, match="not a descriptor operand"):
        descriptor_problems(ASHIFT, enable_input_d=0)
    with pytest.raises(PtxFormError, match=re.escape("tcgen05.mma.cta_group::3")):
        descriptor_problems("tcgen05.mma.cta_group::3.kind::f16", idesc=0)
    assert "descriptor_problems" in ptx.__all__


# -- validation of the links -------------------------------------------------------------

def test_rule_field_must_exist(spec_core: Path) -> None:
    edit(spec_core, TC, "require: {m: [128, 256]}", "require: {mm: [128, 256]}")
    line = line_of(spec_core, TC, "require: {mm: [128, 256]}")
    errs = errors(spec_core)
    assert any(e.endswith(f"{TC}:{line}:19: instr_desc (kind f16) has no field 'mm'")
               for e in errs), errs


def test_rule_value_must_be_a_value_of_the_field(spec_core: Path) -> None:
    edit(spec_core, TC, "require: {sparsity: [sparse]}", "require: {sparsity: [sprse]}")
    line = line_of(spec_core, TC, "require: {sparsity: [sprse]}")
    errs = errors(spec_core)
    assert any(e.endswith(f"{TC}:{line}:29: instr_desc (kind f16): 'sprse' is not a value of "
                          "sparsity (dense, sparse)") for e in errs), errs


def test_descriptor_must_exist(spec_core: Path) -> None:
    edit(spec_core, TC, "descriptor: {name: instr_desc, kind: kind}",
         "descriptor: {name: instr_dsc, kind: kind}")
    errs = errors(spec_core)
    assert any("no descriptor 'instr_dsc' in the spec" in e for e in errs), errs


def test_rule_operand_must_be_a_descriptor(spec_core: Path) -> None:
    edit(spec_core, TC, "        operand: idesc\n        when: {ashift: true}",
         "        operand: enable_input_d\n        when: {ashift: true}")
    errs = errors(spec_core)
    assert any("'enable_input_d' is not a descriptor operand (one with `descriptor`: d_tmem, "
               "a_desc, a_tmem, b_desc, lut_tmem, sp_meta_tmem, idesc, scale_a_tmem, "
               "scale_b_tmem)" in e for e in errs), errs


# -- links on an alternative of a choice operand (tcgen05.mma's a_tmem, issue 16) ------------

A_TMEM = "descriptor: {name: tmem_addr}, description: Tensor Memory address of A"
A_TMEM_RULE = """    descriptor_rules:
      - id: a-tmem-lane-0
        operand: a_tmem
        when: {ashift: true}
        require: {lane: [0]}
        message: test rule on the lane of a_tmem
        provenance: {seeds: ["002"]}
"""


def test_alternative_descriptor_must_exist(spec_core: Path) -> None:
    edit(spec_core, TC, A_TMEM, A_TMEM.replace("tmem_addr", "tmem_adr"))
    line = line_of(spec_core, TC, "{name: tmem_adr}")
    errs = errors(spec_core)
    assert any(f"{TC}:{line}:" in e and "no descriptor 'tmem_adr' in the spec" in e
               for e in errs), errs


def test_rule_on_an_alternative_is_checked(spec_core: Path) -> None:
    """A rule may name an alternative of a choice operand; its fields are checked against
    that alternative's descriptor (tmem_addr has lane and column, no m)."""
    edit(spec_core, TC, "    descriptor_rules:\n", A_TMEM_RULE.replace("lane: [0]", "m: [0]")
         + "      # the real rules\n")
    line = line_of(spec_core, TC, "require: {m: [0]}")
    errs = errors(spec_core)
    assert any(e.endswith(f"{TC}:{line}:19: tmem_addr has no field 'm'") for e in errs), errs


def test_rule_on_an_alternative_reaches_python_and_cpp(spec_core: Path,
                                                       tmp_path: Path) -> None:
    """With a rule on a_tmem the model checks it in the forms that take a_tmem only, and the
    C++ emitter writes a constexpr checker for it that g++ evaluates."""
    from cpp import harness
    from cpp.harness import GXX_FLAGS

    from ptxgen.emit import render_all
    from ptxgen.emit.cpp import descriptor_rules
    from ptxgen.model.instructions import descriptor_problems as engine_problems
    from ptxgen.pipeline import load_model

    edit(spec_core, TC, "    descriptor_rules:\n", A_TMEM_RULE + "      # the real rules\n")
    spec = load_model(spec_core)
    assert spec.instructions is not None
    decode = ptx._decoder(None)
    ok, bad = 0x0000_0040, 0x0020_0040
    assert engine_problems(spec.instructions, ASHIFT, {"a_tmem": ok}, decode) == []
    (msg,) = engine_problems(spec.instructions, ASHIFT, {"a_tmem": bad}, decode)
    assert msg.endswith("[a-tmem-lane-0]") and "lane = 32" in msg, msg
    assert engine_problems(spec.instructions, "tcgen05.mma.cta_group::1.kind::f16",
                           {"a_tmem": bad}, decode) == []
    # the fixture's own headers: descriptor_rules.hpp specializes the check structs that the
    # wrapper headers of the same spec declare (tcgen05_mma.hpp: tcgen05_mma_a_tmem_check)
    files = render_all(spec)
    text = files[descriptor_rules.OUT].decode()
    assert "tcgen05_mma_a_tmem_problem" in text
    assert "struct tcgen05_mma_a_tmem_check {" in files[
        "include/ptxgen/ptx/tcgen05_mma.hpp"].decode()
    include = tmp_path / "include"
    for rel, data in files.items():
        if rel.startswith("include/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_bytes(data)
    src = tmp_path / "t.cpp"
    src.write_text(
        '#include "ptxgen/ptx/descriptor_rules.hpp"\n'
        "using namespace ptxgen::ptx;\n"
        f"static_assert(tcgen05_mma_a_tmem_problem<true>({ok:#x}u) == nullptr, \"ok\");\n"
        f"static_assert(tcgen05_mma_a_tmem_problem<true>({bad:#x}u) != nullptr, \"bad\");\n"
        f"static_assert(tcgen05_mma_a_tmem_problem<false>({bad:#x}u) == nullptr, \"off\");\n"
        "int main() { return 0; }\n")
    flags = [f for f in GXX_FLAGS if not f.startswith("-I")]  # this include tree only
    harness.run([harness.tool("g++"), *flags, f"-I{include}", str(src), "-o",
                 str(tmp_path / "t")])


# -- shapes rules (issue 12) -----------------------------------------------------------------

def test_shape_field_must_exist(spec_core: Path) -> None:
    edit(spec_core, TC, "- {m: [64, 128], n: {from: 8, to: 256, step: 8}}",
         "- {mm: [64, 128], n: {from: 8, to: 256, step: 8}}")
    errs = errors(spec_core)
    assert any("instr_desc (kind f16): no field 'mm'" in e for e in errs), errs


def test_shape_value_must_fit_the_field(spec_core: Path) -> None:
    edit(spec_core, TC, "- {m: [64, 128], n: {from: 8, to: 256, step: 8}}",
         "- {m: [64, 120], n: {from: 8, to: 256, step: 8}}")
    line = line_of(spec_core, TC, "- {m: [64, 120], n: {from: 8, to: 256, step: 8}}")
    errs = errors(spec_core)
    assert any(f"{TC}:{line}:" in e and "m = 120 does not fit the field (a multiple of 16"
               in e for e in errs), errs


def test_shape_fields_must_be_dimensions_or_ints(spec_core: Path) -> None:
    edit(spec_core, TC, "- {m: [64, 128], n: {from: 8, to: 256, step: 8}}",
         "- {m: [64, 128], dtype: [1]}")
    errs = errors(spec_core)
    assert any("dtype is no dimension or int field (it is enum)" in e
               for e in errs), errs


def test_a_rule_no_seed_states_needs_ptxas_or_its_document(spec_core: Path) -> None:
    edit(spec_core, TC, "provenance: {seeds: [], document: 'PTX ISA 9.0, 9.7.16.2.1 Matrix Shape, "
         "Table 39 \"Various combinations of .kind and shapes\"', note: tcgen05-shapes}",
         "provenance: {seeds: [], note: tcgen05-shapes}")
    errs = errors(spec_core)
    assert any("needs its ptxas evidence (provenance.ptxas) or the PTX ISA section that "
               "states it (provenance.document)" in e for e in errs), errs
