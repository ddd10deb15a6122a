"""Diagnostics: every problem found in a spec carries ``file:line:col``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem in a spec file, with a 1-based line and column."""

    file: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "col": self.col, "message": self.message}


class SpecError(Exception):
    """Raised once, after all problems of a stage have been collected."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = sorted(set(diagnostics))
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def printable(text: str, limit: int = 120) -> str:
    """``text`` for a one-line message: control characters, bidirectional controls and
    other invisible format characters escaped (``\\n``, ``\\u202e``), and text longer than
    ``limit`` characters cut, with its length (``abc... (102,400 characters)``)."""
    import unicodedata

    cut = text if len(text) <= limit else text[:limit]
    out = []
    for ch in cut:
        if ch.isprintable() and unicodedata.category(ch) != "Cf":
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii") if ord(ch) > 0x7f
                       or ch in "\n\r\t" else f"\\x{ord(ch):02x}")
    shown = "".join(out)
    return shown if cut is text else f"{shown}... ({len(text):,} characters)"
