"""ptxgen doc: the PTX ISA document's Markdown read into sections, syntax templates and
descriptor tables (fixtures written here), and `doc check` against the real document
(../shared/ptx-isa-9.4 and tests/seeds) and the project's spec."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from ptxgen.cli import main
from ptxgen.doc import markdown, syntax, tables

DOC94 = ROOT.parent / "shared" / "ptx-isa-9.4"
SEEDS = ROOT / "tests" / "seeds"
LDMATRIX = "9-instruction-set/9.7.16.5-matrix-multiply-accumulate-operation-usingmmainstruction.md"
MATRIX_DESC = "9-instruction-set/9.7.18.4-matrix-descriptors.md"

FIXTURE = """---
title: "9.9.9. Fixture"
section: "9.9.9"
version: "9.4"
---

####  9.9.9. Fixture instruction: `foo`

Syntax

```ptx
foo.sync{.sem}.shape{.ss}.type d, [a];

.sem   = { .relaxed, .acquire };
.shape = { .m8, .m16 };
.ss    = { .shared{::cta} };
.type  = { .b16 };
```

Description

Table 7 Widget descriptor layout

Bits | Size | Description
---|---|---
0-3 | 4 | Mode: - 0: off - 1: on
4 | 1 | Reserved

<table>
<thead><tr><th>Bits</th><th>Size</th><th>Description</th><th>.kind::a</th><th>.kind::b</th></tr></thead>
<tbody>
<tr><td><p>0-1</p></td><td>2</td><td>Type</td><td colspan="2"><p>X = 1</p><p>Y = 2</p></td></tr>
<tr><td>2</td><td>1</td><td>Flag</td><td>0 (NA)</td><td>0-1</td></tr>
</tbody>
</table>

PTX ISA Notes

Introduced in PTX ISA version 9.4.
"""


def _line(text: str) -> int:
    """The fixture's line that starts with ``text`` (1-based)."""
    return next(i for i, t in enumerate(FIXTURE.split("\n"), 1) if t.startswith(text))


def _fixture(tmp_path: Path) -> markdown.Document:
    f = tmp_path / "fixture.md"
    f.write_text(FIXTURE)
    return markdown.read([f])


def test_sections_code_and_tables_keep_their_lines(tmp_path: Path) -> None:
    doc = _fixture(tmp_path)
    (s,) = doc.sections
    assert (s.number, s.title, s.version, s.loc.line) == (
        "9.9.9", "Fixture instruction: foo", "9.4", _line("####"))
    assert [c.loc.line for c in s.codes] == [_line("```ptx")]
    pipe, html_table = s.tables
    assert (pipe.number, pipe.caption, pipe.loc.line) == (7, "Widget descriptor layout",
                                                               _line("Table 7"))
    assert [r.line for r in pipe.rows] == [_line("0-3"), _line("4 |")]
    assert html_table.rows[0].cells[3:] == ["X = 1\nY = 2", "X = 1\nY = 2"]  # colspan
    assert s.paragraphs("PTX ISA Notes") == [(_line("Introduced"),
                                              "Introduced in PTX ISA version 9.4.")]


def test_descriptor_tables_read_codes_per_kind(tmp_path: Path) -> None:
    doc = _fixture(tmp_path)
    found = tables.descriptor_tables(doc)
    assert [t.kinds for t in found] == [(), ("a", "b")]
    mode, reserved = found[0].entries
    assert (mode.lsb, mode.msb, mode.role, mode.description) == (0, 3, "field", "Mode:")
    assert mode.values[None].pairs == (("off", 0), ("on", 1))
    assert reserved.role == "reserved" and reserved.loc.line == _line("4 |")
    kind_type, flag = found[1].entries
    assert kind_type.values["b"].codes == {1, 2}
    assert flag.values["a"].codes == {0} and flag.values["b"].codes == {0, 1}


def test_syntax_templates_become_opcode_patterns(tmp_path: Path) -> None:
    (t,) = syntax.templates_of(_fixture(tmp_path).sections[0])
    assert t.head == "foo.sync" and t.slots() == ["sem", "shape", "ss", "type"]
    assert t.sets["ss"].values == [".shared", ".shared::cta"]
    rx, names = t.regex()
    m = rx.match("foo.sync.acquire.m16.shared::cta.b16")
    assert m is not None and {names[g]: v for g, v in m.groupdict().items()} == {
        "sem": ".acquire", "shape": ".m16", "ss": ".shared::cta", "type": ".b16"}
    assert rx.match("foo.sync.m8.b16") and not rx.match("foo.sync.m32.b16")


