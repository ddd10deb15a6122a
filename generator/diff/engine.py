"""The rule engine of ``ptxgen diff``.

Two registries, both keyed by *model area* (``descriptors``; ``instructions`` and
``targets``):

* :data:`RULES`: the catalogue of rules. A rule has a stable id, a severity and
  one line that says what it reports; the README's policy table lists them.
* comparers (:func:`comparer`): functions that read the two revisions' models
  and report changes, each under one of the catalogue's rules.

A third registry, :func:`symbol_table`, maps an area to a function listing the
generated symbols its model produces (for ``--generated``).

A new area plugs in by adding one module ``ptxgen/diff/rules_<area>.py`` that
defines its rules with :func:`rule` and decorates its functions with
:func:`comparer` / :func:`symbol_table`: :func:`load_rule_modules` imports every
such module, so the engine itself does not change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ptxgen.diff.base import Json, Location
from ptxgen.diff.revisions import Revision

if TYPE_CHECKING:
    from ptxgen.model import Spec

#: Severities, most severe first.
BREAKING, COMPATIBLE, NOTE = "breaking", "compatible", "note"
SEVERITIES = (BREAKING, COMPATIBLE, NOTE)

@dataclass(frozen=True)
class Rule:
    """One kind of change: a stable id (never reused), its severity and area."""

    id: str
    severity: str
    area: str
    summary: str  # what the rule reports
    why: str  # why it has this severity


RULES: dict[str, Rule] = {}


def rule(rule_id: str, severity: str, area: str, summary: str, why: str) -> Rule:
    """Add a rule to the catalogue (once; ids are unique across areas)."""
    if severity not in SEVERITIES:
        raise ValueError(f"rule {rule_id}: unknown severity {severity!r}")
    if rule_id in RULES:
        raise ValueError(f"rule {rule_id} is defined twice")
    RULES[rule_id] = r = Rule(rule_id, severity, area, summary, why)
    return r


@dataclass(frozen=True)
class Change:
    """One semantic change between two revisions."""

    rule: str
    severity: str
    area: str
    subject: str  # stable dotted path of the element, e.g. ``instr_desc.m``
    message: str
    kinds: tuple[str, ...] = ()  # MMA kinds concerned (descriptors with kinds)
    old: Location | None = None
    new: Location | None = None
    before: Json = None
    after: Json = None

    def as_dict(self) -> dict[str, Json]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "area": self.area,
            "subject": self.subject,
            "kinds": list(self.kinds),
            "message": self.message,
            "old": self.old.as_dict() if self.old else None,
            "new": self.new.as_dict() if self.new else None,
            "before": self.before,
            "after": self.after,
        }


class Context:
    """What a comparer gets: both revisions, and :meth:`report` to record a change."""

    def __init__(self, old: Revision, new: Revision) -> None:
        self.old = old
        self.new = new
        self._changes: list[Change] = []

    def report(self, r: Rule, subject: str, message: str, *, kind: str | None = None,
               old: Location | None = None, new: Location | None = None,
               before: Json = None, after: Json = None) -> None:
        self._changes.append(Change(r.id, r.severity, r.area, subject, message,
                                    (kind,) if kind is not None else (), old, new,
                                    before, after))

    def changes(self) -> list[Change]:
        """The changes reported, the same change of several kinds merged into one,
        most severe first and otherwise in the order the comparers reported them."""
        merged: dict[tuple[Any, ...], Change] = {}
        for c in self._changes:
            key = (c.rule, c.subject, c.message, c.old, c.new, repr(c.before), repr(c.after))
            have = merged.get(key)
            if have is None:
                merged[key] = c
            elif c.kinds and not set(c.kinds) <= set(have.kinds):
                merged[key] = replace(have, kinds=have.kinds + c.kinds)
        return sorted(merged.values(), key=lambda c: SEVERITIES.index(c.severity))


Comparer = Callable[[Context], None]
COMPARERS: dict[str, list[Comparer]] = {}


def comparer(area: str) -> Callable[[Comparer], Comparer]:
    """Register a function that compares the models of one area."""
    def register(fn: Comparer) -> Comparer:
        COMPARERS.setdefault(area, []).append(fn)
        return fn
    return register


@dataclass(frozen=True)
class Symbol:
    """A name that generated code defines, with what it stands for.

    ``key`` is language neutral (``InstrDescF16.Dtype.F32``); ``python`` and
    ``cpp`` are the spellings in the generated Python package and C++ headers;
    ``signature`` is what must stay the same for code using the symbol to keep
    working (bits, allowed values, a member's code).
    """

    key: str
    python: str
    cpp: str
    signature: str = ""
    files: tuple[str, ...] = field(default=())  # generated files that define it


SymbolTable = Callable[["Spec"], Iterable[Symbol]]
SYMBOL_TABLES: dict[str, SymbolTable] = {}


def symbol_table(area: str) -> Callable[[SymbolTable], SymbolTable]:
    """Register the function listing the generated symbols of one area."""
    def register(fn: SymbolTable) -> SymbolTable:
        if area in SYMBOL_TABLES:
            raise ValueError(f"area {area!r} has two symbol tables")
        SYMBOL_TABLES[area] = fn
        return fn
    return register


def load_rule_modules() -> None:
    """Import every ``ptxgen.diff.rules_*`` module (each registers its area)."""
    import importlib
    import pkgutil
    from pathlib import Path

    package = __name__.rpartition(".")[0]
    for mod in sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])):
        if mod.startswith("rules_"):
            importlib.import_module(f"{package}.{mod}")


def compare(old: Revision, new: Revision) -> list[Change]:
    """Every change from ``old`` to ``new``, by the rules of every area."""
    load_rule_modules()
    ctx = Context(old, new)
    for area in sorted(COMPARERS):
        for fn in COMPARERS[area]:
            fn(ctx)
    return ctx.changes()


def symbols(spec: Spec) -> dict[str, Symbol]:
    """The generated symbols of every area, by key."""
    load_rule_modules()
    out: dict[str, Symbol] = {}
    for area in sorted(SYMBOL_TABLES):
        for s in SYMBOL_TABLES[area](spec):
            out[s.key] = s
    return out
