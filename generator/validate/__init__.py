"""Stage 2 - validate: JSON Schema first, then the checks a schema cannot express.

All problems of all files are collected and raised together as one
:class:`ptxgen.errors.SpecError`.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxgen.errors import Diagnostic, SpecError
from ptxgen.load import Document
from ptxgen.validate.instructions import check_instructions, check_targets
from ptxgen.validate.links import check_links
from ptxgen.validate.schema import check_schema, schema_for
from ptxgen.validate.semantic import check_semantics
from ptxgen.validate.versions import check_versions

# Semantic checks per kind of spec file, keyed by the file name of the JSON
# Schema its modeline names. Each gets every schema-valid file of its kind.
SEMANTIC_CHECKS: dict[str, Callable[[list[Document]], list[Diagnostic]]] = {
    "descriptor.schema.json": check_semantics,
    "instructions.schema.json": check_instructions,
    "targets.schema.json": check_targets,
}


def schema_name(doc: Document) -> str:
    path = schema_for(doc)
    return path.name if path else ""


def validate(docs: list[Document]) -> None:
    errors: list[Diagnostic] = []
    schema_ok: dict[str, list[Document]] = {}
    for doc in docs:
        found = check_schema(doc)
        errors.extend(found)
        if not found:
            schema_ok.setdefault(schema_name(doc), []).append(doc)
    for name, group in schema_ok.items():
        check = SEMANTIC_CHECKS.get(name)
        if check is None:
            errors.extend(d.source.diag((), f"no semantic checks are defined for schema {name!r}")
                          for d in group)
        else:
            errors.extend(check(group))
    if not errors:
        errors.extend(check_links(schema_ok.get("descriptor.schema.json", []),
                                  schema_ok.get("instructions.schema.json", [])))
    if not errors:
        errors.extend(check_versions(schema_ok.get("descriptor.schema.json", []),
                                     schema_ok.get("targets.schema.json", []),
                                     schema_ok.get("instructions.schema.json", [])))
    if errors:
        raise SpecError(errors)
