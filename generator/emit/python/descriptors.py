"""Python emitter: spec -> generated/python (installed as ``ptxgen.isa``)."""

from __future__ import annotations

from typing import Any

from ptxgen import escape
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import Descriptor, Field, Layout, progressions, values_text
from ptxgen.names import assert_not_reserved

OUT = "python"


def natural_key(name: str) -> tuple[str, ...]:
    """isort's natural order (``F8f6f4`` before ``F16``), so ruff accepts the imports."""
    import re

    return tuple(f"0{int(p):012d}" if p.isdigit() else f"1{p}"
                 for p in re.split(r"(\d+)", name) if p)


def _all_key(name: str) -> tuple[int, tuple[str, ...]]:
    """ruff's (RUF022) order of ``__all__``: CONSTANTS, then Classes, then the rest."""
    category = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return category, natural_key(name)


def wrapped_str(text: str, indent: int, width: int = 99) -> str:
    """A Python string literal for ``text``, split into adjacent literals on lines of at
    most ``width`` columns (the first at ``indent``; inside brackets)."""
    room = width - indent - 3
    words = text.split(" ")
    chunks: list[str] = [""]
    for w in words:
        piece = w if not chunks[-1] else " " + w
        if chunks[-1] and len(escape.py_str(chunks[-1] + piece)) > room:
            chunks[-1] += " "
            chunks.append(w)
        else:
            chunks[-1] += piece
    return ("\n" + " " * indent).join(escape.py_str(c) for c in chunks)


def bits_text(lsb: int, msb: int) -> str:
    return f"bit {lsb}" if lsb == msb else f"bits {lsb}-{msb}"


def _ranges_text(layout: Layout, which: str) -> str:
    items = layout.reserved if which == "reserved" else layout.fixed
    return ", ".join(bits_text(e.lsb, e.msb) for e in items)


def field_view(f: Field, index: int) -> dict[str, Any]:
    """How one field is checked, encoded and decoded (source snippets for the template).

    The checks receive the field's index into the class's FIELDS table, which
    holds its name and the human description of what it allows.
    """
    enum = f.enum_class
    default = f.default
    if enum and default is not None:
        default_src: str | None = f"{enum}.{next(o.ident for o in f.options if o.value == default)}"
    else:
        default_src = None if default is None else str(default)
    raw = f"((word >> {f.lsb}) & {f.mask:#x})"
    if f.value_shift:  # dimensions and addresses: the code drops low bits of the value
        value = f"self.{f.name}"
        if f.value_mask is not None:
            value = f"({value} & {f.value_mask:#x})"
        to_code = f"({value} >> {f.value_shift})"
        from_code = f"{raw} << {f.value_shift}"
        check = f"_multiple(self, {index}, {f.name}, {f.user_step}, {f.user_max})"
    else:
        to_code = f"self.{f.name}"
        from_code = raw
        codes = f.allowed_codes
        if enum:
            check = f"_enum(self, {index}, self.{enum}, {f.name})"
            from_code = f"_enum(cls, {index}, cls.{enum}, {raw})"
        elif codes is None:
            check = f"_range(self, {index}, {f.name}, 0, {f.mask})"
        elif f.is_contiguous:
            check = f"_range(self, {index}, {f.name}, {min(codes)}, {max(codes)})"
        else:
            check = f"_codes(self, {index}, {f.name}, {tuple(codes)!r})"
    label = f"{f.label}: " if f.label else ""
    doc = f"{bits_text(f.lsb, f.msb).capitalize()}: {label}{f.description}. Allowed: {f.domain}."
    return {
        "name": escape.ident(f.name),
        "annotation": enum or "int",
        "param": _param(f.name, enum, list(f.names), default_src),
        "default": default_src,
        "lsb": f.lsb,
        "width": f.width,
        "to_code": to_code,
        "from_code": from_code,
        "check": check,
        "coerce": bool(enum),
        "doc": escape.py_docstring(doc, 4),
        "domain": wrapped_str(f.domain, 12),
        "cli_type": f.type,
        "names": ", ".join(f"{escape.py_str(n)}: {v}" for n, v in f.names.items()),
    }


