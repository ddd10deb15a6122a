"""`ptxgen diff` rules, one paired fixture per rule (tests/fixtures/diff/<case>/{old,new}).

Every fixture is a small spec folder that validates against the real schema: the
descriptor cases are one descriptor file, the instruction and target cases a
targets.yaml and instructions/demo.yaml. The expected rule ids are restated here from
what each fixture changes (see the comment at the top of each fixture file), never
from ptxgen's own output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT
from ptxgen.diff import Change, Report, compare_revisions, rules
from ptxgen.diff.revisions import load_revision

FIXTURES = ROOT / "tests" / "fixtures" / "diff"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "old").is_dir())

# case -> every rule id the pair must report (and no other).
EXPECTED: dict[str, set[str]] = {
    "class-renamed": {"class-renamed"},
    "constant-reclassified": {"constant-reclassified"},
    "descriptor-added": {"descriptor-added"},
    "descriptor-removed": {"descriptor-removed"},
    "doc-changed": {"doc-changed"},
    "field-added": {"field-added", "reserved-taken"},
    "field-added-required": {"field-added-required", "reserved-taken"},
    "field-encoding-changed": {"field-encoding-changed", "values-narrowed", "values-widened"},
    "field-moved": {"field-moved", "reserved-absorbed", "reserved-added"},
    "field-removed": {"field-removed", "reserved-added"},
    "field-renamed": {"field-renamed"},
    "field-resized": {"field-resized", "values-widened", "reserved-absorbed"},
    "field-resized-block-scaled-m": {"field-resized", "field-encoding-changed",
                                     "values-narrowed", "reserved-added", "doc-changed"},
    "field-type-changed": {"field-type-changed"},
    "fixed-added": {"fixed-added"},
    "fixed-changed": {"fixed-changed"},
    "fixed-removed": {"fixed-removed"},
    "helper-added": {"helper-added"},
    "helper-changed": {"helper-changed"},
    "helper-removed": {"helper-removed"},
    "kind-added": {"kind-added"},
    "variant-added": {"variant-added", "variant-fields"},
    "variant-fields": {"variant-added", "variant-fields"},
    "variant-removed": {"variant-removed"},
    "variant-changed": {"variant-changed"},
    "kind-removed": {"kind-removed"},
    "note-added": {"note-added"},
    "note-changed": {"note-changed"},
    "note-removed": {"note-removed"},
    "reserved-absorbed": {"field-resized", "values-widened", "reserved-absorbed"},
    "reserved-added": {"field-resized", "values-narrowed", "reserved-added"},
    "reserved-taken": {"field-added", "reserved-taken"},
    "value-added": {"value-added"},
    "value-removed": {"value-removed"},
    "value-renamed": {"value-renamed"},
    "value-renumbered": {"value-renumbered"},
    "values-narrowed": {"values-narrowed"},
    "values-widened": {"values-widened"},
    "word-size-changed": {"word-size-changed"},
    "availability-narrowed": {"availability-narrowed"},
    "availability-widened": {"availability-widened"},
    # instructions: demo.mma (shape m8/m16, kind f16/f8, flag sat, optional scale,
    # operands d, a (a_reg | a_mem), b, optional mask) and its gates.
    "instruction-added": {"instruction-added"},
    "instruction-removed": {"instruction-removed"},
    "form-added": {"form-added"},
    "form-removed": {"form-removed"},
    "qualifier-added": {"qualifier-added", "form-added"},  # the forms with .relu
    "qualifier-removed": {"qualifier-removed", "form-removed"},  # the forms with .satfinite
    "qualifier-value-added": {"qualifier-value-added", "form-added"},
    "qualifier-value-removed": {"qualifier-value-removed", "form-removed"},
    "operand-added": {"operand-added", "form-added"},  # the forms that pass bias
    "operand-added-required": {"operand-added-required"},
    "operand-removed": {"operand-removed"},
    "operand-retyped": {"operand-retyped"},
    "support-widened": {"support-widened", "gate-targets-changed"},
    "support-narrowed": {"support-narrowed", "gate-version-changed"},
    "gate-version-changed": {"gate-version-changed", "support-widened"},  # sm_90a only
    "gate-targets-changed": {"gate-targets-changed"},  # same targets, other order
    "wrapper-added": {"wrapper-added"},
    "wrapper-removed": {"wrapper-removed"},
    "spelling-added": {"spelling-added"},  # the orders read and an alias name
    "spelling-removed": {"spelling-removed"},
    "spelling-changed": {"spelling-changed"},  # head 1 -> head 2
    # targets
    "target-added": {"target-added"},
    "target-removed": {"target-removed"},
    "target-renamed": {"target-renamed"},
    "ptx-isa-version-added": {"ptx-isa-version-added"},
    "ptx-isa-version-removed": {"ptx-isa-version-removed"},
}


def report(case: str, *, swap: bool = False, generated: bool = False) -> Report:
    sides = [FIXTURES / case / "old", FIXTURES / case / "new"]
    if swap:
        sides.reverse()
    old, new = (load_revision(p, label=p.name, type_="folder", spec_dir=p.as_posix())
                for p in sides)
    return compare_revisions(old, new, generated=generated)


def only(rep: Report, rule_id: str) -> Change:
    found = [c for c in rep.changes if c.rule == rule_id]
    assert len(found) == 1, rep.changes
    return found[0]


# -- every rule has its pair, every pair reports exactly what it changes ------------------

def test_every_rule_has_a_paired_fixture() -> None:
    ids = {r.id for r in rules()}
    assert {r.area for r in rules()} == {"descriptors", "instructions", "targets"}
    assert ids <= set(CASES), sorted(ids - set(CASES))
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_fixture_reports_its_rules(case: str) -> None:
    rep = report(case)
    assert {c.rule for c in rep.changes} == EXPECTED[case]
    if case in {r.id for r in rules()}:
        assert case in {c.rule for c in rep.changes}


@pytest.mark.parametrize("case", CASES)
def test_severity_and_exit_code_follow_the_catalogue(case: str) -> None:
    catalogue = {r.id: r.severity for r in rules()}
    rep = report(case)
    for c in rep.changes:
        assert c.severity == catalogue[c.rule]
    assert rep.exit_code == (1 if any(c.severity == "breaking" for c in rep.changes) else 0)


@pytest.mark.parametrize("case", CASES)
def test_a_spec_has_no_changes_against_itself(case: str) -> None:
    side = FIXTURES / case / "new"
    a = load_revision(side, label="a", type_="folder", spec_dir=side.as_posix())
    b = load_revision(side, label="b", type_="folder", spec_dir=side.as_posix())
    assert compare_revisions(a, b).changes == ()


@pytest.mark.parametrize("case", CASES)
def test_locations_point_into_the_fixture_files(case: str) -> None:
    for c in report(case).changes:
        assert c.old or c.new
        for loc, side in ((c.old, "old"), (c.new, "new")):
            if loc is None:
                continue
            path = ROOT / loc.file
            assert path.is_file() and FIXTURES / case / side in path.parents, loc
            assert 1 <= loc.line <= len(path.read_text().splitlines()), loc


INVERSES = [("descriptor-added", "descriptor-removed"), ("kind-added", "kind-removed"),
            ("value-added", "value-removed"), ("values-narrowed", "values-widened"),
            ("helper-added", "helper-removed"), ("note-added", "note-removed"),
            ("field-added", "field-removed"),
            ("availability-narrowed", "availability-widened"),
            ("instruction-added", "instruction-removed"), ("form-added", "form-removed"),
            ("qualifier-added", "qualifier-removed"),
            ("qualifier-value-added", "qualifier-value-removed"),
            ("operand-added", "operand-removed"), ("operand-added-required", "operand-removed"),
            ("support-widened", "support-narrowed"), ("wrapper-added", "wrapper-removed"),
            ("target-added", "target-removed"),
            ("ptx-isa-version-added", "ptx-isa-version-removed")]


@pytest.mark.parametrize(("forward", "backward"), INVERSES)
def test_swapping_old_and_new_gives_the_inverse_rule(forward: str, backward: str) -> None:
    swapped = {c.rule for c in report(forward, swap=True).changes}
    assert backward in swapped and forward not in swapped


# -- what the changes say ---------------------------------------------------------------------

def line_of(path: Path, pattern: str, nth: int = 0) -> int:
    lines = [i + 1 for i, text in enumerate(path.read_text().splitlines())
             if re.search(pattern, text)]
    return lines[nth]


def test_field_moved_by_one_bit() -> None:
    # Real case: n moves from bits 8-13 to 9-14; bit 8 becomes reserved, bit 14 is taken.
    rep = report("field-moved")
    c = only(rep, "field-moved")
    assert (c.subject, c.before, c.after) == ("demo_desc.n", "8-13", "9-14")
    assert c.severity == "breaking"
    for loc, side in ((c.old, "old"), (c.new, "new")):
        assert loc is not None
        path = FIXTURES / "field-moved" / side / "demo_desc.yaml"
        assert loc.line == line_of(path, r"- name: n$")
    assert only(rep, "reserved-added").subject == "demo_desc.bits[8]"
    assert only(rep, "reserved-absorbed").subject == "demo_desc.bits[14]"


def test_block_scaled_m_shift_4_at_24_28_versus_shift_7_at_27_28() -> None:
    # Real case: CUTLASS writes M >> 4 into bits 24-28 for the block-scaled kinds; the PTX
    # tables write M >> 7 into bits 27-28 and reserve 24-26. Only the block-scaled layout
    # changes, for both of its kinds at once; the dense kind (f16) is untouched.
    rep = report("field-resized-block-scaled-m")
    resized = only(rep, "field-resized")
    assert resized.kinds == ("mxf8f6f4", "mxf4")
    assert (resized.before, resized.after) == ("24-28", "27-28")
    enc = only(rep, "field-encoding-changed")
    assert (enc.before, enc.after) == ("M >> 4", "M >> 7")
    narrowed = only(rep, "values-narrowed")
    # multiples of 16 up to 496 before, multiples of 128 up to 384 after: 28 values go
    assert "no longer allows 16, 32, 48, 64, 80, 96, 112, 144" in narrowed.message
    assert "(28 values)" in narrowed.message
    assert only(rep, "reserved-added").subject == "bs_desc.bits[24-26]"
    assert all(c.kinds == ("mxf8f6f4", "mxf4") for c in rep.changes)
    assert rep.exit_code == 1


def test_kind_mxf4nvf4_appears() -> None:
    # Real case: .kind::mxf4nvf4 (PTX ISA 8.7) joins the layout of .kind::mxf4.
    rep = report("kind-added")
    c = only(rep, "kind-added")
    assert c.kinds == ("mxf4nvf4",)
    assert "BsDescMxf4nvf4" in c.message
    assert c.old is None and c.new is not None
    assert rep.exit_code == 0


def test_named_values() -> None:
    assert only(report("value-renumbered"), "value-renumbered").before == 1
    assert only(report("value-renumbered"), "value-renumbered").after == 2
    renamed = only(report("value-renamed"), "value-renamed")
    assert renamed.subject == "demo_desc.dtype.f32"
    assert (renamed.before, renamed.after) == ("f32", "fp32")
    added = only(report("value-added"), "value-added")
    assert (added.subject, added.after) == ("demo_desc.dtype.bf16", 2)
    new_line = line_of(FIXTURES / "value-added" / "new" / "demo_desc.yaml", r"name: bf16")
    assert added.new is not None and added.new.line == new_line


def test_values_narrowed_names_the_values_that_go() -> None:
    c = only(report("values-narrowed"), "values-narrowed")
    assert c.message == "shift: no longer allows 3 (was 0 to 3; now 0 to 2)"


def test_constants() -> None:
    c = only(report("fixed-changed"), "fixed-changed")
    assert (c.subject, c.before, c.after) == ("demo_desc.bits[16-18]", "bits 16-18 = 0b001",
                                              "bits 16-18 = 0b010")
    c = only(report("fixed-added"), "fixed-added")
    assert (c.before, c.after) == ("bits 19-21 reserved", "bits 19-21 = 0b101")
    c = only(report("fixed-removed"), "fixed-removed")
    assert (c.before, c.after) == ("bits 16-18 = 0b001", "bits 16-18 reserved")


def test_rename_needs_same_bits_and_type() -> None:
    c = only(report("field-renamed"), "field-renamed")
    assert (c.before, c.after) == ("shift", "max_shift")
    # A new field on other bits is not a rename of a removed one.
    assert "field-renamed" not in {c.rule for c in report("field-removed").changes}


def test_field_added_without_default_breaks() -> None:
    c = only(report("field-added-required"), "field-added-required")
    assert c.severity == "breaking" and "no default" in c.message


# -- --generated ------------------------------------------------------------------------------

def test_generated_lists_files_and_symbols_of_a_rename() -> None:
    gen = report("field-renamed", generated=True).generated
    assert gen is not None
    files = {f.path: f.status for f in gen.files}
    assert files["python/demo_desc.py"] == "changed"
    assert files["include/ptxgen/demo_desc.hpp"] == "changed"
    symbols = {s.symbol.key: s.status for s in gen.symbols}
    assert symbols["DemoDesc.shift"] == "removed"
    assert symbols["DemoDesc.max_shift"] == "added"
    added = next(s for s in gen.symbols if s.symbol.key == "DemoDesc.max_shift")
    assert added.symbol.python == "ptxgen.isa.demo_desc.DemoDesc.max_shift"
    assert added.symbol.cpp == "ptxgen::DemoDesc::max_shift"


def test_generated_files_of_a_new_descriptor() -> None:
    gen = report("descriptor-added", generated=True).generated
    assert gen is not None
    added = {f.path for f in gen.files if f.status == "added"}
    assert {"python/extra_desc.py", "include/ptxgen/extra_desc.hpp"} <= added
    assert "python/__init__.py" in {f.path for f in gen.files if f.status == "changed"}
    assert {"ExtraDesc", "ExtraDesc.count"} <= {s.symbol.key for s in gen.symbols
                                                if s.status == "added"}


def test_generated_symbols_of_a_moved_field() -> None:
    gen = report("field-moved", generated=True).generated
    assert gen is not None
    changed = {s.symbol.key: (s.before, s.after) for s in gen.symbols if s.status == "changed"}
    assert set(changed) == {"DemoDesc.n", "DemoDesc.RESERVED_MASK"}
    before, after = changed["DemoDesc.RESERVED_MASK"]
    # bits 6-7, 14-15, 19-31 reserved before; 6-8, 15, 19-31 after
    assert int(str(before), 16) == 0xC0 | 0xC000 | 0xFFF80000
    assert int(str(after), 16) == 0x1C0 | 0x8000 | 0xFFF80000


def test_generated_helper_symbol() -> None:
    gen = report("helper-changed", generated=True).generated
    assert gen is not None
    (sym,) = gen.symbols
    assert sym.symbol.key == "SwzDesc.base_offset"
    assert sym.symbol.python == "ptxgen.isa.swz_desc.base_offset"
    assert "64b: 256" in str(sym.after) and "64b: 512" in str(sym.before)
