"""The one place where spec text is made safe for each target language.

Descriptions, labels and notes come from the spec (and so from PDF/HTML
transcriptions): they may contain comment terminators, quotes, backslashes,
line breaks, template syntax or non-ASCII text. Every string that reaches a
generated file passes through one of these functions; templates never insert
spec text raw. Each function documents the invariant the tests check.
"""

from __future__ import annotations

import re
from functools import cache

from ptxgen.names import identifier_problem

# Characters Python's tokenizer or C/C++ treat as line ends or that compilers
# warn about (NUL, other controls). Tab is kept.
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_PY_PLAIN = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")  # printable ASCII, no backslash/quote
_CPP_PLAIN = re.compile(r"[\x20\x21\x23-\x3e\x40-\x5b\x5d-\x7e]*")  # no backslash, quote, '?'



def lines(text: str) -> list[str]:
    """Split on every character any target treats as a line break."""
    return _LINE_BREAKS.split(text)


def _hex_controls(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# -- identifiers -------------------------------------------------------------

@cache  # pure; ~40,000 calls for ~2,000 names per generate
def ident(name: str) -> str:
    """A name that reaches code. Validation already refused bad ones; this
    is the last line of defence so that no emitter can produce code that
    does not compile."""
    problem = identifier_problem(name)
    if problem:
        raise ValueError(f"refusing to emit identifier: {problem}")
    return name


def ident_part(text: str) -> str:
    """The ASCII letters, digits and underscores of ``text``, the rest dropped: a piece to
    build an identifier from (``"42"`` in ``InstrDescTable42_t``). Whatever is built
    from it still goes through :func:`ident`."""
    return re.sub(r"[^A-Za-z0-9_]", "", text)


# -- Python ------------------------------------------------------------------

@cache  # pure; ~25,000 calls for ~4,000 strings per generate
def py_str(text: str) -> str:
    """A Python string literal whose value is exactly ``text``."""
    if _PY_PLAIN.fullmatch(text):  # the common case: nothing to escape
        return f'"{text}"'
    out = ['"']
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or ch in "\x85\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# A line that textwrap would not change but for its trailing spaces: no whitespace (what
# str.isspace() calls whitespace) other than spaces. textwrap turns tabs, CR, VT, FF into
# spaces, and drops a last chunk that str.strip() empties (e.g. a lone U+2003).
_ONE_LINE = re.compile("[^\t\n\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029"
                       "\u202f\u205f\u3000]*")


def flow(line: str, width: int, hang: str = "") -> list[str]:
    """``textwrap.wrap(line, width, subsequent_indent=hang, break_long_words=False,
    break_on_hyphens=False)``; a line that fits and has no whitespace but spaces (most
    lines of the docs) is what textwrap makes of it - the line, its trailing spaces
    dropped - without textwrap's cost."""
    if len(line) <= width and _ONE_LINE.fullmatch(line):
        text = line.rstrip(" ")
        return [text] if text else []
    import textwrap

    return textwrap.wrap(line, width=width, subsequent_indent=hang,
                         break_long_words=False, break_on_hyphens=False)


def wrap(text: str, width: int) -> str:
    """Re-flow paragraphs to ``width`` columns (line breaks within the text are kept;
    an indented line stays indented and its continuation lines hang 4 columns
    deeper, like the entries of a docstring section). Words are never split."""
    out: list[str] = []
    width = max(width, 20)
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip(" "))]
        wrapped = []
        if line.strip():
            wrapped = flow(line, width, indent + "    " if indent else "")
        if wrapped and indent:
            wrapped[0] = indent + wrapped[0].lstrip(" ")
        out.extend(wrapped or [""])
    return "\n".join(out)


def py_docstring(text: str, indent: int = 0) -> str:
    """Docstring body for ``text`` wrapped to fit 99 columns at ``indent``: the
    lines after the first are indented to the docstring's own column (PEP 257)."""
    pad = " " * indent
    body = _py_docstring(wrap(text, 93 - indent))
    return "\n".join(line if i == 0 or not line else pad + line
                     for i, line in enumerate(body.split("\n")))


def _py_docstring(text: str) -> str:
    """Body for a triple-double-quoted docstring whose value is ``text``.

    Backslashes and quotes are escaped (so ``\"\"\"`` cannot end it early and a
    trailing quote cannot merge with the closing quotes); line breaks other
    than LF and control characters become escapes, so the source stays one
    logical line per line.
    """
    return "\n".join(py_str(line)[1:-1] for line in text.split("\n"))


def py_comment(text: str, prefix: str = "# ") -> str:
    """``text`` as consecutive ``#`` comment lines (no line break survives), wrapped
    to 99 columns."""
    body = wrap("\n".join(_hex_controls(line) for line in lines(text)), 99 - len(prefix))
    return "\n".join((prefix + line).rstrip() for line in body.split("\n"))


# -- C / C++ / CUDA ----------------------------------------------------------