def test_placeholders_of_a_value_set_expand() -> None:
    # seed 002: `.collector_usage = { .collector::buffer::op }` with ::buffer and ::op sets
    doc = markdown.read([SEEDS / "002_7c5738498871e690.txt"])
    ts = [t for s in doc.sections for t in syntax.templates_of(s)]
    usage = next(t for t in ts if "collector_usage" in t.sets).sets["collector_usage"]
    assert sorted(usage.values) == [".collector::a::discard", ".collector::a::fill",
                                    ".collector::a::lastuse", ".collector::a::use"]


def _check(capsys: pytest.CaptureFixture[str], *argv: str,
           spec: Path = ROOT / "spec") -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(["doc", "check", *argv, "--spec", str(spec), "--json"])
    return code, json.loads(capsys.readouterr().out)


def _spec_before(tmp_path: Path, *items: tuple[str, str]) -> Path:
    """A copy of the spec as it was before an update: each (file, id) names a list item
    (``- id: ID``, with everything indented under it) that the copy leaves out."""
    spec = tmp_path / "spec-before"
    shutil.copytree(ROOT / "spec", spec)
    for rel, ident in items:
        f = spec / rel
        lines = f.read_text().split("\n")
        start = next(i for i, line in enumerate(lines) if line.strip() == f"- id: {ident}")
        indent = len(lines[start]) - len(lines[start].lstrip())
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or
                                    len(lines[end]) - len(lines[end].lstrip()) > indent):
            end += 1
        f.write_text("\n".join(lines[:start] + lines[end:]))
    assert main(["validate", "--spec", str(spec)]) == 0
    return spec


#: The spec before PTX ISA 9.4's ldmatrix .s8.s4 (the gate of its forms left out).
LDMATRIX_S8_S4 = ("instructions/ldmatrix.yaml", "m8n16-s8-s4")


