"""C++ emitter for the instruction side: spec -> generated/include/ptxgen/ptx/*.hpp.

Per instruction spec file ``<stem>.yaml`` three headers: ``ptx/<stem>.hpp`` (what a user
includes: enums, result structs, traits, and one declaration per wrapper name and operand
count for the passes that cannot use the forms), ``ptx/<stem>.device.hpp`` with the
inline-asm wrappers of every valid form and their checks, and ``ptx/<stem>.forms.hpp``
with the asm statements of the forms; ``<stem>.hpp`` includes the other two only in the
device passes whose target may have a form, so that no other pass even reads them;
``ptxgen/ptx/target.hpp`` has the target detection and the gating helpers, and the
umbrella ``ptxgen/ptx.hpp`` includes every wrapper header.

A wrapper (``wrappers`` in the spec) is a function template: the qualifiers its
condition does not fix are template parameters (enums, ints, bools), the
operands are function parameters (registers by value, vectors as arrays whose
element type and length are deduced, predicates as bool, immediates as ``imm<3>``
tags so they stay compile-time constants). Template parameters are named
``Ptxgen...`` so that a user's macros (``-DN=7``) do not reach them. Operand
alternatives (A from a descriptor or from Tensor Memory) give differently named
functions, optional operands overloads; ``<function>_operands<qualifiers>`` names
the array type of each array operand. Outputs are returned: one alone, several (a joined
d|p pair, an 8-bit register after it) in a ``<function>_result`` struct; an 8-bit output
(no inline-asm constraint has 8 bits) is written to a ``.reg .b8`` scratch register scoped
to the statement and widened into a 32-bit "=r" operand (``NARROW``). The host pass of
nvcc (cudafe++ and the host compiler, which never run device code) and a host compiler
see the enums, the result structs, the traits with the helpers they use, and one
declaration per wrapper name whose operands (``detail::host_arg``, those past the fewest of
its overloads defaulted) take any argument, braced lists too, and whose body returns the
wrapper's type: a kernel's calls parse there, and the device passes check them against the wrappers
(``PTXGEN_PTX_EXACT_HOST_DECLARATIONS`` shows the wrappers to the host pass too, e.g. for
an IDE). A device pass whose target has no form of the file sees the same declarations,
whose body calls the wrapper's refusal (``any_form_error``: it names every target of the
wrapper's forms). The wrappers' body, compiled in device passes only:

* a ``static_assert`` on each numeric qualifier (N) naming its values, one per rule
  of the spec, with the rule's message, so an invalid combination fails to compile
  with the reason, and for each array operand a check of its element type and
  length in a class template whose failing ``static_assert`` shows what the form
  needs and what was given as its template arguments (never "no instance of
  overloaded function"); no message has a backtick (nvcc prints them as ``?``);
* the form: its number (mixed radix over the qualifier template parameters) is
  looked up (``detail::form_of``) in a sorted constexpr table of the overload's forms,
  which gives its support class (targets, PTX ISA version, refusal; a table beside it)
  or none (a ``static_assert``: not a valid form). One ``if constexpr`` gates the call
  of the forms function ``detail::<wrapper>_forms<i><number>(operands)``;
* gating: the asm is only emitted when the target being compiled (detected
  from ``__CUDA_ARCH__``, ``__CUDA_ARCH_SPECIFIC__``,
  ``__CUDA_ARCH_FAMILY_SPECIFIC__`` and ``__CUDA_ARCH_FEAT_SM*_ALL``) is one
  the spec supports the form on. Elsewhere the branch calls an undefined
  ``extern "C" __device__`` function whose name says which targets have the
  form, so building for a target that lacks it fails in ptxas ("Unresolved
  extern function 'ptxgen_unsupported_target_...'") while nvcc's generic
  ``compute_XX`` PTX pass of an ``sm_XXa`` / ``sm_XXf`` build, which only
  verifies PTX, still succeeds.

The forms header holds each form's opcode text (two pieces, a head and a tail, from a
table of distinct pieces, in the order of the wrapper's form table) and one
``asm volatile(...)`` statement per distinct operand list, shared by
the forms that have it: the opcode is spliced into the template by a "C" operand (a
constant char array made, from the table, only for the forms a translation unit uses;
nvcc / NVRTC 12.5 and later). It is included only in device passes whose target may
have a form of the file (``PTXGEN_PTX_FAMILY``): an sm_100a pass never reads wgmma's
asm statements, nor the generic compute_90 pass of an sm_90a build, nor the host pass;
in such passes the wrappers are the declarations above, and a call compiles to its
refusal. Within a file, a wrapper whose forms are on fewer targets than the file's is
left out the same way (``_wrapper_guards``: ``#if`` around its overloads and its forms'
tables and asm functions). The qualifier ``static_assert``s that every overload of a
wrapper makes are one class template per wrapper (``_shared_checks``). The tables (forms,
opcode pieces, statement numbers, immediates' formats) are string literals
(``escape.cpp_bytes``: numbers packed in as few bytes as hold the largest): a compiler
takes a literal for a small fraction of the cost of an array of numbers or of pointers
to literals, which its front end evaluates element by element.
The cost of including a wrapper header is then that of its declarations everywhere
but in the one pass that can use its forms (benchmarks/bench_cpp_compile.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import cache, lru_cache, partial
from itertools import accumulate
from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp import desc_args
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.calls import wrapper_name
from ptxgen.model.descriptors import progressions, values_text
from ptxgen.model.instructions import (
    FALSE,
    TRUE,
    Condition,
    Form,
    Instruction,
    InstructionSet,
    Matcher,
    OperandUse,
    Qualifier,
    Support,
    Wrapper,
    gate_text,
    join_operands,
    norm,
    spec_text,
    vkey,
)
from ptxgen.model.selection import selects
from ptxgen.model.targets import Targets
from ptxgen.names import assert_not_reserved, camel, enum_member

OUT = "include/ptxgen/ptx"
NS = "ptxgen::ptx"

# register type -> (C++ type, inline-asm constraint, type code of detail::reg_t)
REG = {"b32": ("std::uint32_t", "r", 0), "s32": ("std::int32_t", "r", 1),
       "b64": ("std::uint64_t", "l", 2), "f32": ("float", "f", 3), "f64": ("double", "d", 4),
       "b16": ("std::uint16_t", "h", 7), "b128": ("::ptxgen::ptx::uint128_t", "q", 10),
       "b8": ("std::uint8_t", "r", 11)}
# output registers narrower than any inline-asm constraint: written to a scoped scratch
# register of the type and widened into a 32-bit "=r" output with this instruction
NARROW = {"b8": "cvt.u32.u8"}
# a 64-bit generic address operand, by the instruction's access to the memory there
GENERIC_ADDRESS = {"read": ("const void*", "l", 5), "write": ("void*", "l", 6)}
# address operands with an ``object``: (object, register type) -> C++ type, constraint, code;
# a shared_address is passed as its .value
OBJECT_ADDRESS = {("mbarrier", "b32"): ("::ptxgen::ptx::shared_address", "r", 8),
                  ("shared", "b32"): ("::ptxgen::ptx::shared_address", "r", 8),
                  ("mbarrier", "b64"): ("std::uint64_t*", "l", 9)}
#: What a wrapper call says where the compiler lacks the "C" asm constraint.
OLD_COMPILER = escape.cpp_message(
    "ptxgen: these wrappers need nvcc or NVRTC 12.5 or later, whose inline asm takes the "
    "\"C\" constraint (a constant char array) that the forms share their asm statements "
    "through")
# a form's entry in its overload's table: form number * FORM_CLASSES + support class,
# NOT_SELECTED for a form that generate --select left out
FORM_CLASSES = 256
NOT_SELECTED = FORM_CLASSES - 1


def member_ident(q: Qualifier, value: str) -> str:
    """The enum member for a qualifier value (``scale_vec::1X`` -> ``scale_vec_1X``)."""
    return _member_ident(q.name, value)


@cache
def _member_ident(qualifier: str, value: str) -> str:
    return escape.ident(enum_member(qualifier, value))


def enum_name(ins: Instruction, q: Qualifier) -> str:
    return escape.ident(f"{ins.id}_{q.name}")


def tparam(name: str) -> str:
    """A C++ template parameter name: prefixed, so that a user's macro (-DN=3, -DV=1) does
    not hit it."""
    return escape.ident("Ptxgen" + camel(name))


def template_param(ins: Instruction, q: Qualifier, required: bool = False) -> str:
    """The C++ template parameter of a qualifier (``bool Sp = false``); an optional
    qualifier defaults to its absence unless ``required``."""
    if q.flag:
        t, default = "bool", "false"
    elif q.numeric:
        t, default = "int", None
    else:
        t = enum_name(ins, q)
        default = f"{t}::none"
    decl = f"{t} {tparam(q.name)}"
    return decl + (f" = {default}" if q.optional and default and not required else "")


def is_enum(q: Qualifier) -> bool:
    return not q.flag and not q.numeric


def operand_type(typ: str, kind: str, access: str = "read",
                 obj: str | None = None) -> tuple[str, str, int]:
    if kind == "address" and obj is not None and (obj, typ) in OBJECT_ADDRESS:
        return OBJECT_ADDRESS[(obj, typ)]
    if kind == "address" and typ == "b64":
        return GENERIC_ADDRESS[access]
    return REG[typ]


class _Cond:
    """C++ boolean expressions for spec conditions, with some names fixed to constants."""

    def __init__(self, ins: Instruction, fixed: Mapping[str, str],
                 exprs: Mapping[str, str]) -> None:
        self.ins = ins
        self.fixed = fixed
        self.exprs = exprs  # name -> C++ expression of the qualifier's value

    def value(self, q: Qualifier, v: str) -> str:
        if q.flag:
            return "true" if v == TRUE else "false"
        if q.numeric:
            return v
        return f"{enum_name(self.ins, q)}::{member_ident(q, v)}"

    def matcher(self, name: str, m: Matcher) -> str | bool:
        if name in self.fixed:
            return m(self.fixed[name])
        q = self.ins.qualifier(name)
        x = self.exprs[name]
        hits, misses = _split(q.domain, m)
        if not misses:
            return True
        if not hits:
            return False
        if q.flag:
            return x if hits == (TRUE,) else f"!{x}"
        if len(misses) < len(hits):
            return "(" + " && ".join(f"{x} != {self.value(q, v)}" for v in misses) + ")"
        return "(" + " || ".join(f"{x} == {self.value(q, v)}" for v in hits) + ")"

    def cond(self, c: Condition) -> str | bool:
        parts: list[str] = []
        for name, m in c.items:
            r = self.matcher(name, m)
            if r is False:
                return False
            if r is not True:
                parts.append(str(r))
        return " && ".join(parts) if parts else True

    def equal(self, names: Iterable[str]) -> str | bool:
        names = list(names)
        qs = [self.ins.qualifier(n) for n in names]
        common = set(qs[0].domain).intersection(*(q.domain for q in qs[1:]))
        options = []
        for v in sorted(common):
            c = Condition(tuple((n, Matcher(frozenset({v}))) for n in names))
            r = self.cond(c)
            if r is True:
                return True
            if r is not False:
                options.append(f"({r})")
        return " || ".join(options) if options else False


@lru_cache(maxsize=65536)
def _split(domain: tuple[str, ...], m: Matcher) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The values of ``domain`` that ``m`` matches, and the others (once per pair)."""
    return tuple(v for v in domain if m(v)), tuple(v for v in domain if not m(v))


