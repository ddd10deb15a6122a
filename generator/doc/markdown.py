"""The PTX ISA document as Markdown: sections, code blocks, tables and text, each with
the file and line it came from.

Two forms are read (and any mix of them): one file per section with front matter and
``#`` headings, tables as pipe rows or as HTML (``../shared/ptx-isa-9.4``), and the
seeds' forms (tests/seeds: docs-style pipe tables whose empty or missing cells are
merged cells, or plain text with numbered headings and multi-line pipe rows). A
position lost here can never be recovered, so every block, row and line keeps it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(r"^\s*(?:>\s*)*```")
_HEADING = re.compile(r"^(#{1,7})\s+(\d+(?:\.\d+)*)\.?\s+(.*?)\s*$")
_PLAIN_HEADING = re.compile(r"^(\d+(?:\.\d+){2,})\.\s+(\S.{0,150})$")
_OTHER_HEADING = re.compile(r"^(#{1,7})\s+(.*?)\s*$")
_CAPTION = re.compile(r"^\s*Table\s+(\d+)\s+(.*)$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_LINK = re.compile(r"\[([^\]]*)\]\((?:<[^>]*>|[^)]*)\)")
_PERMALINK = re.compile(r"\[\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Loc:
    """A place in the document: ``file:line``."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Row:
    cells: list[str]
    line: int
    # cells the row spans from the left (HTML colspan; docs-style empty cells); a row
    # with fewer cells than the table's columns and no way to tell which one spans is
    # ambiguous
    ambiguous: bool = False


@dataclass
class Table:
    loc: Loc
    number: int | None  # "Table 49"; None for a table without a numbered caption
    caption: str
    header: list[list[str]]  # header rows (a second row names the kinds)
    rows: list[Row]

    def row_loc(self, row: Row) -> Loc:
        return Loc(self.loc.file, row.line)


@dataclass
class Code:
    loc: Loc
    lines: list[tuple[int, str]]  # (line number, text)


@dataclass
class Section:
    """One numbered heading and what follows it up to the next heading."""

    number: str  # "9.7.18.4.2"
    title: str
    loc: Loc
    version: str | None  # the document's PTX ISA version (front matter), if it says
    codes: list[Code] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    text: list[tuple[int, str]] = field(default_factory=list)  # prose lines

    def paragraphs(self, after: str, stop: Sequence[str] = ()) -> list[tuple[int, str]]:
        """The prose lines between a line that is ``after`` (a label such as "PTX ISA
        Notes") and the next label of ``stop`` (or the end)."""
        out: list[tuple[int, str]] = []
        on = False
        for line, t in self.text:
            label = t.strip().rstrip(":").strip()
            if label == after:
                on = True
                continue
            if on and label in stop:
                break
            if on and t.strip():
                out.append((line, t))
        return out


@dataclass
class Document:
    """Every section of the files read, in file order."""

    sections: list[Section]

    def tables(self) -> Iterable[tuple[Section, Table]]:
        for s in self.sections:
            for t in s.tables:
                yield s, t


def clean(text: str) -> str:
    """Cell or heading text without Markdown links, HTML tags, escapes and backticks."""
    text = _PERMALINK.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    text = html.unescape(text).replace("\\-", "-").replace("\\.", ".").replace("\\", "")
    text = text.replace("`", "").replace("**", "").replace("–", "-").replace("\u00a0", " ")
    return " ".join(text.split())


def _front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    if not lines or lines[0].strip() != "---":
        return {}, 0
    meta: dict[str, str] = {}
    for i in range(1, min(len(lines), 40)):
        if lines[i].strip() == "---":
            return meta, i + 1
        key, sep, value = lines[i].partition(":")
        if sep:
            meta[key.strip()] = value.strip().strip('"')
    return {}, 0


def _split_pipe(line: str) -> list[str]:
    t = line.strip()
    if t.startswith("|"):
        t = t[1:]
    if t.endswith("|"):
        t = t[:-1]
    return [c.strip() for c in t.split("|")]


