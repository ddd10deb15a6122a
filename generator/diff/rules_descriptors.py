"""Diff rules for descriptors: descriptors, kinds, fields, named values, reserved
and fixed bits, helpers, notes.

Elements are matched by name: descriptors by ``descriptor``, layouts by MMA kind,
fields by ``name`` (a removed and an added field on the same bits with the same
type are one renamed field), named values by CLI name (a removed and an added
name on the same code are one renamed value), notes by ``id``, reserved and fixed
bits by position. What generated code and stored words depend on decides the
severity; see the rule catalogue below (``docs/diff-policy.md`` explains it).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import replace

from ptxgen.diff.base import Json, Location
from ptxgen.diff.engine import (
    BREAKING,
    COMPATIBLE,
    NOTE,
    Context,
    Rule,
    Symbol,
    comparer,
    rule,
    symbol_table,
)
from ptxgen.diff.revisions import Revision
from ptxgen.model import Spec
from ptxgen.model.descriptors import Descriptor, Entry, Field, Fixed, Layout, Reserved
from ptxgen.model.instructions import vkey
from ptxgen.model.versions import descriptor_appears_in

AREA = "descriptors"

# -- the catalogue ---------------------------------------------------------------------

DESCRIPTOR_ADDED = rule(
    "descriptor-added", COMPATIBLE, AREA, "A descriptor is new.",
    "New classes, header and CLI name; nothing that exists changes.")
DESCRIPTOR_REMOVED = rule(
    "descriptor-removed", BREAKING, AREA, "A descriptor is gone.",
    "Its classes, header and CLI name disappear.")
CLASS_RENAMED = rule(
    "class-renamed", BREAKING, AREA, "The generated class of a descriptor (kind) has a new name.",
    "Code that names the class no longer imports or compiles.")
WORD_SIZE_CHANGED = rule(
    "word-size-changed", BREAKING, AREA, "A descriptor word changed size (32 / 64 bits).",
    "The word type of every class changes, and so does every stored word.")
KIND_ADDED = rule(
    "kind-added", COMPATIBLE, AREA, "A descriptor gained an MMA kind (a new layout class).",
    "A new class; the existing kinds are untouched.")
KIND_REMOVED = rule(
    "kind-removed", BREAKING, AREA, "A descriptor lost an MMA kind.",
    "Its class and `--kind` value disappear.")
FIELD_ADDED = rule(
    "field-added", COMPATIBLE, AREA, "A field is new, and 0 is one of its values.",
    "Code that does not set it gets the default 0, which is what old words hold in "
    "bits that were reserved.")
FIELD_ADDED_REQUIRED = rule(
    "field-added-required", BREAKING, AREA, "A field is new, and 0 is not one of its values.",
    "It has no default: every constructor call must now give it, and old words decode "
    "as invalid.")
FIELD_REMOVED = rule(
    "field-removed", BREAKING, AREA, "A field is gone.",
    "Its member, keyword argument and CLI FIELD name disappear.")
FIELD_RENAMED = rule(
    "field-renamed", BREAKING, AREA,
    "A field has a new name, on the same bits with the same type.",
    "Its member, keyword argument and CLI FIELD name change.")
FIELD_MOVED = rule(
    "field-moved", BREAKING, AREA, "A field has the same width on other bits.",
    "Words built with the old headers put the value on the wrong bits.")
FIELD_RESIZED = rule(
    "field-resized", BREAKING, AREA, "A field is wider or narrower (its bits may move as well).",
    "Words built with the old headers put the value on the wrong bits.")
FIELD_TYPE_CHANGED = rule(
    "field-type-changed", BREAKING, AREA,
    "A field's type changed (enum, flag, int, dimension, address).",
    "The generated parameter type and the values it accepts change.")
FIELD_ENCODING_CHANGED = rule(
    "field-encoding-changed", BREAKING, AREA,
    "A field stores its value differently: dimension shift (M>>4 / M>>7), address "
    "encoding, alignment.",
    "The same value encodes to other bits.")
VALUE_ADDED = rule(
    "value-added", COMPATIBLE, AREA, "A named value is new.",
    "A new enum member and CLI spelling; every value that was allowed still is.")
VALUE_REMOVED = rule(
    "value-removed", BREAKING, AREA, "A named value is gone.",
    "Its enum member and CLI spelling disappear, and its code is refused.")
VALUE_RENUMBERED = rule(
    "value-renumbered", BREAKING, AREA, "A named value has another code.",
    "Code compiled with the old enum writes the old code, which now means something else "
    "or is refused.")
VALUE_RENAMED = rule(
    "value-renamed", BREAKING, AREA, "A code has a new name.",
    "Its enum member and CLI spelling change.")
VALUES_NARROWED = rule(
    "values-narrowed", BREAKING, AREA,
    "A field allows fewer values (range, codes, dimension or address multiples, n/a).",
    "Values that were valid are refused.")
VALUES_WIDENED = rule(
    "values-widened", COMPATIBLE, AREA, "A field allows more values.",
    "Every value that was valid still is.")
RESERVED_TAKEN = rule(
    "reserved-taken", COMPATIBLE, AREA, "Reserved bits now hold a new field.",
    "Old words hold 0 there, which the new field reads as its default (when 0 is not "
    "allowed, field-added-required reports the break).")
RESERVED_ABSORBED = rule(
    "reserved-absorbed", NOTE, AREA,
    "Reserved bits now belong to a field that grew or moved.",
    "The field's own change is reported (and breaking); this records the bits.")
RESERVED_ADDED = rule(
    "reserved-added", NOTE, AREA, "Bits that belonged to a field are reserved now.",
    "The field's own change is reported (and breaking); this records the bits.")
FIXED_CHANGED = rule(
    "fixed-changed", BREAKING, AREA, "Bits that hold a fixed constant must hold another one.",
    "Words built with the old headers carry the old constant and are refused.")
FIXED_ADDED = rule(
    "fixed-added", BREAKING, AREA, "Bits must now hold a fixed constant they did not hold.",
    "Words built with the old headers do not carry it and are refused.")
FIXED_REMOVED = rule(
    "fixed-removed", BREAKING, AREA,
    "A fixed constant is gone: its bits are free or must hold something else.",
    "Words built with the old headers still carry the constant, which now means "
    "something else or is refused.")
CONSTANT_RECLASSIFIED = rule(
    "constant-reclassified", NOTE, AREA,
    "Bits changed between reserved and fixed, or a constant was split or merged, but must "
    "hold the same value.",
    "Every word means what it did; masks and docs are written differently.")
HELPER_ADDED = rule(
    "helper-added", COMPATIBLE, AREA,
    "A generated helper is new (swizzle base offset, zero-column-mask expansion).",
    "A new function; nothing that exists changes.")
HELPER_REMOVED = rule(
    "helper-removed", BREAKING, AREA, "A generated helper is gone.",
    "Code calling it no longer imports or compiles.")
HELPER_CHANGED = rule(
    "helper-changed", BREAKING, AREA,
    "The table behind a generated helper changed (swizzle boundaries, sub-mask breakup).",
    "The helper returns other results for the same arguments.")
AVAILABILITY_NARROWED = rule(
    "availability-narrowed", BREAKING, AREA,
    "A descriptor or MMA kind exists only from a later PTX ISA version (`since`).",
    "`--ptx-isa` views, generated code and CLI calls for the versions in between lose it.")
AVAILABILITY_WIDENED = rule(
    "availability-widened", COMPATIBLE, AREA,
    "A descriptor or MMA kind exists from an earlier PTX ISA version (`since`), or at "
    "every version.",
    "It is there at every version it was before, and at more.")
VARIANT_ADDED = rule(
    "variant-added", COMPATIBLE, AREA,
    "A descriptor gained a layout variant: tables that replace the baseline on some targets "
    "from some PTX ISA version (formerly reserved bits in use there).",
    "New classes (and --target layouts); the baseline classes and every target without the "
    "variant are untouched.")
VARIANT_REMOVED = rule(
    "variant-removed", BREAKING, AREA, "A layout variant is gone.",
    "Its classes and --target layouts disappear.")
VARIANT_CHANGED = rule(
    "variant-changed", BREAKING, AREA,
    "A layout variant applies to other targets or from another PTX ISA version.",
    "The layout --target selects changes for some target / version.")
VARIANT_FIELDS = rule(
    "variant-fields", NOTE, AREA,
    "What a new layout variant changes against the baseline table of the same kind.",
    "Documentation of the variant-added change (new and widened fields, new values).")
NOTE_ADDED = rule(
    "note-added", NOTE, AREA, "A transcription note is new.", "Documentation only.")
NOTE_REMOVED = rule(
    "note-removed", NOTE, AREA, "A transcription note is gone.", "Documentation only.")
NOTE_CHANGED = rule(
    "note-changed", NOTE, AREA, "A transcription note says something else.",
    "Documentation only.")
DOC_CHANGED = rule(
    "doc-changed", NOTE, AREA,
    "Descriptive text changed: title, description, labels, provenance, worked examples.",
    "Docstrings, comments and generated docs change; no code does.")


# -- small helpers ---------------------------------------------------------------------

def bits_json(lsb: int, msb: int) -> str:
    return str(lsb) if lsb == msb else f"{lsb}-{msb}"


def bits_text(lsb: int, msb: int) -> str:
    return f"bit {lsb}" if lsb == msb else f"bits {lsb}-{msb}"


def _verb(lsb: int, msb: int, one: str, many: str) -> str:
    return one if lsb == msb else many


def runs(bits: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted bits as (first, last) runs of consecutive bits."""
    out: list[tuple[int, int]] = []
    for b in sorted(bits):
        if out and out[-1][1] == b - 1:
            out[-1] = (out[-1][0], b)
        else:
            out.append((b, b))
    return out