def _param(name: str, enum: str | None, names: list[str], default: str | None) -> str:
    """A constructor parameter's type: an enum field takes its member, its code or its
    name as ``ptxgen encode`` spells it (``Literal["f16", "f32"]``, so that mypy refuses a
    misspelt name), wrapped to the line length."""
    if not enum:
        return "int"
    literal = ", ".join(escape.py_str(n) for n in names)
    one_line = f"{enum} | int | Literal[{literal}]"
    tail = f" = {default}," if default is not None else ","
    if 8 + len(name) + 2 + len(one_line) + len(tail) <= 100 or not names:
        return one_line
    lines, line = [], ""
    for n in names:
        item = escape.py_str(n) + ","
        if line and 12 + len(line) + 1 + len(item) > 100:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    lines.append(line)
    body = "".join(f"\n            {x}" for x in lines)
    return f"{enum} | int | Literal[{body}\n        ]"


def enum_view(f: Field) -> dict[str, Any]:
    members = []
    for o in f.options:
        assert o.ident is not None and o.name is not None
        members.append({"ident": escape.ident(o.ident), "value": o.value,
                        "doc": escape.py_docstring(f"{o.label or o.name} (CLI spelling "
                                                   f"'{o.name}')", 8)})
    return {"name": f.enum_class, "doc": escape.py_docstring(
        f"{f.description} ({bits_text(f.lsb, f.msb)}); the codes allowed for this kind.", 8),
        "members": members}


def later_fields(d: Descriptor, lay: Layout) -> dict[str, str]:
    """Fields of a baseline layout's newer variants that it lacks: name -> where they
    exist (targets, PTX ISA version, class), for the error the baseline class gives."""
    if lay.variant is not None:
        return {}
    have = {f.name for f in lay.fields}
    out: dict[str, str] = {}
    for v in d.variants:
        for other in v.layouts:
            if other.kind != lay.kind:
                continue
            for f in other.fields:
                if f.name not in have and f.name not in out:
                    out[f.name] = (f"on {', '.join(v.targets)} from PTX ISA {v.since} "
                                   f"(class {other.class_name})")
    return out


def sources_text(f: Field) -> str:
    if not f.sources:
        return ""
    if f.third_party_only:
        return " Source: third-party transcriptions of the PTX ISA only."
    return " Sources: " + ", ".join(f.sources) + "."


def layout_view(lay: Layout, d: Descriptor | None = None) -> dict[str, Any]:
    kind = f", .kind::{lay.kind}" if lay.kind else ""
    prov = lay.provenance
    doc_isa = f" {prov.ptx_isa}" if prov.ptx_isa else ""
    summary = (f"{lay.title}{kind} (PTX ISA{doc_isa} {prov.section}, Table {prov.table}: "
               f"{prov.caption}).")
    doc_lines = [summary, ""]
    if lay.variant is not None:
        doc_lines += [f"The {lay.variant} layout: on {', '.join(lay.targets)} from PTX ISA "
                      f"{lay.since} only (elsewhere the baseline tables apply).", ""]
    doc_lines += [lay.description, "", "Fields:"]
    doc_lines += [f"    {f.name} ({bits_text(f.lsb, f.msb)}): {f.description}. Allowed: {f.domain}."
                  + sources_text(f) for f in lay.fields]
    if lay.reserved:
        doc_lines += ["", f"Reserved (must be 0): {_ranges_text(lay, 'reserved')}."]
    for fx in lay.fixed:
        doc_lines += [f"Fixed: {bits_text(fx.lsb, fx.msb)} = {fx.value:#b}."]
    fields = [field_view(f, i) for i, f in enumerate(lay.fields)]
    # Required (no default) first is not needed: every field is keyword-only.
    return {
        "class_name": escape.ident(lay.class_name),
        "descriptor": lay.descriptor,
        "kind": escape.py_str(lay.kind) if lay.kind else "None",
        "kind_name": lay.kind,
        "doc": escape.py_docstring("\n".join(doc_lines), 4),
        "slots": sorted((f.name for f in lay.fields), key=natural_key),
        "word_bits": lay.word_bits,
        "hex_digits": lay.hex_digits,
        "reserved_mask": f"{lay.reserved_mask:#0{lay.hex_digits + 2}x}",
        "reserved_text": escape.py_str(_ranges_text(lay, "reserved")),
        "fixed_mask": f"{lay.fixed_mask:#0{lay.hex_digits + 2}x}",
        "fixed_value": f"{lay.fixed_value:#0{lay.hex_digits + 2}x}",
        "fixed_text": escape.py_str(", ".join(f"{bits_text(x.lsb, x.msb)} = {x.value:#b}"
                                              for x in lay.fixed)),
        "enums": [enum_view(f) for f in lay.fields if f.enum_class],
        "fields": fields,
        "swizzle": swizzle_view(lay),
        "zcm": zcm_view(lay),
        "shapes": shapes_view(lay),
        "variant": escape.py_str(lay.variant) if lay.variant else "None",
        "since": escape.py_str(lay.since) if lay.since else "None",
        "targets": ("(" + "".join(escape.py_str(t) + ", " for t in lay.targets) + ")"
                    if lay.targets else "None"),
        "later": [(escape.py_str(n), wrapped_str(w, 12), escape.ident(n))
                  for n, w in later_fields(d, lay).items()] if d else [],
    }


