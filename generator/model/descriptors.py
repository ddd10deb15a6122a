"""The descriptor model: the word layouts of ``spec/descriptors/*.yaml``.

Every derived fact (bit masks, shifts, allowed codes, identifiers, value
domains, the zero-column sub-mask coverage, the shapes the instructions that take
a descriptor allow, ...) is computed here once, so the emitters and templates only
loop and substitute.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ptxgen.model.instructions import InstructionSet
from ptxgen.names import camel, member_identifiers
from ptxgen.spec_util import (
    cached_property,
    entry_kind,
    parse_bits,
    value_sets_for_kind,
    vkey,
)

if TYPE_CHECKING:
    from ptxgen.load import Document


def progressions(values: tuple[int, ...] | list[int]) -> list[tuple[int, int, int]]:
    """``values`` (sorted, distinct) as few arithmetic runs ``(first, last, step)`` as a
    greedy left-to-right split gives: 8, 16, 24, 32, 48, 64 -> (8, 32, 8), (48, 64, 16)."""
    vals = sorted(set(values))
    out: list[tuple[int, int, int]] = []
    i = 0
    while i < len(vals):
        if i + 1 == len(vals):
            out.append((vals[i], vals[i], 1))
            break
        step = vals[i + 1] - vals[i]
        j = i + 1
        while j + 1 < len(vals) and vals[j + 1] - vals[j] == step:
            j += 1
        if j - i + 1 == 2 and j + 1 < len(vals):  # a pair: keep it for the next run
            out.append((vals[i], vals[i], 1))
            i += 1
            continue
        out.append((vals[i], vals[j], step))
        i = j + 1
    return out


def values_text(values: tuple[int, ...] | list[int]) -> str:
    """Human text for a set of numbers: '32, 64, 128 or 256', '8 to 256 in steps of 8',
    '8 to 32 in steps of 8 or 48 to 256 in steps of 16'."""
    parts: list[str] = []
    for first, last, step in progressions(values):
        if (last - first) // step >= 3:
            parts.append(f"{first} to {last} in steps of {step}")
        else:
            parts.extend(str(v) for v in range(first, last + 1, step))
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


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
    ptx_isa: str | None = None  # the PTX ISA document the numbers are from (None: 9.0)
    document: str = ""  # the PTX ISA text (section, URL) when no seed holds the table


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
    # The values the shapes of its kind allow (see Layout.shapes), and what they are (the
    # other dimension and the instruction); None: no shape rule.
    shape_values: tuple[int, ...] | None = None
    shape_text: str = ""
    # Of a variant layout's field: how it is known (spec ``sources``: dsl-compiler,
    # dsl-classes, ptxas, cutlass, third-party); empty for the baseline tables.
    sources: tuple[str, ...] = ()
    # An address field that takes a 32-bit shared-memory address: the encoding's mask drops
    # the bits above it (spec ``shared_address``).
    shared_address: bool = False

    @property
    def third_party_only(self) -> bool:
        return self.sources == ("third-party",)

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

    @cached_property
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
        if self.type == "address" and self.shared_address:
            return 0xFFFFFFFF & ~(self.user_step - 1)
        if self.type == "address":
            return self.window_max
        codes = self.allowed_codes
        return max(codes) if codes else self.mask

    @property
    def window_max(self) -> int:
        """Largest value the encoding keeps whole (an address field's mask, aligned): the
        values that decode to themselves."""
        if self.type != "address":
            return self.user_max
        assert self.encoding is not None
        return self.encoding.mask & ~((1 << self.encoding.shift) - 1)

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
        if self.shape_values is not None and 0 not in self.shape_values:
            return None
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
        if self.type == "dimension" and self.shape_values is not None:
            return (f"{values_text(self.shape_values)} (encoded as {self.dim_symbol} >> "
                    f"{self.dim_shift}; {self.shape_text})")
        if self.type == "dimension":
            return (f"a multiple of {self.user_step} from 0 to {self.user_max} "
                    f"(encoded as {self.dim_symbol} >> {self.dim_shift})")
        if self.type == "address" and self.shared_address:
            assert self.encoding is not None
            return (f"a shared-memory address that is a multiple of {self.user_step} "
                    f"(32 bits; the encoding keeps bits {self.encoding.shift} to "
                    f"{self.encoding.mask.bit_length() - 1}, up to {self.window_max:#x})")
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
class Shapes:
    """The (first, second) dimension pairs a layout's kind allows, e.g. (M, N): the union of
    the shapes of every ``shapes`` descriptor rule of the instructions that take this
    descriptor, for this kind (``m`` = 256 is allowed because .cta_group::2 has it)."""

    fields: tuple[str, str]
    table: tuple[tuple[int, tuple[int, ...]], ...]  # first value -> allowed second values
    rules: tuple[str, ...]  # "instruction [rule id]", where the shapes come from
    source: str  # human text: which instruction's shapes these are

    @property
    def first_values(self) -> tuple[int, ...]:
        return tuple(v for v, _ in self.table)

    @property
    def second_values(self) -> tuple[int, ...]:
        return tuple(sorted({n for _, ns in self.table for n in ns}))

    def seconds(self, first: int) -> tuple[int, ...]:
        return dict(self.table).get(first, ())

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        return tuple((a, b) for a, bs in self.table for b in bs)

    @property
    def base(self) -> tuple[int, int]:
        """A representative shape (what tests complete a descriptor with): the smallest
        first dimension with the most second dimensions, and its smallest second one."""
        first, seconds = max(self.table, key=lambda row: (len(row[1]), -row[0]))
        return first, seconds[0]

    @property
    def groups(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
        """(first values, their second values), first values with equal seconds merged."""
        merged: dict[tuple[int, ...], list[int]] = {}
        for first, seconds in self.table:
            merged.setdefault(seconds, []).append(first)
        return tuple((tuple(firsts), seconds) for seconds, firsts in merged.items())


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
    shapes: Shapes | None = None
    # A variant layout (spec ``variants``): its name, the PTX ISA version it exists from
    # and the targets it applies to; None / () for the baseline layout.
    variant: str | None = None
    since: str | None = None
    targets: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """Where the layout applies, for messages: '' for the baseline."""
        if self.variant is None:
            return ""
        return f"{', '.join(self.targets)} from PTX ISA {self.since}"

    @property
    def hex_digits(self) -> int:
        return self.word_bits // 4

    @cached_property
    def fields(self) -> tuple[Field, ...]:
        return tuple(e for e in self.entries if isinstance(e, Field))

    @cached_property
    def reserved(self) -> tuple[Reserved, ...]:
        return tuple(e for e in self.entries if isinstance(e, Reserved))

    @cached_property
    def fixed(self) -> tuple[Fixed, ...]:
        return tuple(e for e in self.entries if isinstance(e, Fixed))

    @property
    def reserved_mask(self) -> int:
        return _bits(r.word_mask for r in self.reserved)

    @property
    def fixed_mask(self) -> int:
        return _bits(f.word_mask for f in self.fixed)

    @property
    def fixed_value(self) -> int:
        return _bits(f.word_value for f in self.fixed)

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
class Evidence:
    """Where a variant's availability and bits come from (graded)."""

    ptxas: str
    oracle: str | None
    third_party: str | None
    note: str


@dataclass(frozen=True)
class Variant:
    """Layouts that replace the baseline on some targets from some PTX ISA version."""

    name: str
    class_suffix: str
    since: str
    targets: tuple[str, ...]
    kinds: tuple[str, ...]
    layouts: tuple[Layout, ...]
    tables: tuple[Table, ...]
    evidence: Evidence
    source: Source

    def layout(self, kind: str | None = None) -> Layout:
        for lay in self.layouts:
            if lay.kind == kind:
                return lay
        raise KeyError(kind)

    def applies(self, target: str, version: str | None = None) -> bool:
        """Whether this variant is the layout of ``target`` at PTX ISA ``version`` (None:
        the newest)."""
        return target in self.targets and (version is None or vkey(version) >= vkey(self.since))


class LayoutError(LookupError):
    """A descriptor (kind) that does not exist for a target / PTX ISA version."""


@dataclass(frozen=True)
class Descriptor:
    name: str
    title: str
    description: str
    word_bits: int
    spec_file: str
    kinds: tuple[str, ...]
    layouts: tuple[Layout, ...]  # the baseline: no target given, and every other target
    tables: tuple[Table, ...]
    notes: tuple[Note, ...]
    # The PTX ISA version it appears in (None: at every version), and the later versions
    # of some kinds (``since`` of the spec).
    since: str | None = None
    kinds_since: tuple[tuple[str, str], ...] = ()
    variants: tuple[Variant, ...] = ()

    @property
    def all_layouts(self) -> tuple[Layout, ...]:
        """The baseline layouts, then every variant's."""
        return self.layouts + tuple(lay for v in self.variants for lay in v.layouts)

    @property
    def all_kinds(self) -> tuple[str, ...]:
        out = list(self.kinds)
        out += [k for v in self.variants for k in v.kinds if k not in out]
        return tuple(out)

    def first_layout(self, kind: str | None) -> Layout:
        """The baseline layout of ``kind``, or the first variant's where only a variant
        has it."""
        for lay in self.all_layouts:
            if lay.kind == kind:
                return lay
        raise KeyError(kind)

    def variant_for(self, target: str | None, version: str | None = None) -> Variant | None:
        """The variant whose layouts apply to ``target`` at ``version``; None: the
        baseline."""
        if target is None:
            return None
        return next((v for v in self.variants if v.applies(target, version)), None)

    def layout_where(self, variant: Variant | None) -> str:
        """Where the layouts of ``variant`` (None: the baseline tables) apply, for
        messages: 'the sm107 layout of sm_107a, sm_107f from PTX ISA 9.4', 'the baseline
        tables (every target but sm_107a, sm_107f)'."""
        if variant is not None:
            return (f"the {variant.name} layout of {', '.join(variant.targets)} from PTX ISA "
                    f"{variant.since}")
        others = [t for v in self.variants for t in v.targets if t]
        return "the baseline tables" + (f" (every target but {', '.join(others)})"
                                        if others else "")

    def placements(self, kind: str | None) -> tuple[tuple[Variant | None, Layout | None], ...]:
        """Where ``kind`` is read how: (variant, its layout of ``kind`` or None where it has
        none) for every variant, then (None, the baseline layout or None)."""
        out: list[tuple[Variant | None, Layout | None]] = [
            (v, next((lay for lay in v.layouts if lay.kind == kind), None))
            for v in self.variants]
        out.append((None, next((lay for lay in self.layouts if lay.kind == kind), None)))
        return tuple(out)

    def layout(self, kind: str | None = None, target: str | None = None,
               version: str | None = None) -> Layout:
        """The layout of ``kind`` as of PTX ISA ``version`` (None: the newest) for
        ``target`` (None: the baseline tables). KeyError for a kind the descriptor never
        has; LayoutError (naming where it exists) for one that does not exist there."""
        variant = self.variant_for(target, version)
        layouts = variant.layouts if variant else self.layouts
        for lay in layouts:
            if lay.kind == kind:
                return lay
        if kind not in self.all_kinds and kind is not None:
            raise KeyError(kind)
        where = (f"in the {variant.name} layout of {', '.join(variant.targets)} from PTX ISA "
                 f"{variant.since}" if variant else
                 f"on {target} at PTX ISA {version}" if target and version else
                 f"on {target}" if target else "in the baseline tables")
        exists = [f"{', '.join(v.targets)} from PTX ISA {v.since}" for v in self.variants
                  if kind in v.kinds]
        if any(lay.kind == kind for lay in self.layouts):
            exists.insert(0, "the other targets" if self.variants else "every target")
        raise LayoutError(f"{self.name}: .kind::{kind} does not exist {where}"
                          + (f"; it exists on {' and on '.join(exists)}" if exists else ""))


# ---------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------

def descriptor_since(data: Mapping[str, Any]) -> tuple[str | None, dict[str, str]]:
    """(the version a descriptor appears in, {kind: version} of later kinds), read from
    a descriptor file's data (``since``)."""
    since = data.get("since")
    if not isinstance(since, Mapping):
        return None, {}
    kinds = {str(k["kind"]): str(k["version"]) for k in since.get("kinds", ())
             if isinstance(k, Mapping) and "kind" in k and "version" in k}
    version = since.get("version")
    return (str(version) if version is not None else None), kinds


def _prov(p: dict[str, Any]) -> Provenance:
    return Provenance(str(p["section"]), str(p["table"]), p["caption"], tuple(p["seeds"]),
                      str(p["ptx_isa"]) if "ptx_isa" in p else None,
                      str(p.get("document", "")))


def _doc(d: dict[str, Any]) -> DocStyle:
    return DocStyle(tuple(d["columns"]), d["bits_order"], d["value_style"])


class DescriptorBuilder:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.data: dict[str, Any] = doc.data

    def src(self, path: tuple[str | int, ...]) -> Source:
        return Source(self.doc.rel, self.doc.source.locate(path)[0])

    def entries(self, raw: list[dict[str, Any]], base: tuple[str | int, ...],
                kind: str | None, extra_encodings: dict[str, Any] | None = None
                ) -> tuple[Entry, ...]:
        encodings = {k: Encoding(k, v["formula"], v["mask"], v["shift"])
                     for k, v in {**self.data.get("encodings", {}),
                                  **(extra_encodings or {})}.items()}
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
                doc_invalid_note=e.get("doc_invalid_note", False),
                sources=field_sources(e, kind), shared_address=e.get("shared_address", False)))
        return tuple(sorted(out, key=lambda x: x.lsb))

    def build(self) -> Descriptor:
        d = self.data
        name = d["descriptor"]
        since, kinds_since = descriptor_since(d)
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
        variants = tuple(self.variant(vi, v, common) for vi, v in
                         enumerate(d.get("variants", ())))
        return Descriptor(name=name, title=d["title"], description=common["description"],
                          word_bits=d["word_bits"], spec_file=self.doc.rel,
                          kinds=tuple(d.get("kinds", ())), layouts=tuple(layouts),
                          tables=tuple(tables), notes=notes, since=since,
                          kinds_since=tuple(kinds_since.items()), variants=variants)

    def variant(self, vi: int, v: dict[str, Any], common: dict[str, Any]) -> Variant:
        d = self.data
        name = d["descriptor"]
        base: tuple[str | int, ...] = ("variants", vi)
        when = dict(variant=v["name"], since=str(v["since"]), targets=tuple(v["targets"]))
        enc = v.get("encodings")
        layouts: list[Layout] = []
        tables: list[Table] = []
        if "layouts" in v:
            by_kind: dict[str, Layout] = {}
            for li, raw in enumerate(v["layouts"]):
                prov, doc = _prov(raw["provenance"]), _doc(raw["doc"])
                group = []
                for k in raw["kinds"]:
                    lay = Layout(kind=k, class_name=camel(name) + v["class_suffix"] + camel(k),
                                 entries=self.entries(raw["fields"],
                                                      base + ("layouts", li, "fields"), k, enc),
                                 provenance=prov, doc=doc, **common, **when)
                    by_kind[k] = lay
                    group.append(lay)
                tables.append(Table(prov, doc, tuple(group)))
            layouts = [by_kind[k] for k in v["kinds"]]
        else:
            lay = Layout(kind=None, class_name=d.get("class_name", camel(name)) + v["class_suffix"],
                         entries=self.entries(v["fields"], base + ("fields",), None, enc),
                         provenance=_prov(v["provenance"]), doc=_doc(v["doc"]), **common, **when)
            layouts = [lay]
            tables.append(Table(lay.provenance, lay.doc, (lay,)))
        ev = v["evidence"]
        return Variant(v["name"], v["class_suffix"], str(v["since"]), tuple(v["targets"]),
                       tuple(v.get("kinds", ())), tuple(layouts), tuple(tables),
                       Evidence(ev["ptxas"], ev.get("oracle"), ev.get("third_party"), ev["note"]),
                       self.src(base))

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


