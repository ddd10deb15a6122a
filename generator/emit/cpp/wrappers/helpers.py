"""Value specs as constexpr helper bodies: the qualifier-derived values (operand counts,
register types, immediates' ranges) the wrappers compute from their template parameters."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp.wrappers.base import _and, _Cond, _ctype_text, cpp_bool, enum_name
from ptxgen.model.instructions import (
    FALSE,
    TRUE,
    Condition,
    Form,
    Instruction,
    Matcher,
    OperandUse,
    Qualifier,
    Wrapper,
    spec_text,
)

# -- value specs as constexpr helper bodies --------------------------------------------

_WORD = re.compile(r"[A-Za-z_]\w*")


def _digit(q: Qualifier, x: str) -> str:
    """The position of qualifier ``q``'s value ``x`` (a C++ expression) in its domain, as
    the forms tables and the helpers' tables number it (-1: none)."""
    if q.flag:
        return f"({x} ? {q.domain.index(TRUE)} : {q.domain.index(FALSE)})"
    if q.numeric:
        return f"detail::index_of<{', '.join(q.domain)}>({x})"
    return f"static_cast<long long>({x})"


def _by_values(spec: Any, ins: Instruction, result: Any) -> tuple[str | None,
                                                                  dict[int, int]] | None:
    """A value spec that returns numbers (not negative) by at most one qualifier: (its
    name, {the digit of its value: the number}), or (None, {-1: the number}) for one
    number; None for any other (nested, divided, other results)."""
    def number(sub: Any) -> int | None:
        if isinstance(sub, dict):
            return None
        text = str(result(sub))
        return int(text) if text.isdigit() else None

    if not isinstance(spec, dict):
        n = number(spec)
        return None if n is None else (None, {-1: n})
    if "by" not in spec:
        return None
    q = ins.qualifier(spec["by"])
    out: dict[int, int] = {}
    for key, sub in spec["values"].items():
        value = str(key) if not isinstance(key, bool) else (TRUE if key else FALSE)
        n = number(sub)
        if n is None:
            return None
        if value in q.domain and q.domain.index(value) not in out:
            out[q.domain.index(value)] = n
    if "default" in spec:
        n = number(spec["default"])
        if n is None:
            return None
        for d in range(len(q.domain)):
            out.setdefault(d, n)
    return q.name, out


def _spec_lines(spec: Any, cond: _Cond, result: Any, indent: str) -> list[str]:
    """Statements returning ``result(value)`` for a value spec (by / div / literal)."""
    if isinstance(spec, dict) and "by" in spec:
        q = cond.ins.qualifier(spec["by"])
        out: list[str] = []
        for key, sub in spec["values"].items():
            test = cond.matcher(q.name, Matcher(frozenset({str(key) if not isinstance(key, bool)
                                                           else (TRUE if key else FALSE)})))
            if test is False:
                continue
            if test is True:
                return out + _spec_lines(sub, cond, result, indent)
            out.append(f"{indent}if ({test}) {{")
            out += _spec_lines(sub, cond, result, indent + "    ")
            out.append(f"{indent}}}")
        if "default" in spec:
            return out + _spec_lines(spec["default"], cond, result, indent)
        return out
    if isinstance(spec, dict) and "div" in spec:
        name, d = spec["div"]
        return [f"{indent}return {cond.exprs[name]} / {d};"]
    return [f"{indent}return {result(spec)};"]


