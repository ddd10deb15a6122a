"""The document's descriptor tables as bit fields: ranges, widths, descriptions and the
codes each kind allows, every row with its file:line.

A descriptor table is a table whose first column holds bit ranges ("0-13", "13-0",
"2"). Its value columns are one per MMA kind (named by a header row of ``.kind::X``
cells) or none (the values are then written in the description: "- 0: label",
"0. label", "0=label"). Merged cells are resolved as each form writes them: an HTML
colspan/rowspan is repeated, an empty pipe cell repeats the cell on its left, a row of
only bits, size and description repeats the values of the row above (the docs' rowspan);
a row with fewer value cells than kinds and no empty cells cannot say which cell spans
and is marked ambiguous (its codes are compared as a union).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ptxgen.doc.markdown import Document, Loc, Row, Section, Table

_BITS = re.compile(r"^(\d+)(?:\s*[-–]\s*(\d+))?$")
_PAIR = re.compile(r"=\s*(\d+)")
_DASHED = re.compile(r"-\s*(\d+)\s*:\s*([^-]+?)(?=\s+-\s*\d+\s*:|$)")
_NUMBERED = re.compile(r"(?<![\w-])(\d+)\.\s+(.+?)(?=\s+\d+\.\s|\s+Note:|$)")
_INLINE = re.compile(r"(\d+)\s*=\s*([^,]+?)(?=,\s*\d+\s*=|$)")
_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")
_ONE_OF = re.compile(r"^(\d+)(?:\s*(?:,|or)\s*(\d+))+$")
_SHIFT = re.compile(r"^([A-Z])\s*>>\s*(\d+)$")
_FIXED = re.compile(r"Fixed constant value of\s+(0[bx][0-9a-fA-F]+|\d+)")
_KIND = re.compile(r"\.kind::(\w+)")
_FORMULA = re.compile(r"where\s+([\w-]+)\((\w)\)\s*=\s*(\(.*?\)\s*>>\s*\d+)")
_ENCODE = re.compile(r"(?:encode|where)[^=]*\((\w)\)\s*=\s*\(\s*\w\s*&\s*(0x[0-9A-Fa-f]+)\s*\)"
                     r"\s*>>\s*(\d+)")


@dataclass(frozen=True)
class Values:
    """What one cell allows: labelled codes, a range, a set, one not-applicable code, a
    dimension shift, or only text."""

    pairs: tuple[tuple[str, int], ...] = ()
    range: tuple[int, int] | None = None
    one_of: tuple[int, ...] = ()
    na: int | None = None
    shift: tuple[str, int] | None = None
    text: str = ""

    @property
    def codes(self) -> frozenset[int] | None:
        """Every code allowed, or None when the cell does not say (a dimension, text)."""
        if self.pairs:
            return frozenset(c for _, c in self.pairs)
        if self.range is not None:
            return frozenset(range(self.range[0], self.range[1] + 1))
        if self.one_of:
            return frozenset(self.one_of)
        if self.na is not None:
            return frozenset((self.na,))
        return None


def parse_values(text: str) -> Values:
    t = " ".join(text.replace(";", " ").split())
    if not t:
        return Values()
    m = _SHIFT.match(t)
    if m:
        return Values(shift=(m.group(1), int(m.group(2))), text=t)
    if re.match(r"^\d+\s*\(NA\)$", t):
        return Values(na=int(t.split()[0]), text=t)
    m = _RANGE.match(t)
    if m:
        return Values(range=(int(m.group(1)), int(m.group(2))), text=t)
    if _ONE_OF.match(t):
        return Values(one_of=tuple(int(x) for x in re.findall(r"\d+", t)), text=t)
    if re.match(r"^\d+$", t):
        return Values(one_of=(int(t),), text=t)
    pairs: list[tuple[str, int]] = []
    start = 0
    for pm in _PAIR.finditer(t):
        if t.count("(", 0, pm.start()) != t.count(")", 0, pm.start()):
            continue  # "(Dense K=64 / Sparse K=128) = 0": an = inside the label
        label = t[start:pm.start()].strip()
        pairs.append((label, int(pm.group(1))))
        start = pm.end()
    if pairs and all(label for label, _ in pairs):
        return Values(pairs=tuple(pairs), text=t)
    return Values(text=t)


def description_values(text: str) -> tuple[str, Values]:
    """Values written inside a description: "mode: - 0: a - 1: b", "0. a 1. b" (a
    trailing "Note: ..." dropped) or "0=a, 1=b"; the description without them."""
    for style, rx in (("dashed", _DASHED), ("numbered", _NUMBERED), ("inline", _INLINE)):
        head_end = {"dashed": r"-\s*\d+\s*:", "numbered": r"(?<![\w-])\d+\.\s",
                    "inline": r"\d+\s*=\s*"}[style]
        m = re.search(head_end, text)
        if m is None:
            continue
        body = text[m.start():]
        body = body.split(" Note:")[0]
        pairs = [(lab.strip().rstrip(","), int(code)) for code, lab in rx.findall(body)]
        if len(pairs) >= 2:
            return text[:m.start()].strip(), Values(pairs=tuple((lab, c) for lab, c in pairs),
                                                   text=body)
    return text, Values()


@dataclass
class Entry:
    """One row: a field, a reserved range or a fixed constant."""

    lsb: int
    msb: int
    size: int | None  # the size column, when the table has one
    description: str
    values: dict[str | None, Values]  # by kind (None: the table has no kinds)
    loc: Loc
    ambiguous: bool = False
    name: str | None = None  # a "Field Name" column

    @property
    def width(self) -> int:
        return self.msb - self.lsb + 1

    @property
    def role(self) -> str:
        d = self.description.lower()
        if d.startswith("reserved") or (self.name or "").lower().startswith("reserved"):
            return "reserved"
        if _FIXED.search(self.description):
            return "fixed"
        return "field"

    @property
    def fixed_text(self) -> str | None:
        m = _FIXED.search(self.description)
        return m.group(1) if m else None


@dataclass
class DescriptorTable:
    table: Table
    section: Section
    kinds: tuple[str, ...]  # () for a table without kind columns
    entries: list[Entry] = field(default_factory=list)
    formula: tuple[str, int, int] | None = None  # (text, mask, shift) of its encode()

    @property
    def loc(self) -> Loc:
        return self.table.loc

    @property
    def caption(self) -> str:
        return self.table.caption

    @property
    def explicit(self) -> bool:
        """Every value cell written out (no ambiguous merged cells)."""
        return not any(e.ambiguous for e in self.entries)


def _kinds_row(cells: list[str], first: list[str]) -> tuple[str, ...] | None:
    """The kinds a header row names (its other cells repeat the first header row's)."""
    found = [m.group(1) for c in cells for m in [_KIND.search(c)] if m]
    if found and all(_KIND.search(c) or not c or c in first for c in cells):
        return tuple(found)
    return None


def _bits(text: str) -> tuple[int, int] | None:
    m = _BITS.match(text.strip())
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2) if m.group(2) else m.group(1))
    return (min(a, b), max(a, b))