def _imm_names(f: Form) -> list[str]:
    """The names of the immediate template parameters of a form's operands."""
    out = []
    for u in f.operands:
        if u.kind == "immediate":
            out.append(u.name)
        elif u.kind == "immediates":
            out += [f"{u.name}_{e}" for e, _ in u.elements]
    return out


def _join(op: str, unit: bool, xs: Iterable[str | bool]) -> str | bool:
    """C++ ``a op b op ...`` with constants folded (``unit`` is true for &&, false for ||)."""
    parts = []
    for x in xs:
        if x is (not unit):
            return not unit
        if x is not unit:
            parts.append(f"({x})")
    return f" {op} ".join(parts) if parts else unit


def _and(*xs: str | bool) -> str | bool:
    return _join("&&", True, xs)


def _or(*xs: str | bool) -> str | bool:
    return _join("||", False, xs)


def _not(x: str | bool) -> str | bool:
    if isinstance(x, bool):
        return not x
    return f"!({x})"


def _int_test(expr: str, values: list[int]) -> str:
    """C++ test that the int ``expr`` is one of ``values`` (arithmetic runs as ranges)."""
    parts = []
    for a, b, step in progressions(values):
        if (b - a) // step < 3:
            parts += [f"{expr} == {v}" for v in range(a, b + 1, step)]
        else:
            cond = f"{expr} >= {a} && {expr} <= {b}"
            parts.append(f"({cond})" if step == 1 else f"({cond} && ({expr} - {a}) % {step} == 0)")
    return " || ".join(parts)


