"""Read the inline asm of CUDA/C++ sources: every PTX statement with where it stands.

:func:`read_source` (one file's text) and :func:`read_paths` (files and folders) return
:class:`Statement` objects, one per PTX statement of every ``asm(...)`` /
``asm volatile(...)`` / ``__asm__ __volatile__(...)`` block: the string literals of the
template are concatenated (adjacent literals, and identifiers ``#define``\\ d in the same
file as a string literal), C escapes decoded, ``%%`` read as ``%``, the text split into
statements on ``;`` (``//`` and ``/* */`` comments of the PTX dropped). A statement keeps
its predicate (``@p``, ``@!p``), a label written before it, the ``{ }`` scope depth, and
``%0`` / ``%[name]`` operands as written. Blocks in ``#if`` / ``#elif`` / ``#else``
branches are all read, each with the stack of conditions it stands under.

Nothing here knows PTX instructions: the report (:mod:`ptxgen.scan.report`) looks the
opcodes up. ``ptxgen lint`` reads sources through the same functions.
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

_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b((?:\s+|volatile\b|__volatile__\b|goto\b|"
                  r"inline\b)*)\(")
_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+((?:"(?:[^"\\\n]|\\.)*"'
                     r'[ \t]*)+)$', re.M)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$", re.M)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "0": "\0",
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}


@dataclass(frozen=True)
class Statement:
    """One PTX statement of an inline asm block."""

    file: str
    line: int  # 1-based, of the string literal where the statement starts
    col: int  # 1-based
    block: int  # the asm block's number in the file (0-based)
    conditions: tuple[str, ...]  # the #if stack: "#if X", "#elif Y", "#else (of #if X)"
    text: str  # the PTX statement without its ';', predicate and label
    predicate: str  # "@p", "@!p" or ""
    label: str  # a label written before it ("L1"), or ""
    depth: int  # the { } scope depth it stands in

    @property
    def opcode(self) -> str:
        """The instruction with its qualifiers (the text up to the first space)."""
        m = _OPCODE.match(self.text)
        return m.group(0) if m else ""

    @property
    def is_glue(self) -> bool:
        """A declaration or scope only (``.reg .b32 r;``, ``{``, ``}``, a bare label)."""
        return not self.text or self.text.startswith(".")


def _conditions(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(offset, #if stack from there) at each preprocessor conditional of ``text``."""
    out: list[tuple[int, tuple[str, ...]]] = [(0, ())]
    stack: list[str] = []
    for m in _DIRECTIVE.finditer(text):
        kind, rest = m.group(1), " ".join(m.group(2).split())
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(f"#{kind} {rest}".rstrip())
        elif kind in ("elif", "else") and stack:
            first = stack[-1].split(" (of ")[-1].rstrip(")") if " (of " in stack[-1] \
                else stack[-1]
            stack[-1] = f"#{kind} {rest}".rstrip() + f" (of {first})"
        elif kind == "endif" and stack:
            stack.pop()
        out.append((m.end(), tuple(stack)))
    return out


def _literals(text: str, start: int, defines: dict[str, str]
              ) -> tuple[list[tuple[int, str]], int]:
    """The string pieces of an asm template from ``start`` (just after its '('): (offset
    in ``text`` of each piece, its decoded text), and where the template ends."""
    pieces: list[tuple[int, str]] = []
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    e = text[j + 1]
                    if e == "\n":
                        j += 2
                        continue
                    buf.append(_ESCAPES.get(e, e))
                    j += 2
                else:
                    buf.append(text[j])
                    j += 1
            pieces.append((i, "".join(buf)))
            i = j + 1
        elif c in ":)":
            return pieces, i
        elif c == "/" and text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif c == "/" and text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 2
        elif c == "#":  # a preprocessor line inside the template: skipped
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif c.isalpha() or c == "_":
            m = _WORD.match(text, i)
            assert m is not None
            word = m.group(0)
            if word in defines:
                pieces.append((i, defines[word]))
            i = m.end()
        elif c == "(":
            i += 1  # a parenthesised piece: read through
        else:
            i += 1
    return pieces, n


def _define_values(text: str) -> dict[str, str]:
    out = {}
    for m in _DEFINE.finditer(text):
        lits = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(2))
        out[m.group(1)] = "".join(re.sub(r"\\(.)", lambda x: _ESCAPES.get(x.group(1),
                                                                          x.group(1)), s)
                                  for s in lits)
    return out


_OPCODE = re.compile(r"[^\s{\[,(]+")  # up to a space or an operand ({%0, ...} unspaced)
_NEWLINE = re.compile("\n")
_WORD = re.compile(r"[A-Za-z_]\w*")
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
    if "asm" not in text:
        return []
    defines = _define_values(text) if "#" in text else {}
    conds = _conditions(text)
    cond_starts = [o for o, _ in conds]
    line_starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def where(offset: int) -> tuple[int, int]:
        ln = bisect.bisect_right(line_starts, offset) - 1
        return ln + 1, offset - line_starts[ln] + 1

    out: list[Statement] = []
    block = 0
    for m in _ASM.finditer(text):
        pieces, _ = _literals(text, m.end(), defines)
        if not pieces:
            continue
        stack = conds[bisect.bisect_right(cond_starts, m.start()) - 1][1]
        template = "".join(p for _, p in pieces)
        starts = []  # offset of each piece in the template
        acc = 0
        for _, p in pieces:
            starts.append(acc)
            acc += len(p)
        for off, body, pred, label, depth in _statements(template):
            k = bisect.bisect_right(starts, off) - 1
            src, piece = pieces[k]
            # column of the statement inside its literal (escapes make it approximate)
            line, col = where(src + 1 + min(off - starts[k], len(piece)))
            out.append(Statement(file, line, col, block, stack, body, pred, label, depth))
        block += 1
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


def _quiet_worker() -> None:
    """A worker ends on the pool's SIGTERM without the parent's handlers."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_quiet_worker) as pool:
        parts = pool.map(_read_files, chunks)
    order = {f: i for i, f in enumerate(files)}
    out = [st for part in parts for st in part]
    out.sort(key=lambda st: (order[st.file], st.block))  # stable: statement order kept
    return out
