"""The defects a new user hit (issue 28), each as the command the user ran: one line on
stderr, the documented exit code, no traceback, a message that names what is wrong."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_main
from ptxgen.isa import DescriptorError, InstrDescF16, WgmmaDesc


def one_line_error(res: object, code: int = 2) -> str:
    """The one stderr line of an error (no traceback)."""
    assert res.code == code, (res.code, res.out, res.err)  # type: ignore[attr-defined]
    err: str = res.err  # type: ignore[attr-defined]
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# -- huge numbers --------------------------------------------------------------------------

def test_a_huge_hex_value_is_refused_in_one_line() -> None:
    line = one_line_error(run_main("encode", "wgmma_desc", "start_address=0x" + "f" * 4000))
    assert line.startswith("ptxgen: error: wgmma_desc: start_address: 0xffff")
    assert "(16000 bits) is not allowed" in line and len(line) < 400


def test_a_huge_decimal_value_is_refused_in_one_line() -> None:
    line = one_line_error(run_main("encode", "wgmma_desc", "start_address=" + "9" * 5000))
    assert "start_address" in line and "is not allowed" in line and len(line) < 400


def test_a_huge_int_in_python_is_a_descriptor_error() -> None:
    with pytest.raises(DescriptorError) as info:
        WgmmaDesc(start_address=1 << 20000)
    assert info.value.field == "start_address"
    assert "(20001 bits)" in str(info.value) and len(str(info.value)) < 300


# -- options -------------------------------------------------------------------------------

def test_an_option_given_twice_is_refused() -> None:
    line = one_line_error(run_main("encode", "instr_desc", "--kind", "f16", "--kind", "f8f6f4",
                                  "m=128", "n=64"))
    assert line == "ptxgen: error: encode: --kind given twice; give it once"


@pytest.mark.parametrize(("args", "named"), [
    (("encode", "--bogus"), "'--bogus'"),
    (("encode", "smem_desc", "--bogus", "start_address=0"), "'--bogus'"),
    (("encode", "instr_desc", "--kin", "f16", "m=128", "n=64"),
     "'--kin' (did you mean '--kind'?)"),
    (("generate", "--outt", "x"), "'--outt' (did you mean '--out'?)"),
])
def test_an_unknown_option_is_named(args: tuple[str, ...], named: str) -> None:
    line = one_line_error(run_main(*args))
    assert f"unknown option {named}" in line


# -- opcodes -------------------------------------------------------------------------------

def test_a_huge_opcode_is_refused_quickly_and_not_echoed() -> None:
    from ptxgen.isa import ptx
    from ptxgen.model.instructions import lookup

    res = run_main("support", "a" * 100_000, "--json")
    line = one_line_error(res)
    assert len(line) < 400 and "100,000 characters" in line
    assert len(res.out) < 1000  # the JSON error too (it was 200 KB)
    iset = ptx.instruction_set()
    start = time.process_time()  # CPU time: the machine's load does not change it
    for text in ("a" * 100_000, "wgmma.mma_async.sync.aligned" + ".m64n128k16" * 10_000):
        assert not lookup(iset, text).valid
    # the work is bounded: was 9 s (difflib over the whole text) on the 2-core machine
    assert time.process_time() - start < 0.5


def test_a_shape_number_is_suggested_by_value() -> None:
    line = one_line_error(run_main("support",
                                   "wgmma.mma_async.sync.aligned.m64n129k16.f32.f16.f16"))
    assert "(did you mean '.m64n128'?)" in line  # was '.m64n216'


@pytest.mark.parametrize(("written", "meant"), [
    ("wgmma.mma_async.m64n128k16.f32.f16.f16",
     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
    ("mma.m16n8k16.row.col.f32.f16.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
])
def test_an_opcode_without_sync_aligned_gets_the_completed_form(written: str, meant: str) -> None:
    line = one_line_error(run_main("support", written))
    assert f"(did you mean {meant!r}?)" in line
    assert run_main("support", meant).code == 0  # the suggestion is a valid form


def test_a_target_the_toolkit_does_not_know() -> None:
    res = run_main("support", "tcgen05.mma.cta_group::1.kind::f16", "--target", "sm_107a",
                  "--toolkit", "13.0")
    assert res.code == 1, res.err
    assert "did you mean" not in res.out + res.err
    assert ("not supported on sm_107a with CUDA 13.0: CUDA 13.0 does not know sm_107a "
            "(its ptxas writes PTX ISA up to 9.0; sm_107a exists from PTX ISA 9.4)") in res.out
    res = run_main("support", "tcgen05.mma.cta_group::1.kind::f16", "--target", "sm_107a",
                  "--toolkit", "13.0", "--json")
    assert res.code == 1 and json.loads(res.out)["supported"] is False
    # the ISA's rule knows it
    assert run_main("support", "tcgen05.mma.cta_group::1.kind::f16",
                   "--target", "sm_107a").code == 0


# -- the output folder ---------------------------------------------------------------------

def test_generate_select_needs_an_out_folder(spec_core: Path) -> None:
    project = spec_core.parent
    res = run_main("generate", "--select", "wgmma.*m64n128", cwd=project)
    assert "--select: give --out DIR too" in one_line_error(res)
    assert not (project / "generated").exists()


def test_check_uses_the_selection_the_folder_was_made_with(spec_core: Path) -> None:
    project = spec_core.parent
    assert run_main("generate", "--select", "wgmma.*m64n128", "--out", "sel",
                   cwd=project).code == 0
    res = run_main("check", "--out", "sel", cwd=project)
    assert res.code == 0, (res.out, res.err)
    assert run_main("check", "--out", "sel", "--select", "wgmma.*m64n256", cwd=project).code == 1


def test_a_newline_in_the_out_name_is_escaped(spec_core: Path) -> None:
    project = spec_core.parent
    res = run_main("generate", "--out", "a\nb", cwd=project)
    assert res.code == 0, res.err
    listed = json.loads((project / "a\nb" / "MANIFEST.json").read_text())["files"]
    assert res.out == f"wrote {len(listed) + 1} files to a\\nb\n"  # and the manifest
    (project / "a\nb" / "stray").write_text("x")
    line = one_line_error(run_main("generate", "--out", "a\nb", cwd=project))
    assert line.startswith("ptxgen: error: --out a\\nb holds files")


def test_a_generated_file_replaced_by_a_link_is_named_as_one(spec_core: Path) -> None:
    project = spec_core.parent
    assert run_main("generate", "--out", "g", cwd=project).code == 0
    header = project / "g" / "include" / "ptxgen" / "core.hpp"
    header.unlink()
    os.symlink(ROOT / "README.md", header)
    line = one_line_error(run_main("generate", "--out", "g", cwd=project))
    assert "include/ptxgen/core.hpp, which its MANIFEST.json lists as a file ptxgen wrote, " \
           "is a symbolic link now" in line
    assert "not list" not in line
    assert header.is_symlink()  # nothing written


def test_instr_desc_takes_the_readmes_spelling() -> None:
    word = InstrDescF16(dtype="f32", atype="bf16", btype="bf16", n=256, m=128).encode()
    assert word == 0x08400490


# -- what validate refuses -----------------------------------------------------------------

def _edit(path: Path, old: str, new: str) -> int:
    """Replace the first ``old`` in ``path``; the 1-based line it is on."""
    text = path.read_text(encoding="utf-8")
    at = text.index(old)
    path.write_text(text[:at] + new + text[at + len(old):], encoding="utf-8")
    return text.count("\n", 0, at) + 1


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200b", "\x07", "\u2028"])
def test_validate_refuses_bidi_and_invisible_characters(spec_core: Path, char: str) -> None:
    wgmma = spec_core / "instructions" / "wgmma.yaml"
    text = wgmma.read_text(encoding="utf-8")
    line_no = _edit(wgmma, "D = A * B + D (D", "D = A * B + D " + char + "(D")
    col = text.splitlines()[line_no - 1].index("D = A * B + D (D") + len("D = A * B + D ") + 1
    res = run_main("validate", cwd=spec_core.parent)
    assert res.code == 2
    ours = [x for x in res.err.splitlines() if x.startswith("spec/instructions/wgmma.yaml")]
    assert len(ours) == 1, res.err  # the character, not what YAML makes of it
    assert ours[0].startswith(f"spec/instructions/wgmma.yaml:{line_no}:{col}: "
                              f"U+{ord(char):04X} ")
    assert "is not allowed in a spec file" in ours[0]
    assert not (spec_core.parent / "generated").exists()


def test_validate_refuses_a_descriptor_name_too_long_for_a_file_name(spec_core: Path) -> None:
    tmem = spec_core / "descriptors" / "tmem_addr.yaml"
    line_no = _edit(tmem, "\ndescriptor: tmem_addr", "\ndescriptor: " + "t" * 306) + 1
    res = run_main("validate", cwd=spec_core.parent)
    assert res.code == 2
    assert res.err.splitlines()[0].startswith(
        f"spec/descriptors/tmem_addr.yaml:{line_no}:13: descriptor name: 'tttt")
    assert "is 306 characters long; allowed: up to 100" in res.err


@pytest.mark.parametrize(("old", "new", "bad"), [
    ("text: .satfinite", 'text: .satfinite"', '"'),
    ("text: .satfinite", "text: .satfinite;", ";"),
    ("text: .satfinite", "text: '.satfinite \\\\'", " "),
    ("values: [f16, f32, s32]", "values: [f16, 'f32;', s32]", ";"),
    ("values: [f16, f32, s32]", "values: [f16, f32, 's3\"2']", '"'),
])
def test_validate_refuses_qualifier_text_ptxas_cannot_read(spec_core: Path, old: str,
                                                           new: str, bad: str) -> None:
    wgmma = spec_core / "instructions" / "wgmma.yaml"
    line_no = _edit(wgmma, old, new)
    res = run_main("validate", cwd=spec_core.parent)
    assert res.code == 2, res.out
    first = res.err.splitlines()[0]
    assert first.startswith(f"spec/instructions/wgmma.yaml:{line_no}:"), res.err
    assert f"{bad!r} cannot be part of a PTX opcode" in first


# -- typing of the generated Python: tests/test_quality.py (the README's Python block and
# misspelt names are checked in the same mypy --strict run as the package) -----------------


# -- one order of template parameters --------------------------------------------------------

def _template_names(decl: str) -> list[str]:
    import re

    return re.findall(r"\b(Ptxgen\w+)(?=\s*(?:=|,|>$))", decl)


def test_descriptor_checks_take_the_qualifiers_in_the_wrappers_order() -> None:
    """``tcgen05_mma_idesc_problem<CtaGroup, Kind, ...>`` as ``tcgen05_mma<CtaGroup, Kind,
    ...>`` (it was ``<Kind, CtaGroup>``): every descriptor check and every wrapper of its
    instruction name the qualifiers they share in one order."""
    import re

    ptx = ROOT / "generated" / "include" / "ptxgen" / "ptx"
    rules = (ptx / "descriptor_rules.hpp").read_text()
    checks = re.findall(r"^template <(.*)>\nPTXGEN_PTX_CONSTEXPR const char\* (\w+)_problem\(",
                        rules, re.M)
    assert any(name == "tcgen05_mma_idesc" for _, name in checks)
    compared = 0
    for params, name in checks:
        mine = [n for n in _template_names(params + ">") if n != "PtxgenTarget"]
        wrapper = name.rsplit("_", 1)[0] if name.startswith("tcgen05_mma") else name
        for header in ptx.glob("*.device.hpp"):
            for decl in re.findall(r"^template <(.*)>\nPTXGEN_PTX_DEVICE \S+ " + wrapper
                                   + r"\(", header.read_text(), re.M):
                theirs = _template_names(decl + ">")
                shared = [n for n in theirs if n in mine]
                assert shared == [n for n in mine if n in shared], (name, decl)
                compared += len(shared) > 1
    assert compared > 0


def test_a_wrappers_doc_lists_its_template_parameters_as_declared() -> None:
    """The doc comment of a wrapper lists its template parameters in the order of its
    declaration (wgmma_mma_async listed satfinite second; it is declared fifth)."""
    import re

    block = re.compile(r"/\*\*\n((?:(?!\*/).)*?)\*/\ntemplate <([^\n]*)>\n"
                       r"PTXGEN_PTX_DEVICE [^\n(]* (\w+)\(", re.S)
    checked = 0
    for header in (ROOT / "generated" / "include" / "ptxgen" / "ptx").glob("*.device.hpp"):
        for doc, decl, name in block.findall(header.read_text()):
            if "Template parameters:" not in doc:
                continue
            part = doc.split("Template parameters:")[1].split("Operands:")[0]
            listed = re.findall(r"^ \*   (Ptxgen\w+):", part, re.M)
            declared = [n for n in _template_names(decl + ">") if n in listed]
            assert listed == declared, (header.name, name)
            checked += 1
    assert checked > 100


def test_diff_of_a_broken_revision_does_not_say_nothing_written(spec_core: Path) -> None:
    """diff writes nothing, ever: its summary of a spec's problems does not say so."""
    broken = spec_core.parent / "broken"
    import shutil

    shutil.copytree(spec_core, broken)
    _edit(broken / "descriptors" / "tmem_addr.yaml", "\ndescriptor: tmem_addr",
          "\ndescriptor: tmem_addr 1")
    res = run_main("diff", "spec", "broken", cwd=spec_core.parent)
    assert res.code == 2
    assert res.err.splitlines()[-1] == "ptxgen: 1 error(s)", res.err


