"""Stage 3 - model: typed, immutable view of a validated spec.

Every derived fact (bit masks, shifts, allowed codes, identifiers, value
domains, the zero-column sub-mask coverage, ...) is computed here once, so the
emitters and templates only loop and substitute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ptxgen.instructions import InstructionSet, build_instruction_set
from ptxgen.load import Document
from ptxgen.names import camel, member_identifiers
from ptxgen.spec_util import entry_kind, parse_bits, value_sets_for_kind


@dataclass(frozen=True)
class Source:
    """Where a model element was written: spec file (relative) and line."""

    file: str
    line: int


@dataclass(frozen=True)
class Note:
    id: str
    seeds: tuple[str, ...]
    text: str
    source: Source


@dataclass(frozen=True)
class Provenance:
    section: str
    table: str
    caption: str
    seeds: tuple[str, ...]


@dataclass(frozen=True)
class Option:
    """One allowed raw code of a field, with the table's label and CLI name."""

    value: int
    label: str | None
    name: str | None
    ident: str | None


@dataclass(frozen=True)
class Encoding:
    name: str
    formula: str
    mask: int
    shift: int


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    msb: int
    description: str
    label: str | None
    type: str  # enum | flag | int | dimension | address
    options: tuple[Option, ...]  # enum / flag / labelled int values
    range: tuple[int, int] | None  # int given as min..max
    na: bool  # "not applicable" for this kind: the one allowed code is forced
    dim_symbol: str | None
    dim_shift: int
    encoding: Encoding | None
    alignment: int
    note: str | None
    source: Source
    doc_value_style: str | None = None
    doc_invalid_note: bool = False

    # -- derived bit facts -------------------------------------------------
    @property
    def width(self) -> int:
        return self.msb - self.lsb + 1

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    @property
    def word_mask(self) -> int:
        return self.mask << self.lsb

    @property
    def value_shift(self) -> int:
        """Low bits of the user value the encoding drops (N >> 3, matrix-descriptor-encode)."""
        if self.type == "dimension":
            return self.dim_shift
        if self.type == "address" and self.encoding is not None:
            return self.encoding.shift
        return 0

    @property
    def value_mask(self) -> int | None:
        """Mask applied to the user value before the shift (matrix-descriptor-encode)."""
        if self.type == "address" and self.encoding is not None:
            return self.encoding.mask
        return None

    @property
    def enum_class(self) -> str | None:
        return camel(self.name) if self.type == "enum" else None

    @property
    def allowed_codes(self) -> tuple[int, ...] | None:
        """Raw codes allowed in the word; None when any code in the range is fine."""
        if self.options:
            return tuple(o.value for o in self.options)
        if self.range is not None:
            if self.range == (0, self.mask):
                return None
            return tuple(range(self.range[0], self.range[1] + 1))
        if self.type == "address":
            return None
        if self.type == "dimension":
            return None
        return None

    @property
    def user_min(self) -> int:
        if self.type == "dimension":
            return 0
        if self.type == "address":
            return 0
        codes = self.allowed_codes
        return min(codes) if codes else 0

    @property
    def user_max(self) -> int:
        """Largest value a user may give (dimension / byte value / raw code)."""
        if self.type == "dimension":
            return self.mask << self.dim_shift
        if self.type == "address":
            assert self.encoding is not None
            return self.encoding.mask & ~((1 << self.encoding.shift) - 1)
        codes = self.allowed_codes
        return max(codes) if codes else self.mask

    @property
    def user_step(self) -> int:
        if self.type == "dimension":
            return 1 << self.dim_shift
        if self.type == "address":
            return self.alignment
        return 1

    @property
    def is_contiguous(self) -> bool:
        codes = self.allowed_codes
        return codes is None or list(codes) == list(range(min(codes), max(codes) + 1))

    @property
    def default(self) -> int | None:
        """0 when 0 is allowed (the CLI's 'fields left out are 0'); else None."""
        codes = self.allowed_codes
        if codes is None or 0 in codes:
            return 0
        return None

    @property
    def invalid_codes(self) -> tuple[int, ...]:
        """Codes that fit the field but that no kind of this layout allows."""
        codes = self.allowed_codes
        if codes is None:
            return ()
        return tuple(c for c in range(self.mask + 1) if c not in codes)

    @property
    def names(self) -> dict[str, int]:
        return {o.name: o.value for o in self.options if o.name}

    @property
    def domain(self) -> str:
        """Human description of what the field allows, for error messages."""
        if self.type == "enum":
            return "one of " + ", ".join(f"{o.name} ({o.value})" for o in self.options)
        if self.type == "dimension":
            return (f"a multiple of {self.user_step} from 0 to {self.user_max} "
                    f"(encoded as {self.dim_symbol} >> {self.dim_shift})")
        if self.type == "address":
            return (f"a byte value that is a multiple of {self.user_step} from 0 to "
                    f"{self.user_max:#x}")
        codes = self.allowed_codes
        if codes is None:
            return f"0 to {self.mask}"
        if len(codes) == 1:
            return f"only {codes[0]}" + (" (not applicable to this kind)" if self.na else "")
        if self.is_contiguous:
            return f"{min(codes)} to {max(codes)}"
        return "one of " + ", ".join(str(c) for c in codes)


