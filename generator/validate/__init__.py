"""Stage 2 - validate: JSON Schema first, then the checks a schema cannot express.

These checks read the documents as written; what only the built model can tell
(the forms the rules allow, descriptor links and versions) is checked by
:mod:`ptxgen.model.checks`, for what passed here. All problems of all files are
collected and raised together as one :class:`ptxgen.errors.SpecError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ptxgen.errors import Diagnostic, SpecError
from ptxgen.load import Document
from ptxgen.validate.errata import check_errata
from ptxgen.validate.instructions import check_instructions, check_targets
from ptxgen.validate.schema import check_schema
from ptxgen.validate.semantic import check_semantics

DESCRIPTOR_SCHEMA = "descriptor.schema.json"
INSTRUCTIONS_SCHEMA = "instructions.schema.json"
TARGETS_SCHEMA = "targets.schema.json"

# Semantic checks per kind of spec file, keyed by the file name of the JSON
# Schema its modeline names. Each gets every schema-valid file of its kind.
SEMANTIC_CHECKS: dict[str, Callable[[list[Document]], list[Diagnostic]]] = {
    DESCRIPTOR_SCHEMA: check_semantics,
    TARGETS_SCHEMA: check_targets,
}


@dataclass(frozen=True)
class Validated:
    """What validation found: its problems, the schema-valid documents by schema name,
    the targets.yaml the instruction checks read (None when it has problems) and the
    instruction entries (document, index) that passed every check."""

    errors: tuple[Diagnostic, ...]
    documents: Mapping[str, list[Document]]
    targets: Document | None
    instructions: tuple[tuple[Document, int], ...]

    def of(self, schema: str) -> list[Document]:
        """The schema-valid documents of one kind."""
        return self.documents.get(schema, [])


def check(docs: list[Document]) -> Validated:
    """Every problem of ``docs`` (nothing is raised)."""
    errors: list[Diagnostic] = []
    schema_ok: dict[str, list[Document]] = {}
    for doc in docs:
        found = check_schema(doc)
        errors.extend(found)
        if not found:
            schema_ok.setdefault(doc.schema_name, []).append(doc)
            errors.extend(check_errata(doc))
    targets: Document | None = None
    passed: tuple[tuple[Document, int], ...] = ()
    for name, group in schema_ok.items():
        if name == INSTRUCTIONS_SCHEMA:
            result = check_instructions(group, docs)
            errors.extend(result.errors)
            targets, passed = result.targets, result.passed
            continue
        semantic = SEMANTIC_CHECKS.get(name)
        if semantic is None:
            errors.extend(d.source.diag((), f"no semantic checks are defined for schema {name!r}")
                          for d in group)
        else:
            errors.extend(semantic(group))
    return Validated(tuple(errors), schema_ok, targets, passed)


def validate(docs: list[Document]) -> Validated:
    """:func:`check`, raising :class:`SpecError` with every problem found."""
    result = check(docs)
    if result.errors:
        raise SpecError(list(result.errors))
    return result