def _values_text(values: list[int], total: int | None) -> str:
    shown = ", ".join(str(v) for v in values)
    if total is None:
        return shown + ", …"
    more = total - len(values)
    return shown + (f", … ({total} values)" if more > 0 else "")


Domain = range | tuple[int, ...]
_ENUMERATE = 1 << 16  # domains up to this size are compared value by value


def domain(f: Field) -> Domain:
    """Every value a user may give the field (dimension / byte value / raw code)."""
    if f.type in ("dimension", "address"):
        return range(0, f.user_max + 1, f.user_step)
    codes = f.allowed_codes
    return range(0, f.mask + 1) if codes is None else codes


def _range_within(a: range, b: range) -> bool:
    if not a:
        return True
    if a[0] not in b or a[-1] not in b:
        return False
    return len(a) == 1 or a.step % b.step == 0


def outside(a: Domain, b: Domain, show: int = 8) -> tuple[list[int], int | None]:
    """Up to ``show`` values of ``a`` that ``b`` lacks, and how many in all (None when
    there are too many to count)."""
    if len(a) <= _ENUMERATE:
        missing = [v for v in a if v not in b]
        return missing[:show], len(missing)
    if isinstance(a, range) and isinstance(b, range) and _range_within(a, b):
        return [], 0
    sample = [v for v in itertools.chain(itertools.islice(a, _ENUMERATE), a[-1:])
              if v not in b]
    return sample[:show], None