def _span(attrs: str, name: str) -> int:
    m = re.search(name + r'="(\d+)"', attrs)
    return int(m.group(1)) if m else 1


def _html_table(lines: list[tuple[int, str]]) -> tuple[list[list[str]], list[Row]]:
    """Rows of an HTML table: colspans repeated, rowspans carried down."""
    text = "\n".join(t for _, t in lines)
    starts = [ln for ln, t in lines]
    header: list[list[str]] = []
    rows: list[Row] = []
    carry: dict[int, tuple[int, str]] = {}  # column -> (rows left, text)

    def carried(col: int, cells: list[str]) -> int:
        """Cells a rowspan above carries down into this row from ``col`` on."""
        while col in carry:
            left, t = carry.pop(col)
            cells.append(t)
            if left > 1:
                carry[col] = (left - 1, t)
            col += 1
        return col

    for m in re.finditer(r"<tr>(.*?)</tr>", text, re.S):
        line = starts[min(text.count("\n", 0, m.start()), len(starts) - 1)]
        cells: list[str] = []
        col = 0
        for c in re.finditer(r"<t([hd])([^>]*)>(.*?)</t\1>", m.group(1), re.S):
            col = carried(col, cells)
            span, down = _span(c.group(2), "colspan"), _span(c.group(2), "rowspan")
            body = re.sub(r"</p>\s*<p>|<br\s*/?>", "\n", c.group(3))
            t = "\n".join(clean(p) for p in body.split("\n") if clean(p))
            for _ in range(span):
                cells.append(t)
                if down > 1:
                    carry[col] = (down - 1, t)
                col += 1
        carried(col, cells)
        if "<th" in m.group(1):
            header.append(cells)
        else:
            rows.append(Row(cells, line))
    return header, rows


def _pipe_table(lines: list[tuple[int, str]], caption_inline: bool
                ) -> tuple[list[list[str]], list[Row]]:
    """Rows of a pipe table. A line that does not start with ``|`` in a table whose rows
    do continues the row before it (the seeds' plain form); a table without leading
    pipes has one row per line (the caption may open its first line)."""
    leading = lines[0][1].lstrip().startswith("|")
    merged: list[tuple[int, str]] = []
    for ln, t in lines:
        if leading and merged and not t.lstrip().startswith("|") and not _SEPARATOR.match(t):
            merged[-1] = (merged[-1][0], merged[-1][1].rstrip() + " " + t.strip())
        else:
            merged.append((ln, t))
    header: list[list[str]] = []
    rows: list[Row] = []
    seen_sep = False
    for ln, t in merged:
        if _SEPARATOR.match(t):
            seen_sep = True
            continue
        cells = [clean(c) for c in _split_pipe(t)]
        if not seen_sep:
            header.append(cells)
        else:
            rows.append(Row(cells, ln))
    if caption_inline and header:
        # "Table 40 Shared memory descriptor layout Bit-field | Size | ...": the caption
        # ran into the first header cell; keep its last word as the header
        first = header[0][0].split()
        header[0][0] = first[-1] if first else ""
    return header, rows


def _is_table_start(lines: list[str], i: int) -> bool:
    t = lines[i]
    if "|" not in t:
        return False
    if t.lstrip().startswith("|"):
        return True
    return i + 1 < len(lines) and bool(_SEPARATOR.match(lines[i + 1]))