def field_sources(e: dict[str, Any], kind: str | None) -> tuple[str, ...]:
    """A field's ``sources`` for ``kind`` (a list, or a mapping of kinds to lists)."""
    src = e.get("sources", ())
    if isinstance(src, dict):
        src = src.get(kind or "", ())
    return tuple(str(x) for x in src)


def layout_shapes(desc_name: str, kind: str | None, iset: InstructionSet) -> Shapes | None:
    """The union of the ``shapes`` descriptor rules that apply to words of this
    descriptor kind: rules on an operand taking the descriptor, in a valid form of that
    kind. None when no such rule exists."""
    pairs: set[tuple[int, int]] = set()
    fields: tuple[str, ...] | None = None
    rules: list[str] = []
    owners: list[str] = []
    for ins in iset.instructions:
        for op in ins.operands:
            if op.descriptor is None or op.descriptor[0] != desc_name:
                continue
            kind_of = op.descriptor[1]
            for r in ins.descriptor_rules:
                if r.operand != op.name or not r.shapes:
                    continue
                if (kind if kind_of is not None else None) not in ins.values_where(
                        r.when, kind_of):
                    continue
                if fields is None:
                    fields = r.shape_fields
                if r.shape_fields != fields or len(fields) != 2:
                    raise ValueError(f"{ins.name} [{r.id}]: shapes must name the same two "
                                     f"fields as the other shape rules ({fields})")
                for shape in r.shapes:
                    vals = dict(shape)
                    pairs |= {(a, b) for a in vals[fields[0]] for b in vals[fields[1]]}
                rules.append(f"{ins.name} [{r.id}]")
                owners += [ins.name] if ins.name not in owners else []
    if fields is None:
        return None
    table = tuple((a, tuple(sorted(b for x, b in pairs if x == a)))
                  for a in sorted({a for a, _ in pairs}))
    return Shapes((fields[0], fields[1]), table, tuple(rules),
                  "one of the " + " and ".join(f"{o} shapes" for o in owners))