# -- descriptors and kinds ---------------------------------------------------------------

@comparer(AREA)
def compare_descriptors(ctx: Context) -> None:
    old = {d.name: d for d in ctx.old.spec.descriptors}
    new = {d.name: d for d in ctx.new.spec.descriptors}
    for name in sorted(old.keys() - new.keys()):
        d = old[name]
        ctx.report(DESCRIPTOR_REMOVED, name,
                   f"descriptor {name} removed (classes "
                   f"{', '.join(lay.class_name for lay in d.layouts)})",
                   old=ctx.old.at(d.spec_file, ("descriptor",)))
    for name in sorted(new.keys() - old.keys()):
        d = new[name]
        ctx.report(DESCRIPTOR_ADDED, name,
                   f"new descriptor {name}: {d.title} (classes "
                   f"{', '.join(lay.class_name for lay in d.layouts)})",
                   new=ctx.new.at(d.spec_file, ("descriptor",)))
    for name in sorted(old.keys() & new.keys()):
        compare_descriptor(ctx, old[name], new[name])


def compare_descriptor(ctx: Context, do: Descriptor, dn: Descriptor) -> None:
    name = do.name
    if do.word_bits != dn.word_bits:
        ctx.report(WORD_SIZE_CHANGED, name,
                   f"word size {do.word_bits} -> {dn.word_bits} bits",
                   old=ctx.old.at(do.spec_file, ("word_bits",)),
                   new=ctx.new.at(dn.spec_file, ("word_bits",)),
                   before=do.word_bits, after=dn.word_bits)
    texts = [(what, a, b) for what, a, b in (("title", do.title, dn.title),
                                             ("description", do.description, dn.description))
             if a != b]
    for what, a, b in texts:
        ctx.report(DOC_CHANGED, name, f"{what} changed",
                   old=ctx.old.at(do.spec_file, (what,)),
                   new=ctx.new.at(dn.spec_file, (what,)), before=a, after=b)
    old_kinds = {lay.kind: lay for lay in do.layouts}
    new_kinds = {lay.kind: lay for lay in dn.layouts}
    for lay in do.layouts:
        if lay.kind not in new_kinds:
            ctx.report(KIND_REMOVED, name,
                       f"kind {_kind_name(lay.kind)} removed (class {lay.class_name})",
                       kind=lay.kind, old=_kind_loc(ctx.old, do, lay.kind))
    for lay in dn.layouts:
        if lay.kind not in old_kinds:
            ctx.report(KIND_ADDED, name,
                       f"new kind {_kind_name(lay.kind)} (class {lay.class_name})",
                       kind=lay.kind, new=_kind_loc(ctx.new, dn, lay.kind))
    for lay in do.layouts:
        if lay.kind in new_kinds:
            compare_layout(ctx, do, dn, lay, new_kinds[lay.kind])
    compare_since(ctx, do, dn)
    compare_variants(ctx, do, dn)
    compare_notes(ctx, do, dn)


def _variant_loc(side: Revision, d: Descriptor, name: str, key: str = "name") -> Location:
    doc = side.docs.get(d.spec_file)
    data = doc.data if doc is not None and isinstance(doc.data, dict) else {}
    for i, v in enumerate(data.get("variants", ()) or ()):
        if isinstance(v, dict) and v.get("name") == name:
            return side.at(d.spec_file, ("variants", i, key))
    return side.at(d.spec_file, ("descriptor",))


def variant_summary(base: Descriptor, var: Layout) -> list[str]:
    """What a variant layout changes against the baseline layout of its kind."""
    try:
        old = base.layout(var.kind)
    except LookupError:
        return [f"new kind {var.kind} (only in this layout): fields "
                + ", ".join(f"{f.name} ({bits_text(f.lsb, f.msb)})" for f in var.fields)]
    out: list[str] = []
    have = {f.name: f for f in old.fields}
    for f in var.fields:
        a = have.get(f.name)
        src = f" [{', '.join(f.sources)}]" if f.sources else ""
        if a is None:
            out.append(f"new field {f.name} ({bits_text(f.lsb, f.msb)}, {f.type}){src}")
            continue
        if (a.lsb, a.msb) != (f.lsb, f.msb):
            out.append(f"{f.name} {bits_text(a.lsb, a.msb)} -> {bits_text(f.lsb, f.msb)}{src}")
        added = [f"{n} ({v})" for n, v in f.names.items() if n not in a.names]
        if added:
            out.append(f"{f.name}: new value{'s' if len(added) > 1 else ''} "
                       f"{', '.join(added)}{src}")
    return out