def descriptor_table(section: Section, table: Table) -> DescriptorTable | None:
    """The table as bit fields, or None when its first column is not bit ranges."""
    bit_rows = [r for r in table.rows if r.cells and _bits(r.cells[0])]
    head = [c.lower() for c in (table.header[0] if table.header else [])]
    if len(bit_rows) < 2 or not head or not head[0].startswith("bit"):
        return None
    kinds: tuple[str, ...] = ()
    for cells in [*table.header[1:], *(r.cells for r in table.rows[:2] if not _bits(r.cells[0]))]:
        k = _kinds_row(cells, table.header[0])
        if k:
            kinds = k
    if not kinds and table.header:
        kinds = tuple(m.group(1) for c in table.header[0] for m in [_KIND.search(c)] if m)
    has_size = len(head) > 1 and "size" in head[1]
    has_name = any("field name" in h for h in head)
    first_value = 1 + has_size + 1 + has_name
    out = DescriptorTable(table, section, kinds)
    prev: Entry | None = None
    for row in bit_rows:
        lsb, msb = _bits(row.cells[0])  # type: ignore[misc]
        cells = row.cells
        size = int(cells[1]) if has_size and len(cells) > 1 and cells[1].isdigit() else None
        name = cells[2] if has_name and len(cells) > 2 else None
        desc_i = first_value - 1
        desc = cells[desc_i] if len(cells) > desc_i else ""
        values: dict[str | None, Values] = {}
        ambiguous = False
        if kinds:
            raw = cells[first_value:]
            if not any(raw) and prev is not None:  # the docs' rowspan: the row above's
                values = dict(prev.values)
                ambiguous = prev.ambiguous
            else:
                filled: list[str] = []
                for c in raw[:len(kinds)]:
                    filled.append(c if c or not filled else filled[-1])
                if len(filled) < len(kinds):
                    ambiguous = len(filled) > 1
                    filled += [filled[-1] if filled else ""] * (len(kinds) - len(filled))
                values = {k: parse_values(c) for k, c in zip(kinds, filled, strict=True)}
        else:
            vtext = " ".join(cells[first_value:])
            if vtext.strip():
                values = {None: parse_values(vtext)}
            else:
                desc, v = description_values(desc)
                values = {None: v}
        entry = Entry(lsb, msb, size, desc, values, table.row_loc(row), ambiguous, name)
        out.entries.append(entry)
        prev = entry
    return out


def formula_of(section: Section, table: Table) -> tuple[str, int, int, Loc] | None:
    """The "where encode(x) = (x & MASK) >> SHIFT" written after a table, if any."""
    for line, t in section.text:
        if line <= table.loc.line:
            continue
        m = _ENCODE.search(t.replace("`", ""))
        if m:
            return (t.strip().replace("`", ""), int(m.group(2), 16), int(m.group(3)),
                    Loc(table.loc.file, line))
    return None


def descriptor_tables(doc: Document) -> list[DescriptorTable]:
    out = []
    for section, table in doc.tables():
        d = descriptor_table(section, table)
        if d is not None:
            f = formula_of(section, table)
            if f is not None:
                d.formula = f[:3]
            out.append(d)
    return out


def row_of(table: Table, line: int) -> Row | None:
    return next((r for r in table.rows if r.line == line), None)