@dataclass(frozen=True)
class Reserved:
    lsb: int
    msb: int
    implicit: str | None
    note: str | None
    source: Source

    @property
    def width(self) -> int:
        return self.msb - self.lsb + 1

    @property
    def word_mask(self) -> int:
        return ((1 << self.width) - 1) << self.lsb


@dataclass(frozen=True)
class Fixed:
    lsb: int
    msb: int
    value: int
    description: str
    implicit: str | None
    note: str | None
    source: Source

    @property
    def width(self) -> int:
        return self.msb - self.lsb + 1

    @property
    def word_mask(self) -> int:
        return ((1 << self.width) - 1) << self.lsb

    @property
    def word_value(self) -> int:
        return self.value << self.lsb


Entry = Field | Reserved | Fixed


@dataclass(frozen=True)
class SwizzlePattern:
    swizzle: str  # CLI name of the swizzle value
    code: int
    label: str
    boundary: int
    implicit: str | None


@dataclass(frozen=True)
class SwizzlePatterns:
    """Table 41: where each swizzle mode's repeating pattern starts."""

    provenance: Provenance
    field: str
    base_offset_field: str
    formula: str
    shift: int
    mask: int
    patterns: tuple[SwizzlePattern, ...]


@dataclass(frozen=True)
class SubMask:
    m: int
    breakup: str
    count: int
    max_column_shift: int
    # coverage[i] = (first, last) column of sub-mask i as fractions of N
    coverage: tuple[tuple[Fraction, Fraction], ...]


@dataclass(frozen=True)
class MaskExample:
    title: str
    m: int
    fields: tuple[tuple[str, int], ...]
    seed_row: tuple[str, ...]
    masks: tuple[str, ...]


#: The largest N of a spec revision whose zero_column_mask has no ``max_n`` (older
#: revisions that ``ptxgen diff`` reads): what the C++ headers of those revisions held
#: (every N the instruction descriptor's 6-bit N >> 3 can encode fits in 512).
ZCM_MAX_N_BEFORE = 512


@dataclass(frozen=True)
class ZeroColumnMask:
    submasks: tuple[SubMask, ...]
    first_span_fields: tuple[str, ...]
    start_count_fields: tuple[str, ...]
    enable_field: str
    ones_span_field: str
    zeros_span_field: str
    shift_field: str
    examples: tuple[MaskExample, ...]
    max_n: int  # the largest N (columns of B) a mask covers


@dataclass(frozen=True)
class DocStyle:
    columns: tuple[str, ...]
    bits_order: str
    value_style: str


@dataclass(frozen=True)
class Layout:
    """One word layout for one kind: the unit that becomes one generated class."""

    descriptor: str
    kind: str | None
    class_name: str
    title: str
    description: str
    word_bits: int
    entries: tuple[Entry, ...]  # in bit order
    provenance: Provenance
    doc: DocStyle
    spec_file: str
    swizzle: SwizzlePatterns | None = None
    zero_column_mask: ZeroColumnMask | None = None

    @property
    def hex_digits(self) -> int:
        return self.word_bits // 4

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(e for e in self.entries if isinstance(e, Field))

    @property
    def reserved(self) -> tuple[Reserved, ...]:
        return tuple(e for e in self.entries if isinstance(e, Reserved))

    @property
    def fixed(self) -> tuple[Fixed, ...]:
        return tuple(e for e in self.entries if isinstance(e, Fixed))

    @property
    def reserved_mask(self) -> int:
        m = 0
        for r in self.reserved:
            m |= r.word_mask
        return m

    @property
    def fixed_mask(self) -> int:
        m = 0
        for f in self.fixed:
            m |= f.word_mask
        return m

    @property
    def fixed_value(self) -> int:
        v = 0
        for f in self.fixed:
            v |= f.word_value
        return v

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