def compare_variants(ctx: Context, do: Descriptor, dn: Descriptor) -> None:
    """Layout variants, matched by name."""
    old = {v.name: v for v in do.variants}
    new = {v.name: v for v in dn.variants}
    for name in old.keys() - new.keys():
        v = old[name]
        ctx.report(VARIANT_REMOVED, f"{do.name}/{name}",
                   f"layout variant {name} ({', '.join(v.targets)} from PTX ISA {v.since}) "
                   f"removed (classes {', '.join(lay.class_name for lay in v.layouts)})",
                   old=_variant_loc(ctx.old, do, name))
    for name in [v.name for v in dn.variants if v.name not in old]:
        v = new[name]
        gone = [k for k in dn.kinds if k not in v.kinds] if v.kinds else []
        ctx.report(VARIANT_ADDED, f"{dn.name}/{name}",
                   f"new layout variant {name} for {', '.join(v.targets)} from PTX ISA "
                   f"{v.since} (classes {', '.join(lay.class_name for lay in v.layouts)})"
                   + (f"; no .kind::{', .kind::'.join(gone)} there" if gone else ""),
                   new=_variant_loc(ctx.new, dn, name))
        for lay in v.layouts:
            for text in variant_summary(dn, lay):
                ctx.report(VARIANT_FIELDS, f"{dn.name}/{name}", f"{name}: {text}",
                           kind=lay.kind, new=_variant_loc(ctx.new, dn, name))
    for name in [v.name for v in do.variants if v.name in new]:
        a, b = old[name], new[name]
        if (a.since, a.targets) != (b.since, b.targets):
            ctx.report(VARIANT_CHANGED, f"{do.name}/{name}",
                       f"layout variant {name}: {', '.join(a.targets)} from PTX ISA {a.since}"
                       f" -> {', '.join(b.targets)} from PTX ISA {b.since}",
                       old=_variant_loc(ctx.old, do, name, "since"),
                       new=_variant_loc(ctx.new, dn, name, "since"),
                       before=f"{', '.join(a.targets)} {a.since}",
                       after=f"{', '.join(b.targets)} {b.since}")
        kinds_a = {lay.kind: lay for lay in a.layouts}
        kinds_b = {lay.kind: lay for lay in b.layouts}
        for k in kinds_a.keys() - kinds_b.keys():
            ctx.report(KIND_REMOVED, f"{do.name}/{name}",
                       f"{name}: kind {_kind_name(k)} removed (class {kinds_a[k].class_name})",
                       kind=k, old=_variant_loc(ctx.old, do, name, "kinds"))
        for k in [lay.kind for lay in b.layouts if lay.kind not in kinds_a]:
            ctx.report(KIND_ADDED, f"{dn.name}/{name}",
                       f"{name}: new kind {_kind_name(k)} (class {kinds_b[k].class_name})",
                       kind=k, new=_variant_loc(ctx.new, dn, name, "kinds"))
        for lay in a.layouts:
            if lay.kind in kinds_b:
                compare_layout(ctx, do, dn, lay, kinds_b[lay.kind])


def _since_loc(side: Revision, d: Descriptor, kind: str | None) -> Location:
    doc = side.docs.get(d.spec_file)
    data = doc.data if doc else {}
    since = data.get("since") if isinstance(data, dict) else None
    if not isinstance(since, dict):
        return side.at(d.spec_file, ("descriptor",))
    for j, k in enumerate(since.get("kinds", ())):
        if kind is not None and k.get("kind") == kind:
            return side.at(d.spec_file, ("since", "kinds", j, "version"))
    return side.at(d.spec_file, ("since", "version"))


def compare_since(ctx: Context, do: Descriptor, dn: Descriptor) -> None:
    """The PTX ISA version the descriptor (and each kind of both) appears in."""
    def appears_in(d: Descriptor, kind: str | None = None) -> str | None:
        return descriptor_appears_in(d, kind)

    a, b = do, dn
    kinds = [None] + [k for k in do.kinds if k in dn.kinds]
    for kind in kinds:
        va, vb = appears_in(a, kind), appears_in(b, kind)
        if kind is not None and (va, vb) == (appears_in(a), appears_in(b)):
            continue  # the kind follows the descriptor (reported once, above)
        if va == vb:
            continue
        later = vb is not None and (va is None or vkey(vb) > vkey(va))
        what = f"kind {kind}" if kind else f"descriptor {do.name}"
        r = AVAILABILITY_NARROWED if later else AVAILABILITY_WIDENED
        ctx.report(r, do.name, f"{what} exists from PTX ISA {va or '(any)'} -> "
                   f"{vb or '(any)'}", kind=kind, old=_since_loc(ctx.old, do, kind),
                   new=_since_loc(ctx.new, dn, kind), before=va, after=vb)


def _kind_name(kind: str | None) -> str:
    return "(none)" if kind is None else kind


def _layout_loc(side: Revision, lay: Layout, key: str) -> Location:
    """The location of ``key`` (e.g. provenance) of the layout (table) ``lay`` is in."""
    path = side.entry_path(lay.entries[0].source)  # (..., "fields", i)
    if path is None:
        return side.at(lay.spec_file, (key,))
    return side.at(lay.spec_file, path[:-2] + (key,))


