"""PTX ISA version views (`--ptx-isa X.Y`): the spec as of one version.

What a view must hold is derived here from the whole spec's model (which forms are
supported at the version, which targets exist then) and from the descriptor files'
`since`, never from the view's own output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from conftest import ROOT, SPEC, run_main
from ptxgen.load import load_spec_dir
from ptxgen.model import Spec, build_model
from ptxgen.model.instructions import FALSE, Form, vkey
from ptxgen.model.versions import ViewError, at, supported_at
from ptxgen.pipeline import load_documents, load_model
from ptxgen.support import answer

VERSIONS = ("7.0", "7.8", "8.0", "8.4", "8.6", "8.7", "8.8", "9.0")


@cache
def docs() -> list:  # type: ignore[type-arg]
    return load_documents(SPEC)


@cache
def whole() -> Spec:
    return build_model(docs())


def view(version: str) -> Spec:
    return at(whole(), version)


def ident(f: Form) -> tuple[str, tuple[tuple[str, str], ...]]:
    return f.opcode, tuple(sorted((n, v) for n, v in f.variant if v != FALSE))


# -- instructions and targets ---------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_a_view_has_exactly_the_forms_supported_at_its_version(version: str) -> None:
    full = whole().instructions
    iset = view(version).instructions
    assert full is not None and iset is not None
    want = {i.id: {ident(f) for f in i.forms if supported_at(f.support, full.targets, version)}
            for i in full.instructions}
    got = {i.id: {ident(f) for f in i.forms} for i in iset.instructions}
    assert got == {k: v for k, v in want.items() if v}
    x = vkey(version)
    for ins in iset.instructions:
        for f in ins.forms[:: max(1, len(ins.forms) // 40)]:
            m = f.support.matrix(iset.targets)
            assert m and all(vkey(v) <= x for v in m.values()), f.key


@pytest.mark.parametrize("version", VERSIONS)
def test_a_view_has_the_targets_and_versions_of_its_version(version: str) -> None:
    full = whole().instructions
    iset = view(version).instructions
    assert full is not None and iset is not None
    assert iset.targets.versions == tuple(v for v in full.targets.versions
                                          if vkey(v) <= vkey(version))
    assert set(iset.targets.names) == {t.name for t in full.targets.targets
                                       if t.exists_at(version)}
    assert all(t.until is None for t in iset.targets.targets)  # one name per target


def test_sm_101_and_sm_110_are_one_architecture_under_two_names() -> None:
    for t in ("sm_101", "sm_101a", "sm_101f"):
        assert t in view("8.8").instructions.targets.names  # type: ignore[union-attr]
        assert t not in view("9.0").instructions.targets.names  # type: ignore[union-attr]
    for t in ("sm_110", "sm_110a", "sm_110f"):
        assert t not in view("8.8").instructions.targets.names  # type: ignore[union-attr]
        assert t in view("9.0").instructions.targets.names  # type: ignore[union-attr]
    assert "sm_101f" not in view("8.7").instructions.targets.names  # type: ignore[union-attr]


def test_qualifier_values_of_later_versions_are_absent() -> None:
    def values(version: str, ins: str, q: str) -> tuple[str, ...]:
        iset = view(version).instructions
        assert iset is not None
        return iset.get(ins).qualifier(q).values

    assert "mxf4nvf4" not in values("8.6", "tcgen05_mma", "kind")
    assert "mxf4nvf4" in values("8.7", "tcgen05_mma", "kind")
    for v in ("block16", "block32"):
        assert v not in values("8.7", "tcgen05_mma", "scale_vectorsize")
        assert v in values("8.8", "tcgen05_mma", "scale_vectorsize")
    ids = {i.id for i in view("7.8").instructions.instructions}  # type: ignore[union-attr]
    assert "tcgen05_mma" not in ids and "wgmma_mma_async" not in ids


def test_value_gates_keep_only_the_targets_of_their_version() -> None:
    """tensormap.replace's elemtype-13 value gate (PTX ISA 8.7, sm_100f / sm_101f / sm_120f,
    family targets that come at 8.8) is absent at 8.6 and, at 8.7, on exactly the whole
    spec's gate targets that exist then; swizzle-mode-4 (8.8) only comes at 8.8."""
    full = whole().instructions
    assert full is not None

    def gates(iset: object) -> dict[str, frozenset[str] | None]:
        ins = iset.get("tensormap_replace")  # type: ignore[attr-defined]
        return {vg.gate.id: vg.gate.targets for o in ins.operands for vg in o.value_gates}

    whole_gates = gates(full)
    assert set(whole_gates) == {"elemtype-13", "swizzle-mode-4"}
    assert gates(view("8.6").instructions) == {}
    at_87 = gates(view("8.7").instructions)
    assert set(at_87) == {"elemtype-13"}
    existing = {t.name for t in full.targets.targets if t.exists_at("8.7")}
    want = (whole_gates["elemtype-13"] or frozenset()) & existing
    assert at_87["elemtype-13"] == want
    assert "sm_100a" in want and "sm_90a" not in want and "sm_100f" not in existing
    at_88 = gates(view("8.8").instructions)
    assert set(at_88) == {"elemtype-13", "swizzle-mode-4"}
    assert "sm_100f" in (at_88["elemtype-13"] or ())


