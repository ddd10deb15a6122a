"""Issue 25: the probe's candidate forms (ptxgen.probe.candidates, ptxgen.probe.document),
without an assembler: what the spec of the PTX ISA 9.0 fixture (tests/fixtures/probe/
spec-9.0, before this issue's changes) is asked about.

* every value the spec knows in every qualifier slot: ``.ue8m0`` with
  ``.kind::mxf4nvf4.scale_vec::4X`` (mma.sync and mma.sp), a pair of spec tokens that the
  assembler's strings write together (``.s8.s4``, ptxas 13.5's ``_ldsm.s8.s4``) in
  ldmatrix's dotted-pair type slot;
* a token the strings pair with a known value (``.rn.f64``): ``.rn`` after ``.f64``;
* the document's syntax: templates expanded with their value sets, opcodes read with one
  value the spec does not know or one extra token.

That ptxas accepts these (and the probe proposes them) is tests/test_probe.py's (the
same fixture, ptxas 13.5); the spec's final forms are the conformance matrix's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ptxgen.model.instructions import InstructionSet
from ptxgen.pipeline import load_model
from ptxgen.probe.candidates import (
    document_candidates,
    known_value_candidates,
    read_with_one_new,
)
from ptxgen.probe.document import expand, opcodes, read_folder, value_sets

ROOT = Path(__file__).resolve().parent.parent
OLD_SPEC = ROOT / "tests" / "fixtures" / "probe" / "spec-9.0"
DOC = ROOT.parent / "shared" / "ptx-isa-9.4"
PAIRS = frozenset({".s8.s4", ".u8.u4", ".rn.f64", ".1.2", ".cta.arrive"})


@pytest.fixture(scope="module")
def old() -> InstructionSet:
    iset = load_model(OLD_SPEC).instructions
    assert iset is not None
    return iset


def _siblings(iset: InstructionSet) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for ins in iset.instructions:
        for q in ins.qualifiers:
            if not q.flag and not q.numeric:
                out.setdefault(q.name, set()).update(q.values)
    return out


def _known(iset: InstructionSet) -> set[str]:
    return {p for i in iset.instructions for q in i.qualifiers for v in q.values
            for p in v.split(".")}


# A syntax block in the document's form (a template, then the value sets it uses).
BLOCK = """
ldmatrix.sync.aligned.m8n16.num{.ss}.dtype.ctype            r, [p];

