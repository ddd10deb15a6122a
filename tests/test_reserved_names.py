"""Names the generated code uses itself (issue 12): ``validate`` refuses them, and the one
table that says so (``ptxgen.names.RESERVED``) is checked against the rendered output.

Two directions, so that the table cannot drift from the emitters:

* every reserved name really is a member or name of the rendered Python (read with
  ``ast``) or C++ (read with regular expressions) - no stale entry;
* every member of every rendered descriptor class and struct is a field, a reserved
  name or made from a field by a reserved pattern - no missing entry;

and every reserved name is refused by ``validate`` at the name's ``file:line:col``.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
from functools import cache
from pathlib import Path

import pytest

from conftest import SPEC
from ptxgen import pipeline
from ptxgen.errors import SpecError
from ptxgen.names import (
    RESERVED,
    RESERVED_ENUM_CLASSES,
    RESERVED_FIELD_PATTERNS,
    RESERVED_ZCM_FIELDS,
    ReservedNameError,
    assert_not_reserved,
    reserved_problem,
)


@cache
def rendered() -> dict[str, str]:
    """The rendered output: the repository's generated/, each file as its MANIFEST.json
    lists it (``ptxgen check``, run by tests/test_generate.py, holds it equal to what the
    spec, templates and generator render; a render here costs seconds)."""
    out = SPEC.parent / "generated"
    listed = json.loads((out / "MANIFEST.json").read_text())["files"]
    files = {p: (out / p).read_bytes() for p in listed}
    assert all(hashlib.sha256(b).hexdigest() == listed[p] for p, b in files.items())
    return {p: b.decode() for p, b in files.items()}


@cache  # read-only trees, parsed once (python/ptx.py alone is large)
def _py(path: str) -> ast.Module:
    return ast.parse(rendered()[path])


def _classes(module: ast.Module) -> list[ast.ClassDef]:
    return [n for n in module.body if isinstance(n, ast.ClassDef)]


def _members(cls: ast.ClassDef) -> set[str]:
    out: set[str] = set()
    for n in cls.body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Assign):
            out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
    return out


def _module_names(module: ast.Module) -> set[str]:
    out: set[str] = set()
    for n in module.body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Assign):
            out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {a.asname or a.name for a in n.names}
    return out


def _annotation_names(cls: ast.ClassDef) -> set[str]:
    """Names used in the annotations of the class body and its methods' signatures."""
    exprs: list[ast.expr] = []
    for n in cls.body:
        if isinstance(n, ast.AnnAssign):
            exprs.append(n.annotation)
        elif isinstance(n, ast.FunctionDef):
            args = n.args.args + n.args.kwonlyargs + [a for a in (n.args.vararg, n.args.kwarg)
                                                      if a is not None]
            exprs += [a.annotation for a in args if a.annotation is not None]
            if n.returns is not None:
                exprs.append(n.returns)
    return {x.id for e in exprs for x in ast.walk(e) if isinstance(x, ast.Name)}


def _descriptor_modules() -> list[str]:
    return [p for p in rendered() if re.fullmatch(r"python/(?!ptx|_runtime|__init__)\w+\.py", p)]


