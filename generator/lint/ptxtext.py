"""Reading PTX text: modules, functions and instruction statements with their positions.

A small reader of the PTX grammar that ``ptxgen lint`` needs (PTX ISA chapter 4): comments
(``//`` and ``/* */``), the module directives ``.version`` and ``.target``, the bodies of
``.entry`` / ``.func`` (by their braces), labels, predicate guards (``@%p``, ``@!%p``) and
statements ended by ``;``. An instruction is its opcode (the first word) and its operands,
split at the commas that stand outside brackets and braces. Directives inside a body
(``.reg``, ``.shared``, ``.pragma`` ...) are not instructions. Lines and columns are
1-based and count characters of the original text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ptxgen.source import split_operands

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LABEL = re.compile(r"\s*([A-Za-z_$%][\w$]*)\s*:(?!:)")
_GUARD = re.compile(r"\s*@!?\s*%?[\w$]+\s+")
_VERSION = re.compile(r"\.version\s+(\d+)\.(\d+)")
_TARGET = re.compile(r"\.target\s+([^;\n]+)")
_FUNCTION = re.compile(r"\.(?:entry|func)\b")


class Statement:
    """One instruction: ``opcode`` and its operands as written, where it starts."""

    __slots__ = ("_operands", "col", "line", "opcode", "rest")

    def __init__(self, line: int, col: int, opcode: str, rest: str) -> None:
        self.line, self.col, self.opcode, self.rest = line, col, opcode, rest
        self._operands: tuple[str, ...] | None = None

    @property
    def operands(self) -> tuple[str, ...]:
        """The operands, split at top-level commas (made on first use)."""
        if self._operands is None:
            self._operands = split_operands(self.rest)
        return self._operands

    @property
    def dest(self) -> str:
        """The first operand (the destination of most instructions)."""
        if self.rest.startswith("{"):
            return self.operands[0] if self.operands else ""
        return self.rest.partition(",")[0].strip()

    @property
    def text(self) -> str:
        return f"{self.opcode} {self.rest}".strip()

    def __repr__(self) -> str:
        return f"Statement({self.line}:{self.col} {self.text!r})"


@dataclass
class Function:
    name: str
    line: int
    statements: list[Statement] = field(default_factory=list)


@dataclass
class Module:
    """A PTX module: its ``.version`` and ``.target`` (None where it has none) and the
    instruction statements of each function (statements outside any body form a function
    named ``""``)."""

    version: str | None = None
    version_line: int = 0
    targets: tuple[str, ...] = ()
    target_line: int = 0
    functions: list[Function] = field(default_factory=list)

    def statements(self) -> Iterator[Statement]:
        for f in self.functions:
            yield from f.statements


def _blank_comments(text: str) -> str:
    """``text`` with comments replaced by spaces (newlines kept), so positions hold."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    text = _BLOCK_COMMENT.sub(blank, text)
    return re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)


def _name_of(header: str) -> str:
    m = re.search(r"\.(?:entry|func)\s*(?:\([^)]*\)\s*)?([\w$.]+)", header)
    return m.group(1) if m else ""


def read(text: str) -> Module:
    """Read one PTX module."""
    clean = _blank_comments(text)
    module = Module()
    current = Function("", 1)
    module.functions.append(current)
    depth = 0
    header = ""  # text since the last statement end at depth 0 (a function header)
    pending: list[tuple[int, int, str]] = []  # pieces of a statement across lines
    inner = 0  # braces inside a statement's operands ({%r1, %r2}) still open
    for lineno, line in enumerate(clean.split("\n"), 1):
        if not line.strip():
            continue
        if depth and not pending and not inner and _simple(line):
            body = line.strip()[:-1].rstrip()  # one whole instruction (most of nvcc's lines)
            if body and body[0] not in ".@$" and ":" not in body.split(None, 1)[0]:
                opcode, _, rest = _opcode_rest(body)
                current.statements.append(Statement(
                    lineno, len(line) - len(line.lstrip()) + 1, opcode, rest))
                continue
        pos = 0
        while pos < len(line):
            # the next piece ends at ';', '{' or '}'
            m = _ENDS.search(line, pos)
            end = m.start() if m else len(line)
            ch = line[end] if m else ""
            here = [(lineno, pos, line[pos:end])]
            operand_brace = ch == "{" and _in_statement(pending + here, depth)
            if ch and ch in "{}" and (inner or operand_brace):
                inner += 1 if ch == "{" else -1  # an operand's brace: part of the text
                pending.append((lineno, pos, line[pos:end + 1]))
                pos = end + 1
                continue
            piece = line[pos:end]
            if piece.strip():
                pending.append((lineno, pos, piece))
            if m is None:
                break
            if ch == ";":
                _statement(module, current, _glued(pending), depth)
                if depth == 0:
                    header = ""
                pending = []
            elif ch == "{":
                joined = " ".join(p for _, _, p in pending)
                if depth == 0 and (_FUNCTION.search(header + " " + joined)):
                    current = Function(_name_of(header + " " + joined), lineno)
                    module.functions.append(current)
                pending = []
                header = ""
                depth += 1
            else:  # "}"
                pending = []
                depth = max(0, depth - 1)
                if depth == 0:
                    current = module.functions[0]
            pos = end + 1
        if depth == 0 and pending:
            header += " " + " ".join(p for _, _, p in pending)
            # directives at module level end at the line's end (.version, .target)
            joined = " ".join(p for _, _, p in pending).strip()
            if joined.startswith((".version", ".target", ".address_size")):
                _directive(module, lineno, joined)
                pending = []
                header = ""
    return module


