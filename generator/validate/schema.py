"""JSON Schema validation with errors mapped back to ``file:line:col``."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from ptxgen.errors import Diagnostic
from ptxgen.load import Document

SCHEMA_DIR_NAME = "schema"
_MODELINE = re.compile(r"^#\s*yaml-language-server:\s*\$schema=(\S+)\s*$", re.M)


@cache
def _validator(schema_path: str) -> Any:
    import jsonschema  # imported lazily: keeps encode/decode start-up fast

    schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    # The schemas themselves are checked against their meta-schema by the test
    # suite (tests/test_schema_files.py); doing it on every run would double
    # the cost of `ptxgen generate`.
    return cls(schema)


def schema_for(doc: Document) -> Path | None:
    """The schema named by the file's ``yaml-language-server`` modeline."""
    m = _MODELINE.search(doc.text)
    if not m:
        return None
    return (doc.path.parent / m.group(1)).resolve()


def _describe(error: Any) -> tuple[tuple[str | int, ...], str, bool]:
    """Pick the most specific message from a (possibly nested) schema error."""
    import jsonschema

    err = error
    while err.context:
        best = jsonschema.exceptions.best_match(err.context)
        if best is None or best is err:
            break
        err = best
    path = tuple(err.absolute_path)
    msg = err.message
    key = False
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        unexpected = sorted(set(err.instance) - set(allowed))
        if unexpected:
            path = path + (unexpected[0],)
            key = True
            msg = (f"unknown key {', '.join(repr(u) for u in unexpected)}; "
                   f"allowed keys: {', '.join(allowed)}")
    elif err.validator == "required":
        msg = f"{msg} (at {'/'.join(str(p) for p in path) or 'top level'})"
    where = "/".join(str(p) for p in path)
    if where and not key:
        msg = f"{where}: {msg}"
    return path, msg, key


def check_schema(doc: Document) -> list[Diagnostic]:
    schema_path = schema_for(doc)
    if schema_path is None:
        return [Diagnostic(doc.display, 1, 1,
                           "missing '# yaml-language-server: $schema=...' modeline "
                           "naming the JSON Schema of this file")]
    if not schema_path.is_file():
        return [Diagnostic(doc.display, 1, 1, f"schema file not found: {schema_path}")]
    validator = _validator(str(schema_path))
    out = []
    for error in validator.iter_errors(doc.data):
        path, msg, key = _describe(error)
        out.append(doc.source.diag(path, msg, key=key))
    return out
