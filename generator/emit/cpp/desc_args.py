"""Descriptor objects as wrapper operands (issue 28): what the wrappers' object overloads and
the descriptor-rule check structs of ``descriptor_rules.hpp`` share.

Every wrapper overload with an operand that takes a descriptor (``descriptor_links`` of the
model: tcgen05.mma's idesc, a_desc, b_desc and Tensor Memory addresses, wgmma's smem
descriptors, ...) gets a twin in ``<stem>.device.hpp`` whose descriptor operands are
deduced: each takes the word (as the wrapper), a descriptor object (``InstrDescF16``,
``SmemDesc``, ...) or a constant one, ``ptxgen::ptx::static_desc<obj>`` (target.hpp). The
twin takes part only when one of them is an object; it checks each that has descriptor
rules with ``detail::<id>_<operand>_check<D, qualifiers...>``, declared in ``<stem>.hpp``
(an object refused there, naming the header to include) and specialized in
descriptor_rules.hpp, which the wrappers do not include (its checkers and the descriptor
classes they decode with would be read by every TU of the family): a constant at compile
time (one static_assert per message of the rules, so the failing one names the rule), an
object at run time under ``PTXGEN_PTX_CHECK_DESCRIPTORS``; then it calls the wrapper with
the words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ptxgen import escape
from ptxgen.model.instructions import Instruction, Qualifier, vkey


def _introduced(ins: Instruction, q: Qualifier) -> tuple[int, ...]:
    """The oldest PTX ISA version of a form that writes qualifier ``q``."""
    return min((vkey(f.support.since) for f in ins.forms
                if f.params[q.name] != q.absent and f.support.since), default=(0,))


def checker_quals(ins: Instruction, operand: str) -> list[Qualifier]:
    """The qualifiers of the checker of ``operand``'s descriptor rules, in its template
    parameters' order: the wrappers' (issue 28), the qualifiers without a default in the
    opcode's order (cta_group, kind), then the others; within those, the ones of later PTX
    ISA versions after the older ones (a release adds its parameters at the end:
    .decompress::lut::b of 9.4 after .ashift)."""
    kind_of = ins.descriptor_links[operand][1]
    rules = [r for r in ins.descriptor_rules if r.operand == operand]
    named = {n for r in rules for n in r.when.names} | ({kind_of} if kind_of else set())
    quals = [q for q in ins.qualifiers if q.name in named]
    quals.sort(key=lambda q: ((q.flag or q.optional) and q.name != kind_of,
                              _introduced(ins, q) if q.flag or q.optional else (0,)))
    return quals


def has_rules(ins: Instruction, operand: str) -> bool:
    return any(r.operand == operand for r in ins.descriptor_rules)


def check_name(ins: Instruction, operand: str) -> str:
    """The check struct of an operand's descriptor rules (in ptxgen::ptx::detail)."""
    return escape.ident(f"{ins.id}_{operand}_check")


def object_overload(ins: Instruction, ov: dict[str, Any], operands: list[tuple[int, str]],
                    value: Callable[[Qualifier], str],
                    param_type: Callable[[Qualifier], str]) -> dict[str, Any]:
    """The object twin of wrapper overload ``ov`` whose parameters ``operands`` (index in
    ``ov["params"]``, operand name) take descriptors; ``value`` gives a qualifier's C++
    expression in the overload, ``param_type`` its checker template parameter."""
    params = list(ov["params"])
    dparams = []
    statements, runs, declarations, kinds = [], [], [], []
    for n, (i, name) in enumerate(operands):
        tp = f"PtxgenDesc{n}"
        dparams.append(tp)
        pname = escape.ident(name)
        params[i] = f"{tp} {pname}"  # by value: a word or an object of 4 to 8 bytes
        desc = ins.descriptor_links[name][0]
        kinds.append({"name": escape.ident(f"{ins.id}_{name}_is"),
                      "desc": escape.cpp_str(desc), "message": escape.cpp_message(
                          f"ptxgen: {ins.name}: operand {name} takes the {desc} word, an "
                          f"object of ptxgen/{desc}.hpp or ptxgen::ptx::static_desc<object> "
                          "of one")})
        statements.append(f"static_assert(detail::{kinds[-1]['name']}<{tp}>::ok);")
        if has_rules(ins, name):
            quals = checker_quals(ins, name)
            check = (f"detail::{check_name(ins, name)}<"
                     + ", ".join([tp] + [value(q) for q in quals]) + ">")
            statements.append(f"static_assert({check}::ok);")
            runs.append(f"{check}::run({pname});")
            declarations.append({"template": ", ".join(
                ["class PtxgenD"] + [param_type(q) for q in quals]),
                "name": check_name(ins, name), "operand": name,
                "message": escape.cpp_message(
                    f"ptxgen: {ins.name}: a descriptor object for {name} is checked against "
                    "the descriptor rules of the form: #include "
                    "<ptxgen/ptx/descriptor_rules.hpp> before the call")})
    template = [t for t in (ov["template"],) if t]
    template += [f"class {t}" for t in dparams]
    template.append(f"typename detail::enable_if<detail::any_desc_object<{', '.join(dparams)}>>"
                    "::type = 0")
    args = [p.rsplit("&", 1)[-1].rsplit(")", 1)[0].split()[-1] if "(&" in p
            else p.split()[-1] for p in ov["params"]]
    args = [f"detail::desc_word({a})" if any(i == k for k, _ in operands) else a
            for i, a in enumerate(args)]
    targs = f"<{ov['qualifier_args']}>" if ov["qualifier_args"] else ""
    return {"template": ", ".join(template), "params": params, "statements": statements,
            "runs": runs, "declarations": declarations, "operand_checks": kinds,
            "call": f"{ov['name']}{targs}({', '.join(args)})"}
