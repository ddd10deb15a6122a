"""C++ emitter: spec -> generated/include/ptxgen (header-only, C++17, host/device/NVRTC)
and the generated C++ conformance tests in generated/tests/cpp.

Every descriptor layout becomes one value type with one member per field, scoped
enums for named values, constexpr ``encode``/``decode`` and checked variants. The
checks are written once (``check_``); called with ``diagnose`` set, a failing check
first calls the non-constexpr ``ptxgen::invalid_field<Reason>()`` with a reason type
whose name says which field is wrong and why, so that an invalid descriptor in a
constant expression is a compile error naming the field, while at run time the call
is empty. Each value type is a class template
with one defaulted parameter (``InstrDescF16 = InstrDescF16_t<>``) only so that
compilers analyse the member functions a translation unit uses, not all of them: that
keeps the umbrella header's compile-time cost low. All C++ expressions are built here;
the templates only loop and substitute.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

from ptxgen import escape
from ptxgen.emit import Files, generated_notice, render
from ptxgen.model import (
    Descriptor,
    Field,
    Layout,
    Spec,
    Table,
    ZeroColumnMask,
    progressions,
    values_text,
)
from ptxgen.names import assert_not_reserved, camel

INCLUDE = "include/ptxgen"
TESTS = "tests/cpp"


@dataclass(frozen=True)
class Check:
    """One condition a field value must meet, with its error code and diagnostic."""

    ok: str  # C++ condition on the placeholder {v}
    errc: str
    fn: str  # name of the compile-error reason type
    allowed: str  # human text, shown next to the diagnostic's declaration


def doc_comment(text: str, indent: str = "") -> str:
    """A Doxygen block comment, each line of ``text`` re-flowed to fit 100 columns."""
    width = 96 - len(indent)
    flowed = [part for line in text.split("\n")
              for part in (textwrap.wrap(line, width, break_long_words=False,
                                         break_on_hyphens=False) or [""])]
    return escape.cpp_block_comment("\n".join(flowed), indent)


def bits_text(lsb: int, msb: int) -> str:
    return f"bit {lsb}" if lsb == msb else f"bits {lsb}-{msb}"


def u(value: int) -> str:
    """An unsigned decimal C++ literal."""
    return f"{value}u"


def h(value: int, word_bits: int = 32) -> str:
    """An unsigned hexadecimal C++ literal for a word of ``word_bits`` bits."""
    return f"{value:#x}" + ("ull" if word_bits > 32 else "u")


def word_lit(value: int, word_bits: int) -> str:
    """A whole descriptor word: all hex digits of the word, zero-padded."""
    return f"{value:#0{word_bits // 4 + 2}x}" + ("ull" if word_bits > 32 else "u")


def _diag(*parts: object) -> str:
    """The name of a compile-error reason: the field, then what is wrong with it."""
    return escape.ident("_".join(str(p) for p in parts))


def field_checks(f: Field) -> list[Check]:
    """What ``validate`` checks for one field, in order."""
    name = f.name
    if f.type in ("dimension", "address"):
        step, hi = f.user_step, f.user_max
        hi_text = f"{hi:#x}" if f.type == "address" else str(hi)
        misfit = f"not_a_multiple_of_{step}" if f.type == "dimension" else \
            f"not_{step}_byte_aligned"
        return [Check(f"{{v}} % {u(step)} == 0u", "not_a_multiple", _diag(name, misfit),
                      f.domain),
                Check(f"{{v}} <= {h(hi) if f.type == 'address' else u(hi)}", "too_large",
                      _diag(name, "above", hi_text), f.domain)]
    if f.enum_class:
        cond = " || ".join(f"{{v}} == {f.enum_class}::{o.ident}" for o in f.options)
        names = "_".join(str(o.name) for o in f.options)
        return [Check(cond, "not_allowed", _diag(name, "not_one_of", names), f.domain)]
    codes = f.allowed_codes
    if codes is None:
        return [Check(f"{{v}} <= {u(f.mask)}", "not_allowed", _diag(name, "above", f.mask),
                      f.domain)]
    if f.na:
        return [Check(f"{{v}} == {u(codes[0])}", "not_allowed",
                      _diag(name, "not_applicable_to_this_kind_must_be", codes[0]), f.domain)]
    lo, hi = min(codes), max(codes)
    if f.is_contiguous and lo == 0:
        return [Check(f"{{v}} <= {u(hi)}", "not_allowed", _diag(name, "above", hi), f.domain)]
    if f.is_contiguous:
        return [Check(f"{{v}} >= {u(lo)} && {{v}} <= {u(hi)}", "not_allowed",
                      _diag(name, "not", lo, "to", hi), f.domain)]
    cond = " || ".join(f"{{v}} == {u(c)}" for c in codes)
    return [Check(cond, "not_allowed", _diag(name, "not_one_of", *codes), f.domain)]


def in_values(expr: str, values: tuple[int, ...]) -> str:
    """C++ test that ``expr`` is one of ``values`` (arithmetic runs as ranges)."""
    parts = []
    for a, b, step in progressions(values):
        if (b - a) // step < 3:
            parts += [f"{expr} == {u(v)}" for v in range(a, b + 1, step)]
        elif step == 1:
            parts.append(f"({expr} >= {u(a)} && {expr} <= {u(b)})")
        else:
            parts.append(f"({expr} >= {u(a)} && {expr} <= {u(b)} && ({expr} - {u(a)}) % "
                         f"{u(step)} == 0u)")
    return " || ".join(parts)


def shape_checks(lay: Layout) -> list[dict[str, str]]:
    """The checks of a layout's shapes (after the field checks): the first dimension is one
    a shape has, then the second is one a shape with that first dimension has. With partial
    set (the with_ setters) a dimension that is still 0 passes."""
    s = lay.shapes
    if s is None:
        return []
    first, second = s.fields
    d0, d1 = f"d.{first}", f"d.{second}"
    groups = s.groups
    chain = f"{d0} == 0u ? ({in_values(d1, s.second_values)})"
    for firsts, seconds in groups[:-1]:
        test = " || ".join(f"{d0} == {u(v)}" for v in firsts)
        chain += f" : ({test}) ? ({in_values(d1, seconds)})"
    chain += f" : ({in_values(d1, groups[-1][1])})"
    where = f"{s.source} of this kind"
    src = re.sub(r"\W+", "_", s.source.removeprefix("one of the "))
    per_first = "; ".join(f"{first} = {', '.join(map(str, firsts))}: "
                          f"{values_text(seconds)}" for firsts, seconds in groups)
    return [
        {"ok": f"(partial && {d0} == 0u) || {in_values(d0, s.first_values)}",
         "errc": "not_allowed", "field": escape.ident(first),
         "fn": _diag(first, "is_not_the", first.upper(), "of", src, "of_this_kind"),
         "comment": escape.cpp_inline_comment(
             f"{first}: allowed: {values_text(s.first_values)} ({where})")},
        {"ok": f"(partial && {d1} == 0u) || ({chain})",
         "errc": "not_allowed", "field": escape.ident(second),
         "fn": _diag(second, "is_not_an", second.upper(), "of", src, "with_this", first),
         "comment": escape.cpp_inline_comment(f"{second}: allowed: {per_first} ({where})")},
    ]


def code_expr(f: Field) -> str:
    """The raw field code (before masking to the field width) of member ``f``."""
    if f.value_shift:
        value = f.name if f.value_mask is None else f"({f.name} & {h(f.value_mask)})"
        return f"({value} >> {f.value_shift})"
    if f.enum_class:
        return f"static_cast<uint32_t>({f.name})"
    return f.name


def decode_expr(f: Field, word_bits: int) -> str:
    """The user value of field ``f`` in the word ``w`` (no cast where none is needed:
    -Wuseless-cast)."""
    raw = f"((w >> {f.lsb}) & {h(f.mask, word_bits)})"
    if word_bits > 32:
        raw = f"static_cast<uint32_t>{raw}"
    if f.value_shift:
        return f"{raw} << {f.value_shift}"
    if f.enum_class:
        return f"static_cast<{f.enum_class}>({raw})"
    return raw


def default_code(f: Field) -> int:
    """The value a value-initialized descriptor holds: 0 where the table allows it,
    else the first allowed value; 0 for the dimensions of a shape (M and N of the
    instruction descriptor), which ``T{}`` leaves unset: encode() refuses them until set."""
    if f.default is not None:
        return f.default
    if f.shape_values is not None:
        return 0
    codes = f.allowed_codes
    assert codes, f.name
    return codes[0]


def value_src(f: Field, value: int) -> str:
    """C++ source of the user value ``value`` of field ``f``."""
    if f.enum_class:
        ident = next(o.ident for o in f.options if o.value == value)
        return f"{f.enum_class}::{ident}"
    return u(value)


def _field_doc(f: Field) -> str:
    label = f"{f.label}: " if f.label else ""
    return f"{f.name} ({bits_text(f.lsb, f.msb)}): {label}{f.description}. Allowed: {f.domain}."


def _check_names(lay: Layout, extra: list[str]) -> None:
    """The names that validation refuses (ptxgen.names.RESERVED) never reach here; the
    helpers' names (``extra``) are derived from the fields, so check them as well."""
    zcm = lay.zero_column_mask is not None
    for f in lay.fields:
        assert_not_reserved("field", [f.name], zero_column_mask=zcm, enum=bool(f.enum_class))
    assert_not_reserved("class", [lay.class_name])
    names = [f.name for f in lay.fields] + extra
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ValueError(f"{lay.class_name}: names clash with generated C++ members: {clash}")


