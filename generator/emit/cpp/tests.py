"""C++ emitter of the descriptors' conformance tests: spec -> generated/tests/cpp.

``conformance.cpp`` checks every documented value of every field (and every shape)
with ``static_assert``s, ``compile_fail.cpp`` holds the invalid values that must not
compile, ``crosscheck.cpp`` encodes and decodes at run time so the tests can compare
with the Python bindings and CUTLASS.
"""

from __future__ import annotations

from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp.descriptors import (
    default_code,
    diagnostics,
    field_checks,
    h,
    notice,
    shape_checks,
    swizzle_view,
    u,
    value_src,
    zcm_view,
)
from ptxgen.emit.templates import Files, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import Field, Layout

TESTS = "tests/cpp"


def documented_values(f: Field) -> list[int]:
    """Every value the table documents for the field; addresses and integers of more than
    8 bits without a list of codes are sampled (0, every single bit of the code, the
    largest value: a Tensor Memory lane or column has 65,536), all other domains are
    listed in full."""
    if f.type == "dimension":
        return list(range(0, f.user_max + 1, f.user_step))
    if f.type == "address":
        step = f.user_step
        return sorted({0, f.window_max} | {step << k for k in range(f.width)})
    codes = f.allowed_codes
    if codes is not None:
        return list(codes)
    if f.width > 8:
        return sorted({0, f.mask} | {1 << k for k in range(f.width)})
    return list(range(f.mask + 1))


def invalid_values(f: Field) -> list[tuple[int, str]]:
    """(value, expected error code) for each class of invalid value of the field."""
    if f.type in ("dimension", "address"):
        # a shared address has no value too large for its 32 bits
        out = [] if f.shared_address else [(f.user_max + f.user_step, "too_large")]
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
        values = base_values(lay)
        # word_of(lay, {**values, n0: first, n1: second}), the other fields summed once
        f0, f1 = lay.field(n0), lay.field(n1)
        others = sum(_code(f, values[f.name]) << f.lsb for f in lay.fields
                     if f.name not in (n0, n1))
        for first, seconds in lay.shapes.table:
            for second in seconds:
                word = lay.fixed_value | (others + (_code(f0, first) << f0.lsb)
                                          + (_code(f1, second) << f1.lsb))
                word_text = h(word, wb)
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
    return {"layouts": [conformance_layout(lay) for lay in spec.all_layouts]}


def crosscheck_view(spec: Spec) -> dict[str, Any]:
    classes = []
    for i, lay in enumerate(spec.all_layouts):
        classes.append({
            "index": i,
            "class_name": lay.class_name,
            "key": escape.cpp_str(f"{lay.descriptor}:{lay.kind or ''}"
                                  + (f":{lay.variant}" if lay.variant else "")),
            "fields": [{"name": f.name, "enum": f.enum_class} for f in lay.fields],
            "nfields": len(lay.fields),
            "swizzle": None if lay.swizzle is None else {
                "name": f"{lay.swizzle.base_offset_field}_for",
                "enum": lay.field(lay.swizzle.field).enum_class},
            "zcm": lay.zero_column_mask is not None,
        })
    return {"classes": classes}




def emit(spec: Spec) -> Files:
    files: Files = {}
    conformance = conformance_view(spec)  # both files render it: made once
    files[f"{TESTS}/conformance.cpp"] = render(
        "cpp/conformance.cpp.j2", notice=notice("cpp/conformance.cpp.j2", spec.spec_files),
        **conformance)
    files[f"{TESTS}/compile_fail.cpp"] = render(
        "cpp/compile_fail.cpp.j2", notice=notice("cpp/compile_fail.cpp.j2", spec.spec_files),
        **conformance)
    files[f"{TESTS}/crosscheck.cpp"] = render(
        "cpp/crosscheck.cpp.j2", notice=notice("cpp/crosscheck.cpp.j2", spec.spec_files),
        **crosscheck_view(spec))
    return files