@cache
def _cpp(path: str) -> str:
    """A header without its comments."""
    text = re.sub(r"/\*.*?\*/", " ", rendered()[path], flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _descriptor_headers() -> list[str]:
    return [p for p in rendered() if re.fullmatch(r"include/ptxgen/\w+\.hpp", p)
            and p.rsplit("/", 1)[1] not in ("core.hpp", "ptx.hpp", "ptxgen.hpp")]


def _masks_body() -> str:
    text = _cpp("include/ptxgen/zero_column_mask_desc.hpp")
    start = text.index("masks_(uint32_t m, uint32_t n, bool diagnose)")
    return text[start:text.index("return {out, Errc::ok, Field::none};\n  }", start)]


# -- every entry is real --------------------------------------------------------------

def _is_generated(role: str, name: str, lang: str) -> bool:
    if role == "field" and lang == "python":
        classes = [c for p in _descriptor_modules() for c in _classes(_py(p))]
        return (any(name in _members(c) for c in classes)
                or any(name in _annotation_names(c) for c in classes)
                or any(isinstance(n, ast.FunctionDef) and n.name == "__init__"
                       and (n.args.args[0].arg == name
                            or (n.args.kwarg is not None and n.args.kwarg.arg == name)
                            or any(isinstance(x, ast.AnnAssign | ast.Assign)  # a local
                                   and any(isinstance(t, ast.Name) and t.id == name
                                           for t in (x.targets if isinstance(x, ast.Assign)
                                                     else [x.target]))
                                   for x in ast.walk(n)))
                       for c in classes for n in c.body))
    if role == "field":  # c++: a word of a descriptor header's code
        return any(re.search(rf"(?<![\w.]){re.escape(name)}\b", _cpp(h))
                   for h in _descriptor_headers())
    if role == "descriptor":
        files = {"ptx": ["python/ptx.py", "include/ptxgen/ptx.hpp"],
                 "core": ["include/ptxgen/core.hpp"], "ptxgen": ["include/ptxgen/ptxgen.hpp"],
                 "instructions": ["docs/instructions.md"], "readme": ["docs/README.md"],
                 "ptx_builders": ["tests/test_ptx_builders.py"],
                 "ptxas_conformance": ["tests/test_ptxas_conformance.py"]}.get(name)
        if files is not None:
            return all(f in rendered() for f in files)
        return name in _module_names(_py("python/__init__.py"))
    if role == "class" and lang == "python":
        return (name in _module_names(_py("python/__init__.py"))
                or any(name in _module_names(_py(p)) for p in _descriptor_modules()))
    if role == "class":
        return any(re.search(rf"\b(struct|enum class) {name}\b", _cpp(h))
                   for h in ["include/ptxgen/core.hpp", *_descriptor_headers()])
    if role == "instruction" and lang == "python":
        return name in _module_names(_py("python/ptx.py"))
    if role == "instruction":
        return bool(re.search(rf"\b{name}\b", _cpp("include/ptxgen/ptx/target.hpp")))
    if role == "operand" and lang == "python":  # the builders: not ptxgen's own functions
        builders = [n for n in _py("python/ptx.py").body if isinstance(n, ast.FunctionDef)
                    and n.args.kwonlyargs and n.name not in RESERVED["instruction"]]
        return all(any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(b))
                   for b in builders)
    # the parameter lists of the wrappers (a parameter is in scope in the later ones)
    sigs = [m.group(1) for p in rendered() if re.fullmatch(r"include/ptxgen/ptx/\w+\.hpp", p)
            for m in re.finditer(r"PTXGEN_PTX_DEVICE void \w+\(([^{]*)\)\s*\{", _cpp(p))]
    return any(f"{name}::" in sig for sig in sigs)


@pytest.mark.parametrize(("role", "name"), [(r, n) for r, names in RESERVED.items()
                                            for n in names])
def test_every_reserved_name_is_used_by_the_generated_code(role: str, name: str) -> None:
    langs, what = RESERVED[role][name]
    for lang in langs.split(", "):
        assert _is_generated(role, name, lang), (role, name, lang, what)


@pytest.mark.parametrize("name", sorted(RESERVED_ZCM_FIELDS))
def test_zero_column_mask_locals_are_used_by_masks(name: str) -> None:
    assert re.search(rf"(?<![\w.]){name}\b", _masks_body()), name


def test_reserved_enum_classes_are_struct_members() -> None:
    for name in RESERVED_ENUM_CLASSES:
        assert all(re.search(rf"\b{name}\b", _cpp(h)) for h in _descriptor_headers()), name


# -- nothing is missing ----------------------------------------------------------------

def _made_from_fields(name: str, fields: set[str]) -> bool:
    return any(re.search(p, name) for p, _ in RESERVED_FIELD_PATTERNS) and any(
        f in name for f in fields)


def test_every_python_member_is_a_field_or_reserved() -> None:
    model = pipeline.load_model(SPEC)
    for d in model.descriptors:
        module = _py(f"python/{d.name}.py")
        for cls, lay in zip(_classes(module), d.all_layouts, strict=True):
            fields = {f.name for f in lay.fields}
            enums = {f.enum_class for f in lay.fields if f.enum_class}
            for m in _members(cls) - fields - enums:
                if m.isupper() or (m.startswith("__") and m.endswith("__")):
                    continue  # constants and dunders: no field can be spelled so
                assert m in RESERVED["field"], (cls.name, m)
            # typing's names are capitalised, which no field name (lower_snake_case) is
            for m in _annotation_names(cls) - enums - {"ClassVar", "FieldSpec", "ShapeTable",
                                                      "None", "Any", "Literal", cls.name}:
                assert m in RESERVED["field"], (cls.name, m)


