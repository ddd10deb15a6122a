"""Emit ``ptxgen/ptx/descriptor_rules.hpp``: the spec's ``descriptor_rules`` (rules on the
value of a descriptor operand, which ptxas cannot check) as constexpr C++ checks.

For an instruction with such rules, ``<id>_<operand>_problem<Qualifiers...>(word)`` returns
nullptr when the word satisfies every rule that applies to the form, else a message
naming the rule. The template parameters are the qualifier that selects the
descriptor's kind and the qualifiers the rules' conditions name (the same enums as the
wrappers); the word is decoded with the generated descriptor header of that kind.
"""

from __future__ import annotations

from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp.descriptors import in_values
from ptxgen.emit.cpp.wrappers import NS, _Cond, cpp_bool, template_param, tparam
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import Descriptor, Field, Layout
from ptxgen.model.instructions import DescriptorRule, Instruction

OUT = "include/ptxgen/ptx/descriptor_rules.hpp"


def _field_test(f: Field, values: tuple[str, ...]) -> str:
    """C++ test that field ``f`` of the decoded ``d`` holds one of ``values``."""
    if f.type == "enum":
        codes = {o.name: o.value for o in f.options if o.name}
        lhs = f"static_cast<unsigned>(d.{f.name})"
        nums = [codes[v] for v in values]
    else:
        lhs = f"d.{f.name}"
        nums = [int(v) for v in values]
    return "(" + " || ".join(f"{lhs} == {n}u" for n in nums) + ")"


#: The template parameter of a checker whose rules depend on the target: an index into
#: ptxgen::ptx::targets, by default the target being compiled (-1 in host code, -2 for
#: a target the spec does not know: the target-dependent rules are not checked there).
TARGET = "PtxgenTarget"


def _on_targets(index: dict[str, int], names: frozenset[str] | tuple[str, ...]) -> str:
    """C++ test that the checker's target is one of ``names`` (the shift count is clamped:
    nvcc warns about a negative one even where it is not evaluated)."""
    mask = sum(1 << index[t] for t in names)
    return (f"({TARGET} >= 0 && ((0x{mask:x}ull >> ({TARGET} >= 0 ? {TARGET} : 0)) & 1ull) "
            "!= 0)")


def _checks(ins: Instruction, operand: str, rules: list[DescriptorRule], cond: _Cond,
            fields: dict[str, Field], index: dict[str, int]) -> list[dict[str, str]]:
    checks = []
    for r in rules:
        applies = cond.cond(r.when)
        if applies is False:
            continue
        tests = [_field_test(fields[n], vals) for n, vals in r.require]
        if r.shapes:
            tests.append("(" + " || ".join(
                "(" + " && ".join(f"({in_values(f'd.{n}', vals)})" for n, vals in shape) + ")"
                for shape in r.shapes) + ")")
        ok = " && ".join(tests)
        text = f"ptxgen: {ins.name}: {operand}: {r.message}{r.where} [{r.id}]"
        on = f" && {_on_targets(index, r.targets)}" if r.targets is not None else ""
        checks.append({"test": f"({cpp_bool(applies)}){on} && !({ok})",
                       "message": escape.cpp_str(text)})
    return checks