def with_shapes(d: Descriptor, iset: InstructionSet) -> Descriptor:
    d = replace(d, variants=tuple(
        replace(v, **_shaped(d.name, v.layouts, v.tables, iset)) for v in d.variants))
    return replace(d, **_shaped(d.name, d.layouts, d.tables, iset))


def _shaped(name: str, all_layouts: tuple[Layout, ...], all_tables: tuple[Table, ...],
            iset: InstructionSet) -> dict[str, Any]:
    layouts: dict[str | None, Layout] = {}
    for lay in all_layouts:
        shapes = layout_shapes(name, lay.kind, iset)
        if shapes is None:
            layouts[lay.kind] = lay
            continue
        first, second = shapes.fields
        values = {first: shapes.first_values, second: shapes.second_values}
        texts = {first: f"with {second}, {shapes.source} of this kind",
                 second: f"with {first}, {shapes.source} of this kind"}
        entries = tuple(replace(e, shape_values=values[e.name], shape_text=texts[e.name])
                        if isinstance(e, Field) and e.name in values else e
                        for e in lay.entries)
        layouts[lay.kind] = replace(lay, entries=entries, shapes=shapes)
    tables = tuple(replace(t, layouts=tuple(layouts[lay.kind] for lay in t.layouts))
                   for t in all_tables)
    return {"layouts": tuple(layouts[lay.kind] for lay in all_layouts), "tables": tables}


def without_shapes(d: Descriptor) -> Descriptor:
    """``d`` as the descriptor file alone describes it: without the shapes that
    :func:`with_shapes` took from the instructions."""
    def plain(lay: Layout) -> Layout:
        if lay.shapes is None:
            return lay
        entries = tuple(replace(e, shape_values=None, shape_text="")
                        if isinstance(e, Field) else e for e in lay.entries)
        return replace(lay, entries=entries, shapes=None)

    def stripped(layouts: tuple[Layout, ...], tables: tuple[Table, ...]) -> dict[str, Any]:
        by_kind = {lay.kind: plain(lay) for lay in layouts}
        return {"layouts": tuple(by_kind[lay.kind] for lay in layouts),
                "tables": tuple(replace(t, layouts=tuple(by_kind[lay.kind] for lay in t.layouts))
                                for t in tables)}

    variants = tuple(replace(v, **stripped(v.layouts, v.tables)) for v in d.variants)
    return replace(d, variants=variants, **stripped(d.layouts, d.tables))


def _bits(parts: Iterable[int]) -> int:
    """The OR of word masks or values."""
    out = 0
    for p in parts:
        out |= p
    return out
