"""Semantic checks the JSON Schema cannot express.

Bit ranges inside the word, no overlaps, no gaps, widths that match ranges,
values that fit their fields, identifiers valid (and not keywords) in every
target language, no duplicates, and every cross reference resolved.
"""

from __future__ import annotations

from typing import Any

from ptxgen.errors import Diagnostic
from ptxgen.load import Document, Path_
from ptxgen.names import (
    camel,
    identifier_problem,
    length_problem,
    member_identifiers,
    reserved_problem,
)
from ptxgen.spec_util import entry_kind, parse_bits, value_sets_for_kind


class _Checker:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.errors: list[Diagnostic] = []
        self.note_ids: set[str] = set()

    def err(self, path: Path_, msg: str, *, key: bool = False) -> None:
        self.errors.append(self.doc.source.diag(path, msg, key=key))

    def ident(self, path: Path_, name: str, what: str, role: str | None = None,
              **context: bool) -> None:
        """``name`` must be an identifier in every target language and, with ``role``,
        not a name the generated code uses itself (:data:`ptxgen.names.RESERVED`)."""
        problem = identifier_problem(name) or length_problem(name)
        if problem is None and role is not None:
            problem = reserved_problem(role, name, **context)
        if problem:
            self.err(path, f"{what}: {problem}")

    # -- notes ------------------------------------------------------------
    def collect_notes(self, data: dict[str, Any]) -> None:
        for i, note in enumerate(data.get("notes", [])):
            if note["id"] in self.note_ids:
                self.err(("notes", i, "id"), f"duplicate note id {note['id']!r}")
            self.note_ids.add(note["id"])

    def note_ref(self, path: Path_, ref: str) -> None:
        if ref not in self.note_ids:
            self.err(path, f"note {ref!r} is not defined in this file's notes "
                           f"(defined: {', '.join(sorted(self.note_ids)) or 'none'})")

    # -- layouts ------------------------------------------------------------
    def layout(self, data: dict[str, Any], entries: list[dict[str, Any]], base: Path_,
               kinds: list[str]) -> dict[str, dict[str, Any]]:
        word = data["word_bits"]
        owner: dict[int, int] = {}
        names: dict[str, int] = {}
        fields: dict[str, dict[str, Any]] = {}
        encodings = data.get("encodings", {})
        for i, entry in enumerate(entries):
            path = base + (i,)
            kind = entry_kind(entry)
            bits_key = {"field": "bits", "reserved": "reserved", "fixed": "fixed"}[kind]
            try:
                lo, hi = parse_bits(entry[bits_key])
            except ValueError as exc:
                self.err(path + (bits_key,), str(exc))
                continue
            if hi >= word:
                self.err(path + (bits_key,),
                         f"bits {lo}-{hi} lie outside the {word}-bit word (bits 0-{word - 1})")
                continue
            width = hi - lo + 1
            if "width" in entry and entry["width"] != width:
                self.err(path + ("width",),
                         f"width {entry['width']} does not match bits {lo}-{hi} ({width} bits)")
            for b in range(lo, hi + 1):
                if b in owner:
                    self.err(path + (bits_key,),
                             f"bit {b} overlaps {_describe_entry(entries[owner[b]])}")
                    break
            for b in range(lo, hi + 1):
                owner.setdefault(b, i)
            for ref_key in ("note", "implicit"):
                if ref_key in entry:
                    self.note_ref(path + (ref_key,), entry[ref_key])
            if kind == "fixed":
                if entry["value"] >= 1 << width:
                    self.err(path + ("value",),
                             f"fixed value {entry['value']:#x} does not fit in {width} bits")
                continue
            if kind != "field":
                continue
            name = entry["name"]
            self.ident(path + ("name",), name, "field name", "field",
                       zero_column_mask="zero_column_mask" in data,
                       enum=entry["type"] == "enum")
            if name in names:
                self.err(path + ("name",), f"duplicate field name {name!r} "
                                           f"(also entry #{names[name]})")
            names[name] = i
            fields[name] = entry
            self.field(entry, path, width, kinds, encodings)
        missing = [b for b in range(word) if b not in owner]
        if missing:
            self.err(base, "bits not accounted for (every bit must be a field, reserved "
                           f"or fixed): {_ranges(missing)}")
        return fields

    def field(self, entry: dict[str, Any], path: Path_, width: int, kinds: list[str],
              encodings: dict[str, Any]) -> None:
        ftype = entry["type"]
        if "per_kind" in entry:
            for k in entry["per_kind"]:
                if k not in kinds:
                    self.err(path + ("per_kind", k), f"kind {k!r} is not a kind of this layout "
                                                     f"({', '.join(kinds)})", key=True)
        src = entry.get("sources")
        if isinstance(src, dict):
            for k in src:
                if k not in kinds:
                    self.err(path + ("sources", k), f"kind {k!r} is not a kind of this layout "
                                                    f"({', '.join(kinds) or 'none'})", key=True)
        if ftype == "dimension":
            if "values" in entry or "per_kind" in entry:
                self.err(path + ("type",), "a dimension field takes no value list")
            return
        if ftype == "address":
            enc = entry["encoding"]
            if enc not in encodings:
                self.err(path + ("encoding",), f"unknown encoding {enc!r}; defined: "
                                               f"{', '.join(sorted(encodings)) or 'none'}")
            else:
                e = encodings[enc]
                if (e["mask"] >> e["shift"]) >= 1 << width:
                    self.err(path + ("encoding",),
                             f"encoding {enc!r} produces {(e['mask'] >> e['shift']).bit_length()} "
                             f"bits, the field has {width}")
            return
        if ftype == "flag" and width != 1:
            self.err(path + ("type",), f"a flag is 1 bit wide, this field has {width}")
        for kind in kinds or [""]:
            vs, vpath = value_sets_for_kind(entry, kind)
            if vs is None:
                self.err(path, f"field {entry['name']!r} has no values for kind {kind!r}")
                continue
            self.value_set(vs, path + vpath, width, ftype, entry["name"])

    def value_set(self, vs: Any, path: Path_, width: int, ftype: str, fname: str) -> None:
        limit = 1 << width
        if isinstance(vs, list):
            seen_v: dict[int, int] = {}
            seen_n: dict[str, int] = {}
            for j, v in enumerate(vs):
                if v["value"] >= limit:
                    self.err(path + (j, "value"), f"value {v['value']} does not fit in "
                                                  f"{width} bit(s) of field {fname!r}")
                if v["value"] in seen_v:
                    self.err(path + (j, "value"), f"duplicate value {v['value']}")
                seen_v[v["value"]] = j
                if ftype == "enum":
                    if "name" not in v:
                        self.err(path + (j,), "enum values need a 'name' (the CLI spelling)")
                        continue
                    if v["name"] in seen_n:
                        self.err(path + (j, "name"), f"duplicate value name {v['name']!r}")
                    seen_n[v["name"]] = j
                elif "name" in v:
                    self.err(path + (j, "name"), f"only enum values are named; {fname!r} is "
                                                 f"a {ftype} (its values are raw integers)")
            if ftype == "enum" and seen_n:
                for ident in member_identifiers(fname, list(seen_n)):
                    self.ident(path, ident, "enum member")
        elif "min" in vs:
            if vs["min"] > vs["max"]:
                self.err(path, f"min {vs['min']} > max {vs['max']}")
            if vs["max"] >= limit:
                self.err(path + ("max",), f"max {vs['max']} does not fit in {width} bit(s)")
            if ftype == "enum":
                self.err(path, "an enum field needs a list of named values")
        elif "one_of" in vs:
            if len(set(vs["one_of"])) != len(vs["one_of"]):
                self.err(path + ("one_of",), "duplicate values")
            for j, v in enumerate(vs["one_of"]):
                if v >= limit:
                    self.err(path + ("one_of", j), f"value {v} does not fit in {width} bit(s)")
            if ftype == "enum":
                self.err(path, "an enum field needs a list of named values")
        elif "na" in vs and vs["na"] >= limit:
            self.err(path + ("na",), f"value {vs['na']} does not fit in {width} bit(s)")

    # -- whole document ---------------------------------------------------
    def run(self) -> tuple[str, list[str], str]:
        data = self.doc.data
        self.collect_notes(data)
        name = data["descriptor"]
        self.ident(("descriptor",), name, "descriptor name", "descriptor")
        cls = data.get("class_name", camel(name))
        self.ident(("class_name",), cls, "class name", "class")
        all_fields: dict[str, dict[str, Any]] = {}
        kinds: list[str] = []
        if "layouts" in data:
            kinds = data["kinds"]
            placed: dict[str, int] = {}
            if len(set(kinds)) != len(kinds):
                self.err(("kinds",), "duplicate kinds")
            for k in kinds:
                self.ident(("kinds",), k, "kind")
            for li, layout in enumerate(data["layouts"]):
                for k in layout["kinds"]:
                    if k not in kinds:
                        self.err(("layouts", li, "kinds"), f"kind {k!r} is not declared in "
                                                           f"'kinds' ({', '.join(kinds)})")
                    elif k in placed:
                        self.err(("layouts", li, "kinds"), f"kind {k!r} already has the layout "
                                                           f"of layouts[{placed[k]}]")
                    placed[k] = li
                self.ident(("layouts", li), camel(name) + camel(layout["kinds"][0]), "class name",
                           "class")
                all_fields.update(self.layout(data, layout["fields"], ("layouts", li, "fields"),
                                              layout["kinds"]))
            for k in kinds:
                if k not in placed:
                    self.err(("kinds",), f"kind {k!r} has no layout")
        else:
            all_fields = self.layout(data, data["fields"], ("fields",), [])
        self.refs(data, all_fields)
        self.variants(data, name, cls, kinds)
        return name, kinds, cls

    def variants(self, data: dict[str, Any], name: str, cls: str, kinds: list[str]) -> None:
        """``variants``: layouts that replace the baseline on some targets. Each tiles the
        word like the baseline; with ``layouts`` it lists its kinds, without it the
        descriptor has no kinds either; names, suffixes and classes are unique."""
        names: dict[str, int] = {}
        suffixes: dict[str, int] = {}
        for vi, v in enumerate(data.get("variants", ())):
            base: Path_ = ("variants", vi)
            self.ident(base + ("name",), v["name"], "variant name")
            if v["name"] in names:
                self.err(base + ("name",), f"duplicate variant name {v['name']!r} (also "
                                           f"variants[{names[v['name']]}])")
            names.setdefault(v["name"], vi)
            if v["class_suffix"] in suffixes:
                self.err(base + ("class_suffix",), f"duplicate class suffix "
                                                   f"{v['class_suffix']!r} (also variants"
                                                   f"[{suffixes[v['class_suffix']]}])")
            suffixes.setdefault(v["class_suffix"], vi)
            self.note_ref(base + ("evidence", "note"), v["evidence"]["note"])
            merged = {**data, "encodings": {**data.get("encodings", {}),
                                            **v.get("encodings", {})}}
            if "layouts" in v:
                if "layouts" not in data:
                    self.err(base + ("layouts",), f"{name} has no MMA kinds; a variant of it "
                                                  "takes 'fields', not 'layouts'", key=True)
                    continue
                vkinds = v["kinds"]
                if len(set(vkinds)) != len(vkinds):
                    self.err(base + ("kinds",), "duplicate kinds")
                placed: dict[str, int] = {}
                for li, layout in enumerate(v["layouts"]):
                    for k in layout["kinds"]:
                        if k not in vkinds:
                            self.err(base + ("layouts", li, "kinds"),
                                     f"kind {k!r} is not declared in this variant's 'kinds' "
                                     f"({', '.join(vkinds)})")
                        elif k in placed:
                            self.err(base + ("layouts", li, "kinds"),
                                     f"kind {k!r} already has the layout of "
                                     f"layouts[{placed[k]}]")
                        placed[k] = li
                        self.ident(base + ("layouts", li, "kinds"), k, "kind")
                        self.ident(base + ("layouts", li),
                                   camel(name) + v["class_suffix"] + camel(k), "class name",
                                   "class")
                    self.layout(merged, layout["fields"], base + ("layouts", li, "fields"),
                                layout["kinds"])
                for k in vkinds:
                    if k not in placed:
                        self.err(base + ("kinds",), f"kind {k!r} has no layout")
            else:
                if "layouts" in data:
                    self.err(base + ("fields",), f"{name} has MMA kinds ({', '.join(kinds)}); "
                                                 "a variant of it takes 'kinds' and 'layouts'",
                             key=True)
                    continue
                self.ident(base, cls + v["class_suffix"], "class name", "class")
                self.layout(merged, v["fields"], base + ("fields",), [])

    def refs(self, data: dict[str, Any], fields: dict[str, dict[str, Any]]) -> None:
        def need(path: Path_, fname: str, ftype: str | None = None) -> None:
            if fname not in fields:
                self.err(path, f"no field named {fname!r}")
            elif ftype and fields[fname]["type"] != ftype:
                self.err(path, f"field {fname!r} is a {fields[fname]['type']}, not a {ftype}")

        if "alignment" in data:
            for i, f in enumerate(data["alignment"]["fields"]):
                need(("alignment", "fields", i), f, "address")
        if "swizzle_patterns" in data:
            sp = data["swizzle_patterns"]
            need(("swizzle_patterns", "field"), sp["field"], "enum")
            need(("swizzle_patterns", "base_offset_field"), sp["base_offset_field"])
            names = {v.get("name") for v in fields.get(sp["field"], {}).get("values", [])}
            for i, pat in enumerate(sp["patterns"]):
                if pat["swizzle"] not in names:
                    self.err(("swizzle_patterns", "patterns", i, "swizzle"),
                             f"{pat['swizzle']!r} is not a value of field {sp['field']!r}")
                if pat["boundary"] & (pat["boundary"] - 1):
                    self.err(("swizzle_patterns", "patterns", i, "boundary"),
                             "boundary must be a power of two")
                if "implicit" in pat:
                    self.note_ref(("swizzle_patterns", "patterns", i, "implicit"), pat["implicit"])
        if "zero_column_mask" in data:
            self.zero_column_mask(data["zero_column_mask"], fields, need)

    def zero_column_mask(self, z: dict[str, Any], fields: dict[str, dict[str, Any]],
                         need: Any) -> None:
        base: Path_ = ("zero_column_mask",)
        for key in ("first_span_fields", "start_count_fields"):
            for i, f in enumerate(z[key]):
                need(base + (key, i), f)
        for key in ("enable_field", "ones_span_field", "zeros_span_field", "shift_field"):
            need(base + (key,), z[key])
        counts = {s["m"]: s["count"] for s in z["submasks"]}
        most = max(counts.values())
        for key in ("first_span_fields", "start_count_fields"):
            if len(z[key]) != most:
                self.err(base + (key,), f"{len(z[key])} fields for at most {most} sub-masks")
        for i, ex in enumerate(z["examples"]):
            p = base + ("examples", i)
            if ex["m"] not in counts:
                self.err(p + ("m",), f"M = {ex['m']} has no sub-mask breakup "
                                     f"({', '.join(map(str, counts))})")
            elif len(ex["masks"]) != counts[ex["m"]]:
                self.err(p + ("masks",), f"M = {ex['m']} has {counts[ex['m']]} sub-masks, "
                                         f"the example lists {len(ex['masks'])}")
            for f, v in ex["fields"].items():
                if f not in fields:
                    self.err(p + ("fields", f), f"no field named {f!r}", key=True)
                else:
                    lo, hi = parse_bits(fields[f]["bits"])
                    if v >= 1 << (hi - lo + 1):
                        self.err(p + ("fields", f), f"value {v} does not fit field {f!r}")