def _statements(checks: list[tuple[str, str | None]]) -> list[str]:
    """The body lines of a wrapper before its call: (condition, message) is a static_assert,
    (condition, None) one without a message (the check shows its own), (declaration,
    "local") a constexpr local."""
    out = []
    for expr, msg in checks:
        if msg == "local":
            out.append(expr)
        elif msg is None:
            out.append(f"static_assert({expr});")
        else:
            out.append(f"static_assert({expr},\n                  {msg});")
    return out


def cpp_bool(x: str | bool) -> str:
    return ("true" if x else "false") if isinstance(x, bool) else x


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


# -- the wrappers --------------------------------------------------------------------------

def _mask_bits(targets: Targets, names: Iterable[str]) -> int:
    """The support mask of ``names``: one bit per target, in the order of the targets."""
    memo = targets.memo("cpp_mask")
    key = names if isinstance(names, frozenset) else None
    hit = memo.get(key) if key is not None else None
    if hit is not None:
        result: int = hit
        return result
    bits = 0
    index = targets.index
    for n in names:
        bits |= 1 << index[n]
    if key is not None:
        memo[key] = bits
    return bits


def _mask(targets: Targets, names: Iterable[str]) -> str:
    """The support mask as the C++ literal the headers write (``0x...ull``)."""
    return f"0x{_mask_bits(targets, names):x}ull"


def and_later_from(targets: Targets, names: frozenset[str]) -> int:
    """The ``__CUDA_ARCH__`` from which a form is supported whatever the target (see
    :meth:`ptxgen.model.targets.Targets.arch_from`)."""
    return targets.arch_from(names)


def _since(since: str | None) -> int:
    if since is None:
        return 0
    major, minor = vkey(since)
    return major * 10 + minor


def describe_targets(targets: Targets, names: frozenset[str]) -> str:
    """Compact target list for identifiers: sm_80_and_later, or the names."""
    memo = targets.memo("describe_targets")
    hit = memo.get(names)
    if hit is None:
        sm = targets.and_later.get(names)
        hit = memo[names] = (f"sm_{sm}_and_later" if sm is not None else
                             "_".join(n for n in targets.names if n in names))
    result: str = hit
    return result