.num     = {.x1, .x2, .x4};
.ss      = {.shared{::cta}};
.dtype   = { .s8 };
.ctype   = { .s4 };
"""


def test_templates_expand_with_their_value_sets() -> None:
    sets = value_sets(BLOCK)
    assert sets["ss"] == [".shared", ".shared::cta"] and sets["num"] == [".x1", ".x2", ".x4"]
    ops = expand("ldmatrix.sync.aligned.m8n16.num{.ss}.dtype.ctype", sets)
    assert len(ops) == 9 and "ldmatrix.sync.aligned.m8n16.x4.shared::cta.s8.s4" in ops
    # a product larger than the cap is sampled, first and last kept in order
    big = expand("x.a.a.a", {"a": [f".v{i}" for i in range(10)]}, cap=50)
    assert len(big) == 50 and big[0] == "x.v0.v0.v0" and len(set(big)) == 50


def test_opcodes_go_to_the_longest_instruction_name(tmp_path: Path, old: InstructionSet
                                                    ) -> None:
    (tmp_path / "s.md").write_text("Syntax\n\n```ptx\n" + BLOCK + "```\n\nExamples\n\n"
                                   "```ptx\nmma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn"
                                   " {d0, d1}, {a0}, {b0}, {c0, c1};\n```\n")
    got = opcodes(read_folder([tmp_path]), [i.name for i in old.instructions])
    assert len(got["ldmatrix.sync.aligned"]) == 9
    assert got["mma.sync.aligned"] == ["mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn"]


def test_reading_with_one_new_value_or_token(old: InstructionSet) -> None:
    ld = old.get("ldmatrix")
    ((params, new),) = read_with_one_new(ld, "ldmatrix.sync.aligned.m8n16.x2.shared.s8.s4")[:1]
    assert new == ("value", "type", "s8.s4") and params["ss"] == "shared"
    mma = old.get("mma_sync")
    params, new = read_with_one_new(mma, "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn")[0]
    assert new == ("insert", "ctype", ".rn") and params["ctype"] == "f64"
    valid = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    assert read_with_one_new(mma, valid)[0][1] is None


def test_known_values_in_every_slot(old: InstructionSet) -> None:
    sib, known = _siblings(old), _known(old)
    mma = {c.opcode: c for c in known_value_candidates(old.get("mma_sync"), sib, PAIRS, known)}
    c = mma["mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X"
            ".f32.e2m1.e2m1.f32.ue8m0"]
    assert c.new is None and c.source == "known-values"
    rn = mma["mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn"]
    assert rn.new == ("insert", "ctype", ".rn") and rn.source == "string-pairs"
    assert rn.kernel.lines[-1].startswith("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn ")
    sp = {c.opcode for c in known_value_candidates(old.get("mma_sp_ordered_metadata"), sib,
                                                   PAIRS, known)}
    assert ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4nvf4.block_scale"
            ".scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0") in sp
    ld = {c.opcode: c for c in known_value_candidates(old.get("ldmatrix"), sib, PAIRS, known)}
    s8s4 = ld["ldmatrix.sync.aligned.m8n16.x1.s8.s4"]
    assert s8s4.new == ("value", "type", "s8.s4")
    # by default (no --every-value) only values the slot does not have: .s8.s4, not .ue8m0
    narrow = {c.opcode for c in known_value_candidates(old.get("ldmatrix"), sib, PAIRS, known,
                                                       every_value=False)}
    assert "ldmatrix.sync.aligned.m8n16.x1.s8.s4" in narrow
    assert not any(c.startswith("ldmatrix.sync.aligned.m8n8.x1.trans.b8") for c in narrow)
    narrow_mma = known_value_candidates(old.get("mma_sync"), sib, PAIRS, known,
                                        every_value=False)
    assert narrow_mma and all(c.new is not None and c.new[0] == "value" for c in narrow_mma)
    # valid forms and recorded ptxas leniencies are no candidates
    assert not any(o.startswith("ldmatrix.sync.aligned.m8n8.x1.b16") for o in ld)
    assert not any(".x8." in o for o in ld)


def test_document_candidates(old: InstructionSet) -> None:
    ld = old.get("ldmatrix")
    got = document_candidates(ld, expand("ldmatrix.sync.aligned.m8n16.num{.ss}.dtype.ctype",
                                         value_sets(BLOCK)))
    assert len(got) == 9 and {c.new for c in got} == {("value", "type", "s8.s4")}
    assert all(c.kernel.lines[-1].startswith(c.opcode + " ") for c in got)


def test_the_fixture_syntax_lines_are_candidates(old: InstructionSet) -> None:
    """tests/fixtures/probe/doc (test_probe's --doc): .scale_vec::4X with .ue8m0 and the .f64
    rounding for the 9.0 fixture spec."""
    docs = read_folder([ROOT / "tests" / "fixtures" / "probe" / "doc"])
    ops = opcodes(docs, [i.name for i in old.instructions])
    got = {c.opcode: c.new for i in old.instructions
           for c in document_candidates(i, ops[i.name])}
    assert got["mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X"
               ".f32.e2m1.e2m1.f32.ue8m0"] is None
    assert got["mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64.rz"] == ("insert", "ctype",
                                                                          ".rz")
    assert got["ldmatrix.sync.aligned.m8n16.x4.shared::cta.s8.s4"] == ("value", "type", "s8.s4")


def test_the_9_4_document_writes_this_issue_s_forms(old: InstructionSet) -> None:
    """Where the PTX ISA 9.4 document is at hand (../shared/ptx-isa-9.4), its syntax and
    examples write the forms this issue added, and they are candidates for the old spec."""
    if not DOC.is_dir():
        pytest.skip(f"the PTX ISA 9.4 document ({DOC}) is not at hand")
    names = [i.name for i in old.instructions]
    ops = opcodes(read_folder([DOC / "9-instruction-set"]), names)
    want = {"ldmatrix": "ldmatrix.sync.aligned.m8n16.x4.shared::cta.s8.s4",
            "mma_sync": "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn"}
    for ins_id, opcode in want.items():
        ins = old.get(ins_id)
        assert opcode in ops[ins.name]
        assert opcode in {c.opcode for c in document_candidates(ins, ops[ins.name])}


def test_a_value_that_spells_two_own_values_is_no_candidate() -> None:
    """cp.async.bulk's sem ``.relaxed.cluster`` (one dotted value) is mbarrier.arrive's sem
    ``.relaxed`` and scope ``.cluster``: the spec reads that opcode as a form it has, so it
    is no new value; a dotted value without such a reading (``.relaxed.gpu``: mbarrier has
    no .gpu scope) and a plain one (``.weak``) still are."""
    from ptxgen.isa import ptx
    iset = ptx.instruction_set()
    sib = _siblings(iset)
    assert {"relaxed.cta", "relaxed.cluster", "relaxed.gpu", "weak"} <= sib["sem"]
    cands = known_value_candidates(iset.get("mbarrier_arrive"), sib, PAIRS, _known(iset),
                                   every_value=False)
    sem = {c.new[2] for c in cands if c.new is not None and c.new[:2] == ("value", "sem")}
    assert not sem & {"relaxed.cta", "relaxed.cluster"}
    assert {"relaxed.gpu", "relaxed.sys", "weak"} <= sem