@pytest.mark.skipif(not DOC94.is_dir(), reason="../shared/ptx-isa-9.4 is not here")
def test_the_94_document_shows_ldmatrix_s8_s4(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    # the spec before the 9.4 update lacks the .s8.s4 forms: the document proposes them
    before = _spec_before(tmp_path, LDMATRIX_S8_S4)
    capsys.readouterr()
    code, out = _check(capsys, str(DOC94 / LDMATRIX), spec=before)
    assert code == 1 and out["schema"] == "ptxgen-doc-check/1"
    forms = [p for p in out["proposals"] if p["kind"] == "instruction-form"
             and "ldmatrix.sync.aligned.m8n16.num{.ss}.dtype.ctype" in p["message"]]
    assert len(forms) == 1, out["proposals"]
    assert forms[0]["doc"].endswith(LDMATRIX + ":2219")
    assert forms[0]["spec"] == f"{before}/instructions/ldmatrix.yaml"
    assert set(out["proposals"][0]) == {"key", "kind", "message", "doc", "also", "spec",
                                        "forms", "assembled"}
    # the document's .m8n84 (meant .m8n8k4) is recorded in spec/instructions/mma_sync.yaml
    assert not any(".m8n84" in p["message"] for p in out["proposals"])
    assert forms[0]["forms"] == ["ldmatrix.sync.aligned.m8n16.x1.s8.s4",
                                 "ldmatrix.sync.aligned.m8n16.x2.s8.s4",
                                 "ldmatrix.sync.aligned.m8n16.x4.s8.s4"]
    # the spec as it is (the forms and their gate from PTX ISA 9.4) agrees
    _, now = _check(capsys, str(DOC94 / LDMATRIX))
    assert not [p for p in now["proposals"] if "ldmatrix" in p["key"]], now["proposals"]


@pytest.mark.skipif(not DOC94.is_dir(), reason="../shared/ptx-isa-9.4 is not here")
def test_recorded_document_errors_are_not_proposed(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    _, out = _check(capsys, str(DOC94 / MATRIX_DESC))
    keys = {p["key"] for p in out["proposals"]}
    assert "descriptor:smem_desc@sm107:formula" not in keys  # doc_errata t49-encode-mask
    # without the record, Table 49's (x & 0x3FFFF) >> 4 for 15-bit fields is proposed
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    smem = spec / "descriptors" / "smem_desc.yaml"
    text = smem.read_text()
    smem.write_text(text[:text.index("doc_errata:")].replace(
        "# The document's own errors (ptxgen doc check proposes them no more).\n", ""))
    main(["doc", "check", str(DOC94 / MATRIX_DESC), "--spec", str(spec), "--json"])
    out2 = json.loads(capsys.readouterr().out)
    formula = [p for p in out2["proposals"] if p["key"] == "descriptor:smem_desc@sm107:formula"]
    assert len(formula) == 1 and "0x3FFFF" in formula[0]["message"]
    assert formula[0]["doc"].endswith(MATRIX_DESC + ":26")
    assert formula[0]["spec"].startswith(str(spec / "descriptors" / "smem_desc.yaml") + ":")


def test_seed_descriptor_disagreements(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    # seed 001 gives .kind::f8f6f4 dtype F32 only; the spec (note t42-f8f6f4-dtype) F16 and
    # F32, and records seed 001's error (doc_errata seed001-f8f6f4-dtype); without it:
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    desc = spec / "descriptors" / "instr_desc.yaml"
    desc.write_text(desc.read_text().replace("proposal: descriptor:instr_desc:4-5:f8f6f4:codes",
                                             "proposal: descriptor:instr_desc:4-5:f16:codes"))
    assert main(["doc", "check", str(SEEDS), "--spec", str(spec), "--json"]) == 1
    (p,) = json.loads(capsys.readouterr().out)["proposals"]
    assert p["message"] == ("instr_desc: field dtype (bits 4-5) .kind::f8f6f4: the document "
                            "allows [1], the spec [0, 1] (remove [0])")
    assert p["doc"] == f"{SEEDS}/001_dfcd3e3a44822230.txt:12"
    assert p["spec"] == f"{spec}/descriptors/instr_desc.yaml:52:9"


def test_exit_codes_and_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["doc", "check", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ptxgen: error: DOC: {tmp_path / 'none'} does not exist")
    empty = tmp_path / "empty.md"
    empty.write_text("no sections\n")
    assert main(["doc", "check", str(empty), "--spec", str(ROOT / "spec")]) == 2
    f = tmp_path / "agree.md"
    f.write_text("#### 9.1.1. Nothing\n\nText.\n")
    assert main(["doc", "check", str(f), "--spec", str(ROOT / "spec")]) == 0
    assert "the spec agrees with the document" in capsys.readouterr().out


def test_errata_are_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    smem = spec / "descriptors" / "smem_desc.yaml"
    smem.write_text(smem.read_text().replace("proposal: descriptor:smem_desc@sm107:formula",
                                             "proposal: descriptor:smem_desc@sm108:formula"))
    assert main(["validate", "--spec", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "proposal: names variant 'sm108' of smem_desc; its variants: sm107" in err


@pytest.mark.skipif(not DOC94.is_dir(), reason="../shared/ptx-isa-9.4 is not here")
def test_table_53_sparsity_version_rule(capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    # 9.7.18.4.2.1: bit 12 must be v0 on sm_100a/103a/110a and v1 on sm_107a; without the
    # spec's target-dependent rule on sparsity_version (tcgen05_mma.yaml, from 9.4) the
    # document proposes one
    before = _spec_before(tmp_path, ("instructions/tcgen05_mma.yaml", "sparsity-version-sm107"))
    capsys.readouterr()
    _, out = _check(capsys, str(DOC94 / MATRIX_DESC), spec=before)
    (rule,) = [p for p in out["proposals"] if p["kind"] == "descriptor-target"]
    assert rule["key"] == "descriptor:instr_desc@sm107:12:targets"
    assert "sm_107a" in rule["message"] and rule["doc"].endswith(MATRIX_DESC + ":614")
    assert rule["spec"].startswith(f"{before}/descriptors/instr_desc.yaml:")
    _, now = _check(capsys, str(DOC94 / MATRIX_DESC))
    assert not [p for p in now["proposals"] if p["kind"] == "descriptor-target"]


def test_the_seeds_agree_with_the_spec(capsys: pytest.CaptureFixture[str]) -> None:
    # every disagreement of the seeds is fixed in the spec or recorded in doc_errata
    code, out = _check(capsys, str(SEEDS))
    assert (code, out["proposals"]) == (0, [])


def test_ptxas_says_where_a_proposed_form_assembles(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    import toolkits

    before = _spec_before(tmp_path, LDMATRIX_S8_S4)
    capsys.readouterr()

    p130, p135 = toolkits.require("ptxas", "13.0"), toolkits.require("ptxas", "13.5")
    doc = tmp_path / "ldmatrix.md"
    doc.write_text("#### 9.7.16.5.15. Warp-level matrix load instruction: `ldmatrix`\n\n"
                   "Syntax\n\n```ptx\nldmatrix.sync.aligned.m8n16.x1{.ss}.dtype.ctype r, [p];\n"
                   ".ss = {.shared{::cta}};\n.dtype = { .s8 };\n.ctype = { .s4 };\n```\n")
    code = main(["doc", "check", str(doc), "--spec", str(before), "--json",
                 "--ptxas", p130, "--ptxas", p135])
    (p,) = json.loads(capsys.readouterr().out)["proposals"]
    assert code == 1 and p["forms"] == ["ldmatrix.sync.aligned.m8n16.x1.s8.s4"]
    assert p["assembled"]["ptxas 13.0"] == [
        "refuses ldmatrix.sync.aligned.m8n16.x1.s8.s4 on every target: Unexpected "
        "instruction types specified for 'ldmatrix'"]
    (said,) = p["assembled"]["ptxas 13.5"]
    assert said.startswith("accepts ldmatrix.sync.aligned.m8n16.x1.s8.s4 on sm_90a, sm_100a")
    assert said.endswith("from PTX ISA 9.4") and "sm_90," not in said


def _layout_facts(spec: Path) -> dict[tuple[str, str | None], tuple[object, ...]]:
    """What encoding and decoding a word depend on, per baseline layout."""
    from ptxgen import pipeline

    model = pipeline.load_model(spec, use_cache=False)
    return {(lay.descriptor, lay.kind): (
        tuple((f.name, f.lsb, f.msb, f.type, f.value_shift, f.value_mask, f.allowed_codes,
               tuple(sorted(f.names.items())), f.shared_address) for f in lay.fields),
        lay.reserved_mask, lay.fixed_mask, lay.fixed_value, lay.word_bits)
        for lay in model.layouts}


def test_import_of_the_seeds_encodes_as_the_spec(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # Tables 40-45 and the wgmma descriptor, imported from the seeds, give every field the
    # spec's name, bits, encoding and codes (seed 000/003's mxf4nvf4 scale type is their
    # recorded error: the spec's codes are taken)
    out = tmp_path / "imported"
    assert main(["doc", "import", str(SEEDS), "--out", str(out), "--spec",
                 str(ROOT / "spec"), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert sorted(Path(f).name for f in written["descriptors"]) == [
        "instr_desc.yaml", "smem_desc.yaml", "wgmma_desc.yaml", "zero_column_mask_desc.yaml"]
    assert main(["validate", "--spec", str(out)]) == 0
    mine, theirs = _layout_facts(out), _layout_facts(ROOT / "spec")
    assert len(mine) == 10
    for key, facts in mine.items():
        assert facts == theirs[key], key
    # the syntax of seed 002's tcgen05.mma.sp section, listed for review
    (listing,) = [f for f in written["syntax"] if f.endswith("9.7.16.10.9.2.json")]
    data = json.loads(Path(listing).read_text())
    assert data["templates"][0]["opcode"] == "tcgen05.mma.sp.cta_group.kind"
    assert data["templates"][0]["slots"]["kind"] == [".kind::f16", ".kind::tf32",
                                                     ".kind::f8f6f4"]
    assert main(["doc", "import", str(SEEDS), "--out", str(out)]) == 2  # not empty
    # encode / decode --spec DIR use that folder's classes (a process each: the imported
    # package replaces ptxgen.isa in it)
    import subprocess
    import sys

    def cli(*argv: str) -> str:
        res = subprocess.run([sys.executable, "-m", "ptxgen", *argv], capture_output=True,
                             text=True, check=True, cwd=ROOT)
        return res.stdout
    word = ["instr_desc", "--kind", "mxf4nvf4", "scale_type=ue8m0", "m=128", "n=256",
            "sparsity=sparse", "scale_b_id=2", "atype=e2m1", "btype=e2m1", "--json"]
    assert json.loads(cli("encode", *word, "--spec", str(out)))["hex"] == \
        json.loads(cli("encode", *word))["hex"]
    assert cli("decode", "smem_desc", "0x4000404000010040", "--spec", str(out)) == \
        cli("decode", "smem_desc", "0x4000404000010040")


def test_import_names_what_the_spec_lacks_by_one_rule() -> None:
    from ptxgen.doc.importer import ident

    assert ident("matrix-descriptor-encode (Matrix start address)") == "matrix_start_address"
    assert ident("Specifies the swizzling mode to be used:") == "specifies_the_swizzling_mode"
    assert ident("Sparsity version") == "sparsity_version"


def test_ptxas_finds_combinations_the_spec_forbids(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    # PTX ISA 9.1: mma .kind::mxf4nvf4 with .scale_vec::4X and .ue8m0 scales (the spec
    # before 9.1 has no such form; ptxas 13.5 assembles it on sm_120a/f, sm_121a/f)
    import toolkits

    before = _spec_before(tmp_path, ("instructions/mma_sync.yaml", "mxf4nvf4-4x-ue8m0"))
    capsys.readouterr()

    p130, p135 = toolkits.require("ptxas", "13.0"), toolkits.require("ptxas", "13.5")
    doc = tmp_path / "mma.md"
    doc.write_text("#### 9.7.16.5.14. Multiply-and-Accumulate Instruction: `mma`\n\nSyntax\n\n"
                   "```ptx\nmma.sync.aligned.m16n8k64.row.col.kind.block_scale.scale_vec_size"
                   ".f32.e2m1.e2m1.f32.stype d, a, b, c, sa, {ba, ta}, sb, {bb, tb};\n\n"
                   ".kind = {.kind::mxf4nvf4};\n.scale_vec_size = {.scale_vec::2X, "
                   ".scale_vec::4X};\n.stype = {.ue8m0, .ue4m3};\n```\n")
    assert main(["doc", "check", str(doc), "--spec", str(before)]) == 0  # no ptxas
    capsys.readouterr()
    assert main(["doc", "check", str(doc), "--spec", str(before), "--json",
                 "--ptxas", p130, "--ptxas", p135]) == 1
    (p,) = json.loads(capsys.readouterr().out)["proposals"]
    op = "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X" \
         ".f32.e2m1.e2m1.f32.ue8m0"
    assert (p["kind"], p["forms"]) == ("instruction-combination", [op])
    assert p["assembled"]["ptxas 13.5"] == [
        f"accepts {op} on sm_120a, sm_120f, sm_121a, sm_121f from PTX ISA 9.1"]
    assert p["assembled"]["ptxas 13.0"] == [
        f"refuses {op} on every target: Illegal modifier '.scale_vec::4X' for instruction "
        "'mma' with type '.ue8m0'"]


@pytest.mark.skipif(not DOC94.is_dir(), reason="../shared/ptx-isa-9.4 is not here")
def test_release_notes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # 13.1 (9.4): ".s8.s4 types for ldmatrix"; 13.2 (9.3): .sem and .scope for cp.async.bulk
    before = _spec_before(tmp_path, LDMATRIX_S8_S4)
    capsys.readouterr()
    _, out = _check(capsys, str(DOC94 / "13-release-notes"), spec=before)
    notes = {p["key"]: p for p in out["proposals"] if p["kind"] == "release-note"}
    s8 = notes["instruction:ldmatrix:release:9.4:.s8.s4"]
    assert s8["message"] == ("ldmatrix: the PTX ISA 9.4 release notes add .s8.s4; no valid "
                             "form of the spec has it")
    assert s8["doc"].endswith("13.1-changes-in-ptx-isa-version-9.4.md:76")
    assert "instruction:cp_async_bulk:release:9.3:.sem" in notes
    _, now = _check(capsys, str(DOC94 / "13-release-notes"))
    assert not [p for p in now["proposals"] if p["key"].startswith("instruction:ldmatrix:")]