def error_name(w: Wrapper, targets: Targets, names: frozenset[str], since: str | None) -> str:
    ver = (since or targets.versions[0]).replace(".", "_")
    return escape.ident(f"ptxgen_unsupported_target_{w.name}_is_only_on_"
                        f"{describe_targets(targets, names)}_from_ptx_isa_{ver}")


def any_form_error(w: Wrapper, targets: Targets, supports: Iterable[Support]) -> str:
    """The refusal of wrapper ``w`` in a device pass whose target has no form of its file
    (its one declaration there, like the host pass's, knows no form): named after every
    target and the earliest PTX ISA version of any of its forms."""
    sups = list(supports)
    names = frozenset().union(*(s.targets for s in sups))
    since = None if any(s.since_all is None for s in sups) else \
        min((s.since_all for s in sups if s.since_all is not None), key=vkey, default=None)
    return error_name(w, targets, names, since)


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
                            (self.operand_ctype(op, alt, u.kind), "std::uint32_t", pname)
                            if narrow else
                            (self.operand_ctype(op, alt, u.kind),) * 2 + (pname,))
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
                params.append(f"{self.operand_ctype(op, alt, u.kind)}& {pname}")
            else:
                if u.name in ins.descriptor_links:
                    desc_params.append((len(params), u.name))
                params.append(f"{self.operand_ctype(op, alt, u.kind)} {pname}")
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

    def operand_ctype(self, op: Any, alt: Any, kind: str) -> str:
        spec = alt.type if alt is not None else op.type
        if not isinstance(spec, dict):
            return operand_type(str(spec), kind, op.access, op.object)[0]
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
        classes: dict[tuple[str, int, int, str], int] = {}
        # (number * 256 + class, opcode parts (empty: not selected), statement)
        entries: list[tuple[int, tuple[str, ...], int]] = []
        texts: dict[int, str] = {}  # number * 256 + class: the form's shared statement
        formats: list[str] | None = None  # the immediates' text at each slot (same in all)
        left_out = False
        # per qualifier: its radix, {value: its digit}, name
        digits = [(len(q.domain), _digit_of(q.domain), q.name) for q in order]
        class_of: dict[int, tuple[Support, int]] = {}  # forms share their support
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
            hit = class_of.get(id(sup))
            if hit is None or hit[0] is not sup:
                b = self.gating(f)
                key = (b["mask"], b["arch_from"], b["since"], b["error"])
                hit = class_of[id(sup)] = (sup, classes.setdefault(key, len(classes)))
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
                            for (m, fr, si, e) in classes]}

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


