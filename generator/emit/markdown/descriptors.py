"""Markdown emitter: each table rendered back into the shape of its source.

The rendering follows the source table's columns and conventions (bit order,
how values are listed) so that a test can compare it with the seed cell by
cell; everything else the spec records (notes, encodings, derived masks) is
added after the table.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from ptxgen import escape
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.descriptors import (
    Descriptor,
    Field,
    Fixed,
    Layout,
    Reserved,
    Table,
    ZeroColumnMask,
)

OUT = "docs"


def _bits(lsb: int, msb: int, order: str) -> str:
    if lsb == msb:
        return str(lsb)
    return f"{lsb}-{msb}" if order == "lsb-msb" else f"{msb}-{lsb}"


def _join_or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _join_and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def values_cell(entry: Field | Reserved | Fixed) -> str:
    """The 'Values' cell of Tables 42-44 for one kind."""
    if isinstance(entry, Reserved):
        return "0"
    if isinstance(entry, Fixed):
        return f"{entry.value:#b}"
    f = entry
    if f.type == "dimension":
        return f"{f.dim_symbol} >> {f.dim_shift}"
    if f.na:
        return f"{f.options[0].value} (NA)"
    if f.options and all(o.label for o in f.options):
        return "; ".join(f"{o.label} = {o.value}" for o in f.options)
    if f.range is not None:
        return f"{f.range[0]}–{f.range[1]}"
    return _join_or([str(o.value) for o in f.options])


def description_cell(entry: Field | Reserved | Fixed, style: str) -> str:
    if isinstance(entry, Reserved):
        return "Reserved"
    if isinstance(entry, Fixed):
        return entry.description
    f = entry
    style = f.doc_value_style or style
    text = f.description
    if style == "numbered":
        text += " " + " ".join(f"{o.value}. {o.label}" for o in f.options)
    elif style == "dashed":
        text += " " + " ".join(f"- {o.value}: {o.label}" for o in f.options)
    elif style == "inline":
        if f.options and all(o.label for o in f.options):
            text += " " + ", ".join(f"{o.value}={o.label}" for o in f.options)
    if f.doc_invalid_note and f.invalid_codes:
        text += f" Note: Values {_join_and([str(c) for c in f.invalid_codes])} are invalid"
    return text


def table_view(t: Table) -> dict[str, Any]:
    """Rows of a bit-layout table, in the source table's column layout."""
    doc = t.doc
    first = t.layouts[0]
    header = list(doc.columns)
    if doc.value_style == "equals" and first.kind:
        header = header[:-1] + [f"{header[-1]} .kind::{lay.kind}" for lay in t.layouts]
    rows = []
    for i, entry in enumerate(first.entries):
        bits = _bits(entry.lsb, entry.msb, doc.bits_order)
        implicit = getattr(entry, "implicit", None)
        if "Field Name" in doc.columns:  # Table 45: Bits | Size | Field Name | Description
            name = entry.label or entry.name if isinstance(entry, Field) else "Reserved"
            desc = entry.description if isinstance(entry, Field) else ""
            cells = [bits, str(entry.width), name, desc]
        elif doc.value_style == "equals":
            cells = [bits, str(entry.width), description_cell(entry, "equals")]
            cells += [values_cell(lay.entries[i]) for lay in t.layouts]
            per_kind = {_sources(lay.entries[i]) for lay in t.layouts}
            if len(per_kind) > 1:
                cells[3:] = [c + _sources(lay.entries[i])
                             for c, lay in zip(cells[3:], t.layouts, strict=True)]
            elif per_kind:
                cells[2] += per_kind.pop()
        elif len(doc.columns) == 3:  # Table 40: Bit-field | Size | Description
            cells = [bits, str(entry.width),
                     description_cell(entry, doc.value_style) + _sources(entry)]
        else:  # seed 004: Bits | Field
            cells = [bits, description_cell(entry, doc.value_style)]
            if isinstance(entry, Reserved):
                cells = [bits, "Reserved (must be 0)"]
        rows.append({"cells": [escape.md_cell(c) for c in cells],
                     "implicit": implicit,
                     "note": getattr(entry, "note", None)})
    prov = t.provenance
    if first.variant is not None:
        source = (f"PTX ISA {prov.ptx_isa or '9.0'} {prov.section} (as third parties number "
                  f"it); for {', '.join(first.targets)} from PTX ISA {first.since}. No seed: "
                  "the sources of each new field are given in brackets (see the evidence "
                  "above and the notes).")
    else:
        source = f"PTX ISA {prov.section}; transcribed from seed(s) " + ", ".join(prov.seeds)
    return {
        "caption": escape.md_text(f"Table {prov.table}: {prov.caption}" if str(prov.table).isdigit()
                                  else f"{prov.table}: {prov.caption}"),
        "source": escape.md_text(source),
        "header": [escape.md_cell(h) for h in header],
        "rows": rows,
    }