def test_every_cpp_member_is_a_field_or_reserved() -> None:
    model = pipeline.load_model(SPEC)
    declared = re.compile(r"PTXGEN_HD[^(;]*?\b(\w+)\(|static constexpr \w+ (\w+) =|"
                          r"using (\w+) =|enum class (\w+)")
    for d in model.descriptors:
        text = _cpp(f"include/ptxgen/{d.name}.hpp")
        fields = {f.name for lay in d.all_layouts for f in lay.fields}
        enums = {f.enum_class for lay in d.all_layouts for f in lay.fields if f.enum_class}
        for struct in re.finditer(r"struct (\w+_t) \{(.*?)\n\};", text, re.S):
            for m in declared.finditer(struct.group(2)):
                name = next(g for g in m.groups() if g)
                if name in fields or name in enums or name in ("Field", "Kind"):
                    continue
                assert name in RESERVED["field"] or _made_from_fields(name, fields), \
                    (struct.group(1), name)


# -- validate refuses every one, at the name ------------------------------------------

@pytest.fixture(scope="module")
def descriptor_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("spec") / "spec"
    shutil.copytree(SPEC / "descriptors", dst / "descriptors")
    shutil.copytree(SPEC / "schema", dst / "schema")
    return dst


def _refused(spec: Path, rel: str, old: str, new: str) -> list[str]:
    path = spec / rel
    text = path.read_text()
    assert text.count(old) >= 1, old  # the first: the baseline (variants may repeat a field)
    path.write_text(text.replace(old, new, 1))
    try:
        with pytest.raises(SpecError) as info:
            pipeline.load_documents(spec)
    finally:
        path.write_text(text)
    line = text[:text.index(old)].count("\n") + 1
    col = len(old) - len(old.lstrip()) + 1 + len("- name: ") * old.lstrip().startswith("- ")
    return [str(d) for d in info.value.diagnostics if d.line == line and d.col >= col]


FIELD_NAMES = sorted(set(RESERVED["field"]) | {"with_swizzle", "lbo_mode_above_1",
                                               "swizzle_not_one_of_none", "base_offset_for",
                                               "base_offset_for_checked"})


@pytest.mark.parametrize("name", FIELD_NAMES)
def test_validate_refuses_a_reserved_field_name(descriptor_spec: Path, name: str) -> None:
    found = _refused(descriptor_spec, "descriptors/smem_desc.yaml", "  - name: lbo_mode\n",
                     f"  - name: {name}\n")
    assert found and "field name:" in found[0], found
    assert reserved_problem("field", name) is not None or "keyword" in found[0]


@pytest.mark.parametrize("name", sorted(RESERVED_ZCM_FIELDS))
def test_validate_refuses_a_mask_local_in_a_zero_column_mask(descriptor_spec: Path,
                                                             name: str) -> None:
    found = _refused(descriptor_spec, "descriptors/zero_column_mask_desc.yaml",
                     "  - name: non_zero_mask\n", f"  - name: {name}\n")
    assert found and "is reserved" in found[0], found


@pytest.mark.parametrize("name", sorted(RESERVED["descriptor"]))
def test_validate_refuses_a_reserved_descriptor_name(descriptor_spec: Path, name: str) -> None:
    found = _refused(descriptor_spec, "descriptors/wgmma_desc.yaml", "descriptor: wgmma_desc\n",
                     f"descriptor: {name}\n")
    assert any("descriptor name:" in f and "is reserved" in f for f in found), found


@pytest.mark.parametrize("name", sorted(RESERVED["class"]))
def test_validate_refuses_a_reserved_class_name(descriptor_spec: Path, name: str) -> None:
    found = _refused(descriptor_spec, "descriptors/wgmma_desc.yaml", "class_name: WgmmaDesc\n",
                     f"class_name: {name}\n")
    assert any("class name:" in f and "is reserved" in f for f in found), found