def parse_text(text: str, file: str) -> list[Section]:
    """The sections of one Markdown file (text before the first heading belongs to a
    section numbered by the front matter, or to none)."""
    lines = text.split("\n")
    meta, start = _front_matter(lines)
    version = meta.get("version")
    sections: list[Section] = []
    cur: Section | None = None
    if meta.get("section"):
        cur = Section(meta["section"], clean(meta.get("title", "")), Loc(file, 1), version)
        sections.append(cur)
    caption: tuple[int, int | None, str] | None = None  # (line, number, text)
    heading_title = ""
    i = start
    n = len(lines)
    while i < n:
        t = lines[i]
        ln = i + 1
        if _FENCE.match(t):
            body: list[tuple[int, str]] = []
            i += 1
            while i < n and not _FENCE.match(lines[i]):
                body.append((i + 1, re.sub(r"^\s*(?:>\s?)+", "", lines[i])
                              if lines[i].lstrip().startswith(">") else lines[i]))
                i += 1
            if cur is not None:
                cur.codes.append(Code(Loc(file, ln), body))
            i += 1
            continue
        m = _HEADING.match(t) or _PLAIN_HEADING.match(t)
        if m is not None:
            num, title = (m.group(2), m.group(3)) if m.re is _HEADING else m.groups()
            title = clean(title)
            if cur is not None and cur.number == num and not cur.codes and not cur.tables:
                cur.title, cur.loc = title, Loc(file, ln)  # the front matter's own heading
            else:
                cur = Section(num, title, Loc(file, ln), version)
                sections.append(cur)
            heading_title = title
            caption = None
            i += 1
            continue
        m2 = _OTHER_HEADING.match(t)
        if m2 is not None:
            heading_title = clean(m2.group(2))
            if cur is not None:
                cur.text.append((ln, heading_title))
            i += 1
            continue
        mc = _CAPTION.match(clean(t.split("|")[0]) if "|" in t else clean(t))
        if mc is not None and not t.lstrip().startswith("|"):
            caption = (ln, int(mc.group(1)), mc.group(2))
            if "|" not in t:
                i += 1
                continue
        if t.lstrip().startswith("<table"):
            body = []
            while i < n:
                body.append((i + 1, lines[i]))
                if "</table>" in lines[i]:
                    break
                i += 1
            header, rows = _html_table(body)
            _add_table(cur, file, ln, caption, heading_title, header, rows)
            caption = None
            i += 1
            continue
        if _is_table_start(lines, i) or (mc is not None and "|" in t):
            body = []
            inline = mc is not None and "|" in t
            while i < n and (not body or not _CAPTION.match(clean(lines[i].split("|")[0]))
                             ) and ("|" in lines[i] or _SEPARATOR.match(lines[i]) or (
                                 # a kinds row without pipes right after the separator
                                 body and _SEPARATOR.match(body[-1][1]) and lines[i].strip()
                                 and i + 1 < n and "|" in lines[i + 1])):
                body.append((i + 1, lines[i].rstrip()))
                i += 1
            header, rows = _pipe_table(body, inline)
            _add_table(cur, file, ln if not inline else body[0][0], caption, heading_title,
                       header, rows)
            caption = None
            continue
        if cur is not None:
            cur.text.append((ln, t))
        i += 1
    return sections


def _add_table(cur: Section | None, file: str, line: int,
               caption: tuple[int, int | None, str] | None, heading: str,
               header: list[list[str]], rows: list[Row]) -> None:
    if cur is None:
        return
    if caption is not None:
        number, text = caption[1], caption[2]
        if header and header[0] and line == caption[0]:  # the caption opened the header
            text = _strip_suffix(text, _COLUMN_TITLES)
        loc = Loc(file, caption[0])
    else:
        number, text, loc = None, heading, Loc(file, line)
    cur.tables.append(Table(loc, number, clean(text), header, rows))


#: Column titles that a caption runs into when caption and header share a line
_COLUMN_TITLES = ("Bits", "Bit-field", "Swizzling mode", "Bit", "Field")


def _strip_suffix(text: str, suffixes: Sequence[str]) -> str:
    for s in suffixes:
        if text.endswith(" " + s):
            return text[: -len(s) - 1]
    return text


def read(paths: Sequence[Path]) -> Document:
    """Every Markdown (``.md``) and text (``.txt``) file under ``paths``, in path order."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += sorted(q for q in p.rglob("*") if q.suffix in (".md", ".txt")
                            and q.is_file() and q.name not in ("INDEX.md", "SOURCE.md"))
        else:
            files.append(p)
    sections: list[Section] = []
    for f in files:
        sections += parse_text(f.read_text(encoding="utf-8", errors="replace"), str(f))
    return Document(sections)