class _Helpers:
    """constexpr helpers in namespace detail, shared by the wrappers of one instruction."""

    def __init__(self, ins: Instruction) -> None:
        self.ins = ins
        self.quals = [q for q in ins.qualifiers]
        self.defs: dict[str, dict[str, Any]] = {}
        self.checkers: dict[str, dict[str, str]] = {}
        env = {q.name: escape.ident(q.name) for q in self.quals}
        self.cond = _Cond(ins, {}, env)
        self._slots: list[int] | None = None
        self._combinations: dict[Condition, int] | None = None  # the number of each
        self._forms_of: dict[int, list[Form]] | None = None
        self._text_keys: dict[int, tuple[OperandUse, tuple[Any, ...]]] = {}
        # the spliced asm statements (and immediates' texts) by the text keys of their
        # operand uses and the immediates' template parameters
        self.statements: dict[tuple[Any, ...], tuple[str, list[str]]] = {}
        # the helpers used outside the checks (array operand types in a wrapper's
        # signature and its traits, derived qualifiers): the others are only in the passes
        # that run the checks
        self.visible: set[str] = set()

    def slots(self) -> list[int]:
        """Where the forms of the instruction have immediate operands: the number of
        non-immediate operand texts before each run of immediates, over every form and
        immediate overload. Each position is a "C" operand of the shared asm statements
        (empty where a form has no immediates there), so forms that differ only in their
        immediates share a statement."""
        if self._slots is None:
            imm_ops = {o.name for o in self.ins.operands if o.immediate_overload}
            found: set[int] = set()
            # forms share their operand uses: each distinct tuple of them once
            distinct = {id(f.operands): f for f in self.ins.forms}.values()
            for f in distinct:
                for extra in ({*()}, imm_ops):
                    rt = 0
                    for u in f.operands:
                        if u.kind in ("immediate", "immediates") or u.name in extra:
                            found.add(rt)
                        else:
                            rt += 1
            self._slots = sorted(found)
        return self._slots

    def text_key(self, u: OperandUse) -> tuple[Any, ...]:
        """What of an operand use its asm statement text (:meth:`_Wrapper._spliced_asm`)
        depends on; made once per use (forms share them)."""
        hit = self._text_keys.get(id(u))
        if hit is None or hit[0] is not u:
            hit = self._text_keys[id(u)] = (u, (
                u.name, u.kind, u.type, u.count, u.access, u.object,
                tuple(e for e, _ in u.elements), u.joined, u.in_tensor))
        return hit[1]

    def forms_of(self, w: Wrapper) -> list[Form]:
        """The forms of the instruction that wrapper ``w`` calls (grouped once for all its
        wrappers)."""
        if self._forms_of is None:
            ins = self.ins
            groups: dict[int, list[Form]] = {id(x): [] for x in ins.wrappers}
            for f in ins.forms:
                groups[id(ins.wrapper_of(f))].append(f)
            self._forms_of = groups
        return self._forms_of[id(w)]

    def array_checker(self, ins: Instruction, op: Any, alt: Any, name: str) -> dict[str, str]:
        """The class templates that check an array operand's element type and length."""
        key = escape.ident(f"{ins.id}_{name}")
        if key not in self.checkers:
            spec = alt.type if alt is not None else op.type
            count = alt.count if alt is not None else op.count
            desc = alt.description if alt is not None else op.description
            what = f"ptxgen: {ins.name}: operand {name}"
            self.checkers[key] = {
                "type": f"{key}_element_type", "length": f"{key}_length",
                "type_msg": escape.cpp_message(
                    f"{what}: the element type of the array (PtxgenGiven) is not the register "
                    f"type of this form (PtxgenNeeded): {_ctype_text(spec, op.access)}"),
                "length_msg": escape.cpp_message(
                    f"{what}: the array has PtxgenGiven elements where this form needs "
                    f"PtxgenNeeded ({desc}" + (f"; {spec_text(count)} registers" if count
                                               is not None else "") + ")"),
            }
        return self.checkers[key]

    def ctype(self, q: Qualifier) -> str:
        return "bool" if q.flag else "int" if q.numeric else enum_name(self.ins, q)

    def params(self, body: list[str], quals: list[Qualifier] | None = None) -> str:
        """The parameter list of a helper with this body (every qualifier unless
        ``quals``), named only where the body uses them: an unnamed parameter cannot be
        unused, and the list is shorter to compile than one of ``[[maybe_unused]]``
        parameters."""
        used = set(_WORD.findall(" ".join(body)))
        return ", ".join(f"{self.ctype(q)} {escape.ident(q.name)}"
                         if escape.ident(q.name) in used else self.ctype(q)
                         for q in (self.quals if quals is None else quals))

    def call(self, name: str, exprs: Mapping[str, str]) -> str:
        args = ", ".join(exprs[q.name] for q in self.quals)
        return f"detail::{name}({args})"

    def value_helper(self, operand: str, what: str, spec_by_comb: list[tuple[Condition | None,
                                                                               Any]],
                     result: Any, ret: str) -> str:
        name = escape.ident(f"{self.ins.id}_{what}_{operand}")
        if name in self.defs:
            return name
        body: list[str] = []
        cases: dict[int, Any] = {}  # combination: its value spec, as statements
        # the cases that return numbers by at most one qualifier: a table, not statements
        tabled: dict[int, tuple[str | None, dict[int, int]]] = {}  # combination: values
        for comb, spec in spec_by_comb:
            values = _by_values(spec, self.ins, result) if ret == "int" else None
            if comb is None:
                if values is not None and values[0] is not None:
                    body += self._table_lookup(values[0], [values[1]], None)
                else:
                    body += _spec_lines(spec, self.cond, result, "    ")
                continue
            k = self.combination_index(comb)
            if k is None or k in cases or k in tabled:
                continue
            if values is not None:
                tabled[k] = values
            cases[k] = spec
        # the table's column: the qualifier most of the cases go by; the others are cases
        by = Counter(q for q, _ in tabled.values() if q is not None).most_common(1)
        column = by[0][0] if by else None
        tabled = {k: v for k, v in tabled.items() if v[0] is None or v[0] == column}
        rest = [k for k in cases if k not in tabled]
        if tabled or rest:  # the combination's (the combinations do not overlap)
            body.append(f"    const int ptxgen_k = {self.combination_call()};")
        if tabled:
            body += self._table_lookup(column, [tabled[k][1] if k in tabled else {}
                                                for k in range(max(tabled) + 1)], "ptxgen_k")
        if rest:
            body.append("    switch (ptxgen_k) {")
            for k in rest:
                body += [f"    case {k}:", *_spec_lines(cases[k], self.cond, result,
                                                       "        "), "        break;"]
            body.append("    }")
        body.append(f"    return {result(None)};")
        self.defs[name] = {"ret": ret, "name": name, "params": self.params(body), "body": body}
        return name

    def _table_lookup(self, qname: str | None, rows: list[dict[int, int]],
                      row: str | None) -> list[str]:
        """Statements returning a number from a table (row ``row``, a combination; column:
        the digit of qualifier ``qname``) where the table has one: the numbers + 1 packed
        (0: none, and the statements after run). A row {-1: n} is n in every column."""
        q = self.ins.qualifier(qname) if qname is not None else None
        cols = len(q.domain) if q is not None else 1
        width, data = escape.packed([(r[d] if d in r else r.get(-1, -1)) + 1
                                     for r in rows for d in range(cols)])
        lit = escape.cpp_bytes(data)
        col = _digit(q, escape.ident(q.name)) if q is not None else "0"
        at = f"detail::cell({row or 0}, {len(rows)}, {col}, {cols})"
        return [f"    if (const long long ptxgen_v = detail::entry({lit[0]}",
                *[f"            {x}" for x in lit[1:]],
                f"            , {width}, {at}); ptxgen_v >= 0) {{",
                "        return static_cast<int>(ptxgen_v);", "    }"]

    def combination_index(self, comb: Condition) -> int | None:
        """The number of a combination in ``<id>_combination`` (None: it cannot hold)."""
        if self._combinations is None:
            self._combinations = {}
            boxes: list[list[int]] = []  # each combination's mask per qualifier
            for c in self.ins.combinations:
                test = _and(self.cond.cond(c.match), self._absent_unlisted(c.match))
                if test is not False and c.match not in self._combinations:
                    self._combinations[c.match] = len(boxes)
                    boxes.append(self._box(c.match))
            name = escape.ident(f"{self.ins.id}_combination")
            body = self._box_body(boxes)
            self.defs[name] = {"ret": "int", "name": name, "params": self.params(body),
                               "body": body}
            self.visible.add(name)  # the helpers outside the checks use it too
        return self._combinations.get(comb)

    def _box(self, match: Condition) -> list[int]:
        """A combination as a box: for each qualifier, the mask of the digits (positions in
        its domain) of the values it may take (the absent value of a qualifier with one
        that the combination does not name)."""
        masks = []
        for q in self.quals:
            tests = [m for n, m in match.items if n == q.name]
            if not tests and q.absent is not None:
                tests = [Matcher(frozenset({q.absent}))]
            masks.append(sum(1 << i for i, v in enumerate(q.domain)
                             if all(m(v) for m in tests)))
        return masks

    def _box_body(self, boxes: list[list[int]]) -> list[str]:
        """``<id>_combination``: the first box that holds the qualifiers' digits (-1: none),
        looked up in a packed table of the boxes' masks (the qualifiers that some box
        restricts, each mask in the bytes that hold the largest domain)."""
        used = [i for i, q in enumerate(self.quals)
                if any(b[i] != (1 << len(q.domain)) - 1 for b in boxes)]
        if not boxes or not used:
            return [f"    return {0 if boxes else -1};"]
        width = max((len(self.quals[i].domain) + 7) // 8 for i in used)
        data = b"".join(b[i].to_bytes(width, "little") for b in boxes for i in used)
        digits = [_digit(self.quals[i], escape.ident(self.quals[i].name)) for i in used]
        rows = escape.cpp_bytes(data)
        return [f"    const long long ptxgen_digits[] = {{{', '.join(digits)}}};",
                f"    return detail::box_of({rows[0]}", *[f"        {r}" for r in rows[1:]],
                f"        , {len(boxes)}, {len(used)}, {width}, ptxgen_digits);"]

    def combination_call(self) -> str:
        name = escape.ident(f"{self.ins.id}_combination")
        return f"{name}({', '.join(escape.ident(q.name) for q in self.quals)})"

    def _absent_unlisted(self, comb: Condition) -> str | bool:
        named = comb.names
        parts = [self.cond.matcher(q.name, Matcher(frozenset({q.absent})))
                 for q in self.quals if q.absent is not None and q.name not in named]
        return _and(*parts)

    def derive(self, q: Qualifier) -> str:
        """Helper computing a derived qualifier from the qualifiers it depends on."""
        name = escape.ident(f"{self.ins.id}_derive_{q.name}")
        if name not in self.defs:
            table: dict[tuple[str, ...], str] = {}
            for f in self.ins.forms:
                table[tuple(f.params[d] for d in q.derived)] = f.params[q.name]
            body = []
            for key, value in table.items():
                test = self.cond.cond(Condition(tuple(
                    (d, Matcher(frozenset({v}))) for d, v in zip(q.derived, key, strict=True))))
                body.append(f"    if ({cpp_bool(test)}) return {self.cond.value(q, value)};")
            ret = "int" if q.numeric else enum_name(self.ins, q)
            body.append("    return 0;" if q.numeric else f"    return {ret}{{}};")
            deps = [self.ins.qualifier(d) for d in q.derived]
            self.defs[name] = {"ret": ret, "name": name, "params": self.params(body, deps),
                               "body": body}
        return name

    def derive_call(self, q: Qualifier, exprs: Mapping[str, str]) -> str:
        args = ", ".join(exprs[d] for d in q.derived)
        self.visible.add(self.derive(q))
        return f"detail::{self.derive(q)}({args})"