_TRIGRAPHS = re.compile(r"\?(?=\?)")


@cache  # pure; ~4,000 calls for ~1,500 lines per generate
def cpp_comment_text(text: str) -> str:
    """Text safe inside a ``/* ... */`` block comment.

    ``*/`` would end the comment and ``/*`` triggers -Wcomment; both get a
    backslash. Controls become visible ``\\xNN`` text (NUL makes compilers
    warn). A backslash at a line end only splices lines inside the block
    comment, which is harmless. Two question marks get a backslash between
    them: ``??/`` before a line end is a trigraph that g++ -Wall warns about
    even in comments.
    """
    text = _hex_controls(text)
    text = text.replace("*/", "*\\/").replace("/*", "/\\*")
    return _TRIGRAPHS.sub("?\\\\", text) if "??" in text else text


def cpp_block_comment(text: str, indent: str = "") -> str:
    """``text`` as a Doxygen block comment, one `` * `` line per line."""
    body = [f"{indent} * {cpp_comment_text(line)}".rstrip() for line in lines(text)]
    return "\n".join([f"{indent}/**", *body, f"{indent} */"])


def cpp_inline_comment(text: str, opener: str = "/*") -> str:
    """``text`` as one block comment on a single line (``opener`` ``/**<`` makes it a
    Doxygen member comment).

    Line breaks fold to spaces (a ``//`` comment could be continued onto the
    next line by a trailing backslash; a block comment cannot), the rest as
    :func:`cpp_comment_text`.
    """
    if opener not in ("/*", "/**", "/**<"):
        raise ValueError(f"not a block comment opener: {opener!r}")
    return f"{opener} " + cpp_comment_text(" ".join(" ".join(lines(text)).split())) + " */"


def cpp_message(text: str) -> str:
    """A static_assert message: a C++ string literal without backticks, which nvcc prints
    as ``?``."""
    return cpp_str(text.replace("`", ""))


@cache  # pure; ~28,000 calls for ~9,000 strings per generate
def cpp_str(text: str) -> str:
    """A narrow C++ string literal whose bytes are the UTF-8 of ``text``.

    Non-ASCII bytes use 3-digit octal escapes (hex escapes are greedy and
    would swallow a following hex digit); ``?`` is escaped against trigraphs.
    """
    if _CPP_PLAIN.fullmatch(text):  # the common case: nothing to escape
        return f'"{text}"'
    out = ['"']
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "?":
            out.append("\\?")
        elif ch == "\n":
            out.append("\\n")
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    out.append('"')
    return "".join(out)


# each byte as it appears in a cpp_bytes literal
_CPP_BYTE = {b: chr(b) if 0x20 <= b < 0x7F and chr(b) not in '\\"?' else
             "\\" + chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}" for b in range(256)}


def cpp_bytes(data: bytes, per_line: int = 24) -> list[str]:
    """Adjacent narrow C++ string literals, one per line of ``per_line`` bytes, whose bytes
    (joined, before the implicit NUL) are ``data``: printable ASCII as itself but for
    backslash, quote and ``?`` (escaped), every other byte a 3-digit octal escape, which a
    following digit cannot extend. A compiler takes one literal far more cheaply than the
    array of numbers or of pointers to literals it replaces (the wrapper headers' tables)."""
    text = data.decode("latin-1")
    return [f'"{text[i:i + per_line].translate(_CPP_BYTE)}"'
            for i in range(0, max(len(text), 1), per_line)]