def _describe_entry(entry: dict[str, Any]) -> str:
    """How an overlap names the entry it overlaps: the field, or the reserved/fixed bits."""
    kind = entry_kind(entry)
    if kind == "field":
        return f"field {entry['name']!r} (bits {entry['bits']})"
    return f"the {kind} bits {entry[kind]}"


def _ranges(bits: list[int]) -> str:
    out: list[str] = []
    start = prev = bits[0]
    for b in bits[1:] + [-2]:
        if b != prev + 1:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = b
        prev = b
    return ", ".join(out)


def check_semantics(docs: list[Document]) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    seen_names: dict[str, str] = {}
    seen_classes: dict[str, str] = {}
    for doc in docs:
        checker = _Checker(doc)
        try:
            name, kinds, cls = checker.run()
        except (KeyError, TypeError, ValueError) as exc:  # pragma: no cover - schema guards
            checker.err((), f"malformed spec: {exc!r}")
            errors.extend(checker.errors)
            continue
        errors.extend(checker.errors)
        where = doc.display
        if name in seen_names:
            errors.append(doc.source.diag(("descriptor",), f"descriptor {name!r} is also "
                                                           f"defined in {seen_names[name]}"))
        seen_names[name] = where
        classes = [camel(name) + camel(k) for k in kinds] if kinds else [cls]
        for v in doc.data.get("variants", ()):
            classes += ([camel(name) + v["class_suffix"] + camel(k) for k in v.get("kinds", ())]
                        if kinds else [cls + v["class_suffix"]])
        for c in classes:
            if c in seen_classes:
                errors.append(doc.source.diag(("descriptor",), f"class {c!r} is also generated "
                                                               f"from {seen_classes[c]}"))
            seen_classes[c] = where
    return errors
