"""What every part of ``ptxgen diff`` shares: JSON data, locations, and the error of a
diff that cannot be made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: JSON-compatible data (what ``before`` / ``after`` of a change hold).
Json = Any


class DiffError(Exception):
    """A diff that cannot be made (OLD/NEW cannot be opened, a revision cannot be
    rendered): reported as one line, exit status 2."""


@dataclass(frozen=True, order=True)
class Location:
    """Where an element is written in one revision: its file (as shown) and line."""

    file: str
    line: int
    revision: str | None = None  # the git revision the file is read from, if any

    def __str__(self) -> str:
        prefix = f"{self.revision}:" if self.revision else ""
        return f"{prefix}{self.file}:{self.line}"

    def as_dict(self) -> dict[str, Json]:
        return {"file": self.file, "line": self.line}
