"""``ptxgen lint PATH...``: check PTX that ptxgen did not write against the spec.

:mod:`ptxtext` reads a module, :mod:`knownbits` follows the constants that build each
register, :mod:`check` applies the spec (forms, support, descriptor layouts and rules).
``run`` is what the command line calls: exit 0 clean, 1 findings, 2 error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ptxgen.lint.check import Checker, Counts, Finding, Suggestion, counts_text
from ptxgen.source import SOURCE_SUFFIXES

PTX_SUFFIXES = (".ptx",)
EXIT_CLEAN, EXIT_FINDINGS = 0, 1


class LintError(ValueError):
    """Bad input (exit 2): an unreadable path, an unknown target, version or toolkit."""


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)
    files: int = 0
    suggestions: list[Suggestion] | None = None  # with --suggest

    @property
    def exit_code(self) -> int:
        return EXIT_FINDINGS if self.findings else EXIT_CLEAN


def files_of(paths: list[str]) -> list[Path]:
    """The PTX files and CUDA / C++ sources named or found below the folders named, in a
    stable order (a file named outright is read as a source by its suffix, else as PTX)."""
    out: list[Path] = []
    for text in paths:
        p = Path(text)
        if p.is_dir():
            found = [q for q in p.rglob("*")
                     if q.suffix in PTX_SUFFIXES + SOURCE_SUFFIXES and q.is_file()]
            out.extend(sorted(found))
        elif p.is_file():
            out.append(p)
        else:
            raise LintError(f"{text!r}: no such file or folder")
    return out


def lint(paths: list[str], target: str | None = None, version: str | None = None,
         toolkit: str | None = None, suggest: bool = False) -> Report:
    from ptxgen.isa import ptx
    from ptxgen.lint.ptxtext import read
    from ptxgen.source import read_source

    iset = ptx.instruction_set()
    _check_args(iset, target, version, toolkit)
    checker = Checker(iset, toolkit, suggest)
    report = Report(suggestions=checker.suggestions)
    for path in files_of(paths):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise LintError(f"{path}: cannot read: {exc.strerror}") from None
        if path.suffix in SOURCE_SUFFIXES:
            found, counts = checker.check_source(os.fspath(path),
                                                 read_source(text, os.fspath(path)), target,
                                                 version)
        else:
            found, counts = checker.check(os.fspath(path), read(text), target, version)
        report.findings.extend(found)
        report.counts.add(counts)
        report.files += 1
    return report


def _check_args(iset: object, target: str | None, version: str | None,
                toolkit: str | None) -> None:
    from ptxgen.model.instructions import InstructionSet
    from ptxgen.names import did_you_mean

    assert isinstance(iset, InstructionSet)
    targets = iset.targets
    if toolkit is not None:
        if toolkit not in targets.toolkit_names:
            raise LintError(f"--toolkit: unknown toolkit {toolkit!r}"
                            f"{did_you_mean(toolkit, list(targets.toolkit_names))}; known: "
                            f"{', '.join(targets.toolkit_names)}")
        targets = targets.for_toolkit(toolkit)
    if version is not None and version not in targets.versions:
        raise LintError(f"--ptx-isa: unknown PTX ISA version {version!r}; known: "
                        f"{', '.join(targets.versions)}")
    if target is not None and target not in targets.by_name:
        raise LintError(f"--target: unknown target {target!r}"
                        f"{did_you_mean(target, list(targets.names))}; known: "
                        f"{', '.join(targets.names)}")


def render(report: Report, as_json: bool) -> str:
    if as_json:
        c = report.counts
        extra = ({"suggestions": [s.as_json() for s in report.suggestions]}
                 if report.suggestions is not None else {})
        return json.dumps({
            "findings": [f.as_json() for f in report.findings], **extra,
            "summary": {"files": report.files, "instructions": c.instructions,
                        "checked": c.checked, "skipped": c.skipped,
                        "descriptors": c.descriptors, "findings": len(report.findings),
                        "skipped_by_family": dict(sorted(c.skipped_opcodes.items()))},
        }, indent=2)
    lines = [f.text() for f in report.findings]
    lines += [s.text() for s in report.suggestions or ()]
    lines.append(f"{len(report.findings)} finding(s); "
                 + counts_text(report.counts, report.files))
    return "\n".join(lines)


__all__ = ["LintError", "Report", "lint", "render"]