def _kind_loc(side: Revision, d: Descriptor, kind: str | None) -> Location:
    if kind is None or kind not in d.kinds:
        return side.at(d.spec_file, ("descriptor",))
    doc = side.docs.get(d.spec_file)  # the spec file's kinds (a view has fewer)
    kinds = [str(k) for k in doc.data.get("kinds", ())] if doc else list(d.kinds)
    return side.at(d.spec_file, ("kinds", kinds.index(kind)))


def compare_notes(ctx: Context, do: Descriptor, dn: Descriptor) -> None:
    old = {n.id: n for n in do.notes}
    new = {n.id: n for n in dn.notes}
    for nid, n in old.items():
        subject = f"{do.name}.notes.{nid}"
        if nid not in new:
            ctx.report(NOTE_REMOVED, subject, f"note {nid} removed", old=ctx.old.loc(n.source))
        elif new[nid].text != n.text:
            ctx.report(NOTE_CHANGED, subject, f"note {nid} changed", old=ctx.old.loc(n.source),
                       new=ctx.new.loc(new[nid].source), before=n.text, after=new[nid].text)
    for nid, n in new.items():
        if nid not in old:
            ctx.report(NOTE_ADDED, f"{dn.name}.notes.{nid}", f"new note {nid}",
                       new=ctx.new.loc(n.source), after=n.text)


# -- layouts -------------------------------------------------------------------------------

def compare_layout(ctx: Context, do: Descriptor, dn: Descriptor, lo: Layout, ln: Layout) -> None:
    kind = lo.kind
    if lo.class_name != ln.class_name:
        ctx.report(CLASS_RENAMED, do.name, f"class {lo.class_name} renamed to {ln.class_name}",
                   kind=kind,
                   old=ctx.old.at(do.spec_file, ("class_name",)) if lo.kind is None else
                   _kind_loc(ctx.old, do, lo.kind),
                   new=ctx.new.at(dn.spec_file, ("class_name",)) if ln.kind is None else
                   _kind_loc(ctx.new, dn, ln.kind),
                   before=lo.class_name, after=ln.class_name)
    po, pn = lo.provenance, ln.provenance
    if (po.section, po.table, po.caption) != (pn.section, pn.table, pn.caption):
        ctx.report(DOC_CHANGED, do.name, "provenance changed", kind=kind,
                   old=_layout_loc(ctx.old, lo, "provenance"),
                   new=_layout_loc(ctx.new, ln, "provenance"),
                   before=f"{po.section}, Table {po.table}: {po.caption}",
                   after=f"{pn.section}, Table {pn.table}: {pn.caption}")
    pairs = match_fields(lo, ln)
    renamed = {a.name for a, b in pairs if a.name != b.name}
    kept_old = {a.name for a, _ in pairs}
    kept_new = {b.name for _, b in pairs}
    for f in lo.fields:
        if f.name not in kept_old:
            ctx.report(FIELD_REMOVED, f"{do.name}.{f.name}",
                       f"field {f.name} ({bits_text(f.lsb, f.msb)}) removed", kind=kind,
                       old=ctx.old.loc(f.source), before=field_json(f))
    for f in ln.fields:
        if f.name in kept_new:
            continue
        r = FIELD_ADDED if f.default is not None else FIELD_ADDED_REQUIRED
        extra = "" if f.default is not None else " with no default (0 is not allowed)"
        ctx.report(r, f"{dn.name}.{f.name}",
                   f"new field {f.name} ({bits_text(f.lsb, f.msb)}, {f.type}){extra}",
                   kind=kind, new=ctx.new.loc(f.source), after=field_json(f))
    for a, b in pairs:
        if a.name in renamed:
            ctx.report(FIELD_RENAMED, f"{do.name}.{a.name}",
                       f"field {a.name} renamed to {b.name} ({bits_text(b.lsb, b.msb)})",
                       kind=kind, old=ctx.old.loc(a.source), new=ctx.new.loc(b.source),
                       before=a.name, after=b.name)
        compare_field(ctx, do.name, kind, a, b)
    compare_bits(ctx, do.name, lo, ln, kept_new)
    compare_helpers(ctx, do, lo, ln)


def match_fields(lo: Layout, ln: Layout) -> list[tuple[Field, Field]]:
    """Fields of both layouts: same name, or (a rename) the same bits and type."""
    new = {f.name: f for f in ln.fields}
    old_names = {f.name for f in lo.fields}
    pairs = [(f, new[f.name]) for f in lo.fields if f.name in new]
    added = [f for f in ln.fields if f.name not in old_names]
    for f in lo.fields:
        if f.name in new:
            continue
        twin = next((g for g in added if (g.lsb, g.msb, g.type) == (f.lsb, f.msb, f.type)), None)
        if twin is not None:
            added.remove(twin)
            pairs.append((f, twin))
    return sorted(pairs, key=lambda p: p[0].lsb)


def field_json(f: Field) -> dict[str, Json]:
    out: dict[str, Json] = {"name": f.name, "bits": bits_json(f.lsb, f.msb), "type": f.type,
                            "allowed": f.domain}
    if f.type == "dimension":
        out["encoding"] = f"{f.dim_symbol} >> {f.dim_shift}"
    return out


