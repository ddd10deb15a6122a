"""``ptxgen diff --generated``: the blast radius of a spec change.

Both revisions are rendered in memory with the current generator and templates
(:func:`ptxgen.emit.render_all`; nothing is written), and their files compared;
the generated symbols come from the rule modules' symbol tables, which derive
them from the model the same way the emitters do.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ptxgen.diff.base import DiffError, Json
from ptxgen.diff.engine import Symbol, symbols
from ptxgen.model import Spec

ADDED, REMOVED, CHANGED = "added", "removed", "changed"


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the output folder
    status: str
    added_lines: int
    removed_lines: int

    def as_dict(self) -> dict[str, Json]:
        return {"path": self.path, "status": self.status, "added_lines": self.added_lines,
                "removed_lines": self.removed_lines}


@dataclass(frozen=True)
class SymbolChange:
    status: str
    symbol: Symbol  # as in NEW (as in OLD when removed)
    before: str | None  # the old signature
    after: str | None  # the new signature

    def as_dict(self) -> dict[str, Json]:
        s = self.symbol
        return {"symbol": s.key, "status": self.status, "python": s.python, "cpp": s.cpp,
                "files": list(s.files), "before": self.before, "after": self.after}


@dataclass(frozen=True)
class Generated:
    files: tuple[FileChange, ...]
    symbols: tuple[SymbolChange, ...]

    def as_dict(self) -> dict[str, Json]:
        return {"files": [f.as_dict() for f in self.files],
                "symbols": [s.as_dict() for s in self.symbols]}


def _render(spec: Spec, label: str) -> dict[str, bytes]:
    from ptxgen.emit import render_all

    try:
        return render_all(spec)
    except (ValueError, RuntimeError, KeyError) as exc:
        raise DiffError(f"{label}: the generated files cannot be rendered "
                        f"({type(exc).__name__}: {exc})") from None


def _line_counts(a: bytes, b: bytes) -> tuple[int, int]:
    plus = minus = 0
    old = a.decode("utf-8", "replace").splitlines()
    new = b.decode("utf-8", "replace").splitlines()
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return plus, minus


def file_changes(old: dict[str, bytes], new: dict[str, bytes]) -> tuple[FileChange, ...]:
    out: list[FileChange] = []
    for path in sorted(old.keys() | new.keys()):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        if a is None:
            out.append(FileChange(path, ADDED, len(b.splitlines()) if b else 0, 0))
        elif b is None:
            out.append(FileChange(path, REMOVED, 0, len(a.splitlines())))
        else:
            out.append(FileChange(path, CHANGED, *_line_counts(a, b)))
    return tuple(out)


def symbol_changes(old: dict[str, Symbol], new: dict[str, Symbol]) -> tuple[SymbolChange, ...]:
    out: list[SymbolChange] = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a is None and b is not None:
            out.append(SymbolChange(ADDED, b, None, b.signature))
        elif b is None and a is not None:
            out.append(SymbolChange(REMOVED, a, a.signature, None))
        elif a is not None and b is not None and a.signature != b.signature:
            out.append(SymbolChange(CHANGED, b, a.signature, b.signature))
    return tuple(out)


def generated_changes(old: Spec, new: Spec, old_label: str, new_label: str) -> Generated:
    files = file_changes(_render(old, old_label), _render(new, new_label))
    return Generated(files, symbol_changes(symbols(old), symbols(new)))