def field_view(f: Field, word_bits: int) -> dict[str, Any]:
    """What the shared class template needs of a field: its member type and bit code."""
    return {
        "name": escape.ident(f.name),
        "ctype": f.enum_class or "uint32_t",
        "term": (f"(static_cast<word_type>({code_expr(f)} & {h(f.mask)}) << {f.lsb})"
                 if word_bits > 32 else f"(({code_expr(f)} & {h(f.mask)}) << {f.lsb})"),
        "decode": decode_expr(f, word_bits),
    }


def enum_view(f: Field) -> dict[str, Any]:
    members = []
    for o in f.options:
        assert o.ident is not None and o.name is not None
        members.append({"ident": escape.ident(o.ident), "value": o.value,
                        "doc": escape.cpp_inline_comment(f"{o.label or o.name} "
                                                         f"(CLI spelling '{o.name}')", "/**<")})
    return {"name": f.enum_class, "members": members, "doc": doc_comment(
        f"{f.description} ({bits_text(f.lsb, f.msb)}): the codes allowed for this kind.", "  ")}


def word_checks(lay: Layout) -> list[dict[str, str]]:
    """What ``check_word`` checks in a word, in order (reserved bits, then fixed bits)."""
    out: list[dict[str, str]] = []
    if lay.reserved:
        out.append({"ok": "(w & reserved_mask) == 0u", "field": "reserved",
                    "errc": "reserved_bits", "fn": _diag("reserved_bits_not_zero"),
                    "comment": escape.cpp_inline_comment(
                        f"reserved bits ({_ranges(lay, 'reserved')}) must be 0")})
    if lay.fixed:
        out.append({"ok": "(w & fixed_mask) == fixed_value", "field": "fixed",
                    "errc": "fixed_bits", "fn": _diag("fixed_bits_not", f"{lay.fixed_value:#x}"),
                    "comment": escape.cpp_inline_comment(
                        f"fixed bits must hold {_fixed_text(lay)}")})
    return out


