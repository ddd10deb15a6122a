"""Names and small pieces the C++ wrapper emitter shares: the generated identifiers
(enums, template parameters, operand types) and the condition algebra of the checks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from typing import Any

from ptxgen import escape
from ptxgen.model.descriptors import progressions
from ptxgen.model.instructions import (
    TRUE,
    Condition,
    Form,
    Instruction,
    Matcher,
    Qualifier,
    norm,
)
from ptxgen.names import camel, enum_member

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


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".yaml")
