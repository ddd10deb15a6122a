"""Python test emitter: spec -> generated/tests (pytest, run by the suite).

The descriptor tests (``test_<descriptor>.py``) restate, from the spec, where every
field lives and what it allows, and check the generated classes against that: round
trips over every valid value (hypothesis), each class of invalid value, reserved and
fixed bits, and the worked examples of Table 45 exactly as the seed prints them. The
instruction tests check the builders of ``ptxgen.isa.ptx`` over every valid form
(``test_ptx_builders.py``) and the form x target x version matrix against ptxas
(``test_ptxas_conformance.py``).
"""

from __future__ import annotations

from typing import Any

from ptxgen import escape
from ptxgen.emit.python.builders import sources
from ptxgen.emit.python.descriptors import natural_key
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import Field, Layout
from ptxgen.model.instructions import InstructionSet

OUT = "tests"
OUT_BUILDERS = f"{OUT}/test_ptx_builders.py"
OUT_PTXAS = f"{OUT}/test_ptxas_conformance.py"


def py_list(items: list[str], indent: int, brackets: str = "[]", prefix: int = 0) -> str:
    """``[a, b, ...]`` source, items packed greedily into lines of at most 99 columns
    (``prefix``: columns already used on the first line)."""
    one = brackets[0] + ", ".join(items) + brackets[1]
    if indent + prefix + len(one) <= 97:
        return one
    pad = " " * (indent + 4)
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(item) + 2 <= 99:
            lines[-1] += " " + item + ","
        else:
            lines.append(pad + item + ",")
    return brackets[0] + "\n" + "\n".join(lines) + "\n" + " " * indent + brackets[1]


def valid_strategy(f: Field) -> str:
    """A hypothesis strategy (source text) for every value the field allows."""
    if f.type in ("dimension", "address"):
        return (f"st.integers(0, {f.window_max // f.user_step})"
                f".map(lambda v: v * {f.user_step})")
    codes = f.allowed_codes
    if codes is None:
        return f"st.integers(0, {f.mask})"
    if f.is_contiguous and len(codes) > 8:
        return f"st.integers({min(codes)}, {max(codes)})"
    return f"st.sampled_from({list(codes)!r})"