def diagnostics(lay: Layout) -> list[dict[str, str]]:
    """Every (field id, error code) -> diagnostic function of one class's fields and words."""
    out: list[dict[str, str]] = []
    for f in lay.fields:
        out += [{"field": f.name, "errc": c.errc, "fn": c.fn,
                 "comment": escape.cpp_inline_comment(f"{f.name}: allowed: {c.allowed}")}
                for c in field_checks(f)]
    out += [{k: c[k] for k in ("field", "errc", "fn", "comment")} for c in shape_checks(lay)]
    return out + [{k: w[k] for k in ("field", "errc", "fn", "comment")} for w in word_checks(lay)]


def _ranges(lay: Layout, which: str) -> str:
    items = lay.reserved if which == "reserved" else lay.fixed
    return ", ".join(bits_text(e.lsb, e.msb) for e in items)


def _fixed_text(lay: Layout) -> str:
    return ", ".join(f"{bits_text(x.lsb, x.msb)} = {x.value:#b}" for x in lay.fixed)


def swizzle_view(lay: Layout) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    sp = lay.swizzle
    if sp is None:
        return None, []
    fld = lay.field(sp.field)
    assert fld.enum_class is not None
    ident = {o.value: o.ident for o in fld.options}
    check = field_checks(fld)[0]
    name = escape.ident(f"{sp.base_offset_field}_for")
    diags = [{"field": "pattern_start", "errc": "zero_base_offset",
              "fn": _diag("pattern_start_off_boundary_with_zero_base_offset"),
              "comment": escape.cpp_inline_comment(
                  f"an address off its pattern boundary must give a non-zero {sp.formula}")}]
    boundary = " : ".join(f"{sp.field} == {fld.enum_class}::{ident[p.code]} ? {h(p.boundary)}"
                          for p in sp.patterns) + " : 0u"
    return {
        "name": name,
        "field": escape.ident(sp.field),
        "enum": fld.enum_class,
        "valid": check.ok.format(v=sp.field),
        "invalid_fn": check.fn,
        "zero_fn": diags[0]["fn"],
        "boundary": boundary,
        "offset": f"static_cast<uint32_t>((pattern_start >> {sp.shift}) & {h(sp.mask)})",
        "doc": doc_comment(
            f"Base offset for a repeating swizzle pattern that starts at byte address "
            f"pattern_start (PTX ISA {sp.provenance.section}, Table {sp.provenance.table}: "
            f"{sp.provenance.caption}).\n\n0 when the pattern starts on its boundary (" +
            ", ".join(f"{p.label}: {p.boundary}-Byte" for p in sp.patterns) +
            f"), otherwise {sp.formula}, which must then be non-zero; with no swizzling "
            f"there is no pattern and the result is 0. In a constant expression an invalid "
            f"swizzle or a zero offset is a compile error; at run time it stops the thread "
            f"(see encode(); use {name}_checked to get the error).", "  "),
    }, diags


