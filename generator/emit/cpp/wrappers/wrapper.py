"""One wrapper (a ``wrappers`` entry of the spec) as the overloads of its C++ function
template: template parameters, operands, checks, form tables and asm statements."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from itertools import accumulate
from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp import desc_args
from ptxgen.emit.cpp.wrappers.base import (
    FORM_CLASSES,
    NARROW,
    NOT_SELECTED,
    REG,
    _and,
    _Cond,
    _imm_names,
    _int_test,
    _not,
    _or,
    _statements,
    cpp_bool,
    operand_type,
    template_param,
    tparam,
)
from ptxgen.emit.cpp.wrappers.gating import (
    _mask,
    _since,
    and_later_from,
    error_name,
    toolkit_refusals,
)
from ptxgen.emit.cpp.wrappers.helpers import _digit, _Helpers, _spec_lines
from ptxgen.model.calls import wrapper_name
from ptxgen.model.descriptors import values_text
from ptxgen.model.instructions import (
    Condition,
    Form,
    Instruction,
    InstructionSet,
    OperandUse,
    Support,
    Wrapper,
    gate_text,
    join_operands,
    spec_text,
)
from ptxgen.model.selection import selects
from ptxgen.names import assert_not_reserved


def _spec_names(spec: Any) -> set[str]:
    """The qualifiers a value spec (by / div / literal, nested) depends on."""
    if not isinstance(spec, dict):
        return set()
    if "div" in spec:
        return {spec["div"][0]}
    out = {spec["by"]} if "by" in spec else set()
    for sub in [*spec.get("values", {}).values(), spec.get("default")]:
        out |= _spec_names(sub)
    return out


class _Wrapper:
    def __init__(self, ins: Instruction, w: Wrapper, helpers: _Helpers,
                 select: str | None = None) -> None:
        assert_not_reserved("instruction", [w.name])
        assert_not_reserved("operand", [q.name for q in ins.qualifiers])
        assert_not_reserved("operand", [a.name for o in ins.operands for a in o.choice or (o,)])
        self.ins = ins
        self.w = w
        self.helpers = helpers
        self.select = select  # generate --select: the forms whose asm is written
        self.forms = helpers.forms_of(w)
        self.fixed: dict[str, str] = {}
        for q in ins.qualifiers:  # one value in every form of the wrapper: not a parameter
            vals = {f.params[q.name] for f in self.forms}
            if len(vals) == 1:
                self.fixed[q.name] = vals.pop()
        self.free = [q for q in ins.qualifiers if q.name not in self.fixed and not q.derived]
        self.exprs: dict[str, str] = {q.name: tparam(q.name) for q in self.free}
        self.exprs.update({n: _Cond(ins, {}, {}).value(ins.qualifier(n), v)
                           for n, v in self.fixed.items()})
        for q in ins.qualifiers:
            if q.derived:
                self.exprs[q.name] = helpers.derive_call(q, self.exprs)
        self._gating: dict[int, tuple[Support, dict[str, Any]]] = {}
        self._template_params: list[str] | None = None
        self._domain_asserts: list[tuple[str, str | None]] | None = None
        self._operand_text: dict[tuple[Any, ...], tuple[tuple[OperandUse, ...], Any]] = {}
        self._spliced: dict[tuple[Any, ...], tuple[tuple[OperandUse, ...], Any]] = {}

    def template_params(self) -> list[str]:
        if self._template_params is None:  # the same for every overload of the wrapper
            self._template_params = [template_param(self.ins, q)
                                     for q in sorted(self.free, key=lambda q: q.optional)]
        return list(self._template_params)

    def overloads(self) -> list[dict[str, Any]]:
        groups: dict[tuple[Any, ...], list[Form]] = {}
        shapes: dict[int, tuple[tuple[OperandUse, ...], tuple[tuple[str, str], ...]]] = {}
        for f in self.forms:
            uses = f.operands  # forms share them: their names and kinds once per tuple
            hit = shapes.get(id(uses))
            if hit is None or hit[0] is not uses:
                hit = shapes[id(uses)] = (uses, tuple((u.name, u.kind) for u in uses))
            groups.setdefault((f.variant, hit[1]), []).append(f)
        # register operands with an immediate overload (spec immediate_overload): the same
        # forms once more, the operand an imm<V> (an "n" asm operand) checked at compile time
        imm_ops = {o.name for o in self.ins.operands if o.immediate_overload}
        for key, forms in list(groups.items()):
            names = tuple(u.name for u in forms[0].operands if u.name in imm_ops)
            if names:
                groups[(*key, "immediate", names)] = [
                    _ImmediateForm(f, names) for f in forms]  # type: ignore[misc]
        return [self.overload(forms, i) for i, forms in enumerate(groups.values())]

    def overload(self, forms: list[Form], index: int) -> dict[str, Any]:
        ins = self.ins
        first = forms[0]
        variant = dict(first.variant)
        fixed = {**self.fixed, **variant}
        cond = _Cond(ins, fixed, self.exprs)
        name = wrapper_name(first, self.w)
        params, imm_params, asserts = [], [], []
        gated: list[tuple[Any, str]] = []  # (operand with value gates, its gate-number call)
        rets: list[tuple[str, str, str]] = []  # returned outputs: type, local type, name
        arrays: list[str] = []
        array_checks: list[tuple[str, str | None]] = []
        desc_params: list[tuple[int, str]] = []  # (index in params, operand) of descriptors
        for u in first.operands:
            op = next(o for o in ins.operands
                      if o.name == u.name or any(a.name == u.name for a in o.choice))
            alt = next((a for a in op.choice if a.name == u.name), None)
            pname = escape.ident(u.name)
            if u.kind in ("sink", "special"):
                continue
            if u.kind in ("register", "predicate") and op.io == "out":
                narrow = u.kind == "register" and str(u.type) in NARROW
                if rets and not (u.joined or narrow):
                    raise ValueError(f"{ins.name}: wrapper {name} returns more than one value "
                                     "(only a joined d|p pair and narrow outputs such as a "
                                     ".b8 register are returned together)")
                rets.append(("bool", "std::uint32_t", pname) if u.kind == "predicate" else
                            (self.operand_ctype(op, alt, u.kind, u), "std::uint32_t", pname)
                            if narrow else
                            (self.operand_ctype(op, alt, u.kind, u),) * 2 + (pname,))
                continue
            if u.kind == "tensor":
                elem, length = f"PtxgenElem{len(arrays)}", f"PtxgenLength{len(arrays)}"
                arrays.append(f"class {elem}, decltype(sizeof(0)) {length}")
                params.append(f"const void* {pname}_map")
                params.append(f"const {elem} (&{pname}_coords)[{length}]")
                array_checks += self.array_checks(op, alt, u.name, elem, length)
            elif u.kind == "predicate":
                params.append(f"bool {pname}")
            elif u.kind == "immediate":
                tp = tparam(u.name)
                imm_params.append(f"long long {tp}")  # imm_t's type (.exclusive nCols > 2^31)
                params.append(f"imm_t<{tp}> {pname}")
                # an immediate operand's values, or the immediates a register takes
                if op.kind == "immediate":
                    a = self.immediate_assert(op.name, None, op.values, tp)
                    if op.value_gates and a is not None:  # the gated values are in range too
                        call = self.value_gate_call(op, tp)
                        gated.append((op, call))
                        a = (f"{a[0]} || {call} != 0", a[1])
                    asserts.append(a)
                else:  # the immediate overload of a register: the message names its values
                    asserts.append(self.immediate_assert(
                        op.name, None, op.immediate_values, tp,
                        {_values_key(g.operands, u.name) for g in forms}))
            elif u.kind == "immediates":
                tps = [tparam(f"{u.name}_{e}") for e, _ in op.elements]
                imm_params += [f"long long {t}" for t in tps]  # as imms_t
                params.append(f"imms_t<{', '.join(tps)}> {pname}")
                for (e, vals), tp in zip(op.elements, tps, strict=True):
                    asserts.append(self.immediate_assert(op.name, e, vals, tp))
            elif u.kind == "vector":
                # deduced, so that a wrong length or element type is one of the checks below
                # (with the numbers and types in the diagnostic), not "no matching function"
                elem, length = f"PtxgenElem{len(arrays)}", f"PtxgenLength{len(arrays)}"
                arrays.append(f"class {elem}, decltype(sizeof(0)) {length}")
                const = "const " if op.io == "in" else ""
                params.append(f"{const}{elem} (&{pname})[{length}]")
                array_checks += self.array_checks(op, alt, u.name, elem, length)
            elif u.kind == "register" and op.io != "in":
                # a scalar output register (tcgen05.ld.red's redval): written through a
                # reference, an output constraint of the asm statement
                params.append(f"{self.operand_ctype(op, alt, u.kind, u)}& {pname}")
            else:
                if u.name in ins.descriptor_links:
                    desc_params.append((len(params), u.name))
                params.append(f"{self.operand_ctype(op, alt, u.kind, u)} {pname}")
        rules: list[tuple[str, str | None]] = []
        for r in ins.rules:
            holds = _or(_not(cond.cond(r.when)),
                        _and(cond.cond(r.require),
                             _not(cond.cond(r.forbid)) if r.forbid else True,
                             cond.equal(r.equal) if r.equal else True))
            if holds is not True:
                rules.append((cpp_bool(holds),
                              escape.cpp_message(f"ptxgen: {ins.name}: {r.message}")))
        present = {u.name for u in first.operands}
        for op in ins.operands:
            if op.choice or not op.when.items:
                continue
            w = cond.cond(op.when)
            if op.name in present and w is not True:
                msg = f"ptxgen: {ins.name}: operand {op.name} is only allowed when {op.when.text()}"
                rules.append((cpp_bool(w), escape.cpp_message(msg)))
            elif op.name not in present and not op.optional and w is not False:
                msg = f"ptxgen: {ins.name}: operand {op.name} is required when {op.when.text()}"
                rules.append((cpp_bool(_not(w)), escape.cpp_message(msg)))
        fallback = escape.cpp_message(
            f"ptxgen: {ins.name}: these qualifiers are not a valid form with these operands "
            f"(check the opcode with: ptxgen support OPCODE)")
        doc = self.doc(first, name)
        tps = self.template_params() + imm_params + arrays
        qualifier_args = [p.split(" = ")[0].split()[-1] for p in self.template_params()]
        struct = escape.ident(f"{self.w.name}_forms{index}")
        own_imms = {k: tparam(k) for k in _imm_names(first)}
        table = self.form_table(forms, cond, own_imms, struct) if qualifier_args else None
        direct = [] if qualifier_args else [self.branch(f, cond, own_imms) for f in forms]
        if any(toolkit_refusals(ins, f) for f in forms if not qualifier_args):
            raise ValueError(f"{ins.name}: wrapper {self.w.name}: a recorded toolkit deviation "
                             "refuses a form of a wrapper without qualifier template "
                             "parameters, which has no form table to refuse it in")
        for op, call in gated:
            asserts += self.value_gate_asserts(op, call, table, direct)
        arrays_of = [(escape.ident(u.name), self.operand_ctype(*self._op_alt(u.name), "vector"),
                      self.operand_count(*self._op_alt(u.name)))
                     for u in first.operands if u.kind == "vector"]
        if not tps:  # not a template: the host pass compiles it too, without its body
            params = [f"[[maybe_unused]] {p}" for p in params]
        values = [f"{n} != 0" if t == "bool" else n if t == lt else f"static_cast<{t}>({n})"
                  for t, lt, n in rets]
        result_struct = None
        if len(rets) > 1:  # a joined d|p pair (and narrow outputs): returned in a struct
            result_struct = {
                "name": escape.ident(f"{name}_result"),
                "members": [f"{t} {n};" for t, _, n in rets],
                "doc": escape.cpp_block_comment(
                    f"What {name} returns: " + "; ".join(
                        f"{n}: {self._description(n)}".rstrip() for _, _, n in rets)
                    + "."),
            }
        ret_type = (result_struct["name"] if result_struct else rets[0][0]) if rets else "void"
        ov = {"name": name, "arrays": arrays_of, "ret": ret_type,
                "result_struct": result_struct,
                "result_decl": " ".join(f"{lt} {n}{{}};" for _, lt, n in rets) or None,
                "result": (f"return {{{', '.join(values)}}};" if result_struct
                           else f"return {values[0]};") if rets else None,
                "qualifier_template": ", ".join(self.template_params()),
                "qualifier_args": ", ".join(qualifier_args),
                "template": ", ".join(tps), "params": params, "statements": _statements(
                    self.domain_asserts() + rules + [a for a in asserts if a] + array_checks),
                "fallback": fallback, "doc": doc,
                "forms": table, "direct": direct}
        ov["objects"] = desc_args.object_overload(
            ins, ov, desc_params,
            lambda q: cond.value(q, fixed[q.name]) if q.name in fixed else self.exprs[q.name],
            lambda q: template_param(ins, q, required=True)) if desc_params else None
        return ov

    def _description(self, name: str) -> str:
        op, alt = self._op_alt(name)
        return str(alt.description if alt is not None else op.description)

    def _op_alt(self, name: str) -> tuple[Any, Any]:
        op = next(o for o in self.ins.operands
                  if o.name == name or any(a.name == name for a in o.choice))
        return op, next((a for a in op.choice if a.name == name), None)

    def domain_asserts(self) -> list[tuple[str, str | None]]:
        """A numeric qualifier (an int template parameter such as N) takes its values (the
        same for every overload of the wrapper: made once)."""
        if self._domain_asserts is not None:
            return list(self._domain_asserts)
        out: list[tuple[str, str | None]] = []
        for q in self.free:
            if not q.numeric:
                continue
            values = sorted({int(f.params[q.name]) for f in self.forms})
            tp = tparam(q.name)
            msg = (f"ptxgen: {self.ins.name}: template parameter {tp} (qualifier {q.name}) "
                   f"must be {values_text(values)}")
            out.append((_int_test(tp, values), escape.cpp_message(msg)))
        self._domain_asserts = out
        return list(out)

    def array_checks(self, op: Any, alt: Any, name: str, elem: str,
                     length: str) -> list[tuple[str, str | None]]:
        """The element type and the length of an array operand, each checked by a class
        template whose failing static_assert shows what the form needs and what was given
        (compilers print its template arguments)."""
        checker = self.helpers.array_checker(self.ins, op, alt, name)
        spec = alt.type if alt is not None else op.type
        if isinstance(spec, dict):
            code = self.helpers.call(self.helpers.value_helper(
                name, "type", [(None, spec)],
                lambda v: -1 if v is None else operand_type(str(v), "vector", op.access)[2],
                "int"), self.exprs)
        else:
            code = str(operand_type(str(spec), "vector", op.access)[2])
        count = self.operand_count(op, alt)
        needed = f"ptxgen_{escape.ident(name)}_length"
        # a code of -1 / a count of 0: the qualifiers make no form (reported by the rules)
        return [(f"detail::{checker['type']}<detail::reg_or_t<{code}, {elem}>, {elem}>::ok",
                 None),
                (f"constexpr decltype(sizeof(0)) {needed} = {count};", "local"),
                (f"detail::{checker['length']}<{needed} == 0 ? {length} : {needed}, "
                 f"{length}>::ok", None)]

    def operand_ctype(self, op: Any, alt: Any, kind: str, use: OperandUse | None = None) -> str:
        """The C++ type of an operand: the type itself where the wrapper fixes it (every
        qualifier its type depends on one value in every form: ``use``, the operand in one
        of them, has it), else the type helper's answer for the template arguments."""
        spec = alt.type if alt is not None else op.type
        if not isinstance(spec, dict):
            return operand_type(str(spec), kind, op.access, op.object)[0]
        if use is not None and isinstance(use.type, str) and _spec_names(spec) <= set(self.fixed):
            # not a template argument: no helper evaluated (in every pass) for a constant
            return operand_type(use.type, kind, op.access, op.object)[0]
        code = {k: operand_type(k, kind, op.access, op.object)[2] for k in REG}
        helper = self.helpers.value_helper(
            op.name if alt is None else alt.name, "type", [(None, spec)],
            lambda v: -1 if v is None else code[str(v)], "int")
        self.helpers.visible.add(helper)
        return f"detail::reg_t<{self.helpers.call(helper, self.exprs)}>"

    def operand_count(self, op: Any, alt: Any) -> str:
        spec = alt.count if alt is not None else op.count
        if spec is not None and not isinstance(spec, dict):
            return str(spec)
        pairs: list[tuple[Condition | None, Any]] = []
        if spec is None:
            pairs = [(c.match, c.operands[op.name]) for c in self.ins.combinations
                     if op.name in c.operands]
        else:
            pairs = [(None, spec)]
        helper = self.helpers.value_helper(op.name if alt is None else alt.name, "count", pairs,
                                           lambda v: 0 if v is None else int(v), "int")
        self.helpers.visible.add(helper)
        # an array bound is a size_t: convert explicitly (-Wsign-conversion in host passes)
        return f"static_cast<decltype(sizeof(0))>({self.helpers.call(helper, self.exprs)})"

    def immediate_assert(self, operand: str, element: str | None, spec: Any,
                         tp: str, allowed: set[str] | None = None) -> tuple[str, str] | None:
        """A static_assert that the immediate template parameter ``tp`` is one of the
        values of ``spec``; ``allowed``: the text of those values in the overload's forms
        (named in the message where there is one)."""
        what = f"{operand}.{element}" if element else operand

        def check(values: Any) -> str:
            if values is None:
                return "true"
            if isinstance(values, dict):
                lo, hi, step = values["from"], values.get("to"), values.get("step", 1)
                return (f"v >= {lo}" + (f" && v <= {hi}" if hi is not None else "")
                        + (f" && (v - {lo}) % {step} == 0" if step != 1 else ""))
            return " || ".join(f"v == {v}" for v in values)

        name = escape.ident(f"{self.ins.id}_ok_{what.replace('.', '_')}")
        if name not in self.helpers.defs:
            body = _spec_lines(spec, self.helpers.cond, check, "    ")
            body.append("    return false;")
            # long long, imm_t's type: a value past int reaches the check unchanged
            v = "long long v"
            self.helpers.defs[name] = {"ret": "bool", "name": name,
                                       "params": ", ".join(p for p in (self.helpers.params(body),
                                                                       v) if p),
                                       "body": body}
        args = ", ".join([*(self.exprs[q.name] for q in self.helpers.quals), tp])
        msg = f"ptxgen: {self.ins.name}: immediate {what} is out of range for this form"
        if allowed is not None and len(allowed) == 1 and "" not in allowed:
            msg += f"; allowed: {next(iter(allowed))}"
        return (f"detail::{name}({args})", escape.cpp_message(msg))

    def value_gate_call(self, op: Any, tp: str) -> str:
        """A call of the helper that numbers the value gate (1, 2, ...; 0: none) an
        immediate ``tp`` of ``op`` falls under, for the qualifiers."""

        def check(values: Any) -> str:
            if isinstance(values, dict):
                lo, hi = values["from"], values.get("to")
                return f"v >= {lo}" + (f" && v <= {hi}" if hi is not None else "")
            return " || ".join(f"v == {v}" for v in values)

        name = escape.ident(f"{self.ins.id}_gate_of_{op.name}")
        if name not in self.helpers.defs:
            body: list[str] = []
            for k, vg in enumerate(op.value_gates, 1):
                when = self.helpers.cond.cond(vg.gate.when)
                if when is False:
                    continue
                test = f"if ({check(vg.values)}) return {k};"
                body.append(f"    {test}" if when is True else f"    if ({when}) {{ {test} }}")
            body.append("    return 0;")
            self.helpers.defs[name] = {"ret": "int", "name": name,
                                       "params": ", ".join(p for p in (self.helpers.params(body),
                                                                       "int v") if p),
                                       "body": body}
        args = ", ".join([*(self.exprs[q.name] for q in self.helpers.quals), tp])
        return f"detail::{name}({args})"

    def value_gate_asserts(self, op: Any, call: str, table: dict[str, Any] | None,
                           direct: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """Per value gate: a static_assert that refuses the gated value on a target (and
        PTX ISA version) that has the form but not the value. Where the target has no
        form the form's own refusal applies (the unresolved extern), so that nvcc's
        generic compute_XX pass of an sm_XXa build is not broken by the check."""
        targets = self.ins.targets
        assert targets is not None
        if table is not None:
            here = " || ".join(
                f"(ptxgen_f::cls == {i} && detail::supported({c['mask']}, {c['arch_from']}, "
                f"{c['since']}))" for i, c in enumerate(table["classes"])) or "false"
        else:
            here = " || ".join(sorted({f"detail::supported({b['mask']}, {b['arch_from']}, "
                                       f"{b['since']})" for b in direct})) or "false"
        out = []
        for k, vg in enumerate(op.value_gates, 1):
            g = vg.gate
            names = g.targets if g.targets is not None else frozenset(targets.names)
            allowed = (f"detail::supported({_mask(targets, names)}, "
                       f"{and_later_from(targets, names)}, {_since(g.since)})")
            when = f" when {g.when.text()}" if g.when.items else ""
            msg = (f"ptxgen: {self.ins.name}: immediate {op.name} {spec_text(vg.values)}{when} "
                   f"is only allowed {gate_text(g)} (ptxgen support OPCODE)")
            out.append((f"{call} != {k} || !({here}) || {allowed}", escape.cpp_message(msg)))
        return out

    def branch(self, f: Form, cond: _Cond, imm_refs: Mapping[str, str]) -> dict[str, Any]:
        return {**self.gating(f), "asm": self.asm(f, imm_refs), "opcode": f.opcode}

    def gating(self, f: Form) -> dict[str, Any]:
        """The support class of a form: its target mask, __CUDA_ARCH__ from which, PTX ISA
        since, and the refusal's name."""
        sup = f.support
        hit = self._gating.get(id(sup))  # forms share their support (and its gating)
        if hit is None or hit[0] is not sup:
            targets = self.ins.targets
            assert targets is not None
            hit = self._gating[id(sup)] = (sup, {
                "mask": _mask(targets, sup.targets),
                "arch_from": and_later_from(targets, sup.targets), "since": _since(sup.since_all),
                "error": error_name(self.w, targets, sup.targets, sup.since_all)})
        return hit[1]

    def form_table(self, forms: list[Form], cond: _Cond, imm_refs: Mapping[str, str],
                   fn: str) -> dict[str, Any]:
        """The forms of one overload as data: each form's number (mixed radix over the
        qualifier template parameters, in their order), the support classes (mask,
        __CUDA_ARCH__ from which, PTX ISA since, refusal), the sorted table of
        number * 256 + class that the wrapper looks its arguments up in (device passes),
        and, for the forms header (device passes whose target may have a form of the
        file), each form's opcode text and the asm statement it shares with the forms
        that have the same operands, in the order of that table."""
        order = sorted(self.free, key=lambda q: q.optional)
        expr = "0"
        for q in order:
            digit = _digit(q, tparam(q.name))
            expr = f"detail::form_digit({expr}, {len(q.domain)}, {digit})"
        classes: dict[tuple[str, int, int, str, tuple[Any, ...]], int] = {}
        # (number * 256 + class, opcode parts (empty: not selected), statement)
        entries: list[tuple[int, tuple[str, ...], int]] = []
        texts: dict[int, str] = {}  # number * 256 + class: the form's shared statement
        formats: list[str] | None = None  # the immediates' text at each slot (same in all)
        left_out = False
        # per qualifier: its radix, {value: its digit}, name
        digits = [(len(q.domain), _digit_of(q.domain), q.name) for q in order]
        # forms share their support (and the refusals of toolkits' deviations)
        class_of: dict[tuple[int, tuple[Any, ...]], tuple[Support, int]] = {}
        select = self.select
        imm_key = tuple(imm_refs.items())
        statements = self._spliced  # (id of the operand uses, imm_key) -> (uses, statement)
        opcode_parts = self.ins.opcode_parts
        for f in forms:
            values = f.params
            number = 0
            for radix, digit_of, qname in digits:
                number = number * radix + digit_of[values[qname]]
            if select is not None and not selects(select, f):
                entries.append((number * FORM_CLASSES + NOT_SELECTED, (), 0))
                left_out = True
                continue
            sup = f.support
            refusals = toolkit_refusals(self.ins, f)  # () unless a deviation refuses it
            hit = class_of.get((id(sup), refusals))
            if hit is None or hit[0] is not sup:
                b = self.gating(f)
                key = (b["mask"], b["arch_from"], b["since"], b["error"], refusals)
                hit = class_of[(id(sup), refusals)] = (sup, classes.setdefault(key, len(classes)))
            number = number * FORM_CLASSES + hit[1]
            # one asm statement per list of non-immediate operands; the opcode and the
            # immediates are "C" operands of it
            uses = f.operands
            made = statements.get((id(uses), imm_key))
            if made is None or made[0] is not uses:
                text, fmts = self._spliced_of(f, imm_key, imm_refs)
            else:
                text, fmts = made[1]
            if formats is None:
                formats = fmts
            elif formats != fmts:
                raise ValueError(f"{f.key}: the immediates of an overload differ between forms")
            texts[number] = text
            entries.append((number, opcode_parts(values), 0))
        assert len(classes) < NOT_SELECTED
        select_msg = escape.cpp_message(
            f"ptxgen: {self.ins.name}: this form is not in the selection these headers were "
            f"generated with (ptxgen generate --select {self.select}); generate them again "
            "with a pattern that selects it") if left_out else None
        entries.sort()
        width, data = escape.packed([e[0] for e in entries])
        formats = formats or [""] * len(self.helpers.slots())
        imm_args = ", ".join(imm_refs.values())
        # the formats NUL-terminated one after another, each slot's taken by its offset
        offsets = [sum(len(x.encode()) + 1 for x in formats[:i]) for i in range(len(formats))]
        slot_texts = [f"detail::immediate_text<{escape.ident(f'{fn}_immediates')}, {at}"
                      + (f", {imm_args}>" if imm_args else ">") if fmt else "detail::no_text"
                      for fmt, at in zip(formats, offsets, strict=True)]
        tparams = ["long long PtxgenF"]
        params: list[str] = []
        args: list[str] = []
        tparams += [f"long long {t}" for t in imm_refs.values()]  # as imm_t
        for u in forms[0].operands:
            if u.kind in ("immediate", "immediates", "sink", "special"):
                continue
            a = f"PtxgenA{len(params)}"
            tparams.append(f"class {a}")
            pname = escape.ident(u.name)
            if u.kind == "tensor":  # the tensor map and the coordinate array
                c = f"PtxgenA{len(params) + 1}"
                tparams.append(f"class {c}")
                params += [f"{a} {pname}_map", f"const {c}& {pname}_coords"]
                args += [f"{pname}_map", f"{pname}_coords"]
                continue
            if u.kind in ("register", "predicate") and self.io(u.name) == "out":
                params.append(f"{a}& {pname}")  # the wrapper's result variable
            elif u.kind == "vector":
                const = "const " if self.io(u.name) == "in" else ""
                params.append(f"{const}{a}& {pname}")
            elif u.kind == "register" and self.io(u.name) != "in":
                params.append(f"{a}& {pname}")
            else:
                params.append(f"{a} {pname}")
            args.append(pname)
        return {"table": escape.ident(f"{fn}_table"), "rows": escape.cpp_bytes(data),
                "width": width, "count": len(forms),
                "select_msg": select_msg, "not_selected": NOT_SELECTED,
                "id": expr, "function": fn, "tparams": ", ".join(tparams),
                "params": ", ".join(params),
                "targs": ", ".join(["ptxgen_f::index", *imm_refs.values()]),
                "args": ", ".join(args),
                "opcodes": escape.ident(f"{fn}_opcode"),
                "opcode_pieces": escape.ident(f"{fn}_opcode_pieces"),
                **_opcode_halves([e[1] for e in entries]),
                "immediates": escape.ident(f"{fn}_immediates"),
                "immediate_formats": escape.cpp_bytes(
                    b"".join(x.encode() + b"\0" for x in formats)) if any(formats) else [],
                "slot_texts": slot_texts,
                "statement_table": escape.ident(f"{fn}_statement"),
                "statement_texts": [texts.get(e[0]) for e in entries],
                "statement_tparams": ", ".join(t for t in tparams if t.startswith("class ")),
                "classes": [{"mask": m, "arch_from": fr, "since": si, "error": e}
                            for (m, fr, si, e, _) in classes],
                "toolkit_checks": [{"cuda": cuda, "cls": i, "mask": mask, "arch_from": fr,
                                    "message": msg}
                                   for i, (*_, refusals) in enumerate(classes)
                                   for cuda, mask, fr, msg in refusals]}

    def asm(self, f: Form, imm_refs: Mapping[str, str],
            opcode_operand: str | None = None) -> str:
        """The ``asm volatile(...)`` statement of one form. With ``opcode_operand`` (a
        constant char array naming the form's opcode text), the template starts with a
        reference to that array, passed as a last "C" operand: the statement is then the
        same for every form with these operand uses, and the forms share it."""
        uses = f.operands
        key = (*map(id, uses), *imm_refs.items())
        hit = self._operand_text.get(key)  # forms share operand uses (and their text)
        if hit is None or hit[0] != uses:
            hit = self._operand_text[key] = (uses, self._operand_lists(uses, imm_refs))
        texts, pred, out_s, in_s, post, count, scratch = hit[1]
        operands = join_operands(uses, texts)
        if opcode_operand is None:
            head = escape.cpp_asm_text(f.opcode + (" " if texts else ""))
        else:
            head = escape.cpp_str(f"%{count}" + (" " if texts else ""))
            in_s = ", ".join(s for s in (in_s, f"\"C\"({opcode_operand})") if s)
        body = head + (f" \"{operands};\"" if texts else " \";\"")
        return self._statement(body, pred, post, texts, out_s, in_s, f, scratch)

    def spliced_asm(self, f: Form, imm_refs: Mapping[str, str]) -> tuple[str, list[str]]:
        """The asm statement that a form shares with every form of the file that has the
        same non-immediate operands, and the text of its immediates at each slot of
        ``_Helpers.slots`` ('%' and a digit: the immediate of that position in
        ``imm_refs``). The statement's template splices in its "C" operands: the opcode
        (class PtxgenT0) and the immediates of slot i (class PtxgenT<i+1>)."""
        return self._spliced_of(f, tuple(imm_refs.items()), imm_refs)

    def _spliced_of(self, f: Form, imm_key: tuple[tuple[str, str], ...],
                    imm_refs: Mapping[str, str]) -> tuple[str, list[str]]:
        """:meth:`spliced_asm` with ``imm_key`` the items of ``imm_refs``."""
        uses = f.operands
        key = (id(uses), imm_key)
        hit = self._spliced.get(key)  # forms share operand uses (and their statement)
        if hit is None or hit[0] is not uses:
            # uses that differ only where the statement does not show it (values,
            # immediates allowed, value gates) share it too: made once per text key
            text_key = (tuple(map(self.helpers.text_key, uses)), imm_key)
            made = self.helpers.statements.get(text_key)
            if made is None:
                made = self.helpers.statements[text_key] = self._spliced_asm(f, uses,
                                                                             imm_refs)
            hit = self._spliced[key] = (uses, made)
        result: tuple[str, list[str]] = hit[1]
        return result

    def _spliced_asm(self, f: Form, uses: tuple[OperandUse, ...],
                     imm_refs: Mapping[str, str]) -> tuple[str, list[str]]:
        texts, pred, out_s, in_s, post, count, scratch = self._operand_lists(uses, imm_refs,
                                                                             True)
        union = self.helpers.slots()
        runs: dict[int, list[tuple[str, str]]] = {}  # slot: (separator, text) of immediates
        rt: list[tuple[str, str, bool]] = []  # (separator, text, in_tensor): the others
        for i, (u, t) in enumerate(zip(uses, texts, strict=True)):
            sep = ("|" if u.joined else ", ") if i else ""
            if u.kind in ("immediate", "immediates"):
                runs.setdefault(len(rt), []).append((sep, t))
            else:
                rt.append((sep, t, u.in_tensor))
        slots = [k for k in union if k <= len(rt)] if texts else []
        formats = []
        for k in union:
            run = runs.get(k, [])
            if k == 0 and run:  # before the first other operand: it brings the separator
                text = run[0][1] + "".join(a + b for a, b in run[1:])
                formats.append(text + (rt[0][0] if rt else ""))
            else:
                formats.append("".join(a + b for a, b in run))
        body = ""
        for j, (sep, t, in_tensor) in enumerate(rt):
            if j in slots:
                body += f"%{count + 1 + slots.index(j)}"
            if in_tensor:  # inside the tensor operand before it, after the map (as
                at = body.rindex(", {")  # join_operands writes it: [map, gaddr, {x, y}])
                body = f"{body[:at]}, {t}{body[at:]}"
            else:
                body += (sep if j else "") + t
        if len(rt) in slots:
            body += f"%{count + 1 + slots.index(len(rt))}"
        head = escape.cpp_str(f"%{count}" + (" " if texts else ""))
        c_ops = [f"\"C\"(PtxgenT{i}::c)" for i in
                 [0, *(union.index(k) + 1 for k in slots)]]
        in_s = ", ".join(x for x in (in_s, *c_ops) if x)
        text = self._statement(head + (f" {escape.cpp_str(body + ';')}"), pred, post, texts,
                               out_s, in_s, f, scratch)
        return text, formats

    def _statement(self, body: str, pred: str | None, post: str, texts: list[str],
                   out_s: str, in_s: str, f: Form, scratch: str = "") -> str:
        if pred is not None:  # beside predicate outputs (p, q) the input is "pin"
            reg = "pin" if post else "p"
            body = (f"\"{{\\n\\t.reg .pred {reg};\\n\\tsetp.ne.b32 {reg}, {pred}, 0;\\n\\t\" "
                    f"{body} \"\\n\\t}}\"")
        if post or scratch:
            regs = ", ".join(r for r in ("p", "q") if r in texts)  # the selp outputs
            decls = (f".reg .pred {regs};\\n\\t" if regs else "") + scratch
            body = (f"\"{{\\n\\t{decls}\" {body} \"{post}\\n\\t}}\"")
        clobber = " : \"memory\"" if self.ins.clobbers_memory else ""
        if clobber:
            return f"asm volatile({body} : {out_s} : {in_s}{clobber})"
        if in_s:
            return f"asm volatile({body} : {out_s} : {in_s})"
        return f"asm volatile({body} : {out_s})"

    def _operand_lists(self, uses: tuple[OperandUse, ...], imm_refs: Mapping[str, str],
                       spliced: bool = False
                       ) -> tuple[list[str], str | None, str, str, str, int, str]:
        """(operand texts, predicate operand, output list, input list, the selp of the
        predicate outputs and the widening of the narrow ones, the number of operands, the
        declarations of the narrow outputs' scratch registers) of an asm statement with
        these operand uses."""
        outs: list[str] = []
        ins_: list[str] = []
        texts: list[str] = []
        pred: str | None = None
        # Operand numbering: outputs first, then inputs, in syntax order.
        io_of = self.ins.io_of
        ios = [io_of.get(u.name, "in") for u in uses]
        n_out = 0
        for u, io in zip(uses, ios, strict=True):
            if io == "out" or io == "inout":
                if u.kind == "vector":
                    n_out += u.count or 0
                elif u.kind == "register" or (u.kind == "predicate" and io == "out"):
                    n_out += 1
        post = scratch = ""
        nxt_out, nxt_in = 0, n_out
        for u, io in zip(uses, ios, strict=True):
            pname = escape.ident(u.name)
            if u.kind == "vector":
                _, cons, _ = operand_type(str(u.type), "vector")
                mod = {"out": "=", "inout": "+", "in": ""}[io]
                count = u.count or 0
                start = nxt_out if io != "in" else nxt_in
                texts.append(_register_list(start, count))
                if count:  # the constraints of the registers, joined like the others
                    (outs if io != "in" else ins_).append(
                        _array_constraints(f"{mod}{cons}", pname, count))
                if io != "in":
                    nxt_out += count
                else:
                    nxt_in += count
            elif u.kind == "sink":
                texts.append("_")
            elif u.kind == "special":  # %smid: an asm template writes % as %%
                texts.append("%" + str(u.text))
            elif u.kind == "predicate" and io == "out":  # set through selp, returned as bool
                reg = "q" if post else "p"  # a joined pair p|q (.phase_type::primary)
                texts.append(reg)
                post += f"\\n\\tselp.u32 %{nxt_out}, 1, 0, {reg};"
                outs.append(f"\"=r\"({pname})")
                nxt_out += 1
            elif u.kind == "register" and io == "out" and str(u.type) in NARROW:
                reg = f"{u.type}_{escape.ident(u.name)}"  # a scoped scratch register
                texts.append(reg)
                scratch += f".reg .{u.type} {reg};\\n\\t"
                post += f"\\n\\t{NARROW[str(u.type)]} %{nxt_out}, {reg};"
                outs.append(f"\"=r\"({pname})")
                nxt_out += 1
            elif u.kind == "register" and io != "in":
                _, cons, _ = operand_type(str(u.type), u.kind)
                mod = {"out": "=", "inout": "+"}[io]
                texts.append(f"%{nxt_out}")
                outs.append(f"\"{mod}{cons}\"({pname})")
                nxt_out += 1
            elif u.kind == "tensor":
                count = u.count or 0
                texts.append(f"[%{nxt_in}, {{" + ", ".join(
                    f"%{nxt_in + 1 + i}" for i in range(count)) + "}]")
                ins_.append(f"\"l\"({pname}_map)")
                _, cons, _ = operand_type(str(u.type), "vector")
                ins_.extend(f"\"{cons}\"({pname}_coords[{i}])" for i in range(count))
                nxt_in += 1 + count
            elif u.kind == "register" and str(u.type) in NARROW:  # narrowed from 32 bits
                reg = f"{u.type}_{escape.ident(u.name)}"
                texts.append(reg)
                scratch += f".reg .{u.type} {reg};\\n\\tcvt.u8.u32 {reg}, %{nxt_in};\\n\\t"
                ins_.append(f"\"r\"(static_cast<std::uint32_t>({pname}))")
                nxt_in += 1
            elif u.kind in ("register", "address"):
                _, cons, code = operand_type(str(u.type), u.kind, u.access, u.object)
                texts.append(f"[%{nxt_in}]" if u.kind == "address" else f"%{nxt_in}")
                ins_.append(f"\"{cons}\"({pname}.value)" if code == 8 else
                            f"\"{cons}\"({pname})")
                nxt_in += 1
            elif u.kind == "predicate":
                pred = f"%{nxt_in}"
                texts.append("pin" if any(io_of.get(v.name) == "out" and v.kind == "predicate"
                                          for v in uses) else "p")
                ins_.append(f"\"r\"(static_cast<std::uint32_t>({pname}))")
                nxt_in += 1
            elif spliced:  # text for the slot's "C" operand: '%' and the immediate's position
                names = [u.name] if u.kind == "immediate" else [
                    f"{u.name}_{e}" for e, _ in u.elements]
                refs = [f"%{list(imm_refs).index(n)}" for n in names]
                texts.append(refs[0] if u.kind == "immediate" else "{" + ", ".join(refs) + "}")
            elif u.kind == "immediate":
                texts.append(f"%{nxt_in}")
                ins_.append(f"\"n\"({imm_refs[u.name]})")
                nxt_in += 1
            else:
                els = [imm_refs[f"{u.name}_{e}"] for e, _ in u.elements]
                texts.append("{" + ", ".join(f"%{nxt_in + i}" for i in range(len(els))) + "}")
                ins_.extend(f"\"n\"({t})" for t in els)
                nxt_in += len(els)
        return texts, pred, ", ".join(outs), ", ".join(ins_), post, nxt_in, scratch

    def io(self, name: str) -> str:
        return self.ins.io_of.get(name, "in")

    def doc(self, f: Form, name: str) -> str:
        ins = self.ins
        lines = [f"`{ins.name}`: {ins.title} (spec: {ins.spec_file}).", ""]
        if self.fixed:
            fixed = ", ".join(f"{k} = {v}" for k, v in self.fixed.items())
            lines.append(f"Fixed by this wrapper: {fixed}.")
        if self.free:
            lines.append("Template parameters:")
            for q in sorted(self.free, key=lambda q: q.optional):  # as declared
                vals = "true / false" if q.flag else ", ".join(q.domain)
                lines.append(f"  {tparam(q.name)}: {q.name} ({vals}). {q.description}".rstrip())
        lines.append("Operands:")
        for u in f.operands:
            op = next(o for o in ins.operands
                      if o.name == u.name or any(a.name == u.name for a in o.choice))
            desc = next((a.description for a in op.choice if a.name == u.name), op.description)
            link = ins.descriptor_links.get(u.name)
            if link is not None:
                desc += f" [{link[0]} descriptor: ptxgen/{link[0]}.hpp]"
            lines.append(f"  {u.name}: {desc}".rstrip())
        lines.append("Fails to compile for an invalid combination, qualifier value or array "
                     "(static_assert saying what the form needs) and, for a target without the "
                     "form, in ptxas with "
                     "\"Unresolved extern function 'ptxgen_unsupported_target_...'\" naming the "
                     "targets that have it. Check a form with `ptxgen support OPCODE`.")
        return escape.cpp_block_comment("\n".join(lines))


class _ImmediateForm:
    """A form seen with some register operands written as immediates (the immediate
    overload of operands with ``immediate_overload``): its operand uses say
    ``immediate``, with the immediates the register takes in this form as values; the
    rest is the form's."""

    def __init__(self, form: Form, names: tuple[str, ...]) -> None:
        self.form = form
        self.operands = tuple(
            replace(u, kind="immediate", values=u.immediate_values) if u.name in names else u
            for u in form.operands)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.form, name)