def _checker(ins: Instruction, operand: str, desc: Descriptor,
             kind_of: str | None, index: dict[str, int]) -> dict[str, Any]:
    rules = [r for r in ins.descriptor_rules if r.operand == operand]
    named = {n for r in rules for n in r.when.names} | ({kind_of} if kind_of else set())
    quals = [q for q in ins.qualifiers if q.name in named]
    # the kind first, then the qualifiers without a default (cta_group), then the others
    quals.sort(key=lambda q: (q.name != kind_of, q.flag or q.optional))
    names = {q.name: tparam(q.name) for q in quals}
    params = [template_param(ins, q, required=q.name == kind_of) for q in quals]
    # A checker with target-dependent rules knows its target, and so decodes the word
    # with that target's layout (a variant's, such as sm_107a's shared memory descriptor).
    by_target = any(r.targets is not None for r in rules)
    if by_target:
        params.append(f"int {TARGET} = PTXGEN_PTX_TARGET")
    kinds: list[str | None] = (list(ins.qualifier(kind_of).domain) if kind_of else [None])
    branches = []
    for kind in kinds:
        cond = _Cond(ins, {kind_of: kind} if kind_of and kind else {}, names)
        kind_test = (f"{names[kind_of]} == {cond.value(ins.qualifier(kind_of), kind)}"
                     if kind_of and kind else "true")
        # (test, layout): without a target the baseline layout (or the only one a kind
        # has); with one, each variant's layout on its targets and the baseline elsewhere
        layouts: list[tuple[str, Layout]] = [("true", desc.first_layout(kind))]
        if by_target:
            variants = [v for v in desc.variants if any(lay.kind == kind for lay in v.layouts)]
            layouts = [(_on_targets(index, v.targets), v.layout(kind)) for v in variants]
            if any(lay.kind == kind for lay in desc.layouts):
                others = " && ".join(f"!{_on_targets(index, v.targets)}" for v in variants)
                layouts.append((others or "true", desc.layout(kind)))
        for on, lay in layouts:
            fields = {f.name: f for f in lay.fields}
            where = f"{desc.name}" + (f" (kind {kind})" if kind else "")
            if by_target and not any(lay is b for b in desc.layouts):
                where += f" ({lay.class_name})"
            test = " && ".join(t for t in (kind_test, on) if t != "true") or "true"
            branches.append({
                "test": test, "class": f"::ptxgen::{lay.class_name}",
                "invalid": escape.cpp_str(f"ptxgen: {ins.name}: {operand}: not a valid "
                                          f"{where} word"),
                "checks": _checks(ins, operand, rules, cond, fields, index)})
    doc = [f"`{ins.name}`: the rules on the value of `{operand}` ({desc.name}), which ptxas",
           "cannot check (it is a run-time register). nullptr when the word satisfies every",
           "rule that applies to the form with these qualifiers, else the first broken rule:"]
    doc += [f"  [{r.id}] when {r.when.text()}"
            + (f", {r.targets_text()}" if r.targets is not None else "")
            + f": {r.message}" for r in rules]
    if by_target:
        doc += [f"{TARGET} is the target, an index into ptxgen::ptx::targets (target_index),",
                "by default the one being compiled (PTXGEN_PTX_TARGET); where it is not known",
                "(host code, a target the spec does not know) the rules that hold only on some",
                "targets are not checked, and the word is read with the baseline layout."]
    return {"name": escape.ident(f"{ins.id}_{operand}_problem"),
            "template": ", ".join(params), "word": "std::uint64_t"
            if desc.word_bits == 64 else "std::uint32_t", "branches": branches,
            "doc": [escape.cpp_comment_text(x) for x in doc]}


def emit(spec: Spec) -> Files:
    iset = spec.instructions
    if iset is None:
        return {}
    by_name = {d.name: d for d in spec.descriptors}
    checkers, headers, sources = [], set(), set()
    for ins in iset.instructions:
        for name, (desc_name, kind_of) in ins.descriptor_links.items():
            if not any(r.operand == name for r in ins.descriptor_rules):
                continue
            desc = by_name[desc_name]
            checkers.append(_checker(ins, name, desc, kind_of, iset.targets.index))
            # relative to this header, like the other generated includes
            headers.add(f"../{desc.name}.hpp")
            headers.add(f"{ins.spec_file.rsplit('/', 1)[-1].removesuffix('.yaml')}.hpp")
            sources |= {ins.spec_file, desc.spec_file}
    if not checkers:
        return {}
    return {OUT: render("cpp/descriptor_rules.hpp.j2", checkers=checkers,
                        headers=sorted(headers), ns=NS,
                        notice=[escape.cpp_comment_text(x) for x in generated_notice(
                            sorted(sources), "cpp/descriptor_rules.hpp.j2")])}