def zcm_view(lay: Layout) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    z: ZeroColumnMask | None = lay.zero_column_mask
    if z is None:
        return None, []
    ms = ", ".join(str(s.m) for s in z.submasks)
    diags = [
        {"field": "m", "errc": "not_allowed", "fn": _diag("m_not", *(s.m for s in z.submasks)),
         "comment": escape.cpp_inline_comment(f"M must be one of {ms}")},
        {"field": "n", "errc": "not_allowed", "fn": _diag("n_zero"),
         "comment": escape.cpp_inline_comment("N must be positive")},
        {"field": "n", "errc": "not_a_multiple",
         "fn": _diag("n_not_a_multiple_of_the_sub_mask_count"),
         "comment": escape.cpp_inline_comment("N must be a multiple of the sub-mask count of M")},
        {"field": "n", "errc": "too_large", "fn": _diag("n_above", z.max_n),
         "comment": escape.cpp_inline_comment(f"N must be at most {z.max_n}")},
        {"field": z.shift_field, "errc": "too_large",
         "fn": _diag(z.shift_field, "above_the_maximum_for_m"),
         "comment": escape.cpp_inline_comment(
             f"{z.shift_field} must be at most " +
             ", ".join(f"{s.max_column_shift} for M={s.m}" for s in z.submasks))},
    ]
    return {
        "fn": dict(zip(("m", "n_zero", "n_multiple", "n_large", "shift"),
                       (d["fn"] for d in diags), strict=True)),
        "submasks": [{"m": u(s.m), "count": u(s.count), "max_shift": u(s.max_column_shift)}
                     for s in z.submasks],
        "first_span": ", ".join(map(escape.ident, z.first_span_fields)),
        "start_count": ", ".join(map(escape.ident, z.start_count_fields)),
        "slots": len(z.first_span_fields),
        "enable": escape.ident(z.enable_field),
        "ones": escape.ident(z.ones_span_field),
        "zeros": escape.ident(z.zeros_span_field),
        "shift": escape.ident(z.shift_field),
        "doc": doc_comment(
            "Expand the descriptor into its sub-masks for an MMA of shape M x N.\n\n"
            "Sub-mask i covers columns i*N/count .. (i+1)*N/count-1 (M = " +
            ", ".join(f"{s.m}: {s.count}" for s in z.submasks) +
            " sub-masks); a set bit means the column reads as zero. Runs of "
            f"({z.ones_span_field} + 1) ones and ({z.zeros_span_field} + 1) zeros alternate, "
            "starting with ones when the sub-mask's first span is 1; the first start-count "
            f"bits are skipped. N is at most {z.max_n} (the largest N of any tcgen05.mma "
            "shape). In a constant "
            "expression an invalid descriptor or argument is a compile error; at run time "
            "it stops the thread (see encode(); use masks_checked to get the error).", "  "),
    }, diags


def _same(values: list[str]) -> bool:
    return all(v == values[0] for v in values)


def kind_view(lay: Layout, own_defaults: set[str]) -> dict[str, Any]:
    """The per-kind traits of one layout: its enums, the defaults that differ between the
    kinds of its table, and its field checks with their compile-error reasons."""
    kind = f", .kind::{lay.kind}" if lay.kind else ""
    return {
        "class_name": escape.ident(lay.class_name),
        "kind": escape.cpp_str(lay.kind) if lay.kind else "nullptr",
        "enums": [enum_view(f) for f in lay.fields if f.enum_class],
        "defaults": [{"ctype": f.enum_class or "uint32_t", "name": escape.ident(f.name),
                      "value": value_src(f, default_code(f))}
                     for f in lay.fields if f.name in own_defaults],
        "checks": [{"ok": c.ok.format(v=f"d.{f.name}"), "errc": c.errc, "fn": c.fn,
                    "field": escape.ident(f.name)} for f in lay.fields for c in field_checks(f)]
        + shape_checks(lay),
        "reasons": [d for d in diagnostics(lay) if d["field"] not in ("reserved", "fixed")],
        "doc": doc_comment(f"{lay.title}{kind}: the value type of "
                           f"PTX ISA {lay.provenance.section}, Table {lay.provenance.table}"
                           f"{' for this kind' if lay.kind else ''}; see {{table}}."),
    }


