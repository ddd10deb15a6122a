"""Reading the inline asm of CUDA / C++ sources: the one reader of ``ptxgen scan`` and
``ptxgen lint``.

:func:`asm_blocks` finds every ``asm`` / ``__asm__`` / ``asm volatile`` statement outside
comments, strings and character literals and joins its template: adjacent string literals
(C escapes decoded, raw strings kept) and identifiers ``#define``\\ d in the same file as a
string literal, up to the first ``:`` or ``)``; ``%%`` is PTX's ``%``, ``%0`` / ``%[name]``
operands stay as written. Each :class:`Block` knows, for every character of its template,
where it stands in the source (so a statement is reported at its own line and column), and
the ``#if`` / ``#ifdef`` / ``#elif`` / ``#else`` branches around it, both as written
(:attr:`Block.conditions`) and as one C condition per open ``#if`` that is true exactly in
that branch (:attr:`Block.guard`: the branch's condition and not the earlier ones').

:func:`read_source` (one file's text) and :func:`read_paths` (files and folders) split each
block into :class:`Statement` objects, one per PTX statement (on ``;``; ``//`` and ``/* */``
comments of the PTX dropped): a statement keeps its predicate (``@p``, ``@!p``), a label
written before it and the ``{ }`` scope depth. Nothing here knows PTX instructions: ``ptxgen
scan`` (:mod:`ptxgen.scan.report`) and ``ptxgen lint`` (:mod:`ptxgen.lint`) look the
opcodes up.
"""

from __future__ import annotations

import bisect
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

#: file suffixes read from a folder
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c",
                   ".inl", ".inc", ".ipp", ".tcc")

