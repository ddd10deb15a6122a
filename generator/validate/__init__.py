"""Stage 2 - validate: JSON Schema first, then the checks a schema cannot express.

All problems of all files are collected and raised together as one
:class:`ptxgen.errors.SpecError`.
"""

from __future__ import annotations

from ptxgen.errors import Diagnostic, SpecError
from ptxgen.load import Document
from ptxgen.validate.schema import check_schema
from ptxgen.validate.semantic import check_semantics


def validate(docs: list[Document]) -> None:
    errors: list[Diagnostic] = []
    schema_ok: list[Document] = []
    for doc in docs:
        found = check_schema(doc)
        errors.extend(found)
        if not found:
            schema_ok.append(doc)
    errors.extend(check_semantics(schema_ok))
    if errors:
        raise SpecError(errors)