def table_view(d: Descriptor, t: Table) -> dict[str, Any]:
    """One class template for the layout all kinds of one table share; the kinds differ only
    in their traits (enums, allowed values, defaults)."""
    lay = t.layouts[0]
    for other in t.layouts[1:]:
        assert [(f.name, f.lsb, f.msb, f.type) for f in other.fields] == \
            [(f.name, f.lsb, f.msb, f.type) for f in lay.fields], other.class_name
        assert (other.reserved_mask, other.fixed_mask) == (lay.reserved_mask, lay.fixed_mask)
    swz, swz_diags = swizzle_view(lay)
    zcm, zcm_diags = zcm_view(lay)
    extra = (["reserved"] if lay.reserved else []) + (["fixed"] if lay.fixed else [])
    params = (["pattern_start"] if swz else []) + (["m", "n"] if zcm else [])
    helpers = [swz["name"], swz["name"] + "_checked", swz["name"] + "_"] if swz else []
    for each in t.layouts:
        _check_names(each, params + helpers)
    name = escape.ident(f"{camel(d.name)}Table{escape.ident_part(t.provenance.table)}_t"
                        if d.kinds else f"{lay.class_name}_t")
    fields = []
    own_defaults: set[str] = set()
    for i, f in enumerate(lay.fields):
        variants = [each.fields[i] for each in t.layouts]
        defaults = [value_src(v, default_code(v)) for v in variants]
        default = defaults[0]
        if not _same(defaults):
            own_defaults.add(f.name)
            default = f"PtxgenKind::{f.name}"
        field_doc = _table_field_doc(variants, [str(each.kind) for each in t.layouts])
        fields.append({**field_view(f, lay.word_bits), "default": default,
                       "doc": escape.cpp_inline_comment(field_doc, "/**<")})
    kinds = [kind_view(each, own_defaults) for each in t.layouts]
    for k in kinds:
        k["doc"] = k["doc"].replace("{table}", name)
    prov = t.provenance
    doc_lines = [f"{lay.title} (PTX ISA {prov.section}, Table {prov.table}: {prov.caption}).",
           "", lay.description, "",
           "A value type: every member is the user-facing value of one field (dimensions "
           "such as m = 128 and byte addresses as they are, not their encoded codes). " +
           ("T{} leaves " + " and ".join(lay.shapes.fields) + " at 0, which no shape has: "
            "set them (T{} is valid otherwise). " if lay.shapes else "T{} is a valid "
            "descriptor. ") +
           "Set fields with the members or the with_<field>() setters. In a constant "
           "expression (a constexpr variable, a static_assert, a template argument) an "
           "invalid field is a compile error naming it: in encode()/decode(), and already "
           "in the with_<field>() setter that makes it invalid. At run time encode()/decode() "
           "stop the thread on an invalid descriptor (trap on the device, __builtin_trap on "
           "the host) instead of returning a different word; encode_checked()/"
           "decode_checked() report the first error instead, and encode_unchecked()/"
           "decode_unchecked() do not check (fields are truncated to their width).", "",
           "Use it through its alias" + ("es " if len(kinds) > 1 else " ") +
           ", ".join(k["class_name"] for k in kinds) + "; the template parameter holds what "
           "differs between kinds (the allowed values), and a template is used at all only "
           "so that compilers analyse the member functions a translation unit uses."]
    if lay.reserved:
        doc_lines += ["", f"Reserved (must be 0): {_ranges(lay, 'reserved')}."]
    if lay.fixed:
        doc_lines += [f"Fixed: {_fixed_text(lay)}."]
    return {
        "name": name,
        "doc": doc_comment("\n".join(doc_lines)),
        "descriptor": escape.cpp_str(lay.descriptor),
        "word_type": "uint64_t" if lay.word_bits > 32 else "uint32_t",
        "word_bits": lay.word_bits,
        "reserved_mask": word_lit(lay.reserved_mask, lay.word_bits),
        "reserved_text": escape.cpp_comment_text(_ranges(lay, "reserved") or "none"),
        "fixed_mask": word_lit(lay.fixed_mask, lay.word_bits),
        "fixed_value": word_lit(lay.fixed_value, lay.word_bits),
        "fixed_text": escape.cpp_comment_text(_fixed_text(lay) or "none"),
        "enums": [f.enum_class for f in lay.fields if f.enum_class],
        "fields": fields,
        "field_ids": [{"id": escape.ident(n), "str": escape.cpp_str(n)}
                      for n in [f.name for f in lay.fields] + extra + params],
        "word_checks": word_checks(lay),
        "reasons": [{k: w[k] for k in ("fn", "comment")} for w in word_checks(lay)] +
                   swz_diags + zcm_diags,
        "swizzle": swz,
        "zcm": zcm,
        "kinds": kinds,
    }


def _table_field_doc(variants: list[Field], kinds: list[str]) -> str:
    """A field's doc line; where kinds allow different values, each kind's domain."""
    f = variants[0]
    domains = [v.domain for v in variants]
    if _same(domains):
        return _field_doc(f)
    per_kind = "; ".join(f"{kind}: {dom}" for kind, dom in zip(kinds, domains, strict=True))
    return _field_doc(f).rsplit(" Allowed: ", 1)[0] + f" Allowed: {per_kind}."


def _zcm_max_n(d: Descriptor) -> int:
    """Columns a ZeroColumnMasks value holds: the largest N of the descriptor's masks."""
    return max((lay.zero_column_mask.max_n for lay in d.layouts if lay.zero_column_mask),
               default=0)


def header_view(d: Descriptor) -> dict[str, Any]:
    template = "cpp/descriptor.hpp.j2"
    return {
        "notice": [f"// {escape.cpp_comment_text(x)}" for x in
                   generated_notice([d.spec_file], template)],
        "doc": doc_comment(
            f"@file ptxgen/{d.name}.hpp\n{d.title}: constexpr encoders and decoders.\n\n"
            f"{d.description}\n\nGenerated from {d.spec_file}; spec notes: " +
            (", ".join(n.id for n in d.notes) or "none") + "."),
        "tables": [table_view(d, t) for t in d.tables],
        "zcm_max_columns": u(_zcm_max_n(d)),
        "zcm_words": (_zcm_max_n(d) + 63) // 64,
        "has_zcm": any(lay.zero_column_mask for lay in d.layouts),
    }