_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+((?:"(?:[^"\\\n]|\\.)*"'
                     r'[ \t]*)+)$', re.M)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "0": "\0",
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b")
_QUALIFIERS = re.compile(r"\s*(?:volatile|__volatile__|inline|goto)\b")
_NEXT = re.compile(r'//|/\*|R"|"|\'|^[ \t]*#|\b(?:asm|__asm__|__asm)\b', re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_RAW = re.compile(r'R"([^(\s]{0,16})\(')
_OPCODE = re.compile(r"[\w.:$]+")


def split_operands(text: str) -> tuple[str, ...]:
    """The operands of ``text`` (``[%r5], %rd23, {%r1, %r2}, p``), split at top-level
    commas, each stripped."""
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last or out:
        out.append(last)
    return tuple(out)


@dataclass(frozen=True)
class Block:
    """One asm statement: its PTX template, where each of its characters stands in the
    source, and the #if branches around it."""

    line: int
    col: int
    template: str
    where: tuple[tuple[int, int], ...]
    conditions: tuple[str, ...]  # as written: "#if X", "#elif Y (of #if X)", "#else (of ...)"
    guard: tuple[str, ...]  # per open #if, a C condition true exactly in this branch

    def position(self, offset: int) -> tuple[int, int]:
        if not self.where:
            return self.line, self.col
        return self.where[min(max(offset, 0), len(self.where) - 1)]


def asm_blocks(text: str) -> list[Block]:
    """Every inline asm statement of a C / C++ / CUDA source, in order."""
    if "asm" not in text:
        return []
    starts = _line_starts(text)
    defines = _define_values(text) if "#" in text else {}
    out: list[Block] = []
    branches: list[list[tuple[str, str]]] = []  # per open #if: its branches (kind, text)
    i, n = 0, len(text)
    while i < n:
        m = _NEXT.search(text, i)
        if m is None:
            break
        tok, i = m.group(0), m.start()
        if tok.endswith("#"):
            end = _directive_end(text, m.end() - 1)
            _preprocess(text[m.end():end], branches)
            i = end
        elif tok == "//":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif tok == "/*":
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif tok in ('"', 'R"'):
            if tok == 'R"' and i > 0 and _ident(text[i - 1]):
                i += 1  # an identifier ending in R, then a plain string
                continue
            i = _skip_string(text, i)
        elif tok == "'":
            i = _skip_char(text, i) if i == 0 or not _ident(text[i - 1]) else i + 1
        elif i > 0 and _ident(text[i - 1]):
            i = m.end()
        else:
            block, end = _read_asm(text, m.end(), starts, i, branches, defines)
            if block is not None:
                out.append(block)
            i = max(end, m.end())
    return out


def _ident(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _line_starts(text: str) -> list[int]:
    out = [0]
    out.extend(m.end() for m in re.finditer("\n", text))
    return out


def _pos(starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect.bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line] + 1


def _directive_end(text: str, i: int) -> int:
    while True:
        j = text.find("\n", i)
        if j < 0:
            return len(text)
        if not text[i:j].rstrip().endswith("\\"):
            return j
        i = j + 1


def _preprocess(line: str, branches: list[list[tuple[str, str]]]) -> None:
    body = re.sub(r"/\*.*?\*/|//.*", " ", line.replace("\\\n", " "), flags=re.S).strip()
    word, _, rest = body.partition(" ")
    word, rest = word.strip(), " ".join(rest.split())
    if word in ("if", "ifdef", "ifndef"):
        branches.append([(word, rest)])
    elif word in ("elif", "else") and branches:
        branches[-1].append((word, rest))
    elif word == "endif" and branches:
        branches.pop()


def _condition(kind: str, text: str) -> str:
    if kind == "ifdef":
        return f"defined({text})"
    if kind == "ifndef":
        return f"!defined({text})"
    return "1" if kind == "else" else text


def _conditions(branches: list[list[tuple[str, str]]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(as written, as guards) of the open #if branches."""
    written, guard = [], []
    for stack in branches:
        first = f"#{stack[0][0]} {stack[0][1]}".rstrip()
        kind, text = stack[-1]
        written.append(first if len(stack) == 1 else
                       f"#{kind} {text}".rstrip() + f" (of {first})")
        parts = [f"!({_condition(k, t)})" for k, t in stack[:-1]]
        if kind != "else":
            parts.append(f"({_condition(kind, text)})")
        guard.append(" && ".join(parts) or "1")
    return tuple(written), tuple(guard)


def _skip_string(text: str, i: int) -> int:
    if text[i] == "R":
        m = _RAW.match(text, i)
        if m is not None:
            end = text.find(")" + m.group(1) + '"', m.end())
            return len(text) if end < 0 else end + len(m.group(1)) + 2
        return i + 1
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"' or text[j] == "\n":
            return j + 1
        j += 1
    return j


def _skip_char(text: str, i: int) -> int:
    j = i + 1
    while j < len(text) and text[j] not in "'\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _read_asm(text: str, i: int, starts: list[int], at: int,
              branches: list[list[tuple[str, str]]],
              defines: dict[str, str]) -> tuple[Block | None, int]:
    """The block of the asm statement whose keyword ends at ``i``; its end offset."""
    while True:
        m = _QUALIFIERS.match(text, i)
        if m is None:
            break
        i = m.end()
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    if i >= len(text) or text[i] != "(":
        return None, i
    i += 1
    chars: list[str] = []
    where: list[tuple[int, int]] = []
    while i < len(text):
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = len(text) if j < 0 else j + 2
        elif c == '"':
            i = _literal(text, i + 1, starts, chars, where)
        elif c == "R" and text.startswith('R"', i):
            end = _skip_string(text, i)
            m = _RAW.match(text, i)
            if m is not None:
                for k in range(m.end(), end - len(m.group(1)) - 2):
                    chars.append(text[k])
                    where.append(_pos(starts, k))
            i = end
        elif c == "#":  # a preprocessor line inside the template: skipped
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
        elif c.isalpha() or c == "_":
            w = _WORD.match(text, i)
            assert w is not None
            if w.group(0) not in defines:
                break  # another macro: the template ends here
            value = defines[w.group(0)]
            chars.extend(value)
            where.extend([_pos(starts, i)] * len(value))
            i = w.end()
        else:
            break  # ':' or ')' ends the template
    if not chars:
        return None, i
    line, col = _pos(starts, at)
    template, where_t = _percent(chars, where)
    written, guard = _conditions(branches)
    return Block(line, col, template, tuple(where_t), written, guard), i


def _literal(text: str, i: int, starts: list[int], chars: list[str],
             where: list[tuple[int, int]]) -> int:
    """Append the decoded characters of the string literal starting at ``i``; its end."""
    line, col = _pos(starts, i)
    start = i
    while i < len(text) and text[i] != '"':
        pos = (line, col + i - start)
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            e = text[i + 1]
            if e == "\n":  # a line continuation inside the literal
                i += 2
                line, col, start = line + 1, 1, i
                continue
            if e in "01234567":
                m = _OCTAL.match(text, i + 1)
                assert m is not None
                chars.append(chr(int(m.group(0), 8)))
                where.append(pos)
                i = m.end()
                continue
            if e == "x":
                m = _HEX.match(text, i + 2)
                if m is not None:
                    chars.append(chr(int(m.group(0), 16) & 0xFF))
                    where.append(pos)
                    i = m.end()
                    continue
            chars.append(_ESCAPES.get(e, e))
            where.append(pos)
            i += 2
            continue
        if c == "\n":
            break
        chars.append(c)
        where.append(pos)
        i += 1
    return i + 1


def _percent(chars: list[str], where: list[tuple[int, int]]
             ) -> tuple[str, list[tuple[int, int]]]:
    """The template with ``%%`` read as ``%`` (operands kept as written), positions kept."""
    out: list[str] = []
    pos: list[tuple[int, int]] = []
    i = 0
    while i < len(chars):
        out.append(chars[i])
        pos.append(where[i])
        i += 2 if chars[i] == "%" and i + 1 < len(chars) and chars[i + 1] == "%" else 1
    return "".join(out), pos


@dataclass(frozen=True)
class Statement:
    """One PTX statement of an inline asm block."""

    file: str
    line: int  # 1-based, where the statement's text starts in the source
    col: int  # 1-based
    block: int  # the asm block's number in the file (0-based)
    conditions: tuple[str, ...]  # the #if stack: "#if X", "#elif Y (of #if X)", "#else (of ...)"
    text: str  # the PTX statement without its ';', predicate and label
    predicate: str  # "@p", "@!p" or ""
    label: str  # a label written before it ("L1"), or ""
    depth: int  # the { } scope depth it stands in
    guard: tuple[str, ...] = ()  # per open #if, a C condition true exactly in this branch

    @property
    def opcode(self) -> str:
        """The instruction with its qualifiers: letters, digits, ``.``, ``:``, ``_`` and
        ``$`` from the start (an operand may follow without a space: ``...b32{%0, %1}``)."""
        m = _OPCODE.match(self.text)
        return m.group(0) if m else self.text.split(None, 1)[0] if self.text else ""

    @property
    def operands(self) -> str:
        """The text after the opcode."""
        return self.text[len(self.opcode):].strip()

    @property
    def is_glue(self) -> bool:
        """A declaration or scope only (``.reg .b32 r;``, ``{``, ``}``, a bare label)."""
        return not self.text or self.text.startswith(".")


def _define_values(text: str) -> dict[str, str]:
    out = {}
    for m in _DEFINE.finditer(text):
        lits = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(2))
        out[m.group(1)] = "".join(re.sub(r"\\(.)", lambda x: _ESCAPES.get(x.group(1),
                                                                          x.group(1)), s)
                                  for s in lits)
    return out


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LABEL = re.compile(r"^([A-Za-z_$%][\w$]*)\s*:(?!:)\s*")
_PRED = re.compile(r"^@!?%?[\w$]+\s*")


def _statements(template: str) -> Iterator[tuple[int, str, str, str, int]]:
    """(offset, text, predicate, label, depth) of each statement of a template: split on
    ``;``; a ``{`` or ``}`` where a statement starts opens or closes a scope, one inside a
    statement is a vector operand (``{%0, %1}``)."""
    t = template.replace("%%", "\0")
    t = _COMMENT.sub(lambda m: " " * len(m.group(0)), t)
    depth = 0
    inner = 0
    start = 0
    pending: list[tuple[int, str]] = []  # statements cut at ';' or a scope brace

    for i, c in enumerate(t):
        if c == "{" or c == "}":
            head = _LABEL.sub("", t[start:i].strip()) if inner == 0 else "x"
            if inner == 0 and not head.strip():
                pending.append((start, t[start:i]))
                depth += 1 if c == "{" else -1 if depth else 0
                start = i + 1
                pending.append((-1, str(depth)))
                continue
            inner += 1 if c == "{" else -1 if inner else 0
        elif c == ";" and inner == 0:
            pending.append((start, t[start:i]))
            start = i + 1
    pending.append((start, t[start:]))
    depth = 0
    for off, part in pending:
        if off < 0:
            depth = int(part)
            continue
        lead = len(part) - len(part.lstrip())
        body = part.strip()
        label = ""
        while True:
            m = _LABEL.match(body)
            if not m or m.group(1).startswith("%"):
                break
            label = m.group(1)
            body = body[m.end():]
        pred = ""
        m = _PRED.match(body)
        if m:
            pred = m.group(0).strip()
            body = body[m.end():]
        body = " ".join(body.replace("\0", "%").split())
        if body or label:
            yield off + lead, body, pred, label, depth


def read_source(text: str, file: str = "<source>") -> list[Statement]:
    """Every PTX statement of the inline asm blocks of one source text."""
    out: list[Statement] = []
    for number, block in enumerate(asm_blocks(text)):
        for off, body, pred, label, depth in _statements(block.template):
            line, col = block.position(off)
            out.append(Statement(file, line, col, number, block.conditions, body, pred,
                                 label, depth, block.guard))
    return out


def source_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The source files named, and those below the folders named (sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.suffix in SOURCE_SUFFIXES
                          and f.is_file())
        else:
            out.append(p)
    return out


def _read_files(files: list[str]) -> list[Statement]:
    out: list[Statement] = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            out += read_source(fh.read(), f)
    return out


def read_paths(paths: Iterable[str | os.PathLike[str]], jobs: int | None = None
               ) -> list[Statement]:
    """Every statement of every source file named or below a folder named, in file order;
    many files are read by ``jobs`` forked processes (default: every CPU)."""
    files = [str(f) for f in source_files(paths)]
    jobs = jobs or len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if jobs < 2 or len(files) < 200 or sys.platform != "linux":
        return _read_files(files)
    import multiprocessing

    chunks = [files[i::jobs * 4] for i in range(jobs * 4)]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        parts = pool.map(_read_files, chunks)
    order = {f: i for i, f in enumerate(files)}
    out = [st for part in parts for st in part]
    out.sort(key=lambda st: (order[st.file], st.block))  # stable: statement order kept
    return out