def test_the_public_header_names_every_wrappers_parameters() -> None:
    """What a user cannot find otherwise (the public header declares ``template <auto...>``
    for the host pass): above each such declaration, every overload of the wrapper as
    declared in the internal .device.hpp, its template parameters and operands named, in
    the declaration's order."""
    import re

    ptx = ROOT / "generated" / "include" / "ptxgen" / "ptx"
    # a wrapper: its doc comment, its template line, its signature (operands one a line)
    decl = re.compile(r"^ \*/\ntemplate <([^\n]*)>\nPTXGEN_PTX_DEVICE ([^\n(]*) (\w+)\(\n?"
                      r"((?:[^)]|\)(?!\s*[{;]))*)\)", re.M)
    checked = 0
    for device in ptx.glob("*.device.hpp"):
        public = (ptx / device.name.replace(".device.hpp", ".hpp")).read_text()
        for template, ret, name, params in decl.findall(device.read_text()):
            if "Ptxgen" not in template:
                continue
            shown_params = ", ".join(p.strip().removeprefix("[[maybe_unused]] ")
                                     for p in params.split(",\n") if p.strip())
            shown_params = re.sub(r"\s*\n\s*", " ", shown_params)
            sig = re.sub(r"\bPtxgen(?=[A-Z])", "",
                         f"template <{template}> {ret} {name}({shown_params})")
            assert f"/* {sig} */" in public, (device.name, sig)
            checked += 1
    assert checked > 200