@cache
def _register_list(start: int, count: int) -> str:
    """``{%start, %start+1, ...}``: the asm text of ``count`` registers of a vector."""
    return "{" + ", ".join(f"%{start + i}" for i in range(count)) + "}"


@cache
def _array_constraints(constraint: str, name: str, count: int) -> str:
    """The asm operands of every element of an array operand, ``, ``-joined."""
    return ", ".join(f"\"{constraint}\"({name}[{i}])" for i in range(count))


def _digit_of(domain: tuple[str, ...]) -> dict[str, int]:
    """{value: its index in ``domain``} (the first, as ``domain.index`` finds it)."""
    out: dict[str, int] = {}
    for i, v in enumerate(domain):
        out.setdefault(v, i)
    return out


def _values_key(uses: tuple[OperandUse, ...], name: str) -> str:
    """The immediates of operand ``name`` as text ("" where they cannot be listed)."""
    vals = next(u.values for u in uses if u.name == name)
    if isinstance(vals, range) and vals.step > 0:
        if len(vals) > 8:
            return f"{vals.start} to {vals[-1]} in steps of {vals.step}"
        return values_text(list(vals))
    if isinstance(vals, (tuple, list)):
        nums = [v for v in vals if isinstance(v, int)]
        if nums and len(nums) == len(vals):
            return values_text(nums)
    return ""


