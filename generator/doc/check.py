"""``ptxgen doc check``: the spec held against the document, every disagreement a
proposed spec edit with the document's file:line beside the spec's file:line.

Descriptors: each descriptor table of the document is matched with the spec's layout of
the same caption (the layout whose ``ptx_isa`` is the document's version first), then
bit by bit: fields, reserved and fixed ranges, the codes each kind allows, the
encode() formula, and target rules written in cells. Instructions: each syntax
template is matched with the spec's valid forms of the instruction its literal head
names; a template no form matches, and a value of a slot no matching form uses, are
proposals, as is a "PTX ISA Notes" version that differs from the spec's first version
of the forms it names. A proposal the spec records under ``doc_errata`` (the document's
own error, with evidence) is not proposed again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ptxgen.doc.markdown import Document, Loc, Section
from ptxgen.doc.syntax import Part, Template, templates_of
from ptxgen.doc.tables import DescriptorTable, Entry, descriptor_tables
from ptxgen.load import Document as SpecDoc
from ptxgen.model import Spec
from ptxgen.model.instructions import Form, Instruction
from ptxgen.model.spelling import reorder
from ptxgen.spec_util import parse_bits, vkey


@dataclass
class Proposal:
    key: str  # stable: what doc_errata entries name
    kind: str  # descriptor-field | descriptor-codes | descriptor-formula | descriptor-target |
    # descriptor-table | instruction-form | instruction-value | instruction-version
    message: str
    doc: Loc
    spec: str | None  # "spec/descriptors/x.yaml:12:5"
    forms: list[str] = field(default_factory=list)  # opcodes the proposal adds
    also: list[Loc] = field(default_factory=list)  # the same disagreement elsewhere
    # "ptxas 13.5" -> what it said of each form
    assembled: dict[str, list[str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "message": self.message,
                "doc": str(self.doc), "also": [str(x) for x in self.also], "spec": self.spec,
                "forms": self.forms, "assembled": self.assembled}

    def text(self) -> str:
        out = f"{self.doc}: {self.kind}: {self.message}"
        if self.also:
            lines = [str(x.line) if x.file == self.doc.file else str(x) for x in self.also]
            out += f" (also at {', '.join(lines)})"
        if self.spec:
            out += f"\n    spec: {self.spec}"
        for tool, said in self.assembled.items():
            out += "".join(f"\n    {tool}: {line}" for line in said)
        return out


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9:.]+", " ", text.lower()).strip()


# -- the spec's descriptor layouts, as written --------------------------------------

@dataclass
class SpecLayout:
    descriptor: str
    variant: str | None
    provenance: Mapping[str, Any]
    kinds: tuple[str, ...]
    fields: list[Mapping[str, Any]]
    path: tuple[str | int, ...]  # of the fields list
    encodings: Mapping[str, Any]
    doc: SpecDoc

    @property
    def label(self) -> str:
        return self.descriptor + (f"@{self.variant}" if self.variant else "")

    def where(self, path: tuple[str | int, ...]) -> str:
        line, col = self.doc.source.locate(path)
        return f"{self.doc.display}:{line}:{col}"


def _layouts_of(d: SpecDoc, name: str, owner: Mapping[str, Any],
                prefix: tuple[str | int, ...], variant: str | None,
                prov: Mapping[str, Any], enc: Mapping[str, Any]) -> list[SpecLayout]:
    if "layouts" in owner:
        return [SpecLayout(name, variant, lay.get("provenance", prov),
                           tuple(lay.get("kinds", ())), lay["fields"],
                           (*prefix, "layouts", i, "fields"), enc, d)
                for i, lay in enumerate(owner["layouts"])]
    if "fields" in owner:
        return [SpecLayout(name, variant, prov, (), owner["fields"], (*prefix, "fields"), enc, d)]
    return []


def spec_layouts(docs: Sequence[SpecDoc]) -> list[SpecLayout]:
    """Every layout of the spec's descriptor files: the baseline ones, then each variant's."""
    out: list[SpecLayout] = []
    for d in docs:
        data = d.data
        if not isinstance(data, dict) or "descriptor" not in data:
            continue
        name = data["descriptor"]
        out += _layouts_of(d, name, data, (), None, data.get("provenance", {}),
                           data.get("encodings", {}))
        for v, var in enumerate(data.get("variants", ())):
            out += _layouts_of(d, name, var, ("variants", v), var["name"],
                               var.get("provenance", {}),
                               {**data.get("encodings", {}), **var.get("encodings", {})})
    return out


def _captions(lay: SpecLayout) -> set[str]:
    p = lay.provenance
    return {_norm(str(p[k])) for k in ("caption", "table") if isinstance(p.get(k), str)}


def match_layout(table: DescriptorTable, layouts: Sequence[SpecLayout]) -> SpecLayout | None:
    cap = _norm(table.caption)
    version = table.section.version
    same = [lay for lay in layouts if cap in _captions(lay)]
    if not same and table.table.number is None:
        same = [lay for lay in layouts if any(c.startswith(cap) or cap.startswith(c)
                                              for c in _captions(lay) if len(c) > 12)]
    if not same:
        return None
    at = [lay for lay in same if lay.provenance.get("ptx_isa") == version]
    base = [lay for lay in same if "ptx_isa" not in lay.provenance]
    if version is not None and not at:
        # a document newer than every layout of the caption: the newest layout
        newer = sorted((lay for lay in same if "ptx_isa" in lay.provenance),
                       key=lambda lay: vkey(str(lay.provenance["ptx_isa"])))
        if newer and vkey(version) >= vkey(str(newer[-1].provenance["ptx_isa"])):
            at = [newer[-1]]
    return (at or base or same)[0]


def _spec_codes(f: Mapping[str, Any], kind: str | None) -> frozenset[int] | None:
    per = f.get("per_kind") or {}
    vals = per.get(kind) if kind in per else f.get("values")
    if isinstance(vals, Mapping):
        if "na" in vals:
            return frozenset((int(vals["na"]),))
        if "min" in vals:
            return frozenset(range(int(vals["min"]), int(vals["max"]) + 1))
        if "one_of" in vals:
            return frozenset(int(x) for x in vals["one_of"])
    if isinstance(vals, list):
        return frozenset(int(v["value"]) for v in vals)
    if f.get("type") == "flag":
        return frozenset((0, 1))
    return None


def _entry_bits(f: Mapping[str, Any]) -> tuple[int, int]:
    raw = f.get("bits", f.get("reserved", f.get("fixed")))
    lsb, msb = parse_bits(raw)
    return (min(lsb, msb), max(lsb, msb))


def _fixed_value(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


_TARGET = re.compile(r"\bsm_\d+[af]?\b")


def check_table(table: DescriptorTable, lay: SpecLayout,
                known_kinds: frozenset[str] = frozenset()) -> list[Proposal]:
    """``known_kinds``: the kinds of the descriptor's other layouts (a variant that leaves a
    kind out leaves it to the baseline on its targets)."""
    out: list[Proposal] = []
    spec_entries = [(i, f, _entry_bits(f)) for i, f in enumerate(lay.fields)]
    by_bits = {b: (i, f) for i, f, b in spec_entries}
    covered: set[int] = set()
    for e in table.entries:
        bits = (e.lsb, e.msb)
        covered.update(range(e.lsb, e.msb + 1))
        hit = by_bits.get(bits)
        where = f"{e.lsb}-{e.msb}" if e.lsb != e.msb else str(e.lsb)
        base = f"{lay.label}:{where}"
        if hit is None:
            over = [f for _, f, b in spec_entries if b[0] <= e.msb and e.lsb <= b[1]]
            names = ", ".join(f"{f.get('name', 'reserved' if 'reserved' in f else 'fixed')} "
                              f"({_entry_bits(f)[0]}-{_entry_bits(f)[1]})" for f in over)
            i0 = next((i for i, f, b in spec_entries if b[0] <= e.msb and e.lsb <= b[1]), 0)
            out.append(Proposal(f"descriptor:{base}:bits", "descriptor-field",
                                f"{lay.label}: the document has {e.role} bits {where} "
                                f"({e.description[:60]!r}); the spec has {names or 'nothing'} "
                                "there", e.loc, lay.where((*lay.path, i0))))
            continue
        i, f = hit
        spath = (*lay.path, i)
        spec_role = "reserved" if "reserved" in f else "fixed" if "fixed" in f else "field"
        if spec_role != e.role and not (spec_role == "fixed" and e.role == "field"):
            out.append(Proposal(f"descriptor:{base}:role", "descriptor-field",
                                f"{lay.label}: bits {where} are {e.role} in the document "
                                f"({e.description[:60]!r}), {spec_role} in the spec "
                                f"({f.get('name', '')})", e.loc, lay.where(spath)))
            continue
        if e.role == "fixed" and e.fixed_text is not None:
            v = _fixed_value(e.fixed_text)
            if v != int(f.get("value", 0)):
                out.append(Proposal(f"descriptor:{base}:fixed", "descriptor-field",
                                    f"{lay.label}: bits {where}: the document's constant is "
                                    f"{e.fixed_text}, the spec's {f.get('value')}", e.loc,
                                    lay.where((*spath, "value"))))
        if e.role == "field":
            out += _codes(table, e, lay, f, spath, base, where)
            cells = " ".join([e.description, *(v.text for v in e.values.values())])
            targets = sorted(set(_TARGET.findall(cells)))
            if targets and not any("target" in k for k in f):
                out.append(Proposal(f"descriptor:{base}:targets", "descriptor-target",
                                    f"{lay.label}: field {f.get('name')} (bits {where}) has a "
                                    f"rule for {', '.join(targets)} in the document; the spec "
                                    "has no target rule for it", e.loc, lay.where(spath)))
    for k in table.kinds:
        if lay.kinds and k not in lay.kinds and k not in known_kinds:
            out.append(Proposal(f"descriptor:{lay.label}:kind:{k}", "descriptor-kind",
                                f"{lay.label}: the document's table has .kind::{k}; the "
                                f"spec's layout has {', '.join(lay.kinds)}", table.loc,
                                lay.where(lay.path[:-1])))
    for i, f, b in spec_entries:
        if "reserved" in f and f.get("implicit"):
            continue
        if not covered.intersection(range(b[0], b[1] + 1)):
            out.append(Proposal(f"descriptor:{lay.label}:{b[0]}-{b[1]}:unlisted",
                                "descriptor-field",
                                f"{lay.label}: the spec has {f.get('name', 'reserved')} at bits "
                                f"{b[0]}-{b[1]}, which the document's table does not list",
                                table.loc, lay.where((*lay.path, i))))
    if table.formula is not None:
        text, mask, shift = table.formula
        used = {f.get("encoding") for f in lay.fields if f.get("encoding")}
        for name in sorted(str(u) for u in used):
            enc = lay.encodings.get(name, {})
            if (int(str(enc.get("mask", 0)), 0) if isinstance(enc.get("mask"), str)
                    else enc.get("mask")) != mask or enc.get("shift") != shift:
                out.append(Proposal(f"descriptor:{lay.label}:formula", "descriptor-formula",
                                    f"{lay.label}: the document's {text!r} differs from the "
                                    f"spec's encoding {name}: {enc.get('formula')}", table.loc,
                                    lay.where(("encodings", name)) if lay.variant is None
                                    else lay.where((*lay.path[:-1], "encodings", name))))
    return out


def _codes(table: DescriptorTable, e: Entry, lay: SpecLayout, f: Mapping[str, Any],
           spath: tuple[str | int, ...], base: str, where: str) -> list[Proposal]:
    out: list[Proposal] = []
    kinds: Iterable[str | None] = table.kinds or (None,)
    if e.ambiguous:
        doc_all = [v.codes for v in e.values.values()]
        spec_all = [_spec_codes(f, k) for k in kinds]
        if None in doc_all or None in spec_all:
            return out
        d = frozenset(c for codes in doc_all if codes for c in codes)
        s = frozenset(c for codes in spec_all if codes for c in codes)
        if d != s:
            out.append(Proposal(f"descriptor:{base}:codes", "descriptor-codes",
                                f"{lay.label}: field {f.get('name')} (bits {where}): the "
                                f"document allows {sorted(d)} over its kinds, the spec "
                                f"{sorted(s)}", e.loc, lay.where(spath)))
        return out
    limit = 1 << e.width
    for k in kinds:
        if k is not None and lay.kinds and k not in lay.kinds:
            continue  # a kind the layout lacks: proposed once per table (check_table)
        v = e.values.get(k)
        doc_codes = v.codes if v is not None else None
        if doc_codes is not None:
            # a code wider than the field is a value of several fields together (K = 128
            # with bit 3 as the upper bit): the other field says it
            doc_codes = frozenset(c for c in doc_codes if c < limit)
        spec_codes = _spec_codes(f, k)
        if doc_codes is None or spec_codes is None or doc_codes == spec_codes:
            continue
        if f.get("type") == "int" and v is not None and v.pairs and not v.range:
            continue  # labelled ints: the labels are not codes of a set
        kk = f" .kind::{k}" if k else ""
        add, drop = sorted(doc_codes - spec_codes), sorted(spec_codes - doc_codes)
        change = "; ".join(x for x in (f"add {add}" if add else "",
                                       f"remove {drop}" if drop else "") if x)
        out.append(Proposal(f"descriptor:{base}:{k or '-'}:codes", "descriptor-codes",
                            f"{lay.label}: field {f.get('name')} (bits {where}){kk}: the "
                            f"document allows {sorted(doc_codes)}, the spec "
                            f"{sorted(spec_codes)} ({change})", e.loc, lay.where(spath)))
    return out


# -- target notes of descriptor tables -------------------------------------------------

_BIT = re.compile(r"\bBits?\s+(\d+)(?:\s*-\s*(\d+))?")
_KINDS_LINE = re.compile(r"^\s*\*?\s*For\s+(.*):\s*$")


@dataclass
class TargetNote:
    loc: Loc
    text: str
    kinds: tuple[str, ...]  # () : every kind
    bits: tuple[int, int] | None
    targets: tuple[str, ...]

    @property
    def must(self) -> bool:
        return "must" in self.text


def target_notes(doc: Document, table: DescriptorTable) -> list[TargetNote]:
    """The "Target ISA Note" subsections of a descriptor table's section: one note per
    bullet that names a target, with the kinds of the bullet above it."""
    out: list[TargetNote] = []
    base = table.section.number + "."
    for s in doc.sections:
        if not (s.number.startswith(base) and "Target ISA Note" in s.title
                and s.loc.file == table.loc.file):
            continue
        kinds: tuple[str, ...] = ()
        for line, t in s.text:
            km = _KINDS_LINE.match(t.replace("`", ""))
            if km:
                kinds = tuple(re.findall(r"\.kind:?:(\w+)", km.group(1)))
                continue
            targets = tuple(dict.fromkeys(_TARGET.findall(t)))
            if not targets:
                continue
            bm = _BIT.search(t)
            bits = (int(bm.group(1)), int(bm.group(2) or bm.group(1))) if bm else None
            out.append(TargetNote(Loc(s.loc.file, line), " ".join(t.replace("`", "").split())
                                  .lstrip("* "), kinds, bits, targets))
    return out


def _rule_fields(spec: Spec, descriptor: str) -> set[str]:
    """Fields of ``descriptor`` that a target-dependent descriptor rule constrains."""
    out: set[str] = set()
    for ins in spec.instructions.instructions if spec.instructions else ():
        links = ins.descriptor_links
        for r in ins.descriptor_rules:
            if r.targets is not None and links.get(r.operand, ("",))[0] == descriptor:
                out.update(n for n, _ in r.require)
                out.update(r.shape_fields)
    return out


def _entry_for(note: TargetNote, table: DescriptorTable) -> Entry | None:
    if note.bits is not None:
        return next((e for e in table.entries if (e.lsb, e.msb) == note.bits
                     or e.lsb <= note.bits[0] <= e.msb), None)
    words = note.text.lower()
    for e in table.entries:
        sig = [w for w in re.findall(r"[a-z]{4,}", e.description.lower()) if w != "mode"]
        if sig and all(w in words for w in sig):
            return e
    return None


def check_target_notes(doc: Document, spec: Spec, table: DescriptorTable,
                       lay: SpecLayout, variants: Mapping[str, tuple[str, ...]]
                       ) -> list[Proposal]:
    """A note that names targets for one bit range: the spec must say it, by a layout
    that exists only on those targets ("valid for"), or by a target-dependent rule."""
    out: list[Proposal] = []
    ruled = _rule_fields(spec, lay.descriptor)
    for note in target_notes(doc, table):
        if note.kinds and table.kinds and not set(note.kinds) & set(table.kinds):
            continue
        e = _entry_for(note, table)
        if e is None:
            continue
        f = next((f for f in lay.fields if _entry_bits(f) == (e.lsb, e.msb)), None)
        name = str(f.get("name")) if f is not None else f"bits {e.lsb}-{e.msb}"
        if name in ruled:
            continue
        scoped = variants.get(lay.variant or "", ())
        family = {t.rstrip("af") for t in note.targets}
        if not note.must and scoped and family <= {t.rstrip("af") for t in scoped}:
            continue  # the layout exists only on those targets
        where = f"{e.lsb}-{e.msb}" if e.lsb != e.msb else str(e.lsb)
        out.append(Proposal(f"descriptor:{lay.label}:{where}:targets", "descriptor-target",
                            f"{lay.label}: {name} (bits {where}): the document's target note "
                            f"{note.text!r} is not in the spec (no target-dependent rule "
                            f"on {name})", note.loc,
                            lay.where((*lay.path, lay.fields.index(f))) if f is not None
                            else None))
    return out


_SUPPORT = re.compile(r"transpose and negate", re.I)


def check_support_tables(doc: Document, layouts: Sequence[SpecLayout]) -> list[Proposal]:
    """A table of which MMA kinds support transposing / negating A and B ("Is Transpose
    A/B supported": Yes / No) against the codes the spec's descriptor layouts of that kind
    give the transpose_a/_b and negate_a/_b fields (Table 62 of the 9.4 document against
    Table 51). A cell that is neither Yes nor No (conditions) is not read."""
    out: list[Proposal] = []
    for _, table in doc.tables():
        if not _SUPPORT.search(table.caption) or not table.header:
            continue
        heads = table.header[0]
        cols = {i: ("transpose" if "transpose" in h.lower() else "negate")
                for i, h in enumerate(heads) if re.search(r"transpose|negate", h, re.I)}
        for row in table.rows:
            kind = row.cells[0].strip().removeprefix(".kind::") if row.cells else ""
            for i, what in cols.items():
                cell = row.cells[i].strip() if i < len(row.cells) else ""
                if cell not in ("Yes", "No"):
                    continue
                for lay in layouts:
                    if kind not in lay.kinds:
                        continue
                    for n, f in enumerate(lay.fields):
                        name = str(f.get("name", ""))
                        if name not in (f"{what}_a", f"{what}_b"):
                            continue
                        codes = _spec_codes(f, kind) or frozenset()
                        if (1 in codes) == (cell == "Yes"):
                            continue
                        out.append(Proposal(
                            f"descriptor:{lay.descriptor}:{name}:{kind}:supported",
                            "descriptor-codes",
                            f"{lay.label}: {name} of .kind::{kind}: the document's "
                            f"{table.caption!r} says {cell}, the spec's codes are "
                            f"{sorted(codes)}", table.row_loc(row),
                            lay.where((*lay.path, n))))
    return out


# -- instructions -------------------------------------------------------------------

def _first_version(form: Form) -> str | None:
    targets = form.instruction.targets
    if targets is None:
        return None
    versions = list(form.support.matrix(targets).values())
    return min(versions, key=vkey) if versions else None


@dataclass
class _Match:
    template: Template
    instructions: list[Instruction]
    forms: list[tuple[Form, dict[str, str]]]  # spec forms it matches, with slot values


def _instructions_for(spec: Spec, head: str) -> list[Instruction]:
    iset = spec.instructions
    if iset is None or not head:
        return []
    found = iset.for_opcode(head)
    longer = [i for i in iset.instructions if i.name.startswith(head + ".")]
    if found:
        return found[:1] + [i for i in found[1:] if i.name == found[0].name] + longer
    return longer


def wild_tokens(t: Template, instructions: Sequence[Instruction]) -> frozenset[str]:
    """Literal tokens of ``t`` past its head that no opcode of the instructions has: the
    names of a summary's template (``.shape``, ``.dtype``) that no value set defines."""
    have: set[str] = set()
    for ins in instructions:
        memo = ins.__dict__.setdefault("_doc_tokens", None)
        if memo is None:
            memo = ins.__dict__["_doc_tokens"] = frozenset(
                tok for f in ins.forms for tok in re.findall(r"\.[^.]+", f.opcode))
        have |= memo
    named = {"." + part for ins in instructions for part in ins.name.split(".")}
    return frozenset(tok for tok in t.literals()
                     if tok.startswith(".") and tok not in have and tok not in named)


def match_template(spec: Spec, t: Template) -> _Match:
    inss = _instructions_for(spec, t.head)
    rx = t.regex(wild_tokens(t, inss))[0]
    hits: list[tuple[Form, dict[str, str]]] = []
    for ins in inss:
        for form in ins.forms:
            m = rx.match(form.opcode)
            if m is not None:
                hits.append((form, {g: v for g, v in m.groupdict().items() if v is not None}))
    return _Match(t, inss, hits)


def check_templates(spec: Spec, section: Section, errata: set[str],
                    combinations: bool = False) -> tuple[list[Proposal], list[_Match]]:
    """Templates no form matches, values no matching form has, and (``combinations``: only
    with assemblers, which keep those some ptxas accepts) the combinations of a small
    template's values that are no form."""
    out: list[Proposal] = []
    matches: list[_Match] = []
    for t in templates_of(section):
        m = match_template(spec, t)
        if not m.instructions:
            continue
        matches.append(m)
        ins = m.instructions[0]
        spec_at = f"{ins.spec_file}" if ins.spec_file else None
        rx, names = t.regex(wild_tokens(t, m.instructions))
        reordered = _reordered_forms(t, m, rx)
        if not m.forms and not reordered:
            out.append(Proposal(f"instruction:{ins.id}:template:{t.opcode}", "instruction-form",
                                f"{ins.name}: no valid form of the spec is written "
                                f"{t.opcode}", t.loc, spec_at, t.examples()))
            continue
        used: dict[str, set[str]] = {}
        for _, groups in m.forms:
            for g, v in groups.items():
                used.setdefault(names[g], set()).add(v)
        missing = _combinations(t, m) if combinations else []
        if missing:
            out.append(Proposal(
                f"instruction:{ins.id}:combination:{t.opcode}:{len(missing)}",
                "instruction-combination",
                f"{ins.name}: {len(missing)} of the opcodes {t.opcode} writes are no valid "
                f"form of the spec, e.g. {missing[0]}", t.loc, spec_at, missing))
        for slot in dict.fromkeys(names.values()):
            vs = t.sets[slot]
            for v in vs.values:
                if v and v not in used.get(slot, set()) and \
                        not any(_has(op, v) for op in reordered):
                    out.append(Proposal(
                        f"instruction:{ins.id}:value:{slot}:{v}", "instruction-value",
                        f"{ins.name}: {t.opcode}: no valid form of the spec has {v} for "
                        f".{slot} (the document's set at {vs.loc.line})", t.loc, spec_at,
                        _with_value(m, rx, names, slot, v)))
    return out, matches


def _tokens(text: str) -> list[str]:
    return re.findall(r"\.[^.]+", text)


def _reordered_forms(t: Template, m: _Match,
                     rx: re.Pattern[str]) -> list[str]:
    """The opcodes of the forms the template's regex misses that an instruction with a
    ``spelling`` (ptxas reads its qualifiers in any order) writes in another order: each
    form's tokens put in the template's order (a token at the first part that can write
    it; the tokens of one value keep theirs) and matched again. The spec writes
    ``.override::global_address`` before ``.bulk_group``, the document after it."""
    if not any(ins.spelling is not None for ins in m.instructions):
        return []
    rank: dict[str, int] = {}

    def walk(parts: list[Part]) -> None:
        for p in parts:
            if p.kind == "optional":
                walk(p.parts)
                continue
            texts = [p.text] if p.kind == "literal" else t.sets[p.text].values
            for text in texts:
                for tok in _tokens(text):
                    rank.setdefault(tok, len(rank))
    walk(t.parts[1:] if t.parts and t.parts[0].kind == "literal" else t.parts)
    matched = {f.opcode for f, _ in m.forms}
    out = []
    for ins in m.instructions:
        if ins.spelling is None:
            continue
        for f in ins.forms:
            if f.opcode in matched or not f.opcode.startswith(t.head):
                continue
            toks = _tokens(f.opcode[len(t.head):])
            if any(tok not in rank for tok in toks):
                continue
            text = t.head + "".join(sorted(toks, key=rank.__getitem__))
            if rx.match(text):
                out.append(text)
    return out


def _combinations(t: Template, m: _Match) -> list[str]:
    """The opcodes of a small template (every combination of its slots' values) that no
    valid form has: a combination the document writes and the spec forbids."""
    every = t.expansions()
    if every is None:
        return []
    have = {f.opcode for f, _ in m.forms}

    def spelled(op: str) -> bool:
        """``op`` is a valid form written in another order ptxas reads (the instruction's
        ``spelling``): the document's order of optional parts is not always the spec's."""
        return any(r in every_form for ins in m.instructions if ins.spelling is not None
                   for r in reorder(op, ins.name, ins.qualifiers, ins.spelling))

    every_form = {f.opcode for ins in m.instructions for f in ins.forms}

    return [op for op in every if op not in have and not spelled(op)]


def _with_value(m: _Match, rx: re.Pattern[str], names: Mapping[str, str], slot: str,
                value: str) -> list[str]:
    """A matched form's opcode with ``value`` in the slot (the form the proposal adds); a
    slot no matched form writes (an optional part) is added to the first form's values."""
    for form, _ in m.forms:
        hit = rx.match(form.opcode)
        if hit is None:
            continue
        for g, name in names.items():
            if name == slot and hit.group(g) is not None:
                op = form.opcode
                return [op[:hit.start(g)] + value + op[hit.end(g):]]
    if not m.forms:
        return []
    first = rx.match(m.forms[0][0].opcode)
    choice = {names[g]: v for g, v in (first.groupdict() if first else {}).items()
              if v is not None}
    return [m.template.render({**choice, slot: value})]


_VERSION = re.compile(r"PTX ISA (?:version|\.version)\s+(\d+\.\d+)")
_TICK = re.compile(r"`((?:\.|::)[\w:.]+)`")
_SUB_ON = re.compile(r"sub-qualifier `(::[\w:]+)` on `(\.[\w:.]+)`")
# Sentences whose tokens are not opcode parts or whose condition is not in the opcode:
# operand values ("with value 4"), operands ("without the modifier"), a role of a state
# space ("as destination").
_NOT_OPCODE = re.compile(r"\bwith values?\b|\bwithout\b|\bas (?:destination|source)\b|"
                         r"\bargument\b|\boperand\b")


def _note_tokens(sentence: str) -> list[str]:
    """The opcode parts a note sentence names (``::cta`` on ``.shared``: ``.shared::cta``)."""
    m = _SUB_ON.search(sentence)
    if m:
        return [m.group(2) + m.group(1)]
    return [t for t in _TICK.findall(sentence) if t.startswith(".")]


def _note_opcodes(sentence: str, name: str) -> list[str]:
    """The opcodes of ``name`` a note sentence writes out (`cvt.f32.bf16`,
    `cvt.{e4m3x2, e5m2x2}.{f32/f16x2}`), each as the text after the name, its choices
    expanded (a brace of one value is optional unless it ends the opcode): a form it
    speaks of has one of them.
    None where the sentence names a target (its version is that target's)."""
    if "`sm_" in sentence:
        return []
    out: list[str] = []
    for text in re.findall(r"`" + re.escape(name) + r"((?:\.|\{)[^`]*)`", sentence):
        out += [re.sub(r"\.+", ".", x) for x in _choices(text.replace(" ", ""))]
    return out


def _choices(text: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", text)
    if m is None:
        return [text]
    head, tail = text[:m.start()], text[m.end():]
    options = [("" if o.startswith(".") or head.endswith(".") else ".") + o
               for o in re.split(r"[,/]", m.group(1))]
    if len(options) == 1 and tail:  # a brace of one value, but not the last type
        options = ["", *options]
    return [x for o in options for x in _choices(head + o + tail)]


def _same_first(doc_v: str, spec_v: str, floor: str | None) -> bool:
    """The document's first version agrees with the spec's: equal, or both at or before the
    oldest version of the spec's support matrix (``ptx_isa_versions[0]``), whose first
    entry stands for "at that version or earlier": the matrix has no older version."""
    if doc_v == spec_v:
        return True
    return floor is not None and spec_v == floor and vkey(doc_v) < vkey(floor)


def check_notes(section: Section, matches: list[_Match],
                floor: str | None = None) -> list[Proposal]:
    """The "PTX ISA Notes": each sentence's version against the spec's first version of
    the forms it names (the instruction itself for "Introduced in"); ``floor``: the
    oldest version of the support matrix (see ``_same_first``)."""
    out: list[Proposal] = []
    if not matches:
        return out
    forms = [f for m in matches for f, _ in m.forms]
    ins = matches[0].instructions[0]
    for line, t in section.paragraphs("PTX ISA Notes", ("Target ISA Notes", "Examples")):
        for sentence in re.split(r"(?<=\.)\s+(?=[A-Z])", t):
            vm = _VERSION.search(sentence)
            if vm is None:
                continue
            doc_v = vm.group(1)
            tokens = _note_tokens(sentence)
            written = _note_opcodes(sentence, ins.name)
            if _NOT_OPCODE.search(sentence):
                continue
            if sentence.strip().startswith("Introduced in"):
                chosen = forms
                what = "the instruction"
            elif tokens or written:
                chosen = [f for f in forms if all(_has(f.opcode, tok) for tok in tokens)
                          and (not written or any(_has(f.opcode, w) for w in written))]
                what = " ".join(tokens) or sentence.split("`")[1]
            else:
                continue
            firsts = [v for v in (_first_version(f) for f in chosen) if v]
            if not firsts:
                continue
            spec_v = min(firsts, key=vkey)
            if not _same_first(doc_v, spec_v, floor):
                out.append(Proposal(f"instruction:{ins.id}:since:{what}", "instruction-version",
                                    f"{ins.name}: {what}: the document says PTX ISA {doc_v}, "
                                    f"the spec's first version is {spec_v}",
                                    Loc(section.loc.file, line), ins.spec_file or None))
    return out


def _has(opcode: str, token: str) -> bool:
    return re.search(re.escape(token) + r"(?![\w])", opcode) is not None


# -- release notes --------------------------------------------------------------------

_RELEASE = re.compile(r"Changes in PTX ISA Version (\d+\.\d+)")
_NAMES = re.compile(r"`([a-z][\w.:]*)`")


def check_release_notes(doc: Document, spec: Spec,
                        slots: Mapping[str, Mapping[str, set[str]]] | None = None
                        ) -> list[Proposal]:
    """Each "Adds support for `.q` ... for `instr` instruction(s)" bullet of a release
    note: the spec's forms of the instruction must have the qualifier, first at that
    version. (Bullets of instructions the spec does not have are not its business.)"""
    out: list[Proposal] = []
    iset = spec.instructions
    if iset is None:
        return out
    for s in doc.sections:
        rm = _RELEASE.search(s.title)
        if rm is None:
            continue
        version = rm.group(1)
        for line, t in s.text:
            if "Adds support for" not in t or " for `" not in t:
                continue
            start = t.find("Adds support for") + len("Adds support for")
            cut = t.find(" for `", start)
            head, tail = t[start:cut], t[cut + len(" for "):].split(" instruction")[0]
            quals = [q for q in _TICK.findall(head) if q.startswith(".")]
            names = _NAMES.findall(tail)
            if not quals or not names or _NOT_OPCODE.search(t) or " with " in head:
                continue
            for name in names:
                inss = [i for i in iset.for_opcode(name) if i.name == name] or \
                    [i for i in iset.instructions if i.name.startswith(name + ".")]
                if not inss:
                    continue
                forms = [f for i in inss for f in i.forms]
                within = _release_context(head, t[cut:])
                for q in quals:
                    pattern = q.rstrip("*")
                    # a slot's name (".sem"): any of the values the document's syntax gives it
                    values = (slots or {}).get(inss[0].id, {}).get(q[1:], {q})
                    having = [f for f in forms if any(
                        pattern in f.opcode if q.endswith("*") else _has(f.opcode, v)
                        for v in values) and within(f.opcode, q)]
                    key = f"instruction:{inss[0].id}:release:{version}:{q}"
                    loc = Loc(s.loc.file, line)
                    if not having:
                        out.append(Proposal(key, "release-note",
                                            f"{name}: the PTX ISA {version} release notes add "
                                            f"{q}; no valid form of the spec has it", loc,
                                            inss[0].spec_file or None))
                        continue
                    firsts = [v for v in (_first_version(f) for f in having) if v]
                    first = min(firsts, key=vkey) if firsts else None
                    if first is not None and first != version:
                        out.append(Proposal(key, "release-note",
                                            f"{name}: the PTX ISA {version} release notes add "
                                            f"{q}; the spec's first version of it is {first}",
                                            loc, inss[0].spec_file or None))
    return out


def _release_context(head: str, rest: str) -> Callable[[str, str], bool]:
    """The forms a bullet's "... for `instr` instruction with `.a`, `.b` ... types" speaks
    of: those with one of the named types too; where one side is the destination type and
    the other the source types, written next to each other in that order
    (``.bf16x2.e4m3x2``: destination, source)."""
    at = rest.find(" with ")
    ctx = [q for q in _TICK.findall(rest[at:]) if q.startswith(".")] if at >= 0 else []
    if not ctx:
        return lambda opcode, q: True
    tail = rest[at:]
    if "destination type" in head and "source type" in tail:
        return lambda opcode, q: any(_has(opcode, q + c) for c in ctx)
    if "source type" in head and "destination type" in tail:
        return lambda opcode, q: any(_has(opcode, c + q) for c in ctx)
    return lambda opcode, q: any(_has(opcode, c) for c in ctx)


# -- the whole check ----------------------------------------------------------------

def variant_targets(docs: Sequence[SpecDoc]) -> dict[str, tuple[str, ...]]:
    """{variant name: its targets} of every descriptor file."""
    return {str(v["name"]): tuple(v.get("targets", ())) for d in docs
            if isinstance(d.data, dict) for v in d.data.get("variants", ())}


def errata_keys(docs: Sequence[SpecDoc]) -> set[str]:
    out: set[str] = set()
    for d in docs:
        if isinstance(d.data, dict):
            out.update(str(e["proposal"]) for e in d.data.get("doc_errata", ()))
    return out


def check(doc: Document, spec: Spec, docs: Sequence[SpecDoc],
          combinations: bool = False) -> list[Proposal]:
    errata = errata_keys(docs)
    out: list[Proposal] = []
    layouts = spec_layouts(docs)
    for table in descriptor_tables(doc):
        lay = match_layout(table, layouts)
        if lay is None:
            if "descriptor" in table.caption.lower():
                out.append(Proposal(f"descriptor-table:{_norm(table.caption)}",
                                    "descriptor-table",
                                    f"the document's table {table.caption!r} matches no "
                                    "descriptor layout of the spec", table.loc, None))
            continue
        out += check_table(table, lay, frozenset(k for other in layouts
                                                 if other.descriptor == lay.descriptor
                                                 for k in other.kinds))
        out += check_target_notes(doc, spec, table, lay, variant_targets(docs))
    out += check_support_tables(doc, layouts)
    slots: dict[str, dict[str, set[str]]] = {}
    for section in doc.sections:
        props, matches = check_templates(spec, section, errata, combinations)
        out += props
        out += check_notes(section, matches,
                           spec.targets.versions[0] if spec.targets is not None else None)
        for m in matches:
            for ins in m.instructions:
                # every set the template sees: also one nested in another's values
                # (".report_mechanism" inside .completion_mechanism)
                for name, vs in m.template.sets.items():
                    slots.setdefault(ins.id, {}).setdefault(name, set()).update(
                        v for v in vs.values if v)
    out += check_release_notes(doc, spec, slots)
    # one proposal per key (a value missing from several templates, a formula under
    # several tables): the first place, the others as "also"
    kept: dict[str, Proposal] = {}
    shown = {d.rel: d.display for d in docs}  # an instruction names its file as `rel`
    for p in out:
        if p.key in errata:
            continue
        if p.spec in shown:
            p.spec = shown[p.spec]
        first = kept.get(p.key)
        if first is None:
            kept[p.key] = p
        elif p.doc != first.doc and p.doc not in first.also:
            first.also.append(p.doc)
            first.forms += [f for f in p.forms if f not in first.forms]
    return list(kept.values())
