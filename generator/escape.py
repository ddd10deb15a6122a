"""The one place where spec text is made safe for each target language.

Descriptions, labels and notes come from the spec (and so from PDF/HTML
transcriptions): they may contain comment terminators, quotes, backslashes,
line breaks, template syntax or non-ASCII text. Every string that reaches a
generated file passes through one of these functions; templates never insert
spec text raw. Each function documents the invariant the tests check.
"""

from __future__ import annotations

import re

from ptxgen.names import identifier_problem

# Characters Python's tokenizer or C/C++ treat as line ends or that compilers
# warn about (NUL, other controls). Tab is kept.
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def lines(text: str) -> list[str]:
    """Split on every character any target treats as a line break."""
    return _LINE_BREAKS.split(text)


def _hex_controls(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# -- identifiers -------------------------------------------------------------

def ident(name: str) -> str:
    """A name that reaches code. Validation already refused bad ones; this
    is the last line of defence so that no emitter can produce code that
    does not compile."""
    problem = identifier_problem(name)
    if problem:
        raise ValueError(f"refusing to emit identifier: {problem}")
    return name


# -- Python ------------------------------------------------------------------

def py_str(text: str) -> str:
    """A Python string literal whose value is exactly ``text``."""
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


def py_docstring(text: str) -> str:
    """Body for a triple-double-quoted docstring whose value is ``text``.

    Backslashes and quotes are escaped (so ``\"\"\"`` cannot end it early and a
    trailing quote cannot merge with the closing quotes); line breaks other
    than LF and control characters become escapes, so the source stays one
    logical line per line.
    """
    return "\n".join(py_str(line)[1:-1] for line in text.split("\n"))


def py_comment(text: str, prefix: str = "# ") -> str:
    """``text`` as consecutive ``#`` comment lines (no line break survives)."""
    return "\n".join((prefix + _hex_controls(line)).rstrip() for line in lines(text))


# -- C / C++ / CUDA ----------------------------------------------------------

def cpp_comment_text(text: str) -> str:
    """Text safe inside a ``/* ... */`` block comment.

    ``*/`` would end the comment and ``/*`` triggers -Wcomment; both get a
    backslash. Controls become visible ``\\xNN`` text (NUL makes compilers
    warn). A backslash at a line end only splices lines inside the block
    comment, which is harmless.
    """
    text = _hex_controls(text)
    text = text.replace("*/", "*\\/").replace("/*", "/\\*")
    return text


def cpp_block_comment(text: str, indent: str = "") -> str:
    """``text`` as a Doxygen block comment, one `` * `` line per line."""
    body = [f"{indent} * {cpp_comment_text(line)}".rstrip() for line in lines(text)]
    return "\n".join([f"{indent}/**", *body, f"{indent} */"])


def cpp_str(text: str) -> str:
    """A narrow C++ string literal whose bytes are the UTF-8 of ``text``.

    Non-ASCII bytes use 3-digit octal escapes (hex escapes are greedy and
    would swallow a following hex digit); ``?`` is escaped against trigraphs.
    """
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


# -- Markdown ----------------------------------------------------------------

_MD_CELL = str.maketrans({"\\": "\\\\", "|": "\\|", "<": "&lt;", "&": "&amp;"})


def md_cell(text: str) -> str:
    """One GitHub-Markdown table cell: no line breaks, pipes and HTML escaped."""
    return " ".join(_hex_controls(" ".join(lines(text))).split()).translate(_MD_CELL)


def md_text(text: str) -> str:
    """A Markdown paragraph: HTML escaped, line breaks folded to spaces."""
    return " ".join(_hex_controls(" ".join(lines(text))).split()).translate(
        str.maketrans({"\\": "\\\\", "<": "&lt;", "&": "&amp;"}))


def md_unescape(text: str) -> str:
    """Inverse of :func:`md_cell` / :func:`md_text` (used by the tests)."""
    text = re.sub(r"\\([\\|])", r"\1", text)
    return text.replace("&lt;", "<").replace("&amp;", "&")
