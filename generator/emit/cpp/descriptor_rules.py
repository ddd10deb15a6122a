"""Emit ``ptxgen/ptx/descriptor_rules.hpp``: the spec's ``descriptor_rules`` (rules on the
value of a descriptor operand, which ptxas cannot check) as constexpr C++ checks.

For an instruction with such rules, ``<id>_<operand>_problem<Qualifiers...>(word)`` returns
nullptr when the word satisfies every rule that applies to the form, else a message
naming the rule. The template parameters are the qualifier that selects the
descriptor's kind and the qualifiers the rules' conditions name (the same enums as the
wrappers); the word is decoded with the generated descriptor header of that kind.
Beside each checker, ``detail::<id>_<operand>_check<D, Qualifiers...>``: what a wrapper
given a descriptor object checks (issue 28, ``desc_args``): a constant (``static_desc<obj>``)
at compile time, one static_assert per message the checker can return, an object at run
time; and an object of another kind (its class's ``kind_name()``) at compile time.
"""

from __future__ import annotations

from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp import desc_args
from ptxgen.emit.cpp.descriptors import in_values
from ptxgen.emit.cpp.wrappers import NS, _Cond, cpp_bool, template_param, tparam
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import Descriptor, Field, Layout, Variant
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
            fields: dict[str, Field], index: dict[str, int],
            known: frozenset[str]) -> list[dict[str, str]]:
    checks = []
    for r in rules:
        applies = cond.cond(r.when)
        if applies is False or not r.field_names <= set(fields):
            continue  # (a rule on fields of another layout does not apply to this one)
        tests = [_field_test(fields[n], vals) for n, vals in r.require]
        if r.shapes:
            tests.append("(" + " || ".join(
                "(" + " && ".join(f"({in_values(f'd.{n}', vals)})" for n, vals in shape) + ")"
                for shape in r.shapes) + ")")
        ok = " && ".join(tests)
        text = f"ptxgen: {ins.name}: {operand}: {r.message}{r.where} [{r.id}]"
        # a target-dependent rule holds on its targets among the known ones
        on = (f" && {_on_targets(index, r.targets & known)}" if r.targets is not None
              else "")
        on += "".join(f" && {_field_test(fields[n], vals)}" for n, vals in r.fields)
        checks.append({"test": f"({cpp_bool(applies)}){on} && !({ok})",
                       "message": escape.cpp_str(text)})
    return checks


def _placements(desc: Descriptor, kind: str | None, index: dict[str, int],
                known: frozenset[str]) -> list[tuple[str, Layout | None, Variant | None, bool]]:
    """(C++ test on the checker's target, the layout ``kind`` is read with there or None
    where it has none, the variant or None for the baseline, whether a word that layout
    refuses is tried with the next one): on the ``known`` targets (those of the operand's
    forms) each variant's layout on its targets and the baseline on the others. Elsewhere
    (host code, nvcc's generic compute_XX pass, a target the spec does not know) the
    target is not known: the word is read with the first layout that takes it, the
    baseline first."""
    if not desc.variants:
        return [("true", desc.first_layout(kind), None, False)]
    out: list[tuple[str, Layout | None, Variant | None, bool]] = []
    rest = set(known)
    for variant, lay in desc.placements(kind):
        on = set(variant.targets) & known if variant is not None else set(rest)
        rest -= on
        if on:
            out.append((_on_targets(index, frozenset(on)), lay, variant, False))
    somewhere = [(v, lay) for v, lay in desc.placements(kind) if lay is not None]
    somewhere = somewhere[-1:] + somewhere[:-1]  # the baseline first
    unknown = f"!{_on_targets(index, known)}"
    for i, (variant, lay) in enumerate(somewhere):
        out.append((unknown, lay, variant, i < len(somewhere) - 1))
    return out


def _kind_check(ins: Instruction, operand: str, kind_of: str | None,
                names: dict[str, str]) -> dict[str, Any]:
    """What the check struct needs to refuse, at compile time, a descriptor object whose
    class is of another kind than the wrapper's kind qualifier (an InstrDescI8 for
    .kind::f16, run-time objects too: the class says it)."""
    if not kind_of:
        return {"kinds": []}
    q = ins.qualifier(kind_of)
    cond = _Cond(ins, {}, names)
    return {"kinds": [{"value": cond.value(q, k), "name": k} for k in q.domain],
            "kind_tparam": names[kind_of],
            "kind_param": template_param(ins, q, required=True),
            "kind_message": escape.cpp_str(
                f"ptxgen: {ins.name}: {operand}: the descriptor object is of another "
                f".{kind_of} than the wrapper's (its class's kind_name() is not the "
                f"{kind_of} template argument)")}


