"""`ptxgen diff` for instructions and targets: what each rule says (subjects, severities,
locations, form counts), and `ptxgen diff --ptx-isa A B` on the views fixture and on
the real spec (mxf4nvf4 at 8.7, block16/block32 at 8.8, sm_101* renamed sm_110* at 9.0).

Expected counts and lines are derived here from the fixture files and from the model
(which forms exist at which version), not from the diff's own output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from conftest import ROOT, SPEC, run_main
from ptxgen.diff import Change, Report, compare_revisions, diff
from ptxgen.diff.revisions import load_revision
from ptxgen.model.instructions import FALSE, Form, InstructionSet, vkey
from ptxgen.model.versions import supported_at
from ptxgen.pipeline import load_model

FIXTURES = ROOT / "tests" / "fixtures" / "diff"
VIEWS = FIXTURES / "views" / "spec"


def report(case: str) -> Report:
    old, new = (load_revision(FIXTURES / case / side, label=side, type_="folder",
                              spec_dir=(FIXTURES / case / side).as_posix())
                for side in ("old", "new"))
    return compare_revisions(old, new)


def only(rep: Report, rule_id: str) -> Change:
    found = [c for c in rep.changes if c.rule == rule_id]
    assert len(found) == 1, rep.changes
    return found[0]


def line_of(path: Path, pattern: str, nth: int = 0) -> int:
    lines = [i + 1 for i, text in enumerate(path.read_text().splitlines())
             if re.search(pattern, text)]
    return lines[nth]


def demo(case: str, side: str) -> Path:
    return FIXTURES / case / side / "instructions" / "demo.yaml"


def targets_file(case: str, side: str) -> Path:
    return FIXTURES / case / side / "targets.yaml"


# The demo instruction of the fixtures: shape m8/m16 x kind f16/f8 (m16 with f8 refused by
# the rule m16-no-f8) x .satfinite on/off x scale none/x1/x2 (the optional operand mask
# only with scale none, so 4 scale/mask variants) x a = a_reg/a_mem.
VARIANTS = 2 * 4 * 2  # sat x scale/mask x a
FORMS = 3 * VARIANTS  # (m8, f16), (m16, f16), (m8, f8)


# -- instructions ---------------------------------------------------------------------------

def test_form_added_is_one_group_with_every_form() -> None:
    rep = report("form-added")
    c = only(rep, "form-added")
    assert (c.severity, c.subject) == ("compatible", "demo_mma.forms[shape = m16, kind = f8]")
    assert len(c.after) == VARIANTS
    assert all(k.startswith("demo.mma.m16.kind::f8") for k in c.after)
    assert c.new is not None and c.new.line == line_of(demo("form-added", "new"),
                                                       r"values: \[m8, m16\]")
    assert c.old is not None and c.old.line == line_of(demo("form-added", "old"),
                                                       r"- name: demo\.mma")
    assert rep.exit_code == 0


def test_form_removed_breaks() -> None:
    rep = report("form-removed")
    c = only(rep, "form-removed")
    assert c.severity == "breaking" and len(c.before) == VARIANTS
    assert rep.exit_code == 1


def test_qualifier_and_its_forms() -> None:
    rep = report("qualifier-added")
    q = only(rep, "qualifier-added")
    assert (q.subject, q.after) == ("demo_mma.relu", ".relu")
    assert q.new is not None and q.new.line == line_of(demo("qualifier-added", "new"),
                                                       r"- name: relu")
    forms = only(rep, "form-added")
    assert forms.subject == "demo_mma.forms[relu = true]" and len(forms.after) == FORMS
    rep = report("qualifier-removed")
    assert only(rep, "qualifier-removed").before == ".satfinite"
    assert len(only(rep, "form-removed").before) == FORMS // 2


def test_qualifier_values() -> None:
    added = only(report("qualifier-value-added"), "qualifier-value-added")
    assert (added.subject, added.after) == ("demo_mma.kind.tf32", "tf32")
    assert ".kind::tf32" in added.message
    # the new value is located on its own line of the values list (a flow list: one line)
    assert added.new is not None and added.new.line == line_of(
        demo("qualifier-value-added", "new"), r"values: \[f16, f8, tf32\]")
    removed = report("qualifier-value-removed")
    c = only(removed, "qualifier-value-removed")
    assert (c.subject, c.severity, c.before) == ("demo_mma.kind.f8", "breaking", "f8")
    assert only(removed, "form-removed").subject == "demo_mma.forms[kind = f8]"
    assert len(only(removed, "form-removed").before) == VARIANTS  # m8 only


def test_operands() -> None:
    c = only(report("operand-added"), "operand-added")
    assert (c.subject, c.severity) == ("demo_mma.operands.bias", "compatible")
    assert c.new is not None and c.new.line == line_of(demo("operand-added", "new"),
                                                       r"- name: bias")
    c = only(report("operand-added-required"), "operand-added-required")
    assert (c.subject, c.severity) == ("demo_mma.operands.c", "breaking")
    assert "all forms now take operand c" in c.message and len(c.after) == FORMS
    c = only(report("operand-removed"), "operand-removed")
    assert (c.subject, c.before) == ("demo_mma.operands.b", "b")
    assert c.old is not None and c.old.line == line_of(demo("operand-removed", "old"),
                                                       r"- name: b$")
    c = only(report("operand-retyped"), "operand-retyped")
    assert (c.before, c.after) == ("register .f32", "register .b32")


def test_support_widened_and_narrowed() -> None:
    c = only(report("support-widened"), "support-widened")
    assert c.subject == "demo_mma.forms[*]" and "now also on sm_100f (from 8.8)" in c.message
    assert c.new is not None and c.new.line == line_of(demo("support-widened", "new"),
                                                       r"- id: demo$")
    rep = report("support-narrowed")
    c = only(rep, "support-narrowed")
    # the kind f8 forms needed 8.7 already (gate kind-f8): only the f16 ones change
    assert c.subject == "demo_mma.forms[kind = f16]" and len(c.before) == 2 * VARIANTS
    for t in ("sm_90a", "sm_100a", "sm_101a"):
        assert f"on {t} only from 8.7 (was 8.6)" in c.message
    g = only(rep, "gate-version-changed")
    assert (g.severity, g.before, g.after) == ("note", "8.6", "8.7")
    assert rep.exit_code == 1


def test_gate_version_changed_is_a_note() -> None:
    rep = report("gate-version-changed")
    assert only(rep, "gate-version-changed").severity == "note"
    # 8.6 -> 8.5: only sm_90a exists at 8.5, so only it gains a version
    widened = only(rep, "support-widened")
    assert widened.message.endswith("on sm_90a from 8.5 (was 8.6)")
    rep = report("gate-targets-changed")
    c = only(rep, "gate-targets-changed")
    assert (c.before, c.after) == (["sm_90a", "sm_100a", "sm_101a"],
                                   ["sm_101a", "sm_100a", "sm_90a"])
    assert rep.exit_code == 0


def test_wrappers_and_instructions() -> None:
    c = only(report("wrapper-added"), "wrapper-added")
    assert (c.subject, c.after) == ("demo_mma.wrappers.demo_mma_sat", "demo_mma_sat")
    assert f"({FORMS // 2} forms)" in c.message
    assert only(report("wrapper-removed"), "wrapper-removed").severity == "breaking"
    c = only(report("instruction-added"), "instruction-added")
    assert (c.subject, c.old) == ("demo_fence", None)
    assert c.new is not None and c.new.line == line_of(demo("instruction-added", "new"),
                                                       r"- name: demo\.fence")
    assert only(report("instruction-removed"), "instruction-removed").severity == "breaking"


# -- targets -----------------------------------------------------------------------------------

def test_target_renamed_is_one_change_per_target() -> None:
    rep = report("target-renamed")
    assert [(c.subject, c.before, c.after) for c in rep.changes] == [
        ("targets.sm_101", "sm_101", "sm_110"), ("targets.sm_101a", "sm_101a", "sm_110a")]
    c = rep.changes[1]
    assert c.severity == "breaking" and c.message == "sm_101a renamed sm_110a from PTX ISA 9.0"
    assert c.old is not None and c.old.line == line_of(targets_file("target-renamed", "old"),
                                                       r"name: sm_101a,")
    assert c.new is not None and c.new.line == line_of(targets_file("target-renamed", "new"),
                                                       r"from: 101, to: 110")
    assert not [c for c in rep.changes if c.rule in ("target-added", "target-removed")]


def test_targets_and_versions() -> None:
    c = only(report("target-added"), "target-added")
    assert (c.subject, c.after) == ("targets.sm_120", "sm_120")
    assert c.new is not None and c.new.line == line_of(targets_file("target-added", "new"),
                                                       r"name: sm_120,")
    assert only(report("target-removed"), "target-removed").severity == "breaking"
    c = only(report("ptx-isa-version-added"), "ptx-isa-version-added")
    assert (c.subject, c.after) == ("targets.ptx_isa_versions.9.1", "9.1")
    assert only(report("ptx-isa-version-removed"), "ptx-isa-version-removed").before == "9.1"


# -- generated symbols ---------------------------------------------------------------------------

def test_generated_symbols_of_a_new_wrapper_and_value(tmp_path: Path) -> None:
    old, new = (load_revision(FIXTURES / "wrapper-added" / s, label=s, type_="folder",
                              spec_dir=s) for s in ("old", "new"))
    gen = compare_revisions(old, new, generated=True).generated
    assert gen is not None
    symbols = {s.symbol.key: s for s in gen.symbols}
    assert symbols["ptx::demo_mma_sat"].status == "added"
    assert symbols["ptx::demo_mma_sat"].symbol.cpp == "ptxgen::ptx::demo_mma_sat"
    assert symbols["ptx::demo_mma_sat_mem"].status == "added"  # the a_mem alternative
    assert symbols["ptx::demo_mma"].status == "changed"  # fewer forms, sat no parameter
    assert "include/ptxgen/ptx/demo.hpp" in {f.path for f in gen.files}
    old, new = (load_revision(FIXTURES / "qualifier-value-added" / s, label=s, type_="folder",
                              spec_dir=s) for s in ("old", "new"))
    gen = compare_revisions(old, new, generated=True).generated
    assert gen is not None
    tf32 = next(s for s in gen.symbols if s.symbol.key == "ptx.demo_mma.kind.tf32")
    assert tf32.status == "added"
    assert tf32.symbol.python == "ptxgen.isa.ptx.demo_mma(kind='tf32')"
    assert tf32.symbol.cpp == "ptxgen::ptx::demo_mma_kind::tf32"


# -- views: the views fixture -------------------------------------------------------------------

def views(a: str, b: str) -> Report:
    return diff(a, b, spec=VIEWS, ptx_isa=True)


def rules_of(rep: Report) -> list[tuple[str, str]]:
    return [(c.rule, c.subject) for c in rep.changes]


def test_views_fixture_mxf4nvf4_at_8_7() -> None:
    rep = views("8.6", "8.7")
    assert sorted(rules_of(rep)) == sorted([
        ("kind-added", "mini_desc"),
        ("qualifier-value-added", "mini_mma.kind.mxf4nvf4"),
        ("form-added", "mini_mma.forms[kind = mxf4nvf4]"),
        ("ptx-isa-version-added", "targets.ptx_isa_versions.8.7")])
    assert rep.exit_code == 0
    kind = only(rep, "kind-added")
    assert kind.kinds == ("mxf4nvf4",)
    assert kind.new is not None
    assert kind.new.file == f"{VIEWS.as_posix()}/descriptors/mini_desc.yaml"
    assert kind.new.line == line_of(VIEWS / "descriptors" / "mini_desc.yaml", r"^kinds:")
    # .kind::mxf4nvf4 takes an explicit scale vector size, and only .scale_vec::2X exists
    # at 8.7 (.block16 / .block32 are 8.8): one form
    assert only(rep, "form-added").after == ["mini.mma.kind::mxf4nvf4.block_scale.scale_vec::2X"]


def test_views_fixture_block16_block32_at_8_8() -> None:
    rep = views("8.7", "8.8")
    got = set(rules_of(rep))
    assert {("qualifier-value-added", "mini_mma.scale_vectorsize.block16"),
            ("qualifier-value-added", "mini_mma.scale_vectorsize.block32"),
            ("form-added", "mini_mma.forms[scale_vectorsize = block16]"),
            ("form-added", "mini_mma.forms[scale_vectorsize = block32]"),
            # .block_scale without a scale vector size means .block32 (gated at 8.8 too)
            ("form-added", "mini_mma.forms[block_scale = true, scale_vectorsize = none]"),
            # the new family targets are reported once each, with the forms they take
            ("target-added", "targets.sm_100f"), ("target-added", "targets.sm_101f"),
            ("ptx-isa-version-added", "targets.ptx_isa_versions.8.8")} == got
    assert rep.exit_code == 0


def test_views_fixture_sm_101_renamed_at_9_0() -> None:
    rep = views("8.8", "9.0")
    renamed = [(c.before, c.after) for c in rep.changes if c.rule == "target-renamed"]
    assert renamed == [("sm_101", "sm_110"), ("sm_101a", "sm_110a"), ("sm_101f", "sm_110f")]
    # one rename each; support carries over, so nothing else changes
    assert {c.rule for c in rep.changes} == {"target-renamed", "ptx-isa-version-added"}
    assert rep.exit_code == 1
    c = next(c for c in rep.changes if c.before == "sm_101a")
    assert c.old is not None and c.old.line == line_of(VIEWS / "targets.yaml", r"name: sm_101a,")
    assert c.new is not None and c.new.line == line_of(VIEWS / "targets.yaml", r"name: sm_110a,")


def test_views_diff_cli_errors() -> None:
    res = run_main("diff", "--ptx-isa", "8.6", "8.9")
    assert res.code == 2 and res.out == ""
    assert res.err.startswith("ptxgen: error: NEW: --ptx-isa: '8.9' is not a PTX ISA version "
                              "of the spec; allowed: 6.3, 6.4, 6.5, 7.0")
    res = run_main("diff", "--ptx-isa", "8.6", "8.7", "--spec", "no/such/spec")
    assert res.code == 2 and "no/such/spec" in res.err


# -- views: the real spec ------------------------------------------------------------------------

@cache
def whole() -> InstructionSet:
    iset = load_model(SPEC).instructions
    assert iset is not None
    return iset


def ident(f: Form) -> tuple[str, tuple[tuple[str, str], ...]]:
    return f.opcode, tuple(sorted((n, v) for n, v in f.variant if v != FALSE))


def forms_at(version: str) -> dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], Form]]:
    iset = whole()
    return {i.id: {ident(f): f for f in i.forms if supported_at(f.support, iset.targets, version)}
            for i in iset.instructions}


@cache
def real(a: str, b: str) -> dict[str, object]:
    res = run_main("diff", "--ptx-isa", a, b, "--format", "json")
    assert res.code in (0, 1), res.err
    data: dict[str, object] = json.loads(res.out)
    data["exit"] = res.code
    return data


def changes(data: dict[str, object]) -> Iterator[dict[str, object]]:
    yield from data["changes"]  # type: ignore[misc]


def test_real_spec_mxf4nvf4_appears_at_8_7() -> None:
    data = real("8.6", "8.7")
    assert data["exit"] == 0
    by = {(c["rule"], c["subject"]): c for c in changes(data)}
    kind = by[("kind-added", "instr_desc")]
    assert kind["kinds"] == ["mxf4nvf4"] and kind["old"] is None
    assert kind["new"] == {"file": "spec/descriptors/instr_desc.yaml",
                           "line": line_of(SPEC / "descriptors" / "instr_desc.yaml", r"^kinds:")}
    value = by[("qualifier-value-added", "tcgen05_mma.kind.mxf4nvf4")]
    assert value["severity"] == "compatible"
    forms = by[("form-added", "tcgen05_mma.forms[kind = mxf4nvf4]")]
    want = {f.key for k, f in forms_at("8.7")["tcgen05_mma"].items()
            if f.params["kind"] == "mxf4nvf4"}
    assert set(forms["after"]) == want and want  # type: ignore[arg-type]


def test_real_spec_block16_block32_at_8_8() -> None:
    data = real("8.7", "8.8")
    subjects = {(c["rule"], c["subject"]) for c in changes(data)}
    for v in ("block16", "block32"):
        assert ("qualifier-value-added", f"tcgen05_mma.scale_vectorsize.{v}") in subjects
        assert ("form-added", f"tcgen05_mma.forms[scale_vectorsize = {v}]") in subjects
    # .block_scale without .scale_vectorsize exists from 8.6 (ISA; ptxas 13.1-13.5), so it is
    # not new at 8.8 (ptxas 13.0 deviates: the spec records its 8.8 as a deviation)
    assert ("form-added", "tcgen05_mma.forms[block_scale = true, scale_vectorsize = none]") \
        not in subjects
    for t in ("sm_100f", "sm_101f", "sm_103a", "sm_103f"):
        assert ("target-added", f"targets.{t}") in subjects


def test_real_spec_sm_101_renamed_sm_110_at_9_0() -> None:
    data = real("8.8", "9.0")
    assert data["exit"] == 1
    renamed = [(c["before"], c["after"]) for c in changes(data) if c["rule"] == "target-renamed"]
    assert renamed == [("sm_101", "sm_110"), ("sm_101a", "sm_110a"), ("sm_101f", "sm_110f")]
    # sm_88 is the one target PTX ISA 9.0 adds (ptxas 13.1-13.5; 13.0's 7.3 is a deviation)
    assert [c["after"] for c in changes(data) if c["rule"] == "target-added"] == ["sm_88"]
    # ... reported once with the forms it takes (not as a widening of each of them)
    iset = forms_at("9.0")
    on = [sum(1 for f in fs.values()
              if vkey(f.support.matrix(whole().targets).get("sm_88", "99.0")) <= vkey("9.0"))
          for fs in iset.values()]
    (added,) = [c for c in changes(data) if c["rule"] == "target-added"]
    assert added["message"] == (f"new target sm_88 (exists from PTX ISA 9.0): {sum(on)} forms "
                                f"of {sum(1 for n in on if n)} instructions")
    assert sum(on) > 5000
    assert not [c for c in changes(data) if c["rule"] == "support-widened"
                and "sm_88" in c["message"]]
    assert not [c for c in changes(data) if c["rule"] in ("target-removed", "support-narrowed")]
    c = next(c for c in changes(data) if c["before"] == "sm_101a")
    assert c["old"] == {"file": "spec/targets.yaml",
                        "line": line_of(SPEC / "targets.yaml", r"name: sm_101a,")}
    assert c["new"] == {"file": "spec/targets.yaml",
                        "line": line_of(SPEC / "targets.yaml", r"name: sm_110a,")}


@pytest.mark.parametrize(("a", "b"), [("8.6", "9.0"), ("8.7", "8.8")])
def test_real_spec_changelog_is_complete(a: str, b: str) -> None:
    """Every form that appears between the versions is in exactly the form-added groups
    of its instruction, and every form of both whose support changes in a
    support-widened group (the model decides, independently of the diff)."""
    data = real(a, b)
    old, new = forms_at(a), forms_at(b)
    iset = whole()
    renamed = {t.name: t.renamed_to for t in iset.targets.targets if t.renamed_to}
    for ins in iset.instructions:
        if not old.get(ins.id) and new.get(ins.id):  # new between the versions: one change
            assert [c for c in changes(data) if c["rule"] == "instruction-added"
                    and c["subject"] == ins.id], ins.id
            assert not [c for c in changes(data) if c["rule"] == "form-added"
                        and str(c["subject"]).startswith(f"{ins.id}.forms[")], ins.id
            continue
        if not new.get(ins.id):
            continue
        added = {f.key for k, f in new[ins.id].items() if k not in old[ins.id]}
        reported = {k for c in changes(data) if c["rule"] == "form-added"
                    and str(c["subject"]).startswith(f"{ins.id}.forms[") for k in c["after"]}
        assert reported == added, ins.id
        assert not [c for c in changes(data) if c["rule"] == "form-removed"]

        def matrix(f: Form, version: str) -> dict[str, str]:
            out = {}
            for t, v in f.support.matrix(iset.targets).items():
                if iset.targets.get(t).exists_at(version) and vkey(v) <= vkey(version):
                    out[renamed.get(t, t) if not iset.targets.get(t).exists_at(b) else t] = v
            return out

        # a target of neither name at `a` is new: target-added counts its forms
        at_a = {renamed.get(t.name, t.name) for t in iset.targets.targets
                if t.exists_at(a)} | {t.name for t in iset.targets.targets if t.exists_at(a)}
        widened = {f.key for k, f in new[ins.id].items() if k in old[ins.id]
                   and (set(matrix(f, b)) & at_a) - set(matrix(old[ins.id][k], a))}
        reported = {k for c in changes(data) if c["rule"] == "support-widened"
                    and str(c["subject"]).startswith(f"{ins.id}.forms[") for k in c["after"]}
        assert reported == widened, ins.id


def test_real_spec_markdown_and_json_of_a_view_diff() -> None:
    res = run_main("diff", "--ptx-isa", "8.8", "9.0", "--format", "markdown")
    assert res.code == 1
    assert res.out.splitlines()[0] == "### ptxgen diff: PTX ISA 8.8 (`spec`) → PTX ISA 9.0 (`spec`)"
    assert "| `target-renamed` | `targets.sm_101a` |" in res.out
    data = real("8.8", "9.0")
    assert data["old"] == {"label": "8.8", "type": "folder", "spec": "spec", "commit": None,
                           "ptx_isa": "8.8"}


# -- the documented examples are what the commands print -------------------------------------

def documented(path: Path, command: str) -> str:
    """The output shown under ``$ command`` in a ```console / ``` block of ``path``."""
    text = path.read_text()
    start = text.index(f"$ {command}\n") + len(f"$ {command}\n")
    return text[start:text.index("\n```", start) + 1]


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_readme_examples_are_real_output(fmt: str) -> None:
    """The README shows 8.8 -> 9.0 (a rename: breaking) as text and 9.0 -> 9.1 (one new
    version) as Markdown and JSON."""
    versions = ["8.8", "9.0"] if fmt == "text" else ["9.0", "9.1"]
    args = ["diff", "--ptx-isa", *versions] + ([] if fmt == "text" else ["--format", fmt])
    res = run_main(*args)
    assert res.code == (1 if fmt == "text" else 0), res.err
    if fmt == "text":
        shown = documented(ROOT / "README.md", 'ptxgen diff --ptx-isa 8.8 9.0; echo "exit $?"')
        assert shown == res.out + "exit 1\n"
    else:
        assert documented(ROOT / "README.md", "ptxgen " + " ".join(args)) == res.out
    if fmt == "text":
        assert documented(ROOT / "docs" / "diff-policy.md",
                          "ptxgen diff --ptx-isa 8.8 9.0") == res.out