def header_view(iset: InstructionSet, rel: str, instrs: list[Instruction],
                select: str | None = None) -> dict[str, Any]:
    enums: list[dict[str, Any]] = []
    helpers: list[dict[str, Any]] = []
    check_helpers: list[dict[str, Any]] = []  # only in the passes that run the checks
    functions: list[dict[str, Any]] = []
    checkers: list[dict[str, str]] = []
    traits: dict[str, dict[str, Any]] = {}
    externs: dict[str, None] = {}
    family = 0  # the targets with a form of the file (in the selection)
    whole = 0  # the targets with a form of the file, selected or not
    distinct: dict[tuple[str, ...], str] = {}  # the functions' kinds of parameters so far
    structs: set[str] = set()  # the result structs so far
    for ins in instrs:
        for q in ins.qualifiers:
            if is_enum(q):
                members = [member_ident(q, v) for v in q.domain]
                enums.append({"name": enum_name(ins, q), "members": members,
                              "doc": escape.cpp_block_comment(
                                  f"{ins.name}: qualifier {q.name} ({q.text}). "
                                  f"{q.description}".strip())})
        hp = _Helpers(ins)
        for w in ins.wrappers:
            wr = _Wrapper(ins, w, hp, select)
            supports: dict[int, Support] = {}  # the distinct supports (forms share them)
            selected: dict[int, Support] = {}
            for f in wr.forms:
                sup = f.support
                supports[id(sup)] = sup
                if select is None or selects(select, f):
                    selected[id(sup)] = sup
            for sup in supports.values():
                externs[error_name(w, iset.targets, sup.targets, sup.since_all)] = None
            any_error = any_form_error(w, iset.targets, supports.values())
            externs[any_error] = None
            for sup in selected.values():
                family |= _mask_bits(iset.targets, sup.targets)
            for sup in supports.values():
                whole |= _mask_bits(iset.targets, sup.targets)
            own = 0  # the targets with a form of this wrapper (selected or not)
            for sup in supports.values():
                own |= _mask_bits(iset.targets, sup.targets)
            overloads = wr.overloads()
            if w.fences is not None:
                overloads += _fence_overloads(iset, ins, w, overloads)
            _check_distinct(ins, overloads, distinct)
            for ov in overloads:
                ov["any_form_error"] = any_error
                ov["wrapper_mask"] = own
                ov["wrapper_id"] = (ins.id, w.name)
            if overloads:
                overloads[0]["wrapper_first"] = True
                overloads[-1]["wrapper_last"] = True
            for ov in overloads:  # one result struct per function name
                if ov["result_struct"] and ov["result_struct"]["name"] in structs:
                    ov["result_struct"] = None
                elif ov["result_struct"]:
                    structs.add(ov["result_struct"]["name"])
            functions += overloads
            for ov in overloads:  # one array-operand trait per function name
                if not ov["arrays"] or ov["name"] in traits:
                    continue
                arrays = {a[0]: a for o in overloads if o["name"] == ov["name"]
                          for a in o["arrays"]}
                traits[ov["name"]] = {"name": escape.ident(ov["name"] + "_operands"),
                                      "function": ov["name"],
                                      "template": ov["qualifier_template"],
                                      "arrays": list(arrays.values())}
        fnames = {f["name"] for f in functions}
        snames = {f["result_struct"]["name"] for f in functions if f["result_struct"]}
        enames = {e["name"] for e in enums}
        clash = (fnames & enames) | (snames & (fnames | enames))
        if clash:
            raise ValueError(f"{ins.spec_file}: {ins.name}: wrapper name(s) "
                             f"{', '.join(sorted(clash))} are also the enum of a qualifier "
                             f"(instruction id + qualifier name) or a result struct")
        helpers += [h for n, h in hp.defs.items() if n in hp.visible]
        check_helpers += [h for n, h in hp.defs.items() if n not in hp.visible]
        checkers += list(hp.checkers.values())
    stem = _stem(rel)
    host_helpers = _host_helpers(helpers, list(traits.values()), functions)
    check_structs = _shared_checks(functions)
    host_functions = _host_declarations(ins, functions)
    _wrapper_guards(functions, family, host_functions)
    if select is not None and whole != family:
        _selection_refusals(host_functions, select)
    return {"statement_groups": _statement_groups(stem, functions, family),
            "host_helpers": [h for h in helpers if h["name"] in host_helpers],
            "device_helpers": [h for h in helpers if h["name"] not in host_helpers],
            "host_functions": host_functions,
            "result_structs": [f["result_struct"] for f in functions if f["result_struct"]],
            "check_helpers": check_helpers, "check_structs": check_structs,
            "guard": f"PTXGEN_PTX_{stem.upper()}_HPP",
            "enums": enums, "helpers": helpers,
            "stem": stem, "family": f"0x{family:x}ull",
            "forms_guard": f"PTXGEN_PTX_{stem.upper()}_FORMS_HPP",
            "device_guard": f"PTXGEN_PTX_{stem.upper()}_DEVICE_HPP",
            "device_notice": [escape.cpp_comment_text(x) for x in generated_notice(
                [rel, "spec/targets.yaml"], "cpp/wrapper_device.hpp.j2")],
            "has_forms": any(f["forms"] for f in functions),
            "forms_notice": [escape.cpp_comment_text(x) for x in generated_notice(
                [rel, "spec/targets.yaml"], "cpp/wrapper_forms.hpp.j2")],
            "checkers": checkers, "traits": list(traits.values()),
            "check_declarations": list({d["name"]: d for f in functions if f["objects"]
                                        for d in f["objects"]["declarations"]}.values()),
            "operand_checks": list({d["name"]: d for f in functions if f["objects"]
                                    for d in f["objects"]["operand_checks"]}.values()),
            "functions": functions, "externs": sorted(externs),
            "notice": [escape.cpp_comment_text(x) for x in generated_notice(
                [rel, "spec/targets.yaml"], "cpp/wrappers.hpp.j2")],
            "title": escape.cpp_comment_text(", ".join(i.name for i in instrs))}


def _wrapper_guards(functions: list[dict[str, Any]], family: int,
                    host_functions: list[dict[str, Any]]) -> None:
    """Each wrapper whose forms' targets are fewer than its file's: its overloads (in the
    ``.device.hpp``) and forms functions (in the ``.forms.hpp``) only where the target
    being compiled may have one of them, ``prune`` on its first and last overload (the
    mask; the other device passes get its one refusing declaration per name and operand
    count, as a pass without the file's forms does); ``forms_guard`` on each overload with
    a forms table. An sm_90a pass then reads no ``.override::global_address`` wrapper.
    The wrapper's targets count every form of it, selected or not, so that a form left out
    of a ``--select`` still fails with its selection message where the wrapper exists."""
    names: dict[tuple[str, str], set[str]] = {}  # each wrapper's function names
    for f in functions:
        names.setdefault(f["wrapper_id"], set()).add(f["name"])
    for f in functions:
        own = f["wrapper_mask"] & family
        f["prune"] = None
        f["forms_guard"] = f"0x{own:x}ull" if own != family else None
        if own == family or not (f.get("wrapper_first") or f.get("wrapper_last")):
            continue
        mine = names[f["wrapper_id"]]
        f["prune"] = {"mask": f"0x{own:x}ull", "first": bool(f.get("wrapper_first")),
                      "last": bool(f.get("wrapper_last")),
                      "generic": [d for d in host_functions if d["name"] in mine]}