def test_the_view_answers_as_support_does() -> None:
    """A form is in the view exactly when `ptxgen support --ptx-isa` lists a target."""
    full = whole().instructions
    assert full is not None
    for version in ("8.6", "8.7", "8.8"):
        iset = view(version).instructions
        assert iset is not None
        in_view = {f.opcode for i in iset.instructions for f in i.forms}
        for ins in full.instructions:
            for f in ins.forms[:: max(1, len(ins.forms) // 25)]:
                _, text = answer(full, f.opcode, None, version)
                listed = int(re.search(r"on (\d+) target", text).group(1))  # type: ignore[union-attr]
                assert (listed > 0) == (f.opcode in in_view), (version, f.opcode)


# -- descriptors -------------------------------------------------------------------------------

def since(name: str) -> tuple[str, dict[str, str]]:
    text = (SPEC / "descriptors" / f"{name}.yaml").read_text()
    block = text[text.index("\nsince:"):]
    version = re.search(r'^  version: "([\d.]+)"', block, re.M)
    kinds = dict(re.findall(r'- kind: (\w+)\n      version: "([\d.]+)"', block))
    assert version is not None
    return version.group(1), kinds


@pytest.mark.parametrize("version", VERSIONS)
def test_descriptors_and_kinds_of_later_versions_are_absent(version: str) -> None:
    x = vkey(version)
    spec = view(version)
    got = {d.name: tuple(k for k in d.kinds) for d in spec.descriptors}
    for d in whole().descriptors:
        first, kinds = since(d.name)
        if vkey(first) > x:
            assert d.name not in got
            continue
        want = tuple(k for k in d.kinds if vkey(kinds.get(k, first)) <= x)
        assert got[d.name] == want
        assert {lay.kind for lay in spec.descriptor(d.name).layouts} == set(want or (None,))


def test_descriptor_since_matches_the_instructions(spec_core: Path) -> None:
    path = spec_core / "descriptors" / "instr_desc.yaml"
    text = path.read_text()
    text = text.replace('      version: "8.7"\n      when: {kind: mxf4nvf4}',
                        '      version: "8.8"\n      when: {kind: mxf4nvf4}')
    path.write_text(text)
    res = run_main("validate", "--spec", str(spec_core))
    assert res.code == 2
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if t.strip() == 'version: "8.8"')
    assert re.search(rf"instr_desc\.yaml:{line}:\d+: the forms of tcgen05\.mma idesc with "
                     r"kind = mxf4nvf4 exist from PTX ISA 8\.7, not 8\.8", res.err), res.err


def test_every_descriptor_of_the_spec_says_since() -> None:
    """Without `since` a descriptor would exist at every version (as in revisions of the
    spec from before it); the spec itself gives every descriptor its version."""
    for d in whole().descriptors:
        doc = next(x for x in docs() if x.rel == d.spec_file)
        assert doc.data["since"]["consumers"], d.name


def test_since_must_name_real_consumers(spec_core: Path) -> None:
    path = spec_core / "descriptors" / "wgmma_desc.yaml"
    text = path.read_text().replace("operand: b_desc}", "operand: c_desc}")
    path.write_text(text)
    res = run_main("validate", "--spec", str(spec_core))
    assert res.code == 2
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if "c_desc" in t)
    assert re.search(rf"wgmma_desc\.yaml:{line}:\d+: wgmma_mma_async has no operand 'c_desc'",
                     res.err), res.err


