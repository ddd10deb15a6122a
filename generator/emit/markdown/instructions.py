"""Markdown emitter of the instruction side: spec -> generated/docs/instructions.md.

One section per instruction with its qualifiers, operands, combinations, rules,
descriptor rules and gates (each with its provenance), the rules established with
ptxas alone, and the notes of the instruction files and of spec/targets.yaml.
"""

from __future__ import annotations

from typing import Any

from ptxgen import escape
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import values_text
from ptxgen.model.instructions import Instruction, InstructionSet, spec_text

OUT = "docs/instructions.md"


def _prov_text(p: Any) -> str:
    parts = [f"seed {', '.join(p.seeds)}"] if p.seeds else []
    if p.document:
        parts.append(p.document)
    if p.ptxas:
        parts.append(f"ptxas: {p.ptxas}")
    if p.note:
        parts.append(f"note {p.note}")
    return "; ".join(parts) or "-"


def _word_of(link: tuple[str, str | None] | None) -> str:
    """How the operand table names a descriptor link (the word's layout, its document)."""
    if link is None:
        return ""
    name, kind_of = link
    return f", {name} descriptor ({name}.md" + (f"; kind from {kind_of})" if kind_of else ")")


def docs_view(iset: InstructionSet) -> dict[str, Any]:
    md = escape.md_cell
    out = []
    from_ptxas: list[str] = []
    for ins in iset.instructions:
        def ptxas_only(what: str, p: Any, ins: Instruction = ins) -> None:
            if p.from_ptxas:
                from_ptxas.append(escape.md_text(f"{ins.name}: {what}: {p.ptxas}"))

        quals = []
        for q in ins.qualifiers:
            vals = "flag" if q.flag else ", ".join(q.values) + (" (optional)" if q.optional
                                                                else "")
            quals.append({"name": md(q.name), "text": md(q.text), "allowed": md(vals),
                          "provenance": md(_prov_text(q.provenance))})
            ptxas_only(f"qualifier {q.name}", q.provenance)
        ops = []
        for o in ins.operands:
            if o.choice:
                typ = " or ".join(f"{a.name}: {a.text}" if a.kind == "special" else
                                  f"{a.name}: {a.kind} {spec_text(a.type)}{_word_of(a.descriptor)}"
                                  for a in o.choice)
            elif o.elements:
                typ = "{" + ", ".join(f"{n}: {spec_text(v)}" for n, v in o.elements) + \
                    "} immediates"
            else:
                typ = f"{spec_text(o.type if o.type is not None else o.values)}" \
                    f"{_word_of(o.descriptor)}"
                if o.immediate:
                    typ += ", or an immediate" + (f" {spec_text(o.immediate_values)}"
                                                  if o.immediate_values is not None else "")
                    typ += "".join(f" (CUDA {', '.join(tks)}: "
                                   f"{spec_text(v) if v != [] else 'none'}; ptxas: {msg})"
                                   for tks, v, msg in o.immediate_deviations)
            when = ("optional" if o.optional else "always") + (
                f", only when {o.when.text()}" if o.when.items else "")
            kind = f"{o.kind}, joined to the operand before it by |" if o.joined else o.kind
            if o.in_tensor:
                kind = f"{o.kind}, inside the tensor operand after the map"
            ops.append({"name": md(o.name), "kind": md(kind), "type": md(str(typ)),
                        "when": md(when), "provenance": md(_prov_text(o.provenance))})
            ptxas_only(f"operand {o.name}", o.provenance)
        combos = []
        for c in ins.combinations:
            g = c.gate
            combos.append({"id": md(c.id), "match": md(c.match.text()),
                           "targets": md(", ".join(g.selectors) if g and g.selectors else "all"),
                           "since": md(g.since or "-") if g else "-",
                           "provenance": md(_prov_text(c.provenance))})
            ptxas_only(f"combination {c.id}", c.provenance)
        rules = []
        for r in ins.rules:
            then = r.require.text() if r.require.items else ""
            if r.forbid:
                then += (", " if then else "") + f"not ({r.forbid.text()})"
            if r.equal:
                then += (", " if then else "") + " = ".join(r.equal)
            rules.append({"id": md(r.id), "when": md(r.when.text()),
                          "then": md(f"{then}: {r.message}"),
                          "provenance": md(_prov_text(r.provenance))})
            ptxas_only(f"rule {r.id} ({r.message})", r.provenance)
        drules = []
        for dr in ins.descriptor_rules:
            then = "; ".join(f"{n} one of {', '.join(v)}" for n, v in dr.require)
            if dr.shapes:
                then = " or ".join(" × ".join(f"{n} {values_text(v)}" for n, v in shape)
                                   for shape in dr.shapes)
            when = dr.when.text() + (f", {dr.targets_text()}" if dr.targets is not None else "")
            drules.append({"id": md(dr.id), "operand": md(dr.operand), "when": md(when),
                           "then": md(f"{then}: {dr.message}"),
                           "provenance": md(_prov_text(dr.provenance))})
        def gate_row(label: str, g: Any) -> dict[str, str]:
            return {"id": md(label), "when": md(g.when.text()),
                    "targets": md(", ".join(g.selectors) or "all"),
                    "since": md(g.since or "-"), "provenance": md(_prov_text(g.provenance))}

        gates = []
        for gt in ins.gates:
            gates.append(gate_row(gt.id, gt))
            ptxas_only(f"gate {gt.id}", gt.provenance)
        for o in ins.operands:
            for vg in o.value_gates:
                label = f"{vg.gate.id} (immediate {o.name} {spec_text(vg.values)})"
                gates.append(gate_row(label, vg.gate))
                ptxas_only(f"gate {label}", vg.gate.provenance)
        for dv in ins.deviations:
            gates.append(gate_row(f"{dv.id} (deviation of CUDA {', '.join(dv.toolkits)})", dv))
        out.append({"name": md(ins.name), "spec_file": md(ins.spec_file),
                    "description": escape.md_text(ins.description), "forms": len(ins.forms),
                    "provenance": md(_prov_text(ins.provenance)), "qualifiers": quals,
                    "operands": ops, "combinations": combos, "rules": rules, "gates": gates,
                    "descriptor_rules": drules})
    t = iset.targets
    total = sum(len(i.forms) for i in iset.instructions)
    return {
        "summary": escape.md_text(
            f"{len(iset.instructions)} instructions, {total} valid forms, "
            f"{len(t.pairs())} (target, PTX ISA version) pairs: "
            f"{total * len(t.pairs())} form x target x version answers, all derived from "
            "the rules below and checked against ptxas 13.0 and 13.5 (each with the "
            "deviations the spec records for its toolkit) by "
            "generated/tests/test_ptxas_conformance.py."),
        "targets": escape.md_text(", ".join(x.name for x in t.targets)),
        "versions": escape.md_text(f"{t.versions[0]} ... {t.versions[-1]}"),
        "instructions": out, "from_ptxas": from_ptxas,
        "notes": [{"id": md(n.id), "where": md(n.spec_file), "text": escape.md_text(n.text)}
                  for n in iset.notes],
    }



def emit(spec: Spec) -> Files:
    iset = spec.instructions
    if iset is None:
        return {}
    return {OUT: render(
        "markdown/instructions.md.j2", **docs_view(iset),
        notice=[escape.md_text(x) for x in generated_notice(
            ["spec/targets.yaml", *sorted({i.spec_file for i in iset.instructions})],
            "markdown/instructions.md.j2")])}