def shapes_view(lay: Layout) -> dict[str, Any] | None:
    """The shape table of a layout (its (m, n) pairs) as Python source."""
    s = lay.shapes
    if s is None:
        return None
    return {
        "first": escape.ident(s.fields[0]),
        "second": escape.ident(s.fields[1]),
        "fields": ", ".join(escape.py_str(f) for f in s.fields),
        "runs": [(first, "".join(f"({a}, {b}, {st}), " for a, b, st in progressions(seconds)))
                 for first, seconds in s.table],
        "firsts": escape.py_str(values_text(s.first_values)),
        "seconds": [(first, escape.py_str(values_text(seconds))) for first, seconds in s.table],
        "source": escape.py_str(s.source),
    }


def swizzle_view(lay: Layout) -> dict[str, Any] | None:
    sp = lay.swizzle
    if sp is None:
        return None
    enum = lay.field(sp.field).enum_class
    return {
        "field": sp.field,
        "index": [f.name for f in lay.fields].index(sp.field),
        "enum": enum,
        "boundaries": [(p.code, p.boundary, escape.py_str(p.label)) for p in sp.patterns],
        "shift": sp.shift,
        "mask": sp.mask,
        "doc": escape.py_docstring(
            f"Base offset for a repeating swizzle pattern starting at byte address "
            f"pattern_start (PTX ISA {sp.provenance.section}, Table {sp.provenance.table}).\n\n"
            f"0 when the pattern starts on its boundary (" +
            ", ".join(f"{p.label}: {p.boundary}-Byte" for p in sp.patterns) +
            f"), otherwise {sp.formula}, which must then be non-zero; with no swizzling "
            f"there is no pattern and the result is 0. {sp.field} is a code, an enum member "
            f"or its name as `ptxgen encode` spells it. Raises DescriptorError otherwise.", 4),
    }


def zcm_view(lay: Layout) -> dict[str, Any] | None:
    z = lay.zero_column_mask
    if z is None:
        return None
    return {
        "submasks": [(s.m, s.count, s.max_column_shift) for s in z.submasks],
        "max_n": z.max_n,
        "m_values": ", ".join(str(s.m) for s in z.submasks),
        "first_span": z.first_span_fields,
        "start_count": z.start_count_fields,
        "enable": z.enable_field,
        "ones": z.ones_span_field,
        "zeros": z.zeros_span_field,
        "shift": z.shift_field,
        "doc": escape.py_docstring(
            "Expand the descriptor into its sub-masks for an MMA of shape M x N.\n\n"
            "Returns one int per sub-mask (M = " +
            ", ".join(f"{s.m}: {s.count}" for s in z.submasks) +
            " sub-masks of N/count bits each); bit j is column j of that sub-mask's range, 1 = "
            f"the column reads as zero. Runs of ({z.ones_span_field} + 1) ones and "
            f"({z.zeros_span_field} + 1) zeros alternate, starting with ones when the "
            f"sub-mask's first span is 1; the first start-count bits are skipped. N is at "
            f"most {z.max_n} (the largest N of any tcgen05.mma shape).", 8),
    }


