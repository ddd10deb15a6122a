"""``ptxgen doc import``: a spec folder of what the document defines, for review.

Descriptor tables become descriptor files (one per descriptor; a table with kind columns
becomes one layout of a descriptor with kinds). Where a table is one the spec already
has (the layout ``doc check`` matches it with), the descriptor, its fields, kinds and
values take the spec's names wherever the bits and codes are the same, so that ``ptxgen
diff`` against the spec shows only what changed; everything else is named by one rule
(:func:`ident`: the words of the document's text, lower case, joined by ``_``). When
several documents hold the same table, the one whose cells are all written out (no
ambiguous merged cells) is read.

Instruction sections become a listing of their syntax (``syntax/<section>.json``: each
template with its slots, value sets and literal tokens, the "PTX ISA Notes" versions),
the material a later hand turns into an instruction file; they are not a spec file.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ptxgen.doc.check import SpecLayout, errata_keys, match_layout, spec_layouts
from ptxgen.doc.markdown import Document, Section
from ptxgen.doc.syntax import templates_of
from ptxgen.doc.tables import DescriptorTable, Entry, Values, descriptor_tables
from ptxgen.load import Document as SpecDoc
from ptxgen.spec_util import parse_bits

_ENCODE_PREFIX = re.compile(r"^(?:matrix-descriptor-encode|encode)\s*\(\s*(.*?)\s*\)\s*$")


def ident(text: str, limit: int = 4) -> str:
    """The naming rule for what the spec does not name: the text's first words (without
    parenthesised parts and encode(...)), lower case, joined by ``_``."""
    m = _ENCODE_PREFIX.match(text.split(" OR ")[0].strip())
    t = m.group(1) if m else text
    t = re.sub(r"\([^)]*\)", " ", t)
    words = re.findall(r"[A-Za-z0-9]+", t.lower())[:limit]
    out = "_".join(words) or "field"
    return out if out[0].isalpha() else "v" + out


def _bits_text(lsb: int, msb: int) -> int | str:
    return lsb if lsb == msb else f"{lsb}-{msb}"


def _fixed_value(text: str | None, width: int) -> int:
    try:
        v = int(text or "0", 0)
    except ValueError:
        v = 0
    return v if v < (1 << width) else 0  # "0xb00000000" (a typo, doc_errata): zeros


def _spec_options(f: Mapping[str, Any] | None, kind: str | None) -> dict[int, str]:
    """{code: the spec's value name} of a field (for its kind)."""
    if f is None:
        return {}
    per = f.get("per_kind") or {}
    vals = per.get(kind) if kind in per else f.get("values")
    if isinstance(vals, list):
        return {int(v["value"]): str(v["name"]) for v in vals if "name" in v}
    return {}


def _value_set(v: Values, width: int, spec_names: Mapping[int, str], enum: bool
               ) -> Any:
    if v.na is not None:
        return {"na": v.na}
    if v.pairs:
        out = []
        for label, code in v.pairs:
            if code >= 1 << width:
                continue
            entry: dict[str, Any] = {"value": code, "label": label}
            if enum:
                entry = {"name": spec_names.get(code, ident(label, 3)), **entry}
            out.append(entry)
        return out
    if v.range is not None:
        return {"min": v.range[0], "max": v.range[1]}
    if v.one_of:
        return {"one_of": list(v.one_of)} if len(v.one_of) > 1 else {"na": v.one_of[0]}
    return {"min": 0, "max": (1 << width) - 1}


def _field_type(e: Entry, spec_f: Mapping[str, Any] | None) -> str:
    if spec_f is not None and "name" in spec_f:
        return str(spec_f["type"])
    vs = [v for v in e.values.values()]
    if any(v.shift for v in vs):
        return "dimension"
    if _ENCODE_PREFIX.match(e.description.split(" OR ")[0].strip()):
        return "address"
    if any(v.pairs for v in vs):
        return "flag" if e.width == 1 and all(len(v.pairs) <= 2 for v in vs) else "enum"
    return "int"


def _field(e: Entry, table: DescriptorTable, spec_f: Mapping[str, Any] | None,
           encoding: str | None, prev_desc: str,
           erratum_kinds: frozenset[str | None] = frozenset()) -> dict[str, Any]:
    """One entry; for the kinds of ``erratum_kinds`` the document's codes are its recorded
    error (doc_errata) and the spec's are taken."""
    bits = _bits_text(e.lsb, e.msb)
    if e.role == "reserved":
        return {"reserved": bits, "width": e.width}
    if e.role == "fixed":
        return {"fixed": bits, "width": e.width, "value": _fixed_value(e.fixed_text, e.width),
                "description": e.description}
    ftype = _field_type(e, spec_f)
    name = str(spec_f["name"]) if spec_f is not None and "name" in spec_f else ident(
        e.name or e.description)
    out: dict[str, Any] = {"name": name, "bits": bits, "width": e.width}
    if e.name:
        out["label"] = e.name
    out["description"] = e.description or prev_desc
    out["type"] = ftype
    kinds = table.kinds or (None,)
    if ftype == "dimension":
        shift = next(v.shift for v in e.values.values() if v.shift)
        out["dimension"] = {"symbol": shift[0], "shift": shift[1]}
    elif ftype == "address":
        out["encoding"] = encoding or "matrix-descriptor-encode"
        if spec_f is not None and spec_f.get("shared_address"):
            out["shared_address"] = True  # what the spec knows beyond the table
    elif ftype == "flag" and not any(v.pairs or v.na is not None or v.one_of
                                     for v in e.values.values()):
        out["values"] = [{"value": 0}, {"value": 1}]
    else:
        sets = {k: (spec_f["per_kind"][k] if spec_f is not None and k in erratum_kinds
                    and k in (spec_f.get("per_kind") or {}) else
                    spec_f["values"] if spec_f is not None and k in erratum_kinds else
                    _value_set(e.values.get(k, Values()), e.width, _spec_options(spec_f, k),
                               ftype == "enum")) for k in kinds}
        most = [int(x) for x in re.findall(r"\b[Mm]ax\w*[^=.]*=\s*(\d+)", e.description)]
        if most and all(v == {"min": 0, "max": (1 << e.width) - 1} for v in sets.values()):
            # "Max shift amount = 16 for M=32 Max shift amount = 32 otherwise": the widest
            sets = {k: {"min": 0, "max": max(most)} for k in kinds}
        distinct = {repr(v) for v in sets.values()}
        if len(distinct) == 1:
            only = next(iter(sets.values()))
            out["values"] = {"min": 0, "max": only["na"]} if "na" in only else only
        else:
            out["per_kind"] = sets
    return out


def _layout_fields(table: DescriptorTable, lay: SpecLayout | None, word_bits: int,
                   encoding: str | None, errata: frozenset[str] = frozenset()
                   ) -> list[dict[str, Any]]:
    by_bits = {}
    if lay is not None:
        for f in lay.fields:
            raw = f.get("bits", f.get("reserved", f.get("fixed")))
            lsb, msb = parse_bits(raw)
            by_bits[(min(lsb, msb), max(lsb, msb))] = f
    out: list[dict[str, Any]] = []
    covered = 0
    prev_desc = ""
    for e in sorted(table.entries, key=lambda x: x.lsb):
        if e.lsb > covered:
            out.append({"reserved": _bits_text(covered, e.lsb - 1), "width": e.lsb - covered,
                        "implicit": "unlisted-bits"})
        where = f"{e.lsb}-{e.msb}" if e.lsb != e.msb else str(e.lsb)
        wrong = frozenset(k for k in (table.kinds or (None,))
                          if lay is not None and f"descriptor:{lay.label}:{where}:{k or '-'}:codes"
                          in errata)
        out.append(_field(e, table, by_bits.get((e.lsb, e.msb)), encoding, prev_desc, wrong))
        prev_desc = e.description or prev_desc
        covered = max(covered, e.msb + 1)
    if covered < word_bits:
        out.append({"reserved": _bits_text(covered, word_bits - 1),
                    "width": word_bits - covered, "implicit": "unlisted-bits"})
    return out


def _doc_style(table: DescriptorTable) -> dict[str, Any]:
    """How the document writes the table (columns, bit order, how values are written)."""
    first = table.table.rows[0].cells[0] if table.table.rows else ""
    m = re.match(r"^(\d+)\s*-\s*(\d+)$", first)
    order = "msb-lsb" if m and int(m.group(1)) > int(m.group(2)) else "lsb-msb"
    texts = [v.text for e in table.entries for v in e.values.values() if v.pairs]
    descs = " ".join(e.description for e in table.entries)
    style = ("equals" if any("=" in t for t in texts) and table.kinds else
             "numbered" if re.search(r"\d+\.\s", " ".join(texts)) else
             "inline" if any("=" in t for t in texts) else
             "numbered" if re.search(r"(?<![\w-])\d\.\s", descs) else "none")
    columns = [c.replace("\n", " ") for c in (table.table.header[0] if table.table.header else [])]
    return {"columns": columns, "bits_order": order, "value_style": style}


def _provenance(table: DescriptorTable) -> dict[str, Any]:
    doc = table.section.loc.file.rsplit("/", 1)[-1]
    seed = re.match(r"^(\d{3})_", doc)
    out: dict[str, Any] = {"section": table.section.number,
                           "table": table.table.number or table.caption,
                           "caption": table.caption, "seeds": [seed.group(1)] if seed else []}
    if not seed:
        out["document"] = f"PTX ISA {table.section.version or ''} {table.section.number} " \
                          f"({table.loc})".replace("  ", " ")
    return out


_UNLISTED = {"id": "unlisted-bits", "seeds": [],
             "text": "Bits the document's table does not list: recorded as reserved."}


def import_descriptors(doc: Document, docs: Sequence[SpecDoc], sections: Sequence[str]
                       ) -> dict[str, dict[str, Any]]:
    """{descriptor name: file data} of the document's descriptor tables."""
    layouts = spec_layouts(docs)
    errata = frozenset(errata_keys(docs))
    spec_data = {d.data["descriptor"]: d.data for d in docs
                 if isinstance(d.data, dict) and "descriptor" in d.data}
    chosen: dict[tuple[str, str], tuple[DescriptorTable, SpecLayout | None]] = {}
    for table in descriptor_tables(doc):
        if not _selected(table.section, sections):
            continue
        lay = match_layout(table, layouts)
        name = lay.descriptor if lay is not None else ident(table.caption, 5)
        key = (name, re.sub(r"\W+", " ", table.caption.lower()))
        have = chosen.get(key)
        if have is None or (table.explicit and not have[0].explicit):
            chosen[key] = (table, lay)
    files: dict[str, dict[str, Any]] = {}
    for (name, _), (table, lay) in chosen.items():
        spec = spec_data.get(name, {})
        word_bits = int(spec.get("word_bits") or (32 if max(e.msb for e in table.entries) < 32
                                                  else 64))
        enc_name = None
        encodings: dict[str, Any] = {}
        if table.formula is not None:
            _, mask, shift = table.formula
            spec_enc = lay.encodings if lay is not None else {}
            enc_name = next((n for n, e in spec_enc.items()
                             if e.get("mask") == mask and e.get("shift") == shift),
                            "matrix-descriptor-encode")
            encodings[enc_name] = {"formula": f"(x & {mask:#X}) >> {shift}".replace("0X", "0x"),
                                   "mask": mask, "shift": shift}
        fields = _layout_fields(table, lay, word_bits, enc_name, errata)
        data = files.setdefault(name, {
            "descriptor": name, "title": spec.get("title", table.caption),
            "word_bits": word_bits, "description": table.caption + ".",
        })
        if "class_name" in spec:
            data["class_name"] = spec["class_name"]
        if encodings:
            data.setdefault("encodings", {}).update(encodings)
        if table.kinds:
            data.setdefault("kinds", [])
            data["kinds"] += [k for k in table.kinds if k not in data["kinds"]]
            data.setdefault("layouts", []).append(
                {"provenance": _provenance(table), "kinds": list(table.kinds),
                 "doc": _doc_style(table), "fields": fields})
        else:
            data["provenance"] = _provenance(table)
            data["doc"] = _doc_style(table)
            data["fields"] = fields
        if any(f.get("implicit") for f in fields):
            data["notes"] = [_UNLISTED]
    for data in files.values():
        if "layouts" in data:
            # a kind of two tables (a newer layout of the same kinds) keeps the first
            seen: set[str] = set()
            kept = []
            for lay_data in data["layouts"]:
                if not set(lay_data["kinds"]) & seen:
                    kept.append(lay_data)
                    seen.update(lay_data["kinds"])
            data["layouts"] = kept
            data["kinds"] = [k for k in data["kinds"] if k in seen]
    return files


def _selected(section: Section, sections: Sequence[str]) -> bool:
    if not sections:
        return True
    return any(section.number == s or section.number.startswith(s + ".")
               or s.lower() in section.title.lower() for s in sections)


def import_syntax(doc: Document, sections: Sequence[str]) -> dict[str, dict[str, Any]]:
    """{section number: its syntax as data} of the instruction sections."""
    out: dict[str, dict[str, Any]] = {}
    for s in doc.sections:
        if not _selected(s, sections):
            continue
        ts = templates_of(s)
        if not ts:
            continue
        notes = [{"line": ln, "text": " ".join(t.replace("`", "").split())}
                 for ln, t in s.paragraphs("PTX ISA Notes", ("Target ISA Notes", "Examples"))]
        targets = [{"line": ln, "text": " ".join(t.replace("`", "").split())}
                   for ln, t in s.paragraphs("Target ISA Notes", ("Examples",))]
        out[s.number] = {
            "section": s.number, "title": s.title, "source": str(s.loc),
            "templates": [{"opcode": t.opcode, "operands": t.operands, "line": t.loc.line,
                           "instruction": t.head, "slots": {
                               n: t.sets[n].values for n in dict.fromkeys(t.slots())},
                           "literals": t.literals()} for t in ts],
            "ptx_isa_notes": notes, "target_isa_notes": targets}
    return out


def write_import(doc: Document, docs: Sequence[SpecDoc], spec_dir: Path, out: Path,
                 sections: Sequence[str]) -> dict[str, list[str]]:
    """Write the folder; {"descriptors": files, "syntax": files}."""
    import yaml

    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"--out: {out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(spec_dir / "schema", out / "schema")
    written: dict[str, list[str]] = {"descriptors": [], "syntax": []}
    for name, data in sorted(import_descriptors(doc, docs, sections).items()):
        p = out / "descriptors" / f"{name}.yaml"
        p.parent.mkdir(exist_ok=True)
        p.write_text("# yaml-language-server: $schema=../schema/descriptor.schema.json\n"
                     "# Imported by ptxgen doc import: review before merging.\n"
                     + yaml.safe_dump(data, sort_keys=False, width=100, allow_unicode=True))
        written["descriptors"].append(str(p))
    for number, data in sorted(import_syntax(doc, sections).items()):
        p = out / "syntax" / f"{number}.json"  # JSON: not a spec file the loader reads
        p.parent.mkdir(exist_ok=True)
        p.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        written["syntax"].append(str(p))
    return written
