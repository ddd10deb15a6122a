"""Reading the inline asm of CUDA / C++ sources, with the preprocessor branch each is in.

``asm_blocks(text)`` finds every ``asm`` / ``__asm__`` / ``asm volatile`` statement outside
comments, strings and character literals, joins its adjacent string literals (C escapes
decoded, raw strings kept) up to the first ``:`` and records, for every character of the
PTX template, where it stands in the source, so a statement of the template is reported at
its own line and column. ``%%`` is PTX's ``%``; operands ``%0``, ``%[name]`` stay as
register-like names (``%0``, ``%name``) with ``%=`` made a number. Each block carries the
conditions of the ``#if`` / ``#ifdef`` / ``#elif`` / ``#else`` branches around it
(:class:`Block.guard`), read as text; :mod:`ptxgen.lint.guards` evaluates them per target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b")
_QUALIFIERS = re.compile(r"\s*(?:volatile|__volatile__|inline|goto)\b")
_OPERAND = re.compile(r"%(\d+|\[[A-Za-z_]\w*\]|=)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0",
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}


@dataclass(frozen=True)
class Block:
    """One asm statement: its PTX template and, per character, (line, col) in the source."""

    line: int
    col: int
    template: str
    where: tuple[tuple[int, int], ...]
    guard: tuple[str, ...]  # the #if conditions around it, innermost last

    def position(self, offset: int) -> tuple[int, int]:
        if not self.where:
            return self.line, self.col
        return self.where[min(offset, len(self.where) - 1)]


_NEXT = re.compile(r'//|/\*|R"|"|\'|^[ \t]*#|\b(?:asm|__asm__|__asm)\b', re.M)


def asm_blocks(text: str) -> list[Block]:
    """Every inline asm statement of a C / C++ / CUDA source."""
    if "asm" not in text:
        return []
    starts = _line_starts(text)
    out: list[Block] = []
    guard: list[list[str]] = []  # per open #if: the conditions of its branches so far
    i, n = 0, len(text)
    while i < n:
        m = _NEXT.search(text, i)
        if m is None:
            break
        tok, i = m.group(0), m.start()
        if tok.endswith("#"):
            end = _directive_end(text, m.end() - 1)
            _preprocess(text[m.end():end], guard)
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
        else:
            block, end = _read_asm(text, m.end(), starts, i, _guard_text(guard))
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
    import bisect

    line = bisect.bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line] + 1


def _directive_end(text: str, i: int) -> int:
    while True:
        j = text.find("\n", i)
        if j < 0:
            return len(text)
        if text[j - 1] != "\\" and not text[i:j].rstrip().endswith("\\"):
            return j
        i = j + 1


def _preprocess(line: str, guard: list[list[str]]) -> None:
    body = re.sub(r"/\*.*?\*/|//.*", " ", line.replace("\\\n", " "), flags=re.S).strip()
    word, _, rest = body.partition(" ")
    word, rest = word.strip(), rest.strip()
    if word == "if":
        guard.append([rest])
    elif word == "ifdef":
        guard.append([f"defined({rest})"])
    elif word == "ifndef":
        guard.append([f"!defined({rest})"])
    elif word == "elif" and guard:
        guard[-1].append(rest)
    elif word == "else" and guard:
        guard[-1].append("1")
    elif word == "endif" and guard:
        guard.pop()


def _guard_text(guard: list[list[str]]) -> tuple[str, ...]:
    """Each open #if as one condition: its current branch and not the earlier ones."""
    out = []
    for branches in guard:
        *earlier, now = branches
        parts = [f"!({c})" for c in earlier] + ([] if now == "1" else [f"({now})"])
        out.append(" && ".join(parts) or "1")
    return tuple(out)


def _skip_string(text: str, i: int) -> int:
    if text[i] == "R":
        m = re.compile(r'R"([^(\s]{0,16})\(').match(text, i)
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
              guard: tuple[str, ...]) -> tuple[Block | None, int]:
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
            m = re.compile(r'R"([^(\s]{0,16})\(').match(text, i)
            if m is not None:
                body_end = end - len(m.group(1)) - 2
                for k in range(m.end(), body_end):
                    chars.append(text[k])
                    where.append(_pos(starts, k))
            i = end
        else:
            break  # ':' or ')' ends the template; a macro name: the template ends here
    line, col = _pos(starts, at)
    template, where_t = _operands("".join(chars), where)
    return Block(line, col, template, tuple(where_t), guard), i


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


_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = re.compile(r"[0-9a-fA-F]+")


def _operands(template: str, where: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """``%%`` as ``%``; ``%[name]`` as ``%name``; ``%=`` as a number; positions kept."""
    out: list[str] = []
    pos: list[tuple[int, int]] = []
    i = 0
    while i < len(template):
        if template.startswith("%%", i):
            out.append("%")
            pos.append(where[i])
            i += 2
            continue
        m = _OPERAND.match(template, i)
        if m is not None:
            g = m.group(1)
            text = "%" + (g[1:-1] if g.startswith("[") else "0" if g == "=" else g)
            out.extend(text)
            pos.extend([where[i]] * len(text))
            i = m.end()
            continue
        out.append(template[i])
        pos.append(where[i])
        i += 1
    return "".join(out), pos