# -- conformance tests ---------------------------------------------------------------


def documented_values(f: Field) -> list[int]:
    """Every value the table documents for the field; addresses are sampled (0, every
    single bit of the code, the largest value), all other domains are listed in full."""
    if f.type == "dimension":
        return list(range(0, f.user_max + 1, f.user_step))
    if f.type == "address":
        step = f.user_step
        return sorted({0, f.user_max} | {step << k for k in range(f.width)})
    codes = f.allowed_codes
    return list(codes) if codes is not None else list(range(f.mask + 1))


def invalid_values(f: Field) -> list[tuple[int, str]]:
    """(value, expected error code) for each class of invalid value of the field."""
    if f.type in ("dimension", "address"):
        out = [(f.user_max + f.user_step, "too_large")]
        if f.user_step > 1:
            out.insert(0, (f.user_step + f.user_step // 2, "not_a_multiple"))
        return out
    missing = list(f.invalid_codes[:1])
    return [(c, "not_allowed") for c in missing + [f.mask + 1]]


def base_shape(lay: Layout) -> dict[str, int]:
    """The shape the conformance tests complete T{} with: the smallest first dimension with
    the most second dimensions, and its smallest second dimension (f16: m = 64, n = 8)."""
    s = lay.shapes
    return {} if s is None else dict(zip(s.fields, s.base, strict=True))


def base_values(lay: Layout) -> dict[str, int]:
    """The field values of the conformance tests' base descriptor: T{}, with a shape."""
    return {**{f.name: default_code(f) for f in lay.fields}, **base_shape(lay)}


def word_of(lay: Layout, values: dict[str, int]) -> int:
    return lay.fixed_value | sum(_code(f, values[f.name]) << f.lsb for f in lay.fields)


def default_word(lay: Layout) -> int:
    return word_of(lay, base_values(lay))


def _code(f: Field, value: int) -> int:
    if f.type == "dimension":
        return value >> f.dim_shift
    if f.type == "address":
        assert f.encoding is not None
        return (value & f.encoding.mask) >> f.encoding.shift
    return value


def _value_expr(f: Field, value: int) -> str:
    """C++ source for the user value, also for values no enum member names."""
    if f.enum_class:
        if any(o.value == value for o in f.options):
            return f"C::{value_src(f, value)}"
        return f"static_cast<C::{f.enum_class}>({value})"
    return u(value)


def parse_mask(text: str) -> tuple[int, int]:
    """(value, bit count) of a mask as Table 45's examples print it: ``0b … 111 0000``
    (most significant bit first; the elided high bits are not compared) or ``0x0``."""
    t = text.replace("…", "").replace(" ", "")
    if t.startswith("0x"):
        return int(t, 16), 64
    digits = t.removeprefix("0b")
    return int(digits, 2), len(digits)


def conformance_layout(lay: Layout) -> dict[str, Any]:
    wb = lay.word_bits
    base = default_word(lay)
    shape = base_shape(lay)
    rows: list[str] = []
    for f in lay.fields:
        if f.name in shape:
            continue
        for value in documented_values(f):
            word = (base & ~(f.mask << f.lsb)) | (_code(f, value) << f.lsb)
            v = _value_expr(f, value)
            rows.append(f"static_assert(B.with_{f.name}({v}).encode() == {h(word, wb)}, "
                        f"{escape.cpp_str(f'{f.name} = {value}')});")
            rows.append(f"static_assert(C::decode({h(word, wb)}).{f.name} == {v}, "
                        f"{escape.cpp_str(f'decode {f.name} = {value}')});")
    if lay.shapes is not None:  # every shape: the dimensions are checked together
        n0, n1 = lay.shapes.fields
        for first, seconds in lay.shapes.table:
            for second in seconds:
                word_text = h(word_of(lay, {**base_values(lay), n0: first, n1: second}), wb)
                text = f"{n0} = {first}, {n1} = {second}"
                rows.append(f"static_assert(C{{}}.with_{n0}({u(first)}).with_{n1}"
                            f"({u(second)}).encode() == {word_text}, {escape.cpp_str(text)});")
                rows.append(f"static_assert(C::decode({word_text}).{n0} == {u(first)} && "
                            f"C::decode({word_text}).{n1} == {u(second)}, "
                            f"{escape.cpp_str('decode ' + text)});")
    enums = [(f"C::{f.enum_class}::{o.ident}", o.value) for f in lay.fields if f.enum_class
             for o in f.options]
    invalid = []
    for f in lay.fields:
        for value, errc in invalid_values(f):
            invalid.append({"expr": f"set_raw(B, &C::{f.name}, {_value_expr(f, value)})",
                            "errc": errc, "field": f.name,
                            "msg": escape.cpp_str(f"{f.name} = {value} is {errc}"),
                            "fn": next(c.fn for c in field_checks(f) if c.errc == errc)})
    shape_fns = {c["field"]: c["fn"] for c in shape_checks(lay)}
    setters = []  # the with_ setter that makes a field invalid is the compile error
    for f in lay.fields:
        value, errc = invalid_values(f)[0]
        setters.append((f"B.with_{f.name}({_value_expr(f, value)})",
                        next(c.fn for c in field_checks(f) if c.errc == errc)))
    if lay.shapes is not None:
        s = lay.shapes
        d0, d1 = s.fields
        step0, step1 = lay.field(d0).user_step, lay.field(d1).user_step
        bad_first = next(v for v in range(step0, lay.field(d0).user_max + 1, step0)
                         if v not in s.first_values)
        first, seconds = s.table[0]
        bad_second = next(v for v in range(step1, lay.field(d1).user_max + 1, step1)
                          if v not in seconds)
        too_big = lay.field(d1).user_step + max(s.second_values)
        invalid += [
            {"expr": f"C{{}}.with_{d1}({u(seconds[0])})", "errc": "not_allowed",
             "field": d0, "msg": escape.cpp_str(f"{d0} left out (0)"), "fn": shape_fns[d0]},
            {"expr": f"set_raw(B, &C::{d0}, {u(bad_first)})", "errc": "not_allowed",
             "field": d0, "msg": escape.cpp_str(f"{d0} = {bad_first}: no shape"),
             "fn": shape_fns[d0]},
            {"expr": f"set_raw(set_raw(B, &C::{d0}, {u(first)}), &C::{d1}, {u(bad_second)})",
             "errc": "not_allowed", "field": d1,
             "msg": escape.cpp_str(f"{d0} = {first}, {d1} = {bad_second}: no shape"),
             "fn": shape_fns[d1]},
        ]
        setters += [(f"C{{}}.with_{d0}({u(first)}).with_{d1}({u(bad_second)})", shape_fns[d1]),
                    (f"C{{}}.with_{d1}({u(bad_second)}).with_{d0}({u(first)})", shape_fns[d1]),
                    (f"C{{}}.with_{d1}({u(too_big)})", shape_fns[d1]),
                    (f"C{{}}.with_{d0}({u(bad_first)})", shape_fns[d0])]
    bad_words = [(h(base | (1 << b), wb), "reserved_bits", "reserved")
                 for r in lay.reserved for b in range(r.lsb, r.msb + 1)]
    bad_words += [(h(base ^ (1 << b), wb), "fixed_bits", "fixed")
                  for x in lay.fixed for b in range(x.lsb, x.msb + 1)]
    if lay.shapes is not None:  # a word without a first dimension (M = 0)
        dim = lay.field(lay.shapes.fields[0])
        bad_words.append((h(base & ~(dim.mask << dim.lsb), wb), "not_allowed", dim.name))
    for f in lay.fields:
        if f.type not in ("dimension", "address") and f.invalid_codes:
            code = f.invalid_codes[0]
            bad_words.append((h((base & ~(f.mask << f.lsb)) | (code << f.lsb), wb),
                              "not_allowed", f.name))
    diag = {d["field"] + ":" + d["errc"]: d["fn"]
            for d in diagnostics(lay) + swizzle_view(lay)[1] + zcm_view(lay)[1]}
    fails = [(f"{i['expr']}.encode()", i["fn"]) for i in invalid]
    fails += setters
    fails += [(f"C::decode({w})", diag[f"{fld}:{e}"]) for w, e, fld in bad_words]
    swz, zcm = _swizzle_cases(lay), _zcm_cases(lay)
    if swz:
        fails.append((f"C::{swz['name']}(0u, {swz['bad_swizzle']})",
                      diag[f"{swz['field']}:not_allowed"]))
        fails += [(f"C::{swz['name']}({a}, {s})", diag["pattern_start:zero_base_offset"])
                  for a, s in swz["zero"]]
    if zcm:
        fails += [(f"C{{}}.masks({zcm['bad_m']}, 64u)", diag["m:not_allowed"]),
                  (f"C{{}}.masks({zcm['m']}, 0u)", diag["n:not_allowed"]),
                  (f"C{{}}.masks({zcm['small_m']}, {zcm['count']} + 2u)", diag["n:not_a_multiple"]),
                  (f"C{{}}.masks({zcm['m']}, {zcm['too_many']})", diag["n:too_large"]),
                  (f"C{{}}.with_{zcm['shift']}({zcm['small_shift']}).masks({zcm['small_m']}, 64u)",
                   diag[f"{zcm['shift']}:too_large"])]
    return {
        "class_name": lay.class_name,
        "word_bits": wb,
        "base": h(base, wb),
        "base_setup": "".join(f".with_{k}({u(v)})" for k, v in shape.items()),
        "shapes": lay.shapes is not None and lay.shapes.fields[0],
        "fails": [{"expr": e, "fn": fn} for e, fn in fails],
        "reserved_mask": h(lay.reserved_mask, wb),
        "fixed_mask": h(lay.fixed_mask, wb),
        "fixed_value": h(lay.fixed_value, wb),
        "rows": rows,
        "enums": enums,
        "invalid": invalid,
        "bad_words": [{"word": w, "errc": e, "field": fld,
                       "msg": escape.cpp_str(f"decode {w}: {e} ({fld})")}
                      for w, e, fld in bad_words],
        "swizzle": swz,
        "zcm": zcm,
    }


def _swizzle_cases(lay: Layout) -> dict[str, Any] | None:
    sp = lay.swizzle
    if sp is None:
        return None
    fld = lay.field(sp.field)
    ident = {o.value: f"C::{fld.enum_class}::{o.ident}" for o in fld.options}
    rows: list[tuple[str, str, int]] = []
    zero: list[tuple[str, str]] = []
    for p in sp.patterns:
        for k in (0, 1, 3):
            rows.append((h(p.boundary * k), ident[p.code], 0))
        for off in range(1, p.boundary >> sp.shift):
            addr = p.boundary * 2 + (off << sp.shift)
            rows.append((h(addr), ident[p.code], (addr >> sp.shift) & sp.mask))
        zero.append((h(p.boundary * 8 + 16), ident[p.code]))
    patterned = {p.code for p in sp.patterns}
    for o in fld.options:
        if o.value not in patterned:
            rows += [(h(a), ident[o.value], 0) for a in (0, 0x80, 0x410)]
    bad = next(c for c in range(fld.mask + 1) if c not in ident)
    return {"name": f"{sp.base_offset_field}_for", "rows": rows, "zero": zero,
            "bad_swizzle": f"static_cast<C::{fld.enum_class}>({bad})", "field": sp.field}


def _zcm_cases(lay: Layout) -> dict[str, Any] | None:
    z = lay.zero_column_mask
    if z is None:
        return None
    counts = {s.m: s.count for s in z.submasks}
    examples: list[dict[str, Any]] = []
    for ex in z.examples:
        fields = "".join(f".with_{k}({u(v)})" for k, v in ex.fields)
        masks = []
        for i, text in enumerate(ex.masks):
            value, nbits = parse_mask(text)
            masks.append({"index": i, "mask": h((1 << min(nbits, 64)) - 1, 64),
                          "value": h(value, 64)})
        examples.append({"var": f"example_{len(examples) + 1}",
                         "title": escape.cpp_str(ex.title), "fields": fields, "m": u(ex.m),
                         "n": u(64 * counts[ex.m]), "count": len(ex.masks), "masks": masks})
    sub = z.submasks
    return {"examples": examples, "bad_m": u(sub[0].m + 1), "m": u(sub[0].m),
            "count": u(sub[-1].count), "small_m": u(sub[-1].m),
            "small_shift": u(sub[-1].max_column_shift + 1), "shift": z.shift_field,
            "max_columns": u(z.max_n), "too_many": u(z.max_n + sub[0].count)}


def conformance_view(spec: Spec) -> dict[str, Any]:
    return {"layouts": [conformance_layout(lay) for lay in spec.layouts]}


def crosscheck_view(spec: Spec) -> dict[str, Any]:
    classes = []
    for i, lay in enumerate(spec.layouts):
        classes.append({
            "index": i,
            "class_name": lay.class_name,
            "key": escape.cpp_str(f"{lay.descriptor}:{lay.kind or ''}"),
            "fields": [{"name": f.name, "enum": f.enum_class} for f in lay.fields],
            "nfields": len(lay.fields),
            "swizzle": None if lay.swizzle is None else {
                "name": f"{lay.swizzle.base_offset_field}_for",
                "enum": lay.field(lay.swizzle.field).enum_class},
            "zcm": lay.zero_column_mask is not None,
        })
    return {"classes": classes}


def _notice(template: str, sources: list[str] | tuple[str, ...]) -> list[str]:
    return [f"// {escape.cpp_comment_text(x)}" for x in generated_notice(sources, template)]


def emit(spec: Spec) -> Files:
    files: Files = {}
    for d in spec.descriptors:
        files[f"{INCLUDE}/{d.name}.hpp"] = render("cpp/descriptor.hpp.j2", **header_view(d))
    files[f"{INCLUDE}/core.hpp"] = render(
        "cpp/core.hpp.j2", notice=_notice("cpp/core.hpp.j2", ["(no spec input)"]))
    files[f"{INCLUDE}/ptxgen.hpp"] = render(
        "cpp/ptxgen.hpp.j2", notice=_notice("cpp/ptxgen.hpp.j2", spec.spec_files),
        headers=[f"{d.name}.hpp" for d in spec.descriptors])
    files[f"{TESTS}/conformance.cpp"] = render(
        "cpp/conformance.cpp.j2", notice=_notice("cpp/conformance.cpp.j2", spec.spec_files),
        **conformance_view(spec))
    files[f"{TESTS}/compile_fail.cpp"] = render(
        "cpp/compile_fail.cpp.j2", notice=_notice("cpp/compile_fail.cpp.j2", spec.spec_files),
        **conformance_view(spec))
    files[f"{TESTS}/crosscheck.cpp"] = render(
        "cpp/crosscheck.cpp.j2", notice=_notice("cpp/crosscheck.cpp.j2", spec.spec_files),
        **crosscheck_view(spec))
    return files

