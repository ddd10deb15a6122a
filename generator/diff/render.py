"""The three output formats of ``ptxgen diff``: text (terminals), markdown
(pull-request comments) and JSON (tools; the shape is documented in
docs/diff-policy.md and versioned by its ``schema`` key)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from ptxgen.diff import Report, Rule
from ptxgen.diff.base import Json, Location
from ptxgen.diff.engine import SEVERITIES, Change
from ptxgen.diff.generated import Generated
from ptxgen.diff.revisions import Revision

JSON_SCHEMA = "ptxgen-diff/1"
FORMATS = ("text", "markdown", "json")


def render(report: Report, fmt: str) -> str:
    if fmt == "json":
        return to_json(report)
    if fmt == "markdown":
        return markdown(report)
    return text(report)


def _side(rev: Revision) -> str:
    if rev.ptx_isa is not None:
        return f"PTX ISA {rev.ptx_isa} (view of {rev.spec_dir}/)"
    if rev.type == "git":
        assert rev.commit is not None
        return f"{rev.label} (git {rev.commit[:12]}, {rev.spec_dir}/)"
    return f"{rev.spec_dir} (folder)"


def _summary(report: Report) -> str:
    n = len(report.changes)
    counts = ", ".join(f"{v} {k}{'s' if k == 'note' and v != 1 else ''}"
                       for k, v in report.counts.items())
    return f"{n} change{'s' if n != 1 else ''}: {counts}" if n else "no changes"


def _where(loc: Location | None) -> str:
    return str(loc) if loc else "-"


def _subject(c: Change) -> str:
    return c.subject + (f" [{', '.join(c.kinds)}]" if c.kinds else "")


# -- text ------------------------------------------------------------------------------------

def text(report: Report) -> str:
    out = [f"ptxgen diff: {_side(report.old)} -> {_side(report.new)}", _summary(report)]
    for severity in SEVERITIES:
        group = [c for c in report.changes if c.severity == severity]
        if not group:
            continue
        out += ["", f"{severity}:"]
        for c in group:
            out.append(f"  {c.rule:<22} {_subject(c)}")
            out.append(f"      {c.message}")
            out.append(f"      old {_where(c.old)}  new {_where(c.new)}")
    if report.generated is not None:
        out += [""] + _generated_text(report.generated)
    return "\n".join(out) + "\n"


def _tally(items: Iterable[str]) -> str:
    seen: dict[str, int] = {}
    for s in items:
        seen[s] = seen.get(s, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in seen.items()) or "none"


def _generated_text(gen: Generated) -> list[str]:
    out = [f"generated files (below the output folder): {_tally(f.status for f in gen.files)}"]
    for f in gen.files:
        out.append(f"  {f.status:<8} {f.path} (+{f.added_lines} -{f.removed_lines})")
    out.append(f"generated symbols: {_tally(s.status for s in gen.symbols)}")
    for s in gen.symbols:
        out.append(f"  {s.status:<8} {s.symbol.key}")
        if s.before is not None and s.after is not None:
            out.append(f"           was: {s.before}")
            out.append(f"           now: {s.after}")
    return out


# -- markdown --------------------------------------------------------------------------------

def _cell(value: str) -> str:
    return " ".join(value.split()).replace("|", "\\|").replace("<", "&lt;")


def _code(value: str) -> str:
    return f"`{value}`" if value else ""


def _name(rev: Revision) -> str:
    if rev.ptx_isa is not None:
        return f"PTX ISA {rev.ptx_isa} (`{rev.spec_dir}`)"
    return f"`{rev.label}`"


def markdown(report: Report) -> str:
    old, new = report.old, report.new
    out = [f"### ptxgen diff: {_name(old)} → {_name(new)}", ""]
    counts = report.counts
    head = [f"**{counts['breaking']} breaking**" if counts["breaking"] else "0 breaking",
            f"{counts['compatible']} compatible",
            f"{counts['note']} note{'s' if counts['note'] != 1 else ''}"]
    out.append(", ".join(head) + (" — no changes" if not report.changes else ""))
    for severity in SEVERITIES:
        group = [c for c in report.changes if c.severity == severity]
        if not group:
            continue
        out += ["", f"#### {severity.capitalize()}", "",
                "| Rule | Subject | Kinds | Change | Old | New |",
                "| --- | --- | --- | --- | --- | --- |"]
        for c in group:
            out.append(f"| `{c.rule}` | `{c.subject}` | {_cell(', '.join(c.kinds))} | "
                       f"{_cell(c.message)} | {_code(_where(c.old) if c.old else '')} | "
                       f"{_code(_where(c.new) if c.new else '')} |")
    if report.generated is not None:
        out += [""] + _generated_markdown(report.generated)
    return "\n".join(out) + "\n"


def _generated_markdown(gen: Generated) -> list[str]:
    out = ["<details><summary>Generated files: " + _tally(f.status for f in gen.files) +
           "; symbols: " + _tally(s.status for s in gen.symbols) + "</summary>", ""]
    if gen.files:
        out += ["| File | Status | Lines |", "| --- | --- | --- |"]
        out += [f"| `{f.path}` | {f.status} | +{f.added_lines} −{f.removed_lines} |"
                for f in gen.files]
        out.append("")
    if gen.symbols:
        out += ["| Symbol | Status | Python | C++ | Was | Now |",
                "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| `{s.symbol.key}` | {s.status} | `{s.symbol.python}` | `{s.symbol.cpp}` | "
                f"{_cell(s.before or '')} | {_cell(s.after or '')} |" for s in gen.symbols]
        out.append("")
    out.append("</details>")
    return out


# -- JSON ------------------------------------------------------------------------------------

def as_dict(report: Report) -> dict[str, Json]:
    return {
        "schema": JSON_SCHEMA,
        "old": report.old.describe(),
        "new": report.new.describe(),
        "summary": {**report.counts, "exit_code": report.exit_code},
        "changes": [c.as_dict() for c in report.changes],
        "generated": report.generated.as_dict() if report.generated else None,
    }


def to_json(report: Report) -> str:
    return json.dumps(as_dict(report), indent=2, ensure_ascii=False) + "\n"


# -- the rule catalogue ----------------------------------------------------------------------

def rules_table(rules: Iterable[Rule]) -> str:
    """The policy table of docs/diff-policy.md (a test keeps the two in step)."""
    out = ["| Rule id | Severity | Area | Reports | Why this severity |",
           "| --- | --- | --- | --- | --- |"]
    out += [f"| `{r.id}` | {r.severity} | {r.area} | {_cell(r.summary)} | {_cell(r.why)} |"
            for r in rules]
    return "\n".join(out) + "\n"