@pytest.fixture(scope="module")
def instruction_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("ispec") / "spec"
    (dst / "instructions").mkdir(parents=True)
    shutil.copy(SPEC / "targets.yaml", dst / "targets.yaml")
    shutil.copy(SPEC / "instructions" / "ldmatrix.yaml", dst / "instructions")
    shutil.copytree(SPEC / "schema", dst / "schema")
    return dst


@pytest.mark.parametrize("name", sorted(RESERVED["instruction"]))
def test_validate_refuses_a_reserved_instruction_id(instruction_spec: Path, name: str) -> None:
    found = _refused(instruction_spec, "instructions/ldmatrix.yaml", "    id: ldmatrix\n",
                     f"    id: {name}\n")
    assert any("instruction id:" in f for f in found), found


@pytest.mark.parametrize("name", sorted(RESERVED["operand"]))
def test_validate_refuses_a_reserved_operand_name(instruction_spec: Path, name: str) -> None:
    path = instruction_spec / "instructions" / "ldmatrix.yaml"
    text = path.read_text()
    first = text.index("      - name: p\n")  # ldmatrix's address operand
    path.write_text(text[:first] + f"      - name: {name}\n"
                    + text[first + len("      - name: p\n"):])
    try:
        with pytest.raises(SpecError) as info:
            pipeline.load_documents(instruction_spec)
    finally:
        path.write_text(text)
    line = text[:first].count("\n") + 1
    assert any(d.line == line and "operand name:" in d.message
               for d in info.value.diagnostics), info.value.diagnostics


def test_the_emitters_assert_against_the_same_table() -> None:
    for role, names in RESERVED.items():
        for name in names:
            with pytest.raises(ReservedNameError):
                assert_not_reserved(role, [name])
    with pytest.raises(ReservedNameError):
        assert_not_reserved("field", ["with_swizzle"])
    with pytest.raises(ReservedNameError):
        assert_not_reserved("field", ["count"], zero_column_mask=True)
    assert_not_reserved("field", ["count"])  # only a mask's local
    assert_not_reserved("field", ["max_shift"])  # the instruction descriptor's field


# -- names made from instruction ids (issue 12: ids that clash or are prefixes) -----------

def _instruction_names() -> dict[str, list[tuple[str, str, bool, str]]]:
    from ptxgen.isa import ptx
    from ptxgen.model.checks import instruction_identifier_lists

    return dict(instruction_identifier_lists(ptx.instruction_set().instructions))


def test_every_cpp_name_made_from_an_instruction_is_predicted() -> None:
    """Every identifier of the rendered wrapper headers that starts with an instruction id
    or a wrapper name is among ptxgen.names.instruction_identifiers of that instruction
    (the list validation compares); the enums and wrappers it predicts are rendered."""
    # the instructions' headers (target.hpp holds ptxgen's own names, in the reserved table)
    text = "\n".join(v for k, v in rendered().items() if k.startswith("include/ptxgen/ptx/")
                     and not k.endswith("/target.hpp"))
    # code only (no comments, no scoped enumerators), and names not qualified by a scope
    code = re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text), flags=re.S)
    code = re.sub(r"(enum class \w+[^{;]*\{)[^}]*\}", r"\1}", code)
    code = re.sub(r'#include "[^"]*"', "", code)  # header file names are not identifiers
    # nor are the words of string literals (static_assert messages: "load mode ...")
    code = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', code)
    idents = set(re.findall(r"(?<!::)\b[A-Za-z_]\w*\b", code))
    names = _instruction_names()
    owners = sorted({n for ns in names.values() for lang, n, prefix, _ in ns
                     if lang == "c++" and not prefix} | set(names), key=len)
    unexplained = []
    own = {n for n, (lang, _) in RESERVED["instruction"].items() if lang == "c++"}
    # a parameter of another instruction's wrapper that starts with an instruction id
    # (cp.async.bulk.tensor's load_mode, and the ld instruction's id is load)
    own |= {"load_mode"}
    for ident in idents - own:  # ptxgen's own names (fence_operand) are in the table
        if not any(ident == o or ident.startswith(o + "_") or ident.startswith(
                "ptxgen_unsupported_target_" + o) for o in owners):
            continue
        if not any(lang == "c++" and (ident == n or (prefix and ident.startswith(n)))
                   for ns in names.values() for lang, n, prefix, _ in ns):
            unexplained.append(ident)
    assert sorted(unexplained) == []
    enums = {n for ns in names.values() for _, n, _, what in ns if "the enum of" in what}
    assert enums and sorted(enums - idents) == []
    wrappers = {n for ns in names.values() for _, n, _, what in ns if "its wrapper" in what}
    assert len(wrappers & idents) > 20
    checks = {n for ns in names.values() for lang, n, prefix, what in ns
              if "a check of" in what}
    assert checks & idents  # the operand checks are rendered (for the vector operands)
    asms = {n for ns in names.values() for _, n, _, what in ns if "shared asm" in what}
    assert {"cp_async_asm", "cp_async_bulk_tensor_asm"} <= asms
    assert all(any(i.startswith(n) for i in idents) for n in asms
               if n in ("cp_async_asm", "cp_async_bulk_tensor_asm")), asms