def encoding_text(f: Field) -> str | None:
    if f.type == "dimension":
        return f"{f.dim_symbol} >> {f.dim_shift}"
    if f.type == "address" and f.encoding is not None:
        e = f.encoding
        return f"(x & {e.mask:#x}) >> {e.shift}, {f.alignment}-byte aligned"
    return None


def compare_field(ctx: Context, desc: str, kind: str | None, a: Field, b: Field) -> None:
    subject = f"{desc}.{b.name}"
    old, new = ctx.old.loc(a.source), ctx.new.loc(b.source)

    def report(r: Rule, message: str, before: Json = None, after: Json = None) -> None:
        ctx.report(r, subject, message, kind=kind, old=old, new=new, before=before, after=after)

    ba, bb = bits_text(a.lsb, a.msb), bits_text(b.lsb, b.msb)
    if a.width != b.width:
        report(FIELD_RESIZED, f"{b.name}: {ba} -> {bb} ({a.width} -> {b.width} bits)",
               bits_json(a.lsb, a.msb), bits_json(b.lsb, b.msb))
    elif a.lsb != b.lsb:
        report(FIELD_MOVED, f"{b.name}: {ba} -> {bb}",
               bits_json(a.lsb, a.msb), bits_json(b.lsb, b.msb))
    if a.type != b.type:
        report(FIELD_TYPE_CHANGED, f"{b.name}: type {a.type} -> {b.type}", a.type, b.type)
    elif encoding_text(a) != encoding_text(b):
        report(FIELD_ENCODING_CHANGED,
               f"{b.name}: encoded as {encoding_text(a)} -> {encoding_text(b)}",
               encoding_text(a), encoding_text(b))
    if a.type == b.type == "enum" and all(o.name for o in a.options + b.options):
        compare_named_values(ctx, subject, kind, a, b)
    else:
        compare_domains(ctx, subject, kind, a, b)
    la, lb = _labels(a), _labels(b)
    relabelled = sorted(str(k) for k in la.keys() & lb.keys() if la[k] != lb[k])
    docs = [w for w, x, y in (("description", a.description, b.description),
                              ("label", a.label, b.label)) if x != y]
    docs += [f"label of {', '.join(relabelled)}"] if relabelled else []
    if docs:
        report(DOC_CHANGED, f"{b.name}: {' and '.join(docs)} changed")


def _labels(f: Field) -> dict[str | int, str | None]:
    """Value labels, by CLI name (named values) or code."""
    return {o.name or o.value: o.label for o in f.options}


def compare_named_values(ctx: Context, subject: str, kind: str | None, a: Field,
                         b: Field) -> None:
    old = {o.name: (i, o) for i, o in enumerate(a.options) if o.name}
    new = {o.name: (i, o) for i, o in enumerate(b.options) if o.name}
    new_only = {o.value: name for name, (_, o) in new.items() if name not in old}
    for name, (i, o) in old.items():
        where = ctx.old.value_loc(a.source, kind, i)
        if name in new:
            j, p = new[name]
            if p.value != o.value:
                ctx.report(VALUE_RENUMBERED, f"{subject}.{name}",
                           f"{b.name}={name}: code {o.value} -> {p.value}", kind=kind,
                           old=where, new=ctx.new.value_loc(b.source, kind, j),
                           before=o.value, after=p.value)
        elif o.value in new_only:
            other = new_only.pop(o.value)
            j, _ = new[other]
            ctx.report(VALUE_RENAMED, f"{subject}.{name}",
                       f"{b.name}: code {o.value} renamed {name} -> {other}", kind=kind,
                       old=where, new=ctx.new.value_loc(b.source, kind, j), before=name,
                       after=other)
        else:
            ctx.report(VALUE_REMOVED, f"{subject}.{name}",
                       f"{b.name}={name} (code {o.value}) removed", kind=kind,
                       old=where, new=ctx.new.value_loc(b.source, kind), before=o.value)
    for value, name in new_only.items():
        j, _ = new[name]
        ctx.report(VALUE_ADDED, f"{subject}.{name}", f"{b.name}: new value {name} (code {value})",
                   kind=kind, old=ctx.old.value_loc(a.source, kind),
                   new=ctx.new.value_loc(b.source, kind, j), after=value)


def compare_domains(ctx: Context, subject: str, kind: str | None, a: Field, b: Field) -> None:
    da, db = domain(a), domain(b)
    old, new = ctx.old.value_loc(a.source, kind), ctx.new.value_loc(b.source, kind)
    gone, n_gone = outside(da, db)
    if n_gone != 0:
        ctx.report(VALUES_NARROWED, subject,
                   f"{b.name}: no longer allows {_values_text(gone, n_gone)} "
                   f"(was {a.domain}; now {b.domain})",
                   kind=kind, old=old, new=new, before=a.domain, after=b.domain)
    more, n_more = outside(db, da)
    if n_more != 0:
        ctx.report(VALUES_WIDENED, subject,
                   f"{b.name}: now also allows {_values_text(more, n_more)} "
                   f"(was {a.domain}; now {b.domain})",
                   kind=kind, old=old, new=new, before=a.domain, after=b.domain)


# -- reserved and fixed bits -------------------------------------------------------------