@dataclass(frozen=True)
class Table:
    """A source table as the docs render it: one or more kinds side by side."""

    provenance: Provenance
    doc: DocStyle
    layouts: tuple[Layout, ...]  # one per kind column (a single one if no kinds)


@dataclass(frozen=True)
class Descriptor:
    name: str
    title: str
    description: str
    word_bits: int
    spec_file: str
    kinds: tuple[str, ...]
    layouts: tuple[Layout, ...]
    tables: tuple[Table, ...]
    notes: tuple[Note, ...]

    def layout(self, kind: str | None = None) -> Layout:
        for lay in self.layouts:
            if lay.kind == kind:
                return lay
        raise KeyError(kind)


@dataclass(frozen=True)
class Spec:
    descriptors: tuple[Descriptor, ...]
    spec_files: tuple[str, ...] = field(default=())
    # The instruction side (spec/targets.yaml + spec/instructions): see
    # ptxgen.instructions. None when the spec has no instruction files.
    instructions: InstructionSet | None = None

    @property
    def layouts(self) -> tuple[Layout, ...]:
        return tuple(lay for d in self.descriptors for lay in d.layouts)

    def descriptor(self, name: str) -> Descriptor:
        for d in self.descriptors:
            if d.name == name:
                return d
        raise KeyError(name)


# ---------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------

def _prov(p: dict[str, Any]) -> Provenance:
    return Provenance(str(p["section"]), str(p["table"]), p["caption"], tuple(p["seeds"]))


def _doc(d: dict[str, Any]) -> DocStyle:
    return DocStyle(tuple(d["columns"]), d["bits_order"], d["value_style"])