# -- positions ---------------------------------------------------------------------------------

def test_view_elements_keep_their_lines() -> None:
    """A view's elements point at the real spec: descriptor elements keep their sources,
    and `diff --ptx-isa` finds the gates, targets and versions of a view on the lines of
    the spec files that define them."""
    spec = view("8.6")
    for d in spec.descriptors:
        full = whole().descriptor(d.name)
        for lay in d.layouts:
            for e, f in zip(lay.entries, full.layout(lay.kind).entries, strict=True):
                assert e.source == f.source
                line = (ROOT / e.source.file).read_text().splitlines()[e.source.line - 1]
                assert getattr(e, "name", "") in line or "reserved" in line \
                    or "fixed" in line, (e, line)
    res = run_main("diff", "--ptx-isa", "8.6", "9.0", "--format", "json")
    assert res.code in (0, 1), res.err
    located = 0
    for c in json.loads(res.out)["changes"]:
        if c["new"] is None or c["rule"] not in ("qualifier-value-added", "target-added",
                                                 "ptx-isa-version-added", "qualifier-added"):
            continue
        text = (ROOT / c["new"]["file"]).read_text().splitlines()[c["new"]["line"] - 1]
        name = c["subject"].rsplit(".", 1)[-1] if "version" not in c["rule"] else \
            c["subject"].removeprefix("targets.ptx_isa_versions.")
        assert name in text, (c, text)
        located += 1
    assert located > 10


def test_a_view_is_made_once_per_version() -> None:
    spec = whole()
    assert at(spec, "8.7") is at(spec, "8.7")
    assert at(spec, "8.7") is not at(spec, "8.8")
    assert at(spec, "8.7").instructions is not None


def test_a_view_is_a_query_on_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Making a view builds no instruction from spec data and enumerates no forms: its
    instructions, forms and targets are made from the whole spec's model."""
    from ptxgen.model import instructions, targets

    fresh = build_model(docs())  # the same instruction objects (built once per run)
    assert fresh.instructions is not None
    for ins in fresh.instructions.instructions:
        assert ins.forms  # the whole spec's forms, enumerated before

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a view rebuilt the model from spec data")

    monkeypatch.setattr(instructions, "_build_instruction", refuse)
    monkeypatch.setattr(instructions.Instruction, "_search", refuse)
    monkeypatch.setattr(targets, "_build_targets", refuse)
    for version in ("7.8", "8.6", "9.0", "9.5"):
        iset = at(fresh, version).instructions
        assert iset is not None
        assert sum(len(i.forms) for i in iset.instructions) > 0


