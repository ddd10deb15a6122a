"""What ``ptxgen doc check`` prints and returns (the command line lends the assemblers)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ptxgen.doc.check import Proposal, check
from ptxgen.doc.markdown import read

EXIT_AGREE, EXIT_PROPOSALS = 0, 1


class DocError(ValueError):
    """Bad input: no document, unreadable files (exit 2)."""


def document_paths(items: Sequence[str]) -> list[Path]:
    out = []
    for item in items:
        p = Path(item)
        if not p.exists():
            raise DocError(f"DOC: {item} does not exist")
        out.append(p)
    return out


def run_check(items: Sequence[str], spec_dir: Path, as_json: bool,
              assemblers: Sequence[Any] = (), make_kernel: Any = None) -> int:
    from ptxgen import pipeline

    doc = read(document_paths(items))
    if not doc.sections:
        raise DocError("DOC: no section of the PTX ISA document found in "
                       + ", ".join(items))
    docs = pipeline.load_documents(spec_dir)
    spec = pipeline.model_of(docs)
    proposals = check(doc, spec, docs, combinations=bool(assemblers))
    if assemblers:
        from ptxgen.doc.assemble import assemble_proposals

        proposals = assemble_proposals(proposals, spec, assemblers, make_kernel)
    counts = Counter(p.kind for p in proposals)
    if as_json:
        print(json.dumps({"schema": "ptxgen-doc-check/1",
                          "document": list(items), "spec": str(spec_dir),
                          "sections": len(doc.sections),
                          "counts": dict(sorted(counts.items())),
                          "proposals": [p.as_json() for p in proposals]}, indent=2))
    else:
        for p in proposals:
            print(p.text())
        print(summary(proposals, len(doc.sections)))
    return EXIT_PROPOSALS if proposals else EXIT_AGREE


def summary(proposals: Sequence[Proposal], sections: int) -> str:
    if not proposals:
        return f"ptxgen doc check: {sections} sections read; the spec agrees with the document"
    counts = Counter(p.kind for p in proposals)
    noun = "proposal" if len(proposals) == 1 else "proposals"
    return (f"ptxgen doc check: {sections} sections read; {len(proposals)} {noun} ("
            + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + ")")


def run_import(items: Sequence[str], spec_dir: Path, out: Path, sections: Sequence[str],
               as_json: bool) -> int:
    """``doc import``: the folder written; exit 0."""
    from ptxgen import pipeline
    from ptxgen.doc.importer import write_import

    doc = read(document_paths(items))
    if not doc.sections:
        raise DocError("DOC: no section of the PTX ISA document found in " + ", ".join(items))
    docs = pipeline.load_documents(spec_dir)
    try:
        written = write_import(doc, docs, spec_dir, out, sections)
    except FileExistsError as exc:
        raise DocError(str(exc)) from None
    if not any(written.values()):
        raise DocError("DOC: no descriptor table or syntax block in the sections read"
                       + (f" (--section {', '.join(sections)})" if sections else ""))
    if as_json:
        print(json.dumps({"schema": "ptxgen-doc-import/1", "out": str(out), **written},
                         indent=2))
    else:
        for files in written.values():
            for f in files:
                print(f"wrote {f}")
        print(f"ptxgen doc import: {len(written['descriptors'])} descriptor files, "
              f"{len(written['syntax'])} syntax listings in {out}")
    return 0
