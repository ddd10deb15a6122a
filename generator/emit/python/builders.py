"""Python emitter for the instruction side: spec -> generated/python/ptx.py.

The module (``ptxgen.isa.ptx``) embeds the instruction rules and the target
table as data, exposes ``instruction_set()`` (which ``ptxgen support`` uses)
and one keyword-only builder function per instruction that renders the PTX
text of any valid form and refuses invalid ones with ``PtxFormError``. Its
generated tests (:mod:`ptxgen.emit.python.tests`) check the embedded data against
the model's forms and run the builders over every valid form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptxgen import escape
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.instructions import (
    Instruction,
    InstructionSet,
    form_digest,
    gate_text,
    spec_text,
)
from ptxgen.names import assert_not_reserved

OUT_MODULE = "python/ptx.py"

# Keys of the spec data the engine does not need at run time.
_DROP = frozenset({"provenance", "seed_syntax", "examples", "description", "notes", "title",
                   "clobbers", "meaning"})


def runtime_data(value: Any) -> Any:
    """The spec data without provenance and prose (what the engine reads)."""
    if isinstance(value, Mapping):
        return {k: runtime_data(v) for k, v in value.items() if k not in _DROP}
    if isinstance(value, list):
        return [runtime_data(v) for v in value]
    return value


def _annotation(kind: str, numeric: bool = False) -> str:
    return {"flag": "bool", "int": "int", "str": "str", "register": "str", "address": "str",
            "predicate": "str", "vector": "Sequence[str]", "immediate": "int",
            "immediates": "Sequence[int]", "sink": "bool", "special": "bool",
            "tensor": "tuple[str, Sequence[str]]"}[kind]


def builder_view(ins: Instruction) -> dict[str, Any]:
    """Keyword-only parameters: qualifiers first (required ones without default)."""
    assert_not_reserved("instruction", [ins.id])
    assert_not_reserved("operand", [q.name for q in ins.qualifiers])
    assert_not_reserved("operand", [a.name for o in ins.operands for a in o.choice or (o,)])
    params: list[dict[str, str]] = []
    doc = [f"``{ins.name}``: {ins.title}.", "", ins.description, "", "Qualifiers:"]
    for q in ins.qualifiers:
        if q.flag:
            ann, default = "bool", "False"
            allowed = f"True writes {q.text}"
        else:
            base = "int" if q.numeric else "str"
            ann, default = (f"{base} | None", "None") if q.optional else (base, "")
            if not q.optional and len(q.values) == 1:
                # one value: text PTX always writes (.sync.aligned, .b32); it is the default
                value = q.values[0]
                default = str(int(value)) if q.numeric else escape.py_str(value)
            allowed = f"one of {', '.join(q.values)}" + (
                " (None leaves it out)" if q.optional else "")
        params.append({"name": escape.ident(q.name), "annotation": ann, "default": default})
        doc.append(f"    {q.name}: {allowed}. {q.description}".rstrip())
    doc += ["", "Operands (register names as str, vectors as sequences of str, immediates as "
            "int):"]
    for op in ins.operands:
        alts = op.choice or (None,)
        for alt in alts:
            name = alt.name if alt else op.name
            kind = alt.kind if alt else op.kind
            maybe = bool(op.choice) or op.optional or bool(op.when.items)
            ann = _annotation(kind)
            if op.immediate and kind == "register":
                ann = "str | int"
            link = ins.descriptor_links.get(name)
            if link is not None:  # a register, or (register, descriptor object): checked
                ann = f"{ann} | tuple[str, Any]"
            params.append({"name": escape.ident(name),
                           "annotation": f"{ann} | None" if maybe else ann,
                           "default": "None" if maybe else ""})
            what = (alt.description if alt else op.description) or kind
            if link is not None:
                what += (f" [{link[0]} descriptor: ptxgen.isa.{link[0]}; (register, object) "
                         "checks the object against the form's descriptor rules]")
            when = ""
            if op.choice:
                when = f" (one of {', '.join(a.name for a in op.choice)})"
            elif op.optional:
                when = " (optional" + (f"; only when {op.when.text()}" if op.when.items
                                       else "") + ")"
            elif op.when.items:
                when = f" (only when {op.when.text()})"
            doc.append(f"    {name}: {what}{when}.")
    for op in ins.operands:
        for vg in op.value_gates:
            g = vg.gate
            doc.append(f"    {op.name} {spec_text(vg.values)}"
                       + (f" when {g.when.text()}" if g.when.items else "")
                       + f": allowed {gate_text(g)}.")
    doc += ["    ptx_isa: the PTX ISA version the text is for (None: the newest the spec "
            "knows); a form or an immediate value that exists only from a later version is "
            "refused.", "",
            "Returns the instruction text; raises PtxFormError for an invalid form."]
    required = [p for p in params if not p["default"]]
    optional = [p for p in params if p["default"]]
    return {
        "name": escape.ident(ins.id),
        "id": escape.py_str(ins.id),
        "params": optional + required,
        "doc": escape.py_docstring("\n".join(doc), 4),
    }


def _digest_entry(key: str, value: str) -> tuple[str, str]:
    """A FORM_DIGESTS entry; a value that would pass column 100 goes on its own line."""
    if len(key) + len(value) + 7 > 100:
        return key, f"(\n        {value}\n    )"
    return key, value


def module_view(iset: InstructionSet) -> dict[str, Any]:
    assert iset.data is not None
    targets_data, files = iset.data
    return {
        "targets": escape.py_literal(runtime_data(targets_data), 0),
        "specs": escape.py_literal(tuple((rel, runtime_data(d)) for rel, d in files), 0),
        "builders": [builder_view(i) for i in iset.instructions],
        "exported": sorted(["PtxFormError", "instruction_set", "support", "FORM_COUNTS",
                            "descriptor_problems", "word_problems",
                            "FORM_DIGESTS"] + [i.id for i in iset.instructions]),
        "counts": [(escape.py_str(i.id), len(i.forms)) for i in iset.instructions],
        "digests": [_digest_entry(escape.py_str(i.id), escape.py_str(form_digest(i)))
                    for i in iset.instructions],
    }


def sources(iset: InstructionSet) -> list[str]:
    """The spec files the instruction side is generated from."""
    return ["spec/targets.yaml"] + [rel for rel, _ in (iset.data or ({}, ()))[1]]


def emit(spec: Spec) -> Files:
    iset = spec.instructions
    if iset is None:
        return {}
    return {OUT_MODULE: render(
        "python/ptx.py.j2",
        notice=[escape.py_comment(x) for x in generated_notice(sources(iset),
                                                               "python/ptx.py.j2")],
        **module_view(iset))}