def packed(values: list[int]) -> tuple[int, bytes]:
    """Unsigned numbers as bytes for ``cpp_bytes``: each in the fewest bytes that hold the
    largest (at least one), least significant first; returns (bytes per number, data)."""
    if any(v < 0 for v in values):
        raise ValueError("packed tables hold unsigned numbers")
    top = max(values, default=0)
    width = max(1, (top.bit_length() + 7) // 8)
    return width, b"".join(v.to_bytes(width, "little") for v in values)


# -- Markdown ----------------------------------------------------------------

_MD_TEXT = str.maketrans({"\\": "\\\\", "<": "&lt;", "&": "&amp;"})
_MD_CELL = str.maketrans({"\\": "\\\\", "|": "\\|", "<": "&lt;", "&": "&amp;"})


@cache  # pure; ~6,000 calls for ~2,000 texts per generate
def md_cell(text: str) -> str:
    """One GitHub-Markdown table cell: no line breaks, pipes and HTML escaped."""
    return " ".join(_hex_controls(" ".join(lines(text))).split()).translate(_MD_CELL)


def md_text(text: str) -> str:
    """A Markdown paragraph: HTML escaped, line breaks folded to spaces."""
    return " ".join(_hex_controls(" ".join(lines(text))).split()).translate(
        _MD_TEXT)


def md_unescape(text: str) -> str:
    """Inverse of :func:`md_cell` / :func:`md_text` (used by the tests)."""
    text = re.sub(r"\\([\\|])", r"\1", text)
    return text.replace("&lt;", "<").replace("&amp;", "&")


# -- Python data literals and inline-asm strings (instruction wrappers) -------

def py_literal(value: object, indent: int = 0, width: int = 99, start: int | None = None) -> str:
    """Python source for nested dicts / lists / tuples of str, int, bool and None.

    Strings go through :func:`py_str`. The result fits ``width`` columns when
    its first line starts at column ``start`` (default: ``indent``) and its
    other lines are indented by ``indent``; long strings are split into
    implicitly concatenated pieces, so generated modules pass ruff's
    line-length check.
    """
    return _py_literal(value, indent, width, start, {})


def _py_literal(value: object, indent: int, width: int, start: int | None,
                memo: dict[int, str]) -> str:
    flat = _py_flat_within(value, width - 1 - (indent if start is None else start), memo)
    if flat is not None:
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            fk = _py_flat(k, memo)
            lit = _py_literal(v, indent + 4, width, indent + 6 + len(fk), memo)
            items.append(f"{pad}{fk}: {lit.lstrip()},")
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, (list, tuple)):
        items = [f"{pad}{_py_literal(v, indent + 4, width, None, memo).lstrip()},"
                 for v in value]
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        return open_ + "\n" + "\n".join(items) + "\n" + " " * indent + close
    if isinstance(value, str):
        room = max(20, width - indent - 8)
        pieces, cur = [], ""
        for w in re.split(r"(?<= )", value):
            while len(py_str(w)) > room:  # a word longer than a line: cut it
                pieces += [cur] if cur else []
                cur, w = "", w[len(w) - len(w.lstrip()):]
                cut = room // 2
                pieces.append(w[:cut])
                w = w[cut:]
            if cur and len(py_str(cur + w)) > room:
                pieces.append(cur)
                cur = ""
            cur += w
        pieces.append(cur)
        return "(\n" + "\n".join(pad + py_str(p) for p in pieces) + "\n" + " " * indent + ")"
    return _py_flat(value, memo)


def _py_flat_within(value: object, room: int, memo: dict[int, str]) -> str | None:
    """``_py_flat(value, memo)`` if it has at most ``room`` characters, else None, found
    without writing out the whole of a container that is longer (a container is written
    on one line only where it fits: its parents are not)."""
    if isinstance(value, str):
        text = py_str(value)
        return text if len(text) <= room else None
    if isinstance(value, bool) or value is None or isinstance(value, int):
        text = repr(value)
        return text if len(text) <= room else None
    hit = memo.get(id(value))
    if hit is not None:
        return hit if len(hit) <= room else None
    parts: list[str] = []
    used = 0  # the length of the parts and their ", " separators
    if isinstance(value, dict):
        for k, v in value.items():
            key = _py_flat_within(k, room, memo)
            item = None if key is None else _py_flat_within(v, room, memo)
            if key is None or item is None:
                return None
            parts.append(f"{key}: {item}")
            used += len(parts[-1]) + (2 if len(parts) > 1 else 0)
            if used + 2 > room:
                return None
        out = "{" + ", ".join(parts) + "}"
    elif isinstance(value, (list, tuple)):
        for v in value:
            item = _py_flat_within(v, room, memo)
            if item is None:
                return None
            parts.append(item)
            used += len(item) + (2 if len(parts) > 1 else 0)
            if used + 2 > room:
                return None
        if isinstance(value, list):
            out = "[" + ", ".join(parts) + "]"
        else:
            out = f"({parts[0]},)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    else:
        raise TypeError(f"py_literal: cannot write {type(value).__name__}")
    memo[id(value)] = out
    return out if len(out) <= room else None


def _py_flat(value: object, memo: dict[int, str] | None = None) -> str:
    """``value`` on one line; ``memo`` keeps the text of the containers already written
    (by identity; they stay alive while it is used), so that :func:`py_literal` writes
    each once however deep it splits."""
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return repr(value)
    if memo is not None:
        hit = memo.get(id(value))
        if hit is not None:
            return hit
    if isinstance(value, dict):
        out = "{" + ", ".join(f"{_py_flat(k, memo)}: {_py_flat(v, memo)}"
                              for k, v in value.items()) + "}"
    elif isinstance(value, list):
        out = "[" + ", ".join(_py_flat(v, memo) for v in value) + "]"
    elif isinstance(value, tuple):
        inner = ", ".join(_py_flat(v, memo) for v in value)
        out = f"({inner},)" if len(value) == 1 else f"({inner})"
    else:
        raise TypeError(f"py_literal: cannot write {type(value).__name__}")
    if memo is not None:
        memo[id(value)] = out
    return out


def cpp_asm_text(text: str) -> str:
    """PTX text for the template string of an inline ``asm`` statement.

    ``%`` starts an operand reference in the template, so a literal one is
    doubled; the result is a C++ string literal (:func:`cpp_str`).
    """
    return cpp_str(text.replace("%", "%%"))