def test_the_generated_module_answers_the_same_query() -> None:
    """The view is a query on any model of the spec: on the instruction set that the
    generated ``ptxgen.isa.ptx`` builds from its embedded data (what ``ptxgen support``
    answers from) it gives the instructions and forms of the view of the spec files."""
    from ptxgen.isa import ptx
    from ptxgen.model.versions import instructions_at

    for version in ("8.6", "9.0"):
        got = instructions_at(ptx.instruction_set(), version)
        want = view(version).instructions
        assert got is not None and want is not None
        assert got.targets == want.targets
        assert [i.id for i in got.instructions] == [i.id for i in want.instructions]
        for a, b in zip(got.instructions, want.instructions, strict=True):
            assert [f.key for f in a.forms] == [f.key for f in b.forms], a.id
            assert [f.support for f in a.forms] == [f.support for f in b.forms], a.id


# CI: a covering subset - the first and the last version, and those where the tcgen05 and
# block-scaled kinds (8.6, 8.7), the target families (8.8) and the renamed targets (9.0)
# appear; VERSIONS_ALL=1 runs every version the spec lists.
@pytest.mark.parametrize("version", ("6.3", "7.0", "7.8", "8.0", "8.2", "8.5", "8.6", "8.7",
                                     "8.8", "9.0", "9.4", "9.5") if os.environ.get(
                                         "VERSIONS_ALL") else ("6.3", "8.6", "8.7", "8.8",
                                                               "9.0", "9.5"))