_ENDS = re.compile(r"[;{}]")


def _simple(line: str) -> bool:
    """One statement and nothing else on the line: ends with its only ``;``, no braces."""
    return line.rstrip().endswith(";") and line.count(";") == 1 and "{" not in line \
        and "}" not in line


def _in_statement(pending: list[tuple[int, int, str]], depth: int) -> bool:
    """Whether a ``{`` now belongs to an instruction's operands: inside a body, after an
    opcode (not after nothing, a label or a guard alone)."""
    if depth == 0 or not pending:
        return False
    text = " ".join(p for _, _, p in pending)
    offset = 0
    while True:
        m = _LABEL.match(text, offset)
        if m is None:
            break
        offset = m.end()
    g = _GUARD.match(text, offset)
    rest = text[g.end() if g else offset:].strip()
    return bool(rest) and not rest.startswith(".")


def _glued(pending: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The pieces with an operand brace's pieces joined to their neighbours on one line."""
    out: list[tuple[int, int, str]] = []
    for line, col, piece in pending:
        if out and out[-1][0] == line and out[-1][1] + len(out[-1][2]) == col:
            prev = out.pop()
            out.append((prev[0], prev[1], prev[2] + piece))
        else:
            out.append((line, col, piece))
    return out


def _directive(module: Module, lineno: int, text: str) -> None:
    v = _VERSION.match(text)
    if v:
        module.version = f"{int(v.group(1))}.{int(v.group(2))}"
        module.version_line = lineno
        return
    t = _TARGET.match(text)
    if t:
        module.targets = tuple(p.strip() for p in t.group(1).split(",") if p.strip())
        module.target_line = lineno


def _statement(module: Module, current: Function, pending: list[tuple[int, int, str]],
               depth: int) -> None:
    if not pending:
        return
    text = " ".join(p for _, _, p in pending)
    offset = 0
    while True:  # labels before the instruction: L: , $L__BB0_1:
        m = _LABEL.match(text, offset)
        if m is None:
            break
        offset = m.end()
    g = _GUARD.match(text, offset)
    if g is not None:
        offset = g.end()
    body = text[offset:].strip()
    if not body:
        return
    if body.startswith("."):
        if depth == 0:
            _directive(module, pending[0][0], body)
        return
    start = len(text) - len(text[offset:].lstrip())
    line, col = _position(pending, start)
    opcode, _, rest = _opcode_rest(body)
    current.statements.append(Statement(line, col + 1, opcode, rest.strip()))


_SPACE = re.compile(r"\s+")


_OPCODE = re.compile(r"[\w.:$]+")


def _opcode_rest(body: str) -> tuple[str, str, str]:
    """The opcode (letters, digits, ``.``, ``:``, ``_``, ``$``) and what follows it; an
    operand may follow without a space (``...b32{%0, %1}``)."""
    m = _OPCODE.match(body)
    if m is None or m.end() == 0:
        parts = _SPACE.split(body, maxsplit=1)
        return parts[0], " ", parts[1] if len(parts) > 1 else ""
    return m.group(0), " ", body[m.end():].strip()


def _position(pending: list[tuple[int, int, str]], index: int) -> tuple[int, int]:
    """(line, 0-based column) of ``index`` in the pieces joined with single spaces."""
    for line, col, piece in pending:
        if index < len(piece):
            return line, col + index
        index -= len(piece) + 1
    line, col, piece = pending[-1]
    return line, col + len(piece)
