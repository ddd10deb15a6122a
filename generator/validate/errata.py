"""``doc_errata``: the document's own errors a spec file records (``ptxgen doc check``
proposes them no more). What the schema cannot check: ids unique in the file, and the
proposal key naming this file's descriptor (and one of its variants) or one of its
instructions."""

from __future__ import annotations

from typing import Any

from ptxgen.errors import Diagnostic
from ptxgen.load import Document


def _owner_problem(data: dict[str, Any], key: str) -> str | None:
    area, _, rest = key.partition(":")
    subject = rest.split(":")[0]
    if area == "descriptor":
        name, _, variant = subject.partition("@")
        if data.get("descriptor") != name:
            return f"names descriptor {name!r}; this file defines {data.get('descriptor')!r}"
        variants = [v.get("name") for v in data.get("variants", ())]
        if variant and variant not in variants:
            return (f"names variant {variant!r} of {name}; its variants: "
                    + (", ".join(map(str, variants)) or "none"))
    elif area == "instruction":
        ids = [i.get("id") for i in data.get("instructions", ())]
        if subject not in ids:
            return f"names instruction {subject!r}, which this file does not define"
    return None


def check_errata(doc: Document) -> list[Diagnostic]:
    data = doc.data
    out: list[Diagnostic] = []
    if not isinstance(data, dict):
        return out
    seen: dict[str, int] = {}
    keys: dict[str, int] = {}
    for i, e in enumerate(data.get("doc_errata", ())):
        if e["id"] in seen:
            out.append(doc.source.diag(("doc_errata", i, "id"),
                                       f"duplicate erratum id {e['id']!r} (also "
                                       f"doc_errata[{seen[e['id']]}])"))
        seen.setdefault(e["id"], i)
        if e["proposal"] in keys:
            out.append(doc.source.diag(("doc_errata", i, "proposal"),
                                       f"proposal {e['proposal']!r} is already recorded by "
                                       f"doc_errata[{keys[e['proposal']]}]"))
        keys.setdefault(e["proposal"], i)
        problem = _owner_problem(data, e["proposal"])
        if problem is not None:
            out.append(doc.source.diag(("doc_errata", i, "proposal"), f"proposal: {problem}"))
    return out