def _owners(lay: Layout) -> dict[int, Entry]:
    return {b: e for e in lay.entries for b in range(e.lsb, e.msb + 1)}


def _required(lay: Layout) -> dict[int, int]:
    """The value every reserved (0) and fixed bit must hold."""
    out: dict[int, int] = {}
    for r in lay.reserved:
        out.update({b: 0 for b in range(r.lsb, r.msb + 1)})
    for fx in lay.fixed:
        out.update({b: (fx.value >> (b - fx.lsb)) & 1 for b in range(fx.lsb, fx.msb + 1)})
    return out


def compare_bits(ctx: Context, desc: str, lo: Layout, ln: Layout, kept_new: set[str]) -> None:
    kind = lo.kind
    oo = _owners(lo)
    for f in ln.fields:
        was = [b for b in range(f.lsb, f.msb + 1) if isinstance(oo.get(b), Reserved)]
        for first, last in runs(was):
            res = oo[first]
            new_field = f.name not in kept_new
            r = RESERVED_TAKEN if new_field else RESERVED_ABSORBED
            what = "new field" if new_field else "field"
            ctx.report(r, f"{desc}.bits[{bits_json(first, last)}]",
                       f"reserved {bits_text(first, last)} now "
                       f"{_verb(first, last, 'holds', 'hold')} {what} {f.name}",
                       kind=kind, old=ctx.old.loc(res.source), new=ctx.new.loc(f.source),
                       before="reserved", after=f.name)
    for res in ln.reserved:
        by_field: dict[str, list[int]] = {}
        for b in range(res.lsb, res.msb + 1):
            e = oo.get(b)
            if isinstance(e, Field):
                by_field.setdefault(e.name, []).append(b)
        for name, bits in by_field.items():
            f = lo.field(name)
            for first, last in runs(bits):
                ctx.report(RESERVED_ADDED, f"{desc}.bits[{bits_json(first, last)}]",
                           f"{bits_text(first, last)} (part of field {name}) "
                           f"{_verb(first, last, 'is', 'are')} reserved now",
                           kind=kind, old=ctx.old.loc(f.source), new=ctx.new.loc(res.source),
                           before=name, after="reserved")
    compare_fixed(ctx, desc, lo, ln)


def _constant_text(entries: list[Fixed]) -> str:
    return ", ".join(f"{bits_text(e.lsb, e.msb)} = {e.value:#0{e.width + 2}b}" for e in entries)


def fixed_groups(lo: Layout, ln: Layout) -> Iterator[tuple[list[Fixed], list[Fixed]]]:
    """The fixed entries of both layouts (old, new), grouped where their bits overlap."""
    items = sorted([(e, 0) for e in lo.fixed] + [(e, 1) for e in ln.fixed],
                   key=lambda t: (t[0].lsb, t[0].msb, t[1]))
    group: list[tuple[Fixed, int]] = []
    for e, side in items:
        if group and e.lsb > max(g.msb for g, _ in group):
            yield [g for g, s in group if s == 0], [g for g, s in group if s == 1]
            group = []
        group.append((e, side))
    if group:
        yield [g for g, s in group if s == 0], [g for g, s in group if s == 1]


def compare_fixed(ctx: Context, desc: str, lo: Layout, ln: Layout) -> None:
    kind = lo.kind
    ro, rn = _required(lo), _required(ln)
    for olds, news in fixed_groups(lo, ln):
        key = [(e.lsb, e.msb, e.value) for e in olds]
        if key == [(e.lsb, e.msb, e.value) for e in news]:
            continue
        first = min(e.lsb for e in olds + news)
        last = max(e.msb for e in olds + news)
        bits = range(first, last + 1)
        subject = f"{desc}.bits[{bits_json(first, last)}]"
        before = _constant_text(olds) or _describe_bits(lo, first, last)
        after = _constant_text(news) or _describe_bits(ln, first, last)
        old = ctx.old.loc((olds[0] if olds else _owners(lo)[first]).source)
        new = ctx.new.loc((news[0] if news else _owners(ln)[first]).source)
        if all(ro.get(b) == rn.get(b) for b in bits):
            r, msg = CONSTANT_RECLASSIFIED, "same required bits, written differently"
        elif olds and news:
            r, msg = FIXED_CHANGED, "fixed constant changed"
        elif news:
            r, msg = FIXED_ADDED, "must now hold a fixed constant"
        else:
            r, msg = FIXED_REMOVED, "no fixed constant any more"
        ctx.report(r, subject, f"{bits_text(first, last)}: {msg} ({before} -> {after})",
                   kind=kind, old=old, new=new, before=before, after=after)


def _describe_bits(lay: Layout, first: int, last: int) -> str:
    """What bits first..last are in ``lay``, e.g. ``bits 19-21 reserved``."""
    owners = _owners(lay)
    spans: list[tuple[int, int, str]] = []
    for b in range(first, last + 1):
        e = owners.get(b)
        what = ("reserved" if isinstance(e, Reserved) else
                f"field {e.name}" if isinstance(e, Field) else "fixed")
        if spans and spans[-1][2] == what:
            spans[-1] = (spans[-1][0], b, what)
        else:
            spans.append((b, b, what))
    return ", ".join(f"{bits_text(lo, hi)} {what}" for lo, hi, what in spans)