def invalid_values(f: Field) -> list[tuple[str, str]]:
    """(value source, why) for each class of invalid value of the field."""
    out = [("-1", "negative"), ("True", "a bool, not an int"), ("'1'", "a string, not an int")]
    if f.type in ("dimension", "address"):
        if f.user_step > 1:
            out.append((str(f.user_step + f.user_step // 2), f"not a multiple of {f.user_step}"))
        out.append((str(f.user_max + f.user_step), "too large for the field"))
        return out
    codes = f.allowed_codes
    if codes is not None:
        missing = [c for c in range(f.mask + 1) if c not in codes]
        if missing:
            out.append((str(missing[0]), "a code the table does not allow for this kind"))
    out.append((str(f.mask + 1), f"does not fit in {f.width} bit(s)"))
    return out


def code_expr(f: Field) -> str:
    """Source text turning the user value ``v`` into the raw field code."""
    if not f.value_shift:
        return "int(v)"
    value = "v" if f.value_mask is None else f"(v & {f.value_mask:#x})"
    return f"{value} >> {f.value_shift}"


def shape_invalid(lay: Layout, f: Field) -> list[tuple[str, str]]:
    """Values of a shape dimension that fit the field but no shape has (with the base
    shape's other dimension)."""
    s = lay.shapes
    if s is None or f.name not in s.fields:
        return []
    if f.name == s.fields[0]:
        bad = next(v for v in range(f.user_step, f.user_max + 1, f.user_step)
                   if v not in s.first_values)
        return [("0", "left out: no shape has 0"), (str(bad), "no shape of the kind has it")]
    allowed = s.seconds(s.base[0])
    bad = next(v for v in range(f.user_step, f.user_max + 1, f.user_step) if v not in allowed)
    return [(str(bad), f"no shape has it with {s.fields[0]} = {s.base[0]}")]


def layout_view(lay: Layout) -> dict[str, Any]:
    fields = []
    shaped = lay.shapes.fields if lay.shapes else ()
    for f in lay.fields:
        if f.name in shaped:
            fields.append({"name": f.name, "lsb": f.lsb, "mask": f"{f.mask:#x}",
                           "strategy": None, "code": code_expr(f),
                           "invalid": [(v, escape.py_str(why)) for v, why in
                                       invalid_values(f) + shape_invalid(lay, f)],
                           "bad_codes": []})
            continue
        fields.append({
            "name": f.name,
            "lsb": f.lsb,
            "mask": f"{f.mask:#x}",
            "strategy": valid_strategy(f),
            "code": code_expr(f),
            "invalid": [(v, escape.py_str(why)) for v, why in invalid_values(f)],
            "bad_codes": [c for c in f.invalid_codes][:4] if f.type not in ("dimension", "address")
            else [],
        })
    z = lay.zero_column_mask
    examples = []
    if z is not None:
        counts = {s.m: s.count for s in z.submasks}
        for ex in z.examples:
            examples.append({"title": escape.py_str(ex.title), "m": ex.m,
                             "n": 64 * counts[ex.m],
                             "fields": py_list([f"{escape.py_str(k)}: {v}" for k, v in ex.fields],
                                               8, "{}"),
                             "masks": py_list([escape.py_str(m) for m in ex.masks], 8)})
    return {
        "class_name": lay.class_name,
        "fields": fields,
        "word_bits": lay.word_bits,
        "reserved_bits": py_list([str(b) for r in lay.reserved for b in range(r.lsb, r.msb + 1)],
                                 0, prefix=33),
        "fixed_bits": py_list([str(b) for x in lay.fixed for b in range(x.lsb, x.msb + 1)], 0,
                              prefix=33),
        "fixed_value": f"{lay.fixed_value:#x}",
        "examples": examples,
        "required": [f.name for f in lay.fields if f.default is None],
        "minimal": py_list([f"{k!r}: {v!r}" for k, v in {
            **{f.name: (f.allowed_codes or (0,))[0] for f in lay.fields if f.default is None},
            **(dict(zip(lay.shapes.fields, lay.shapes.base, strict=True))
               if lay.shapes else {})}.items()], 0, "{}",
            prefix=len(f"{lay.class_name.upper()}_MINIMAL: dict[str, Any] = ")),
        "shapes": None if lay.shapes is None else {
            "fields": lay.shapes.fields,
            "pairs": py_list([f"({a}, {b})" for a, b in lay.shapes.pairs], 4),
        },
    }


def test_view(iset: InstructionSet) -> dict[str, Any]:
    return {"instructions": [escape.py_str(i.id) for i in iset.instructions]}


def ptxas_view(iset: InstructionSet) -> dict[str, Any]:
    t = iset.targets
    return {
        "pairs": [(escape.py_str(a), escape.py_str(v)) for a, v in t.pairs()],
        "renamed": [(escape.py_str(x.name), escape.py_str(x.until)) for x in t.targets
                    if x.until is not None],
        "form_count": sum(len(i.forms) for i in iset.instructions),
        "target_count": len(t.targets),
    }


def emit(spec: Spec) -> Files:
    files: Files = {}
    for d in spec.descriptors:
        files[f"{OUT}/test_{d.name}.py"] = render(
            "python/test_descriptor.py.j2",
            notice=[escape.py_comment(x) for x in generated_notice([d.spec_file],
                                                                   "python/test_descriptor.py.j2")],
            module=d.name,
            imports=sorted((lay.class_name for lay in d.all_layouts), key=natural_key),
            classes=[layout_view(lay) for lay in d.all_layouts])
    iset = spec.instructions
    if iset is not None:
        files[OUT_BUILDERS] = render(
            "python/test_ptx_builders.py.j2",
            notice=[escape.py_comment(x) for x in generated_notice(
                sources(iset), "python/test_ptx_builders.py.j2")],
            **test_view(iset))
        files[OUT_PTXAS] = render(
            "python/test_ptxas_conformance.py.j2",
            notice=[escape.py_comment(x) for x in generated_notice(
                sources(iset), "python/test_ptxas_conformance.py.j2")],
            **ptxas_view(iset))
    return files
