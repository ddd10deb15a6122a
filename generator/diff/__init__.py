"""``ptxgen diff``: semantic changes between two revisions of the spec, each under a
stable rule id with a severity (breaking / compatible / note) and its location in
both revisions; optionally the generated files and symbols that change.

    report = diff("HEAD~3", "spec", spec=Path("spec"), generated=True)
    report = diff("8.6", "9.0", spec=Path("spec"), ptx_isa=True)  # two version views
    print(render.text(report)); raise SystemExit(report.exit_code)

Rules live in ``ptxgen/diff/rules_<area>.py`` (see :mod:`ptxgen.diff.engine`).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptxgen.diff.base import DiffError, Location
from ptxgen.diff.engine import (
    BREAKING,
    RULES,
    SEVERITIES,
    Change,
    Rule,
    compare,
    load_rule_modules,
)
from ptxgen.diff.generated import Generated, generated_changes
from ptxgen.diff.revisions import Revision, load_views, open_revision

__all__ = ["RULES", "Change", "DiffError", "Generated", "Location", "Report", "Revision",
           "Rule", "compare_revisions", "diff", "rules"]

EXIT_OK, EXIT_BREAKING = 0, 1


@dataclass(frozen=True)
class Report:
    old: Revision
    new: Revision
    changes: tuple[Change, ...]
    generated: Generated | None = None

    def count(self, severity: str) -> int:
        return sum(1 for c in self.changes if c.severity == severity)

    @property
    def counts(self) -> dict[str, int]:
        return {s: self.count(s) for s in SEVERITIES}

    @property
    def exit_code(self) -> int:
        """0 when nothing breaks, 1 when a breaking change was found."""
        return EXIT_BREAKING if self.count(BREAKING) else EXIT_OK


def rules() -> list[Rule]:
    """The catalogue of every area, in definition order."""
    load_rule_modules()
    return list(RULES.values())


def compare_revisions(old: Revision, new: Revision, *, generated: bool = False) -> Report:
    gen = (generated_changes(old.spec, new.spec, old.label, new.label) if generated else None)
    return Report(old, new, tuple(compare(old, new)), gen)


def diff(old: str, new: str, *, spec: Path = Path("spec"), generated: bool = False,
         ptx_isa: bool = False) -> Report:
    """Open OLD and NEW (spec folders or git revisions) and compare them; with
    ``ptx_isa``, OLD and NEW are PTX ISA versions and the views of the spec folder
    ``spec`` as of those versions are compared.

    Raises :class:`DiffError` when either cannot be opened and
    :class:`ptxgen.errors.SpecError` when either does not validate.
    """
    if ptx_isa:
        a, b = load_views(spec, old, new)
        return compare_revisions(a, b, generated=generated)
    with tempfile.TemporaryDirectory(prefix="ptxgen-diff-") as tmp:
        a = open_revision(old, role="OLD", spec=spec, workdir=Path(tmp))
        b = open_revision(new, role="NEW", spec=spec, workdir=Path(tmp))
    return compare_revisions(a, b, generated=generated)