def _sources(entry: Field | Reserved | Fixed) -> str:
    """A variant field's sources as the docs show them ('' for the baseline tables)."""
    if not isinstance(entry, Field) or not entry.sources:
        return ""
    if entry.third_party_only:
        return " [third-party source only]"
    return f" [sources: {', '.join(entry.sources)}]"


def _frac(x: Fraction, minus_one: bool) -> str:
    """Column bounds as the seed writes them: 0, N/2, (N/4*3), N-1, N/2-1, (N/4*3)-1."""
    if x == 0:
        return "0"
    if x == 1:
        base = "N"
    elif x.numerator == 1:
        base = f"N/{x.denominator}"
    else:
        base = f"(N/{x.denominator}*{x.numerator})"
    return base + ("-1" if minus_one else "")


def _abbrev(layout: Layout, name: str) -> str:
    label = layout.field(name).label or name
    m = re.search(r"\((\w+)\)", label)
    return m.group(1) if m else name


def zcm_view(layout: Layout, z: ZeroColumnMask) -> dict[str, Any]:
    breakup = []
    for s in z.submasks:
        breakup.append([str(s.m), s.breakup,
                         ", ".join(f"mask{i}" for i in range(s.count)),
                         ", ".join(_abbrev(layout, n) for n in z.first_span_fields[:s.count]),
                         ", ".join(_abbrev(layout, n) for n in z.start_count_fields[:s.count])])
    most = max(s.count for s in z.submasks)
    coverage = []
    for i in range(most):
        row = [f"mask{i}"]
        for s in z.submasks:
            if i < s.count:
                lo, hi = s.coverage[i]
                row.append(f"Columns [{_frac(lo, False)}, {_frac(hi, True)}]")
            else:
                row.append("–")
        coverage.append(row)
    examples = []
    for ex in z.examples:
        examples.append({
            "title": escape.md_text(ex.title),
            "row": [escape.md_cell(c) for c in ex.seed_row],
            "fields": escape.md_text(", ".join(f"{k}={v}" for k, v in ex.fields)),
            "masks": [escape.md_cell(f"mask{i}: {m}") for i, m in enumerate(ex.masks)],
        })
    return {
        "breakup_header": ["M", "Zero-Column Mask breakup", "Sub-masks", "First Span used",
                           "Start Column used"],
        "breakup": [[escape.md_cell(c) for c in r] for r in breakup],
        "coverage_header": ["Sub-mask"] + [f"M = {s.m}" for s in z.submasks],
        "coverage": [[escape.md_cell(c) for c in r] for r in coverage],
        "example_header": ["Start count", "First span", "Non-Zero Mask", "Skip Span",
                           "Use Span", "Shift"],
        "examples": examples,
    }


def swizzle_view(layout: Layout) -> dict[str, Any] | None:
    sp = layout.swizzle
    if sp is None:
        return None
    prov = sp.provenance
    return {
        "caption": escape.md_text(f"Table {prov.table}: {prov.caption}"),
        "header": ["Swizzling mode", "Starting address of the repeating pattern"],
        "rows": [{"cells": [escape.md_cell(p.label), escape.md_cell(f"{p.boundary}-Byte boundary")],
                  "implicit": p.implicit} for p in sp.patterns],
        "formula": escape.md_text(f"base offset = {sp.formula}"),
    }


