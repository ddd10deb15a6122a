"""`ptxgen diff` reports spelling changes (spec `spelling:` / `alias_names:`): orders and
names read besides the ISA's are added (compatible) or removed (breaking), on the fixture
tests/fixtures/diff/spelling-added (the catalogue's pairs spelling-removed and
spelling-changed are read by tests/test_diff_rules.py)."""

from __future__ import annotations

import re

from conftest import ROOT
from ptxgen.diff import Report, compare_revisions
from ptxgen.diff.revisions import load_revision

CASE = ROOT / "tests" / "fixtures" / "diff" / "spelling-added"


def _report(old: str, new: str) -> Report:
    a, b = (load_revision(CASE / side, label=side, type_="folder",
                          spec_dir=(CASE / side).as_posix()) for side in (old, new))
    return compare_revisions(a, b)


def _line(side: str, pattern: str) -> int:
    text = (CASE / side / "instructions" / "demo.yaml").read_text().splitlines()
    return next(i + 1 for i, t in enumerate(text) if re.search(pattern, t))


def test_spelling_and_alias_name_added_are_compatible() -> None:
    rep = _report("old", "new")
    got = {c.subject: c for c in rep.changes}
    assert set(got) == {"demo_mma.spelling", "demo_mma.alias_names.dmma"}
    sp, al = got["demo_mma.spelling"], got["demo_mma.alias_names.dmma"]
    assert (sp.rule, sp.severity) == ("spelling-added", "compatible")
    assert sp.after == {"head": 1, "fixed": [], "ordered": [], "loose": []}
    assert sp.new is not None and sp.new.line == _line("new", r"^      head: 1")
    assert (al.rule, al.after) == ("spelling-added", "dmma")
    assert al.new is not None and al.new.line == _line("new", r"^      - name: dmma")
    assert rep.exit_code == 0


def test_spelling_and_alias_name_removed_break() -> None:
    rep = _report("new", "old")
    assert sorted((c.rule, c.severity, c.subject) for c in rep.changes) == [
        ("spelling-removed", "breaking", "demo_mma.alias_names.dmma"),
        ("spelling-removed", "breaking", "demo_mma.spelling")]
    assert rep.exit_code == 1


def test_the_same_spellings_are_no_change() -> None:
    assert not _report("new", "new").changes