@pytest.fixture(scope="module")
def whole_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the whole spec that each test breaks in one place and puts back."""
    dst = tmp_path_factory.mktemp("whole") / "spec"
    shutil.copytree(SPEC, dst)
    return dst


@pytest.mark.parametrize(("old", "new", "clash"), [
    # a wrapper named like another instruction's enum
    ("      - {name: wgmma_fence, when: {}}", "      - {name: mma_sp_shape, when: {}}",
     "mma_sp_shape (its wrapper mma_sp_shape, c++) clashes with mma_sp_shape (the enum of its "
     "qualifier shape) of 'mma_sp'"),
    # an id that extends another: mma_sp's helpers mma_sp_count_* cover mma_sp_count_*
    ("    id: wgmma_fence", "    id: mma_sp_count",
     "clashes with mma_sp_count_* (its helpers mma_sp_count_*) of 'mma_sp'"),
    # the other way round: ldmatrix_type_* helpers of an id 'ldmatrix' vs an id with them
    ("    id: wgmma_commit_group", "    id: ldmatrix_type_x",
     "of 'ldmatrix'"),
    # an id like a file's shared asm statement functions (ldmatrix.yaml: ldmatrix_asm0)
    ("    id: wgmma_commit_group", "    id: ldmatrix_asm0",
     "clashes with ldmatrix_asm* (the shared asm statement functions ldmatrix_asm<N> of "
     "its file) of 'ldmatrix'"),
])
def test_validate_refuses_instruction_ids_whose_generated_names_clash(
        whole_spec: Path, old: str, new: str, clash: str) -> None:
    from conftest import run_main

    path = whole_spec / "instructions" / "wgmma.yaml"
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    try:
        res = run_main("validate", "--spec", str(whole_spec))
    finally:
        path.write_text(text)
    assert res.code == 2, (res.code, res.out, res.err)
    line = next(ln for ln in res.err.splitlines() if "clashes with" in ln)
    assert clash in line, line
    m = re.match(r"(.+wgmma\.yaml):(\d+):(\d+): ", line)
    assert m, line
    block = text[:text.index(old)] if "id:" in old else text[:text.index(
        "id: wgmma_fence")]
    assert int(m.group(2)) == block.count("\n") + 1 or "id:" not in old, line
    assert re.search(r"mma_sp\.yaml:\d+:\d+\)|ldmatrix\.yaml:\d+:\d+\)", line), line


@pytest.mark.parametrize("name", ["type", "match"])
def test_python_soft_keywords_are_valid_names(name: str) -> None:
    """Soft keywords are identifiers in every Python (``type`` became one in 3.12, and
    ldmatrix's ``type`` qualifier must validate there too; ``case`` is refused as a C++
    keyword); the generated Python using them as parameter and attribute names compiles."""
    from ptxgen.names import identifier_problem

    assert identifier_problem(name) is None
    compile(f"def f({name}=1):\n    return {name}\nclass C:\n    {name} = 2\n", "<gen>", "exec")


def test_python_hard_keywords_are_refused() -> None:
    from ptxgen.names import identifier_problem

    assert identifier_problem("lambda") == "'lambda' is a Python keyword"