def field_reference(layout: Layout) -> list[list[str]]:
    rows = []
    for e in layout.entries:
        if isinstance(e, Field):
            rows.append([f"`{e.name}`", _bits(e.lsb, e.msb, "lsb-msb"), e.type, e.domain])
        elif isinstance(e, Fixed):
            rows.append(["(fixed)", _bits(e.lsb, e.msb, "lsb-msb"), "constant", f"{e.value:#b}"])
        else:
            rows.append(["(reserved)", _bits(e.lsb, e.msb, "lsb-msb"), "reserved", "0"])
    return [[escape.md_cell(c) for c in r] for r in rows]


def descriptor_view(d: Descriptor) -> dict[str, Any]:
    return {
        "notice": [escape.md_text(x)
                   for x in generated_notice([d.spec_file], "markdown/descriptor.md.j2")],
        "title": escape.md_text(d.title),
        "name": d.name,
        "description": escape.md_text(d.description),
        "word_bits": d.word_bits,
        "tables": [table_view(t) for t in d.tables],
        "classes": [{"name": lay.class_name, "kind": lay.kind, "fields": field_reference(lay),
                     "cli": f"ptxgen encode {d.name}" + (f" --kind {lay.kind}" if lay.kind else "")
                     + (f" --target {lay.targets[0]}" if lay.targets else ""),
                     "where": escape.md_text(f"{', '.join(lay.targets)} from PTX ISA "
                                             f"{lay.since}") if lay.variant else None}
                    for lay in d.all_layouts],
        "variants": [{
            "title": escape.md_text(f"Variant {v.name}: {', '.join(v.targets)} from PTX ISA "
                                    f"{v.since}"),
            "text": escape.md_text(
                f"On {' and '.join(v.targets)} from PTX ISA {v.since} these tables replace "
                f"the ones above (every other target, and every earlier version, keeps them); "
                f"for every word the tables above allow they agree bit for bit. Select them "
                f"with `--target` (`ptxgen encode {d.name} --target {v.targets[0]} ...`), "
                f"`ptxgen.isa.descriptor_class(..., target=...)` or the C++ "
                f"`...ForTarget` aliases."),
            "evidence": [escape.md_text(x) for x in (
                f"ptxas: {v.evidence.ptxas}",
                f"Oracle: {v.evidence.oracle}" if v.evidence.oracle else "",
                f"Third party (not authoritative): {v.evidence.third_party}"
                if v.evidence.third_party else "",
                f"Note: {v.evidence.note}") if x],
            "tables": [table_view(t) for t in v.tables]} for v in d.variants],
        "swizzle": swizzle_view(d.layouts[0]),
        "zcm": (zcm_view(d.layouts[0], d.layouts[0].zero_column_mask)
                if d.layouts[0].zero_column_mask else None),
        "notes": [{"id": n.id, "seeds": "seeds " + ", ".join(n.seeds) if n.seeds else "no seed",
                   "text": escape.md_text(n.text),
                   "where": f"{n.source.file}:{n.source.line}"} for n in d.notes],
    }


def emit(spec: Spec) -> Files:
    files: Files = {}
    for d in spec.descriptors:
        files[f"{OUT}/{d.name}.md"] = render("markdown/descriptor.md.j2", **descriptor_view(d))
    files[f"{OUT}/README.md"] = render(
        "markdown/index.md.j2",
        notice=[escape.md_text(x) for x in generated_notice(list(spec.spec_files),
                                                            "markdown/index.md.j2")],
        descriptors=[{"name": d.name, "title": escape.md_text(d.title),
                      "tables": ", ".join(str(t.provenance.table) for t in d.tables),
                      "file": d.spec_file} for d in spec.descriptors])
    return files