_PTXGEN_NAME = re.compile(r"\bPtxgen\w+")


def _shared_checks(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``static_assert``s that every overload with the same qualifier template
    parameters makes (of one instruction: its ``_forms``/``fallback`` name it) and that
    read those parameters only: one class template per such group holds them, and each
    overload asserts its ``ok`` instead, so the device passes parse them once. Changes
    ``functions``' statements in place; returns the class templates."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in functions:
        if f["qualifier_template"]:
            groups.setdefault((f["fallback"], f["qualifier_template"]), []).append(f)
    out: list[dict[str, Any]] = []
    for (_, template), overloads in groups.items():
        if len(overloads) < 2:
            continue
        first = overloads[0]
        params = set(_PTXGEN_NAME.findall(first["qualifier_args"]))
        rest = [set(o["statements"]) for o in overloads[1:]]
        common = [st for st in first["statements"] if st.startswith("static_assert(")
                  and set(_PTXGEN_NAME.findall(st)) <= params
                  and all(st in r for r in rest)]
        if len(common) < 2:
            continue
        name = escape.ident(f"{first['name']}_checks")
        while any(c["name"] == name for c in out):
            name += "_"
        out.append({"name": name, "function": first["name"], "statements": common,
                    "template": ", ".join(p.split(" = ")[0] for p in template.split(", "))})
        shared = set(common)
        for o in overloads:
            o["statements"] = [f"static_assert(detail::{name}<{first['qualifier_args']}>::ok);",
                               *(st for st in o["statements"] if st not in shared)]
    return out


def _host_helpers(helpers: list[dict[str, Any]], traits: list[dict[str, Any]],
                  functions: list[dict[str, Any]]) -> set[str]:
    """The helpers the operand traits and the wrappers' return types use, directly or
    through another helper: the host pass sees those, so it sees these too (and no other
    helper)."""
    names = {h["name"]: h for h in helpers}
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
    todo = [" ".join(f"{ctype} {count}" for t in traits for _, ctype, count in t["arrays"]),
            " ".join(f["ret"] for f in functions)]
    found: set[str] = set()
    while todo and word is not None:
        for n in word.findall(todo.pop()):
            if n not in found:
                found.add(n)
                todo.append(" ".join(names[n]["body"]) + " " + names[n]["params"])
    return found


def _host_declarations(ins: Instruction, functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the host pass declares of the wrappers: one function template per name (and
    return type), whose operands take anything (braced lists too; those past the fewest
    of the name's overloads defaulted) and whose body only
    returns the wrapper's type. The host compiler never runs device code, and the
    device passes check every call against the real wrappers. A device pass whose
    target has no form of the file sees them too, with the wrapper's refusal that names
    every target of its forms (``any_form_error``) in the body."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for f in functions:
        key = (f["name"], len(f["params"]))
        # a return type that depends on the qualifiers needs them by name; the pack
        # takes the immediates' and arrays' parameters, if given
        tps = (f"{f['qualifier_template']}, auto... PtxgenRest"
               if "Ptxgen" in f["ret"] and f.get("qualifier_template") else "auto... PtxgenQ")
        d = out.setdefault(key, {"name": f["name"], "ret": f["ret"], "template": tps,
                                 "params": ", ".join(["detail::host_arg"] * key[1]),
                                 "refusal": f["any_form_error"],
                                 "own": f"0x{f['wrapper_mask']:x}ull",
                                 "pack": "PtxgenRest" if "PtxgenRest" in tps else "PtxgenQ",
                                 "select_msg": None,
                                 "body": "" if f["ret"] == "void" else f"return {f['ret']}{{}}; "})
        sig = _signature(f)
        if sig not in d.setdefault("signatures", []):
            d["signatures"].append(sig)
        if d["ret"] != f["ret"]:
            raise ValueError(f"{ins.spec_file}: wrapper {f['name']} with {key[1]} operands "
                             f"returns {d['ret']} in one overload and {f['ret']} in another")
    # the operand counts of one name and return type: one declaration, the operands past
    # the fewest defaulted
    merged: dict[tuple[str, ...], tuple[int, int, dict[str, Any]]] = {}
    for (name, count), d in out.items():
        same = (name, d["ret"], d["template"], d["refusal"])
        low, high, first = merged.get(same, (count, count, d))
        if first is not d:
            first["signatures"] += [s for s in d["signatures"] if s not in first["signatures"]]
        merged[same] = (min(low, count), max(high, count), first)
    return [{**d, "params": ", ".join(["detail::host_arg"] * low
                                      + ["detail::host_arg = {}"] * (high - low))}
            for low, high, d in merged.values()]


_PTXGEN_PREFIX = re.compile(r"\bPtxgen(?=[A-Z])")


def _signature(f: dict[str, Any]) -> str:
    """A wrapper overload as a user calls it, every template parameter and operand named
    (``template <int CtaGroup, tcgen05_mma_kind Kind, bool Ashift = false, ...> void
    tcgen05_mma(std::uint32_t d_tmem, ...)``): the comment above its declaration in the
    public header, whose declaration takes anything (``template <auto...>``)."""
    params = ", ".join(p.removeprefix("[[maybe_unused]] ") for p in f["params"])
    text = f"template <{f['template']}> {f['ret']} {f['name']}({params})"
    return escape.cpp_comment_text(_PTXGEN_PREFIX.sub("", text))


def _selection_refusals(host_functions: list[dict[str, Any]], select: str) -> None:
    """Headers of a ``--select``: a device pass whose target has forms of a wrapper, none
    of them selected, sees the wrapper's declaration with a ``static_assert`` that says
    so (not the refusal that names the targets of its forms, which include this one)."""
    for d in host_functions:
        d["select_msg"] = escape.cpp_message(
            f"ptxgen: {d['name']}: no form of it is in the selection these headers were "
            f"generated with (ptxgen generate --select {select}); generate them again "
            "with a pattern that selects it")


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


def _statement_groups(stem: str, functions: list[dict[str, Any]],
                      family: int) -> list[dict[str, Any]]:
    """The asm statements of a file's forms, one function per parameter list (the forms
    functions with the same parameters share it, and its statements); each forms table
    gets the statement of each of its forms in that function. A function whose users'
    forms are on fewer targets than the file's has their mask as its ``guard``."""
    groups: dict[str, dict[str, Any]] = {}
    for f in functions:
        t = f["forms"]
        if not t:
            continue
        g = groups.get(t["params"])
        if g is None:
            g = groups[t["params"]] = {
                "function": escape.ident(f"{stem}_asm{len(groups)}"), "params": t["params"],
                "tparams": t["statement_tparams"], "texts": {}, "slots": 0, "mask": 0}
        g["mask"] |= f["wrapper_mask"] & family
        g["slots"] = max(g["slots"], len(t["slot_texts"]))
        t["asm"] = g["function"]
        ks = [0 if x is None else g["texts"].setdefault(x, len(g["texts"]))
              for x in t["statement_texts"]]
        t["statement_width"], data = escape.packed(ks)
        t["statement_rows"] = escape.cpp_bytes(data)
    for f in functions:  # every slot of the group, "" past the form's own
        t = f["forms"]
        if t:
            n = groups[t["params"]]["slots"]
            t["text_args"] = ", ".join([f"detail::opcode_text<{t['opcode_pieces']}, "
                                        f"{t['opcodes']}, {t['opcode_width']}, PtxgenF>",
                                        *t["slot_texts"],
                                        *["detail::no_text"] * (n - len(t["slot_texts"]))])
    return [{"function": g["function"], "params": g["params"],
             "guard": f"0x{g['mask']:x}ull" if g["mask"] != family else None,
             "tparams": ", ".join(["int PtxgenK", *(f"class PtxgenT{i}"
                                                     for i in range(g["slots"] + 1)),
                                   *([g["tparams"]] if g["tparams"] else [])]),
             "statements": list(g["texts"])} for g in groups.values()]


def target_view(iset: InstructionSet) -> dict[str, Any]:
    t = iset.targets
    detect = []
    for suffix in ("a", "f", ""):
        for i, x in enumerate(t.targets):
            if x.suffix != suffix:
                continue
            arch = x.cuda_arch
            if suffix == "a":
                test = (f"(defined(__CUDA_ARCH_SPECIFIC__) && __CUDA_ARCH_SPECIFIC__ == {arch}) "
                        f"|| defined(__CUDA_ARCH_FEAT_SM{x.sm}_ALL)")
            elif suffix == "f":
                test = (f"defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && "
                        f"__CUDA_ARCH_FAMILY_SPECIFIC__ == {arch}")
            else:
                test = f"__CUDA_ARCH__ == {arch}"
            detect.append({"test": test, "index": i, "name": x.name})
    # The default PTX ISA version per toolkit, newest toolkit first: the first toolkit
    # that writes each version (capped at the newest version of the spec).
    newest = vkey(t.newest)
    first: dict[tuple[int, int], tuple[int, int]] = {}
    for cuda, ptx_isa in t.toolkits:
        first.setdefault(min(vkey(ptx_isa), newest), vkey(cuda))
    toolkits = [{"cuda": c[0] * 100 + c[1], "cuda_text": f"{c[0]}.{c[1]}",
                 "ptx": v[0] * 10 + v[1], "ptx_text": f"{v[0]}.{v[1]}"}
                for v, c in sorted(first.items(), reverse=True)]
    reg_types = sorted({(code, ctype) for ctype, _, code in
                        [*REG.values(), *GENERIC_ADDRESS.values(),
                         *OBJECT_ADDRESS.values()]})
    newer = escape.ident(f"ptxgen_target_newer_than_the_spec_ptx_isa_{t.newest.replace('.', '_')}"
                         "_update_it_with_ptxgen_probe_and_generate_or_define_"
                         "PTXGEN_PTX_ALLOW_NEWER_TARGETS")
    return {"detect": detect, "targets": [x.name for x in t.targets], "reg_types": reg_types,
            "newer_name": newer, "newest_text": t.newest,
            "newest_target": max(t.targets, key=lambda x: (x.sm, x.suffix)).name,
            "toolkits": toolkits,
            # no operand fence for the 128-bit register ("q"): nothing needs one
            "fence_types": sorted({(c, k) for t, (c, k, _) in REG.items()
                                   if k != "q" and t not in NARROW}),
            "newest": _since(t.newest),
            "notice": [escape.cpp_comment_text(x) for x in generated_notice(
                ["spec/targets.yaml"], "cpp/target.hpp.j2")]}


def _ctype_text(spec: Any, access: str = "read") -> str:
    """The C++ element types of a vector operand's register type spec, e.g.
    'std::uint32_t with dtype = f16, float with dtype = f32'."""
    def leaf(v: Any) -> str:
        return operand_type(str(v), "vector", access)[0]

    if isinstance(spec, dict) and "by" in spec:
        parts = [f"{leaf(v)} with {spec['by']} = {norm(k)}" for k, v in spec["values"].items()]
        if "default" in spec:
            parts.append(f"{leaf(spec['default'])} otherwise")
        return ", ".join(parts)
    return leaf(spec)


def parts(spec: Spec) -> list[tuple[int, Callable[[], Files]]]:
    """The emitter in independent parts, each with its weight (its number of forms): one
    per instruction file (its wrapper headers), and the headers of them all."""
    iset = spec.instructions
    if iset is None:
        return []
    by_file: dict[str, list[Instruction]] = {}
    for ins in iset.instructions:
        by_file.setdefault(ins.spec_file, []).append(ins)
    out: list[tuple[int, Callable[[], Files]]] = [
        (sum(len(i.forms) for i in instrs), partial(_file_headers, iset, rel, instrs,
                                                    spec.select))
        for rel, instrs in by_file.items()]
    return [*out, (0, partial(_common_headers, iset, list(by_file)))]


def emit(spec: Spec) -> Files:
    files: Files = {}
    for _, part in parts(spec):
        files.update(part())
    return files


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".yaml")


def _file_headers(iset: InstructionSet, rel: str, instrs: list[Instruction],
                  select: str | None) -> Files:
    stem = _stem(rel)
    view = header_view(iset, rel, instrs, select)
    files = {f"{OUT}/{stem}.hpp": render("cpp/wrappers.hpp.j2", **view),
             f"{OUT}/{stem}.device.hpp": render("cpp/wrapper_device.hpp.j2", **view)}
    if view["has_forms"]:
        files[f"{OUT}/{stem}.forms.hpp"] = render("cpp/wrapper_forms.hpp.j2", **view,
                                                  old_compiler=OLD_COMPILER)
    return files


def _common_headers(iset: InstructionSet, rels: list[str]) -> Files:
    return {f"{OUT}/target.hpp": render("cpp/target.hpp.j2", **target_view(iset)),
            "include/ptxgen/ptx.hpp": render(
                "cpp/ptx.hpp.j2", headers=sorted(f"ptx/{_stem(r)}.hpp" for r in rels),
                notice=[escape.cpp_comment_text(x) for x in generated_notice(
                    sorted({i.spec_file for i in iset.instructions}), "cpp/ptx.hpp.j2")])}


# -- calling the wrappers (the nvcc tests and the benchmark build kernels with this) ------

def wrapper_calls(ins: Instruction) -> dict[str, dict[str, Any]]:
    """{form key: how to call its wrapper}: the function, its explicit template
    arguments (in order) and the operands with their C++ types."""
    out: dict[str, dict[str, Any]] = {}
    helpers = _Helpers(ins)
    for w in ins.wrappers:
        wr = _Wrapper(ins, w, helpers)
        assert ins.targets is not None
        any_error = any_form_error(w, ins.targets, {id(f.support): f.support
                                                    for f in wr.forms}.values())
        order = [q for q in sorted(wr.free, key=lambda q: q.optional)]
        values = _Cond(ins, {}, {})
        for f in wr.forms:
            targs = [values.value(q, f.params[q.name]) for q in order]
            targs = [f"{NS}::{a}" if "::" in a else a for a in targs]
            ops = []
            for u in f.operands:
                kind = u.kind
                if kind in ("sink", "special"):
                    continue
                ctype = operand_type(str(u.type), kind, u.access, u.object)[0] \
                    if u.type and u.type != "pred" \
                    else "bool"
                if ctype == OBJECT_ADDRESS[("shared", "b32")][0]:
                    ctype = "std::uint32_t"  # converts to a shared_address
                if wr.io(u.name) == "out" and kind in ("register", "predicate"):
                    kind = "returned"
                ops.append({"name": u.name, "kind": kind, "ctype": ctype, "count": u.count,
                            "io": wr.io(u.name), "values": u.values,
                            "elements": [v for _, v in u.elements]})
            assert ins.targets is not None
            out[f.key] = {"function": f"{NS}::{wrapper_name(f, w)}",
                          "template_args": targs, "operands": ops, "opcode": f.opcode,
                          "form": f, "error": error_name(w, ins.targets, f.support.targets,
                                                         f.support.since_all),
                          "any_form_error": any_error}
    return out