def test_a_view_is_the_model_its_spec_data_builds(version: str) -> None:
    """The view's model (made from the whole spec's model) is exactly the model that the
    ordinary builder makes from the spec data the view writes (what the generated
    ``ptxgen.isa.ptx`` embeds): every element, every form in order, each form's support,
    combination and operands; and each form's support matrix is the whole spec's at the
    version."""
    from ptxgen.model.instructions import build_instruction_set

    full = whole().instructions
    iset = view(version).instructions
    assert full is not None and iset is not None and iset.data is not None
    built = build_instruction_set(*iset.data)
    assert built.targets == iset.targets
    assert built.targets.targets == iset.targets.targets
    assert built.notes == iset.notes
    assert [i.id for i in built.instructions] == [i.id for i in iset.instructions]
    x = vkey(version)
    existing = set(iset.targets.names)
    for want, got in zip(built.instructions, iset.instructions, strict=True):
        assert got == want, got.id  # every field, element by element
        assert [f.values for f in got.forms] == [f.values for f in want.forms], got.id
        whole_forms = {ident(f): f for f in full.get(got.id).forms}
        for fg, fw in zip(got.forms, want.forms, strict=True):
            assert fg.support == fw.support, fg.key
            assert fg.combination == fw.combination, fg.key
            assert fg.operands == fw.operands, fg.key
        for fg in got.forms[:: max(1, len(got.forms) // 50)]:
            whole_form = whole_forms[ident(fg)]
            assert fg.support.matrix(iset.targets) == {
                t: v for t, v in whole_form.support.matrix(full.targets).items()
                if t in existing and vkey(v) <= x}, fg.key


# -- the command line --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated_87(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The PTX ISA 8.7 view generated into a new folder (the folder, generate's stdout)."""
    out = tmp_path_factory.mktemp("view") / "v87"
    res = run_main("generate", "--ptx-isa", "8.7", "--out", str(out))
    assert res.code == 0, res.err
    return out, res.out


def test_generate_and_check_a_view(generated_87: tuple[Path, str]) -> None:
    out, stdout = generated_87
    res = run_main("check", "--ptx-isa", "8.7", "--out", str(out))
    assert res.code == 0, res.err
    assert stdout.strip().endswith(f"to {out} (PTX ISA 8.7 view)")
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["ptx_isa"] == "8.7"
    assert run_main("check", "--ptx-isa", "8.7", "--out", str(out), "--full").code == 0
    other = run_main("check", "--ptx-isa", "8.6", "--out", str(out))
    assert other.code == 1 and "PTX ISA 8.6 view" in other.err
    assert run_main("check", "--out", str(out)).code == 1  # not the whole spec
    # the view's C++ enums have the values of 8.7 only (.block16 / .block32 are 8.8)
    text = (out / "include" / "ptxgen" / "ptx" / "tcgen05_mma.hpp").read_text()
    enum = re.search(r"enum class tcgen05_mma_scale_vectorsize : int \{(.*?)\}", text, re.S)
    assert enum is not None
    assert [m.strip() for m in enum.group(1).split(",") if m.strip()] == [
        "none", "scale_vec_1X", "scale_vec_2X", "scale_vec_4X"]
    assert "generated/MANIFEST.json" not in stdout


def test_generated_view_module_answers_at_its_version(tmp_path: Path,
                                                     generated_87: tuple[Path, str]) -> None:
    out, _ = generated_87
    pkg = tmp_path / "pkg" / "ptxgen_view"
    shutil.copytree(out / "python", pkg)
    code = ("import ptxgen_view.ptx as p; i = p.instruction_set(); "
            "print(i.targets.versions[-1], 'sm_110a' in i.targets.names, "
            "len(i.get('tcgen05_mma').forms))")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "pkg",
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    tcgen05 = view("8.7").instructions.get("tcgen05_mma")  # type: ignore[union-attr]
    assert res.stdout.split() == ["8.7", "False", str(len(tcgen05.forms))]


def test_the_whole_spec_is_no_view() -> None:
    """Without --ptx-isa nothing is filtered and the manifest records no version."""
    assert load_model(SPEC) == whole()
    from ptxgen import manifest

    data = json.loads(manifest.build({"a": b"x"}, "digest"))
    assert "ptx_isa" not in data
    assert json.loads(manifest.build({"a": b"x"}, "digest", "8.7"))["ptx_isa"] == "8.7"
    assert manifest.input_digest(SPEC) != manifest.input_digest(SPEC, "8.7")


def test_unknown_version_is_an_error(tmp_path: Path) -> None:
    for cmd in (("generate", "--out", str(tmp_path / "x")), ("check",), ("validate",)):
        res = run_main(*cmd, "--ptx-isa", "8.9")
        assert res.code == 2 and res.out == "", cmd
        assert res.err == ("ptxgen: error: --ptx-isa: '8.9' is not a PTX ISA version of the "
                           "spec; allowed: " + ", ".join(whole().instructions.targets.versions)
                           + "\n")  # type: ignore[union-attr]
    assert not (tmp_path / "x").exists()
    with pytest.raises(ViewError):
        at(whole(), "10.0")


def test_validate_a_view() -> None:
    res = run_main("validate", "--ptx-isa", "8.0")
    assert res.code == 0, res.err
    spec = view("8.0")
    iset = spec.instructions
    assert iset is not None
    forms = sum(len(i.forms) for i in iset.instructions)
    assert f"the PTX ISA 8.0 view has {len(spec.descriptors)} descriptors" in res.out
    assert f"{len(iset.instructions)} instructions with {forms} forms" in res.out


@pytest.mark.parametrize(("args", "message"), [
    (("encode", "instr_desc", "--kind", "mxf4nvf4", "--ptx-isa", "8.6"),
     "instr_desc --kind mxf4nvf4 does not exist at PTX ISA 8.6 (it appears in 8.7)"),
    (("decode", "instr_desc", "--kind", "mxf4nvf4", "0x0", "--ptx-isa", "8.6"),
     "instr_desc --kind mxf4nvf4 does not exist at PTX ISA 8.6 (it appears in 8.7)"),
    (("encode", "smem_desc", "--ptx-isa", "8.5"),
     "smem_desc does not exist at PTX ISA 8.5 (it appears in 8.6)"),
    (("zero-column-mask", "0x0", "--m", "128", "--n", "32", "--ptx-isa", "8.5"),
     "zero_column_mask_desc does not exist at PTX ISA 8.5 (it appears in 8.6)"),
    (("encode", "wgmma_desc", "--ptx-isa", "7.8"),
     "wgmma_desc does not exist at PTX ISA 7.8 (it appears in 8.0)"),
    (("encode", "wgmma_desc", "--ptx-isa", "8.9"),
     "--ptx-isa: '8.9' is not a PTX ISA version of the spec; allowed: 6.3,"),
    (("encode", "wgmma_desc", "--ptx-isa", "8.0", "--spec", "no/such"),
     "--spec: no/such is not a folder"),
])
def test_descriptor_commands_refuse_what_does_not_exist_yet(args: tuple[str, ...],
                                                            message: str) -> None:
    res = run_main(*args)
    assert res.code == 2 and res.out == "", res.out
    assert res.err.startswith(f"ptxgen: error: {message}"), res.err


def test_descriptor_commands_at_a_version_answer_as_without() -> None:
    word = ["instr_desc", "--kind", "mxf4nvf4", "atype=e2m1", "btype=e2m1", "n=128",
            "m=128"]
    plain = run_main("encode", *word)
    assert plain.code == 0, plain.err
    at = run_main("encode", *word, "--ptx-isa", "8.7")
    assert (at.code, at.out) == (0, plain.out)
    res = run_main("decode", "smem_desc", "0x4000404000010040", "--json", "--ptx-isa", "9.0")
    assert res.code == 0 and json.loads(res.out)["swizzle"] == "128b"


def test_the_fast_path_reads_no_spec() -> None:
    code = ("import sys; from ptxgen.cli import main; "
            "rc = main(['encode', 'smem_desc', 'start_address=0x400']); "
            "print(rc, 'yaml' in sys.modules, 'ptxgen.model.versions' in sys.modules, "
            "'argparse' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[-4:] == ["0", "False", "False", "False"]


def test_load_spec_dir_is_untouched_by_views() -> None:
    """A view is made from copies: the loaded documents stay as they were."""
    loaded = load_spec_dir(SPEC)  # parsed again: objects no view has seen
    before = [d.data for d in loaded]
    fresh = build_model(load_documents(SPEC))
    for version in ("7.0", "8.6", "9.0"):
        at(fresh, version)
    assert [d.data for d in docs()] == before
    assert fresh.instructions is not None and fresh.instructions.data is not None
    assert [dict(d) for _, d in fresh.instructions.data[1]] == [
        d.data for d in loaded if d.rel.startswith("spec/instructions/")]
    assert ROOT.is_dir()


def test_each_form_instruction_and_value_knows_the_versions_at_which_it_exists() -> None:
    """The versions the model computes once per instruction (``lifetimes``, what a view
    filters by) are, at every version the spec lists, those at which the form is
    supported on a target that exists then (:func:`supported_at`, from the targets'
    ``since`` / ``until``); a value exists while some form with it does; an instruction
    while some form does."""
    from ptxgen.model.lifetimes import lifetime

    full = whole().instructions
    assert full is not None
    versions = full.targets.versions
    renamed = [t for t in full.targets.targets if t.until is not None]
    assert renamed  # the spec has targets that stop existing (sm_101* before 9.0)
    for ins in full.instructions:
        life = lifetime(ins)
        assert lifetime(ins) is life  # computed once
        by_support: dict[int, frozenset[str]] = {}
        values: dict[tuple[str, str], set[str]] = {}
        for f, on in zip(ins.forms, life.forms, strict=True):
            want = by_support.get(id(f.support))
            if want is None:
                want = by_support[id(f.support)] = frozenset(
                    v for v in versions if supported_at(f.support, full.targets, v))
            assert on == want, (f.key, sorted(on ^ want, key=vkey))
            for kv in f.values:
                values.setdefault(kv, set()).update(on)
        assert life.versions == frozenset().union(*by_support.values()), ins.id
        assert {(n, v): set(on) for n, col in life.values.items() for v, on in col.items()
                if on} == {kv: on for kv, on in values.items() if on}, ins.id
        first, last = life.first(versions), life.last(versions)
        assert first is not None and last is not None
        assert first == min(life.versions, key=vkey) and last == max(life.versions, key=vkey)