def _checker(ins: Instruction, operand: str, desc: Descriptor,
             kind_of: str | None, index: dict[str, int]) -> dict[str, Any]:
    rules = [r for r in ins.descriptor_rules if r.operand == operand]
    quals = desc_args.checker_quals(ins, operand)  # in the wrappers' order (issue 28)
    names = {q.name: tparam(q.name) for q in quals}
    params = [template_param(ins, q, required=q.name == kind_of) for q in quals]
    # A checker with target-dependent rules, or of a descriptor whose layout depends on
    # the target (a variant, such as sm_107a's instruction descriptor), knows its target
    # and decodes the word with that target's layout.
    by_target = bool(desc.variants) or any(r.targets is not None for r in rules)
    if by_target:
        params.append(f"int {TARGET} = PTXGEN_PTX_TARGET")
    kinds: list[str | None] = (list(ins.qualifier(kind_of).domain) if kind_of else [None])
    known = ins.operand_targets(operand)
    branches: list[dict[str, Any]] = []
    for kind in kinds:
        cond = _Cond(ins, {kind_of: kind} if kind_of and kind else {}, names)
        kind_test = (f"{names[kind_of]} == {cond.value(ins.qualifier(kind_of), kind)}"
                     if kind_of and kind else "true")
        what = f"{desc.name}" + (f" .kind::{kind}" if kind else "")
        for on, lay, variant, fallthrough in _placements(desc, kind, index, known):
            test = " && ".join(t for t in (kind_test, on) if t != "true") or "true"
            if lay is None:  # the kind has no layout on these targets
                there = [desc.layout_where(v) for v, other in desc.placements(kind)
                         if other is not None]
                branches.append({"test": test, "absent": escape.cpp_str(
                    f"ptxgen: {ins.name}: {operand}: {what} does not exist in "
                    f"{desc.layout_where(variant)}; it exists only in {' and '.join(there)}")})
                continue
            fields = {f.name: f for f in lay.fields}
            where = f"{desc.name}" + (f" (kind {kind})" if kind else "") + " word"
            if desc.variants:
                where += f" in {desc.layout_where(variant)}"
            # on a known target: a word this layout refuses and another layout of the kind
            # takes is refused saying where it is valid
            elsewhere = [{"class": f"::ptxgen::{other.class_name}",
                          "message": escape.cpp_str(
                              f"ptxgen: {ins.name}: {operand}: not a valid {where}; it is "
                              f"valid in {desc.layout_where(v)} only")}
                         for v, other in desc.placements(kind)
                         if not on.startswith("!") and other is not None and other is not lay]
            if on.startswith("!") and len(desc.placements(kind)) > 1:
                where = (f"{desc.name}" + (f" (kind {kind})" if kind else "") +
                         " word in any of its layouts")
            branches.append({
                "test": test, "absent": "", "fallthrough": fallthrough,
                "class": f"::ptxgen::{lay.class_name}",
                "invalid": escape.cpp_str(f"ptxgen: {ins.name}: {operand}: not a valid "
                                          f"{where}"), "elsewhere": elsewhere,
                "checks": _checks(ins, operand, rules, cond, fields, index, known)})
    doc = [f"`{ins.name}`: the rules on the value of `{operand}` ({desc.name}), which ptxas",
           "cannot check (it is a run-time register). nullptr when the word satisfies every",
           "rule that applies to the form with these qualifiers, else the first broken rule:"]
    doc += [f"  [{r.id}] when {r.when.text()}"
            + "".join(f", {n} {' / '.join(v)}" for n, v in r.fields)
            + (f", {r.targets_text()}" if r.targets is not None else "")
            + f": {r.message}" for r in rules]
    if by_target:
        doc += [f"{TARGET} is the target, an index into ptxgen::ptx::targets (target_index),",
                "by default the one being compiled (PTXGEN_PTX_TARGET); where it is not known",
                "(host code, nvcc's generic compute_XX pass, any target without these forms)",
                "the rules that hold only on some targets are not checked, and the word is read",
                "with the first of its layouts that takes it, the baseline first."]
        if desc.variants:
            doc += [f"The word is read with the layout of the target: "
                    f"{'; '.join(desc.layout_where(v) for v in (*desc.variants, None))}.",
                    "A kind without a layout on the target, or a word only another layout",
                    "takes, is refused with a message that names where it is valid."]
    name = escape.ident(f"{ins.id}_{operand}_problem")
    qnames = [tparam(q.name) for q in quals]
    call = f"{name}<{', '.join(qnames)}>" if params else name
    messages = [m for b in branches for m in (
        [b["absent"]] if b["absent"] else
        [e["message"] for e in b["elsewhere"]] + [b["invalid"]]
        + [k["message"] for k in b["checks"]])]
    # the spelling before issue 28 (the kind first): kept, deprecated
    old = sorted(quals, key=lambda q: q.name != kind_of)
    deprecated = None
    if old != quals:
        deprecated = {
            "template": ", ".join(
                [template_param(ins, q, required=q.name == kind_of) for q in old]
                + ([f"int {TARGET} = PTXGEN_PTX_TARGET"] if by_target else [])),
            "call": f"{name}<{', '.join(qnames + ([TARGET] if by_target else []))}>",
            "message": escape.cpp_str(
                f"ptxgen: {name}<{', '.join(q.name for q in old)}> is deprecated: the "
                f"qualifiers are in the wrappers' order, {name}<"
                f"{', '.join(q.name for q in quals)}>")}
    return {"name": name,
            "template": ", ".join(params), "word": "std::uint64_t"
            if desc.word_bits == 64 else "std::uint32_t", "branches": branches,
            "doc": [escape.cpp_comment_text(x) for x in doc],
            "deprecated": deprecated,
            "check": {"name": desc_args.check_name(ins, operand), "operand": operand,
                      "head": ", ".join(template_param(ins, q, required=True) for q in quals),
                      "names": ", ".join(["static_desc<PtxgenValue>"] + qnames),
                      "qnames": ", ".join(qnames),
                      "call": call, "messages": list(dict.fromkeys(messages)),
                      "desc": desc.name, **_kind_check(ins, operand, kind_of, names)}}


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