# -- helpers --------------------------------------------------------------------------------

def _swizzle_key(lay: Layout) -> tuple[object, ...] | None:
    """What base_offset computes from (the provenance is documentation)."""
    sp = lay.swizzle
    if sp is None:
        return None
    return (sp.field, sp.base_offset_field, sp.formula, sp.shift, sp.mask, sp.patterns)


def compare_helpers(ctx: Context, d: Descriptor, lo: Layout, ln: Layout) -> None:
    kind = lo.kind
    so, sn = _swizzle_key(lo), _swizzle_key(ln)
    zo = replace(lo.zero_column_mask, examples=()) if lo.zero_column_mask else None
    zn = replace(ln.zero_column_mask, examples=()) if ln.zero_column_mask else None
    for name, key, a, b in (("base_offset", "swizzle_patterns", so, sn),
                            ("masks", "zero_column_mask", zo, zn)):
        if a == b:
            continue
        old = ctx.old.at(lo.spec_file, (key,)) if a else None
        new = ctx.new.at(ln.spec_file, (key,)) if b else None
        subject = f"{d.name}.{name}"
        if a is None:
            ctx.report(HELPER_ADDED, subject, f"new helper {name} ({key})", kind=kind, new=new)
        elif b is None:
            ctx.report(HELPER_REMOVED, subject, f"helper {name} removed ({key})", kind=kind,
                       old=old)
        else:
            ctx.report(HELPER_CHANGED, subject, f"{key} changed: {name} gives other results",
                       kind=kind, old=old, new=new)
    eo = lo.zero_column_mask.examples if lo.zero_column_mask else ()
    en = ln.zero_column_mask.examples if ln.zero_column_mask else ()
    if eo != en and zo is not None and zn is not None:
        ctx.report(DOC_CHANGED, f"{d.name}.masks", "zero-column-mask worked examples changed",
                   kind=kind, old=ctx.old.at(lo.spec_file, ("zero_column_mask", "examples")),
                   new=ctx.new.at(ln.spec_file, ("zero_column_mask", "examples")))


# -- generated symbols ---------------------------------------------------------------------

@symbol_table(AREA)
def descriptor_symbols(spec: Spec) -> Iterator[Symbol]:
    """The public names the Python and C++ emitters generate from each layout
    (see ptxgen.emit.python / ptxgen.emit.cpp), with what each stands for."""
    for d in spec.descriptors:
        mod = f"ptxgen.isa.{d.name}"
        files = (f"python/{d.name}.py", f"include/ptxgen/{d.name}.hpp")
        for lay in d.layouts:
            yield from _layout_symbols(lay, mod, files)


def _layout_symbols(lay: Layout, mod: str, files: tuple[str, ...]) -> Iterator[Symbol]:
    c = lay.class_name
    kind = f", kind {lay.kind}" if lay.kind else ""

    def sym(key: str, py: str, cpp: str, signature: str) -> Symbol:
        return Symbol(key, py, cpp, signature, files)

    yield sym(c, f"{mod}.{c}", f"ptxgen::{c}", f"{lay.descriptor}{kind}, {lay.word_bits}-bit word")
    for py, cpp, value in (("WORD_BITS", "word_bits", lay.word_bits),
                           ("RESERVED_MASK", "reserved_mask", lay.reserved_mask),
                           ("FIXED_MASK", "fixed_mask", lay.fixed_mask),
                           ("FIXED_VALUE", "fixed_value", lay.fixed_value)):
        text = str(value) if py == "WORD_BITS" else f"{value:#0{lay.hex_digits + 2}x}"
        yield sym(f"{c}.{py}", f"{mod}.{c}.{py}", f"ptxgen::{c}::{cpp}", text)
    for f in lay.fields:
        enc = encoding_text(f) if f.type == "address" else None  # a dimension's domain says it
        yield sym(f"{c}.{f.name}", f"{mod}.{c}.{f.name}", f"ptxgen::{c}::{f.name}",
                  f"{f.type}, {bits_text(f.lsb, f.msb)}" + (f", {enc}" if enc else "") +
                  f"; allowed: {f.domain}")
        e = f.enum_class
        if e is None:
            continue
        yield sym(f"{c}.{e}", f"{mod}.{c}.{e}", f"ptxgen::{c}::{e}",
                  f"enum of field {f.name}")
        for o in f.options:
            yield sym(f"{c}.{e}.{o.ident}", f"{mod}.{c}.{e}.{o.ident}",
                      f"ptxgen::{c}::{e}::{o.ident}", f"= {o.value} (CLI {f.name}={o.name})")
    if lay.swizzle:
        sp = lay.swizzle
        yield sym(f"{c}.base_offset", f"{mod}.base_offset",
                  f"ptxgen::{c}::{sp.base_offset_field}_for",
                  "boundaries " + ", ".join(f"{p.swizzle}: {p.boundary}" for p in sp.patterns)
                  + f"; {sp.formula}")
    if lay.zero_column_mask:
        z = lay.zero_column_mask
        yield sym(f"{c}.masks", f"{mod}.{c}.masks", f"ptxgen::{c}::masks",
                  "sub-masks " + ", ".join(f"M={s.m}: {s.count}" for s in z.submasks))