def _helpers(classes: list[dict[str, Any]]) -> list[str]:
    """The run-time helpers a module's generated code calls (imports stay exact)."""
    used = {"FieldSpec", "_check_word", "_rebuild", "_set"}
    if any(c["shapes"] for c in classes):
        used |= {"ShapeTable", "_shape"}
    if any(c["swizzle"] or c["zcm"] for c in classes):
        used.add("DescriptorError")
    if any(c["swizzle"] for c in classes):
        used.add("_enum")
    if any(c["later"] for c in classes):
        used.add("_unavailable")
    for c in classes:
        for f in c["fields"]:
            used.update(h for h in ("_codes", "_enum", "_multiple", "_range", "_set")
                        if f"{h}(" in f["check"] or f"{h}(" in f["from_code"])
    return sorted(used, key=lambda h: (h.startswith("_"), h))


def module_view(d: Descriptor) -> dict[str, Any]:
    classes = [layout_view(lay, d) for lay in d.all_layouts]
    names = [c["class_name"] for c in classes]
    names += ["base_offset"] if any(c["swizzle"] for c in classes) else []
    return {
        "all": sorted(names, key=natural_key),
        "helpers": _helpers(classes),
        "uses_enum": any(c["enums"] for c in classes),
        "uses_literal": any("Literal[" in f["param"] for c in classes for f in c["fields"]),
        "notice": [escape.py_comment(line) for line in
                   generated_notice([d.spec_file], "python/descriptor.py.j2")],
        "doc": escape.py_docstring(f"{d.title}: generated encoders and decoders.\n\n"
                                   f"{d.description}"),
        "classes": classes,
        "module": d.name,
    }


def _assert_names(d: Descriptor) -> None:
    """What ``validate`` refuses (ptxgen.names.RESERVED) must never reach the templates."""
    assert_not_reserved("descriptor", [d.name])
    for lay in d.all_layouts:
        assert_not_reserved("class", [lay.class_name])
        for f in lay.fields:
            assert_not_reserved("field", [f.name], zero_column_mask=bool(lay.zero_column_mask),
                                enum=bool(f.enum_class))


def emit(spec: Spec) -> Files:
    files: Files = {}
    for d in spec.descriptors:
        _assert_names(d)
        files[f"{OUT}/{d.name}.py"] = render("python/descriptor.py.j2", **module_view(d))
    files[f"{OUT}/_runtime.py"] = render(
        "python/_runtime.py.j2",
        notice=[escape.py_comment(x) for x in generated_notice(["(no spec input)"],
                                                               "python/_runtime.py.j2")])
    registry: list[dict[str, Any]] = [{"module": d.name, "descriptor": escape.py_str(d.name),
                 "imports": sorted((lay.class_name for lay in d.all_layouts), key=natural_key),
                 "classes": [(escape.py_str(lay.kind) if lay.kind else "None", lay.class_name)
                             for lay in d.layouts],
                 "variants": [{"name": escape.py_str(v.name), "since": escape.py_str(v.since),
                               "targets": "".join(escape.py_str(t) + ", " for t in v.targets),
                               "classes": [(escape.py_str(lay.kind) if lay.kind else "None",
                                            lay.class_name) for lay in v.layouts]}
                              for v in d.variants],
                 "where": [(escape.py_str(v.name) if v else "None",
                            escape.py_str(d.layout_where(v))) for v in (*d.variants, None)]}
                for d in spec.descriptors]
    exported = ["DESCRIPTORS", "DescriptorError", "FieldSpec", "UnavailableError",
                "VARIANTS", "descriptor_class", "valid_elsewhere"]
    exported += [lay.class_name for d in spec.descriptors for lay in d.all_layouts]
    files[f"{OUT}/__init__.py"] = render(
        "python/__init__.py.j2",
        notice=[escape.py_comment(x) for x in generated_notice(list(spec.spec_files),
                                                               "python/__init__.py.j2")],
        registry=registry, exported=sorted(exported, key=_all_key))
    files[f"{OUT}/py.typed"] = b""
    return files
