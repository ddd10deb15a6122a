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