class _Builder:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.data: dict[str, Any] = doc.data

    def src(self, path: tuple[str | int, ...]) -> Source:
        return Source(self.doc.rel, self.doc.source.locate(path)[0])

    def entries(self, raw: list[dict[str, Any]], base: tuple[str | int, ...],
                kind: str | None) -> tuple[Entry, ...]:
        encodings = {k: Encoding(k, v["formula"], v["mask"], v["shift"])
                     for k, v in self.data.get("encodings", {}).items()}
        align = self.data.get("alignment", {})
        aligned = set(align.get("fields", []))
        out: list[Entry] = []
        for i, e in enumerate(raw):
            path = base + (i,)
            what = entry_kind(e)
            if what == "reserved":
                lo, hi = parse_bits(e["reserved"])
                out.append(Reserved(lo, hi, e.get("implicit"), e.get("note"), self.src(path)))
                continue
            if what == "fixed":
                lo, hi = parse_bits(e["fixed"])
                out.append(Fixed(lo, hi, e["value"], e["description"], e.get("implicit"),
                                 e.get("note"), self.src(path)))
                continue
            lo, hi = parse_bits(e["bits"])
            options: tuple[Option, ...] = ()
            rng: tuple[int, int] | None = None
            na = False
            vs, _ = value_sets_for_kind(e, kind or "")
            if isinstance(vs, list):
                names = [v["name"] for v in vs if "name" in v]
                idents = iter(member_identifiers(e["name"], names)) if names else iter(())
                options = tuple(Option(v["value"], v.get("label"), v.get("name"),
                                       next(idents) if "name" in v else None) for v in vs)
            elif isinstance(vs, dict) and "min" in vs:
                rng = (vs["min"], vs["max"])
            elif isinstance(vs, dict) and "one_of" in vs:
                options = tuple(Option(v, None, None, None) for v in vs["one_of"])
            elif isinstance(vs, dict) and "na" in vs:
                options = (Option(vs["na"], None, None, None),)
                na = True
            dim = e.get("dimension", {})
            enc = encodings.get(e.get("encoding", ""))
            out.append(Field(
                name=e["name"], lsb=lo, msb=hi, description=" ".join(e["description"].split()),
                label=e.get("label"), type=e["type"], options=options, range=rng, na=na,
                dim_symbol=dim.get("symbol"), dim_shift=dim.get("shift", 0), encoding=enc,
                alignment=align.get("bytes", 1) if e["name"] in aligned else
                (1 << enc.shift if enc else 1),
                note=e.get("note"), source=self.src(path),
                doc_value_style=e.get("doc_value_style"),
                doc_invalid_note=e.get("doc_invalid_note", False)))
        return tuple(sorted(out, key=lambda x: x.lsb))

    def build(self) -> Descriptor:
        d = self.data
        name = d["descriptor"]
        notes = tuple(Note(n["id"], tuple(n["seeds"]), " ".join(n["text"].split()),
                           self.src(("notes", i))) for i, n in enumerate(d.get("notes", [])))
        common = dict(descriptor=name, title=d["title"],
                      description=" ".join(d["description"].split()),
                      word_bits=d["word_bits"], spec_file=self.doc.rel)
        layouts: list[Layout] = []
        tables: list[Table] = []
        if "layouts" in d:
            by_kind: dict[str, Layout] = {}
            for li, raw in enumerate(d["layouts"]):
                prov, doc = _prov(raw["provenance"]), _doc(raw["doc"])
                group = []
                for k in raw["kinds"]:
                    lay = Layout(kind=k, class_name=camel(name) + camel(k),
                                 entries=self.entries(raw["fields"], ("layouts", li, "fields"), k),
                                 provenance=prov, doc=doc, **common)
                    by_kind[k] = lay
                    group.append(lay)
                tables.append(Table(prov, doc, tuple(group)))
            layouts = [by_kind[k] for k in d["kinds"]]
        else:
            lay = Layout(kind=None, class_name=d.get("class_name", camel(name)),
                         entries=self.entries(d["fields"], ("fields",), None),
                         provenance=_prov(d["provenance"]), doc=_doc(d["doc"]),
                         swizzle=self.swizzle(d), zero_column_mask=self.zcm(d),
                         **common)
            layouts = [lay]
            tables.append(Table(lay.provenance, lay.doc, (lay,)))
        return Descriptor(name=name, title=d["title"], description=common["description"],
                          word_bits=d["word_bits"], spec_file=self.doc.rel,
                          kinds=tuple(d.get("kinds", ())), layouts=tuple(layouts),
                          tables=tuple(tables), notes=notes)

    def swizzle(self, d: dict[str, Any]) -> SwizzlePatterns | None:
        sp = d.get("swizzle_patterns")
        if not sp:
            return None
        fld = next(f for f in d["fields"] if f.get("name") == sp["field"])
        codes = {v["name"]: v["value"] for v in fld["values"]}
        pats = tuple(SwizzlePattern(p["swizzle"], codes[p["swizzle"]], p["label"], p["boundary"],
                                    p.get("implicit")) for p in sp["patterns"])
        return SwizzlePatterns(_prov(sp["provenance"]), sp["field"], sp["base_offset_field"],
                               sp["formula"], sp["shift"], sp["mask"], pats)

    def zcm(self, d: dict[str, Any]) -> ZeroColumnMask | None:
        z = d.get("zero_column_mask")
        if not z:
            return None
        subs = tuple(SubMask(s["m"], s["breakup"], s["count"], s["max_column_shift"],
                             tuple((Fraction(i, s["count"]), Fraction(i + 1, s["count"]))
                                   for i in range(s["count"])))
                     for s in z["submasks"])
        exs = tuple(MaskExample(e["title"], e["m"], tuple(sorted(e["fields"].items())),
                                tuple(e.get("seed_row", ())), tuple(e["masks"]))
                    for e in z["examples"])
        return ZeroColumnMask(subs, tuple(z["first_span_fields"]), tuple(z["start_count_fields"]),
                              z["enable_field"], z["ones_span_field"], z["zeros_span_field"],
                              z["shift_field"], exs, z.get("max_n", ZCM_MAX_N_BEFORE))


def build_model(docs: list[Document]) -> Spec:
    """Build the model from validated documents (validation must have passed)."""
    from ptxgen.validate import schema_name

    descriptor_docs = [d for d in docs if schema_name(d) == "descriptor.schema.json"]
    descriptors = tuple(_Builder(doc).build() for doc in descriptor_docs)
    targets = [d for d in docs if schema_name(d) == "targets.schema.json"]
    instr_docs = sorted((d for d in docs if schema_name(d) == "instructions.schema.json"),
                        key=lambda d: d.rel)
    iset = (build_instruction_set(targets[0].data, [(d.rel, d.data) for d in instr_docs])
            if targets and instr_docs else None)
    return Spec(tuple(sorted(descriptors, key=lambda d: d.name)),
                tuple(sorted(doc.rel for doc in docs)), iset)
