"""C++ emitter of the descriptors: spec -> generated/include/ptxgen (header-only, C++17,
host/device/NVRTC); their C++ tests are :mod:`ptxgen.emit.cpp.tests`.

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
from dataclasses import dataclass
from typing import Any

from ptxgen import escape
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import (
    Descriptor,
    Field,
    Layout,
    Table,
    ZeroColumnMask,
    progressions,
    values_text,
)
from ptxgen.names import assert_not_reserved, camel

INCLUDE = "include/ptxgen"


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
    flowed = [part for line in text.split("\n") for part in (escape.flow(line, width) or [""])]
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
        aligned = Check(f"{{v}} % {u(step)} == 0u", "not_a_multiple", _diag(name, misfit),
                        f.domain)
        if f.shared_address:  # any 32-bit address: the encoding drops the high bits
            return [aligned]
        return [aligned,
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
    doc_isa = f" {prov.ptx_isa}" if prov.ptx_isa else ""
    doc_lines = [f"{lay.title} (PTX ISA{doc_isa} {prov.section}, Table {prov.table}: "
                 f"{prov.caption}).", ""]
    if lay.variant is not None:
        doc_lines += [f"The {lay.variant} layout: for {', '.join(lay.targets)} from PTX ISA "
                      f"{lay.since} only; every other target uses the baseline "
                      f"{'tables' if d.kinds else 'table'}. A field of this layout that the "
                      "baseline type lacks is a compile error naming it there (no member).",
                      ""]
    doc_lines += [lay.description, "",
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
        "variant": escape.cpp_str(lay.variant) if lay.variant else "nullptr",
        "since": int(lay.since.replace(".", "")) if lay.since else 0,
        "targets": escape.cpp_str(", ".join(lay.targets)) if lay.targets else "nullptr",
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


def _arch_test(target: str) -> str:
    """The preprocessor test for compiling device code for ``target`` (sm_107a, sm_107f)."""
    digits = "".join(c for c in target if c.isdigit())
    macro = ("__CUDA_ARCH_SPECIFIC__" if target.endswith("a") else
             "__CUDA_ARCH_FAMILY_SPECIFIC__" if target.endswith("f") else "__CUDA_ARCH__")
    return f"(defined({macro}) && {macro} == {int(digits) * 10})"


def target_aliases(d: Descriptor) -> dict[str, Any] | None:
    """``<Class>ForTarget`` aliases: the variant's classes when compiling for one of its
    targets, the baseline ones otherwise (and on the host)."""
    if not d.variants:
        return None
    def name(lay: Layout) -> str:
        return escape.ident(camel(d.name) + (camel(lay.kind) if lay.kind else "") + "ForTarget"
                            if d.kinds else d.layouts[0].class_name + "ForTarget")
    branches = [{"test": " || ".join(_arch_test(t) for t in v.targets),
                 "doc": f"{', '.join(v.targets)}: the {v.name} layout (PTX ISA {v.since})",
                 "aliases": [(name(lay), escape.ident(lay.class_name)) for lay in v.layouts]}
                for v in d.variants]
    return {"branches": branches,
            "baseline": [(name(lay), escape.ident(lay.class_name)) for lay in d.layouts]}


def header_view(d: Descriptor) -> dict[str, Any]:
    template = "cpp/descriptor.hpp.j2"
    return {
        "target_aliases": target_aliases(d),
        "notice": [f"// {escape.cpp_comment_text(x)}" for x in
                   generated_notice([d.spec_file], template)],
        "doc": doc_comment(
            f"@file ptxgen/{d.name}.hpp\n{d.title}: constexpr encoders and decoders.\n\n"
            f"{d.description}\n\nGenerated from {d.spec_file}; spec notes: " +
            (", ".join(n.id for n in d.notes) or "none") + "."),
        "tables": [table_view(d, t) for t in d.tables] +
                  [table_view(d, t) for v in d.variants for t in v.tables],
        "zcm_max_columns": u(_zcm_max_n(d)),
        "zcm_words": (_zcm_max_n(d) + 63) // 64,
        "has_zcm": any(lay.zero_column_mask for lay in d.layouts),
    }


def notice(template: str, sources: list[str] | tuple[str, ...]) -> list[str]:
    return [f"// {escape.cpp_comment_text(x)}" for x in generated_notice(sources, template)]


def emit(spec: Spec) -> Files:
    files: Files = {}
    for d in spec.descriptors:
        files[f"{INCLUDE}/{d.name}.hpp"] = render("cpp/descriptor.hpp.j2", **header_view(d))
    files[f"{INCLUDE}/core.hpp"] = render(
        "cpp/core.hpp.j2", notice=notice("cpp/core.hpp.j2", ["(no spec input)"]))
    files[f"{INCLUDE}/ptxgen.hpp"] = render(
        "cpp/ptxgen.hpp.j2", notice=notice("cpp/ptxgen.hpp.j2", spec.spec_files),
        headers=[f"{d.name}.hpp" for d in spec.descriptors])
    return files
