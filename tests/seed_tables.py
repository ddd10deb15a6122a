"""Parsers for the tables of the seed documents (tests/seeds) and of the
generated Markdown, reduced to comparable rows of normalised cells."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ptxgen.escape import md_unescape

SEEDS = Path(__file__).parent / "seeds"


def seed_text(prefix: str) -> str:
    (path,) = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8")


def norm(cell: str) -> str:
    """Normalise whitespace, dashes, Markdown links/escapes and list separators."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)  # [text](url) -> text
    text = text.replace("`", "").replace("\\", "")
    text = re.sub(r"[\u2013\u2014\u2212]", "-", text)  # en/em dash, minus
    text = text.replace(";", " ").replace(",", " ")
    text = re.sub(r"\s*-\s*", "-", text)
    return " ".join(text.split())


@dataclass
class SeedTable:
    rows: list[list[str]]  # normalised cells, spans expanded where the seed says how
    collapsed: bool = False  # True: a row may merge equal neighbouring value cells


def _block(text: str, start: str, end_markers: tuple[str, ...]) -> str:
    i = text.index(start)
    j = min((text.find(m, i + len(start)) for m in end_markers if text.find(m, i + len(start)) > 0),
            default=len(text))
    return text[i:j]


def _rowspan(rows: list[list[str]], width: int, fixed: int) -> list[list[str]]:
    """Rows shorter than `fixed` + 1 cells take their value cells from the row above."""
    out: list[list[str]] = []
    for row in rows:
        if len(row) <= fixed and out:
            row = row + out[-1][fixed:]
        out.append(row)
    return out


# -- seed 000: pipe Markdown; empty cell = merged with the left, short row = merged with above --

def seed000(table: int) -> SeedTable:
    text = seed_text("000")
    block = _block(text, f"Table {table} ", tuple(f"Table {t} " for t in range(table + 1, 50)))
    lines = [ln for ln in block.splitlines() if ln.startswith("|")]
    body = [ln for ln in lines[2:] if not ln.startswith("| .kind")]
    rows = []
    for ln in body:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        rows.append(cells)
    width = max(len(r) for r in rows)
    out: list[list[str]] = []
    for row in rows:
        if len(row) < width and out and len(row) <= 3:
            row = row + out[-1][3:]
        filled: list[str] = []
        for c in row:
            filled.append(c if c or not filled else filled[-1])
        out.append([norm(c) for c in filled])
    return SeedTable(out)


# -- seed 001: every cell written out; a row may wrap onto the next line ---------------------

def seed001(table: int) -> SeedTable:
    text = seed_text("001")
    block = _block(text, f"Table {table} ", tuple(f"Table {t} " for t in range(table + 1, 50)))
    body = block.split("|---", 1)[1].split("\n", 1)[1]
    rows: list[str] = []
    for line in body.splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows and line.strip():
            rows[-1] += " " + line  # a row wrapped onto the next line
    out = []
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        out.append([norm(c) for c in cells if c])
    return SeedTable(out)


# -- seed 003: flattened HTML; spans are lost, so value cells compare collapsed ---------------

def _rows003(block: str) -> list[list[str]]:
    lines = [ln.rstrip() for ln in block.splitlines()]
    rows = []
    started = False
    for ln in lines:
        if ln.startswith("---"):
            started = True
            continue
        if not started:
            continue
        if ln.startswith("Table "):
            break
        if "|" not in ln:
            if rows:
                break
            continue
        rows.append([c.strip() for c in ln.split("|")])
    return rows


def seed003(caption: str, *, skip_subheader: bool = False, fixed: int = 3) -> SeedTable:
    text = seed_text("003")
    start = text.index(caption)
    block = text[start:]
    rows = _rows003(block)
    rows = [r for r in rows if not r[0].startswith(".kind")]  # per-kind sub-header
    if skip_subheader:
        rows = rows[1:]
    rows = _rowspan(rows, 0, fixed)
    return SeedTable([[norm(c) for c in r] for r in rows], collapsed=True)


def seed003_examples() -> list[tuple[list[str], list[str]]]:
    """(input row, output mask strings) for each worked example of Table 45."""
    text = seed_text("003")
    out = []
    for part in re.split(r"\n\s*\d\. Example \d", text)[1:]:
        rows = _rows003(part)
        masks = re.findall(r"Output (?:mask|masl)\d: (0b[^\n(]*?)\s*(?:\(size = N\))?\s*$", part,
                           re.M)
        if not masks:
            m = re.search(r"Output zero-column mask: (0x\w+)", part)
            masks = [m.group(1)] if m else []
        out.append((rows[0], [" ".join(m.split()) for m in masks]))
    return out


# -- seed 004: GitHub Markdown ---------------------------------------------------------------

def seed004_wgmma() -> SeedTable:
    text = seed_text("004")
    block = _block(text, "### Matrix Descriptor Format", ("Where `encode",))
    lines = [ln for ln in block.splitlines() if ln.startswith("|")][2:]
    return SeedTable([[norm(c) for c in ln.strip().strip("|").split("|")] for ln in lines])


# -- generated Markdown ------------------------------------------------------------------------

@dataclass
class DocRow:
    cells: list[str]
    implicit: str | None


def doc_table(markdown: str, heading: str) -> list[DocRow]:
    """Rows of the first pipe table after the heading that starts with `heading`."""
    i = markdown.index("\n## " + heading)
    lines = markdown[i:].split("\n")[2:]
    rows: list[DocRow] = []
    seen_table = False
    for ln in lines:
        if ln.startswith("|"):
            seen_table = True
            implicit = None
            m = re.search(r"<!-- not in the source table: ([\w-]+) -->$", ln)
            if m:
                implicit = m.group(1)
                ln = ln[: m.start()].rstrip()
            cells = re.split(r"(?<!\\)\|", ln.strip()[1:-1])
            rows.append(DocRow([md_unescape(c.strip()) for c in cells], implicit))
        elif seen_table:
            break
    return rows[2:]  # header and separator