def _fence_overloads(iset: InstructionSet, ins: Instruction, w: Wrapper,
                     overloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``fences`` overload of each overload of wrapper ``w`` that takes no operand: the
    same call, then every register of the array that the named operand of another
    instruction writes tied ("+r", fence_operand), so that no use of the registers moves
    above the instruction. The array is deduced; its length must be a register count of
    that operand's forms."""
    assert w.fences is not None
    other = iset.get(w.fences[0])
    counts = sorted({u.count or 0 for f in other.forms for u in f.operands
                     if u.name == w.fences[1]})
    name = escape.ident(w.fences[1])
    out = []
    for ov in overloads:
        if ov["params"]:
            continue
        qual, targs = ov["qualifier_template"], ov["qualifier_args"]
        call = f"{ov['name']}<{targs}>()" if targs else f"{ov['name']}()"
        msg = escape.cpp_message(
            f"ptxgen: {ins.name}: the array {name} has PtxgenN registers where "
            f"{other.name} writes {values_text(counts)}")
        doc = escape.cpp_block_comment(
            f"`{ins.name}`, then every register of {name} (the {w.fences[1]} array of "
            f"{other.name}: {values_text(counts)} registers) tied to it with an empty asm "
            "(\"+r\", a memory clobber), so that no use of the registers moves above it. "
            f"The same as {ov['name']}() followed by fence_operand({name}).")
        out.append({
            "name": ov["name"], "arrays": [], "ret": "void", "result_struct": None,
            "result_decl": None, "result": None, "qualifier_template": qual,
            "qualifier_args": targs,
            "template": ", ".join(x for x in (qual, "class PtxgenT, decltype(sizeof(0)) "
                                                    "PtxgenN") if x),
            "params": [f"PtxgenT (&{name})[PtxgenN]"],
            "statements": _statements([(_int_test("PtxgenN", counts), msg)])
            + [f"{call};", f"fence_operand({name});"],
            "fallback": ov["fallback"], "doc": doc, "forms": None, "direct": [],
            "objects": None})
    return out


def _param_class(param: str) -> str:
    """What overload resolution tells apart: arrays, immediate tags, other values."""
    if "(&" in param:
        return "array"
    if param.startswith(("imm_t<", "imms_t<")):
        return param.split("<", 1)[0]
    return "value"


def _check_distinct(ins: Instruction, functions: list[dict[str, Any]],
                    seen: dict[tuple[str, ...], str] | None = None) -> None:
    """Two overloads of one function name must differ in the kinds of their parameters:
    forms whose operands differ only in name or register type (count / tx_count, a 16-bit
    ctaMask / a 64-bit cache policy) make calls ambiguous and need distinct wrapper names
    in the spec."""
    if seen is None:  # else: the functions checked before (of the same file), kept
        seen = {}
    for f in functions:
        key = (f["name"], *(_param_class(p) for p in f["params"]))
        doc = ", ".join(p.rsplit(" ", 1)[-1] for p in f["params"])
        if key in seen:
            raise ValueError(f"{ins.spec_file}: {ins.name}: two forms of wrapper {f['name']} "
                             f"take as many operands of the same kinds ({seen[key]} / {doc}), "
                             f"which makes calls ambiguous; split the wrapper in the spec's "
                             f"wrappers list")
        seen[key] = doc


def _opcode_halves(parts: list[tuple[str, ...]]) -> dict[str, Any]:
    """The opcodes of a forms table (each as its instruction name and qualifier texts;
    empty: a form left out of the selection) as two pieces each, a head and a tail, cut
    after the same qualifier in every form where the distinct heads and tails are
    shortest: the pieces once each (NUL-terminated, one after another), then the offsets
    of each form's two pieces in them (packed numbers)."""
    width = max((len(p) for p in parts), default=0)
    best: tuple[int, int] = (-1, 0)
    distinct = set(filter(None, parts))
    # each distinct opcode's head and tail texts at every cut, made by accumulation
    heads_at = [list(accumulate(p)) for p in distinct]
    tails_at = [list(accumulate(reversed(p), lambda t, x: x + t))[::-1] for p in distinct]
    for cut in range(1, max(width, 2)):
        # the pieces' texts (each once, with its NUL), from the distinct qualifier tuples
        heads = {h[cut - 1] if cut <= len(h) else h[-1] for h in heads_at}
        tails = {t[cut] if cut < len(t) else "" for t in tails_at}
        size = sum(map(len, heads)) + sum(map(len, tails)) + len(heads) + len(tails)
        if best[0] < 0 or size < best[0]:
            best = (size, cut)
    cut = best[1]
    pieces: dict[str, int] = {"": 0}  # each piece's offset in the NUL-terminated pieces
    size = 1
    numbers: list[int] = []
    for p in parts:
        for text in ("".join(p[:cut]), "".join(p[cut:])):
            at = pieces.get(text)
            if at is None:
                at = pieces[text] = size
                size += len(text.encode()) + 1
            numbers.append(at)
    width, data = escape.packed(numbers)
    return {"piece_rows": escape.cpp_bytes(b"".join(x.encode() + b"\0" for x in pieces)),
            "opcode_rows": escape.cpp_bytes(data), "opcode_width": width}
