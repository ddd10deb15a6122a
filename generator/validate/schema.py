"""JSON Schema validation with errors mapped back to ``file:line:col``."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from ptxgen.errors import Diagnostic
from ptxgen.load import Document

SCHEMA_DIR_NAME = "schema"
MAX_SCHEMA_BYTES = 1024 * 1024  # a schema named by a modeline: a regular file of at most 1 MB
#: Checking one file against its schema may take at most this long. The schemas come with
#: the spec (``ptxgen diff`` loads a git revision with the schemas it carries), so a
#: hostile revision can hold a pattern that backtracks exponentially (``^(a+)+$``) or
#: ``allOf`` / ``$ref`` chains that multiply the work; the project's schemas check its
#: largest file in about 0.1 s.
MAX_SCHEMA_SECONDS = 5.0


class _Timeout(Exception):
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`_Timeout` in the block after ``seconds`` (SIGALRM; Python's regular
    expression engine checks for signals while it matches). Only in the main thread, where
    the command line runs; elsewhere the block runs unlimited."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
            signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@cache
def _validator(schema_path: str) -> Any:
    import jsonschema  # imported lazily: keeps encode/decode start-up fast

    schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    # The schemas themselves are checked against their meta-schema by the test
    # suite (tests/test_schema_files.py); doing it on every run would double
    # the cost of `ptxgen generate`.
    return cls(schema)


@cache
def _fast_check(schema_path: str) -> Any:
    """The compiled yes/no check of a schema (:mod:`ptxgen.validate.fastschema`), or None
    when it cannot be compiled (then jsonschema alone decides)."""
    from ptxgen.validate.fastschema import compile_schema

    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return compile_schema(schema)


def schema_for(doc: Document) -> Path | None:
    """The schema named by the file's ``yaml-language-server`` modeline."""
    return doc.schema_path




#: The naming rules of the schemas' patterns, as a user reads them.
NAMING_RULES = {
    "^[a-z][a-z0-9_]*$": "names are lower_snake_case: a lower-case letter, then lower-case "
                         "letters, digits or '_'",
    "^[a-z_][a-z0-9_]*$": "names are lower_snake_case: a lower-case letter or '_', then "
                          "lower-case letters, digits or '_'",
    "^[a-z0-9][a-z0-9_]*$": "value names are lower case: letters, digits and '_'",
    "^[A-Z][A-Za-z0-9]*$": "class names are CamelCase: a capital letter, then letters and digits",
    "^[a-z0-9][a-z0-9-]*$": "note ids are lower-case letters, digits and '-'",
    "^[0-9]{3}$": "seed ids are three digits, such as '003'",
    "^[0-9]{1,2}-[0-9]{1,2}$": "bit ranges are written LSB-MSB, such as 17-22",
}


def _branch(errors: Any) -> Any:
    """Of the errors of a oneOf/anyOf, those of the alternative that came closest: the one
    with the fewest errors (a field named 'Foo' fails only the field alternative's name
    pattern, while the reserved and fixed alternatives miss their required keys)."""
    import jsonschema

    groups: dict[object, list[Any]] = {}
    for e in errors:
        groups.setdefault(e.relative_schema_path[0] if e.relative_schema_path else None,
                          []).append(e)
    fewest = min(groups.values(), key=len)
    return jsonschema.exceptions.best_match(fewest)


def _describe(error: Any) -> tuple[tuple[str | int, ...], str, bool]:
    """Pick the most specific message from a (possibly nested) schema error."""
    err = error
    while err.context:
        best = _branch(err.context)
        if best is None or best is err:
            break
        err = best
    path = tuple(err.absolute_path)
    msg = err.message
    key = False
    if err.validator == "pattern" and err.validator_value in NAMING_RULES:
        msg = f"{err.instance!r} breaks the naming rule: {NAMING_RULES[err.validator_value]}"
    elif err.validator == "additionalProperties":
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


#: Schemas (by path: a git revision's are extracted once) that ran out of time in this
#: process: {schema: the file checked}.
_SLOW: dict[str, str] = {}


def check_schema(doc: Document) -> list[Diagnostic]:
    schema_path = schema_for(doc)
    if schema_path is None:
        return [Diagnostic(doc.display, 1, 1,
                           "missing '# yaml-language-server: $schema=...' modeline "
                           "naming the JSON Schema of this file")]
    if not schema_path.name.endswith(".schema.json"):
        return [Diagnostic(doc.display, 1, 1, f"the modeline names {schema_path.name!r}; "
                                              "schemas are *.schema.json files")]
    if not schema_path.is_file():
        return [Diagnostic(doc.display, 1, 1, f"schema file not found: {schema_path}")]
    if schema_path.stat().st_size > MAX_SCHEMA_BYTES:
        return [Diagnostic(doc.display, 1, 1, f"schema {schema_path.name} is larger than "
                                              f"{MAX_SCHEMA_BYTES} bytes")]
    slow = str(schema_path)
    if slow in _SLOW:  # the same schema ran out of time on another file: no second wait
        return [Diagnostic(doc.display, 1, 1, f"schema {schema_path.name} took longer than "
                                              f"{MAX_SCHEMA_SECONDS:g} s on {_SLOW[slow]} (a "
                                              "pattern that backtracks, or a schema that "
                                              "multiplies its work); refused without "
                                              "another try")]
    try:
        with _deadline(MAX_SCHEMA_SECONDS):
            return _check(doc, schema_path)
    except _Timeout:
        _SLOW[slow] = doc.display
        return [Diagnostic(doc.display, 1, 1, f"checking this file against schema "
                                              f"{schema_path.name} took longer than "
                                              f"{MAX_SCHEMA_SECONDS:g} s (a pattern that "
                                              "backtracks, or a schema that multiplies its "
                                              "work); refused")]
    except RecursionError:
        return [Diagnostic(doc.display, 1, 1, f"schema {schema_path.name} recurses without "
                                              "end; refused")]
    except Exception as exc:  # a schema that cannot be applied ($ref to nowhere, bad regex)
        return [Diagnostic(doc.display, 1, 1, f"schema {schema_path.name} cannot be used: "
                                              f"{type(exc).__name__}: {exc}"[:300])]


#: How many documents jsonschema checked in this process (the fast check did not pass
#: them): a verdict it took part in is not cached (:mod:`ptxgen.cache`).
jsonschema_checks = 0


def _check(doc: Document, schema_path: Path) -> list[Diagnostic]:
    """check_schema's work: the fast yes/no check, then jsonschema for the reasons. Runs
    under the time limit; every exception is check_schema's to report."""
    fast = _fast_check(str(schema_path))
    if fast is not None and isinstance(doc.data, dict) and fast(doc.data):
        return []  # valid: jsonschema is only needed to say why a document is not
    global jsonschema_checks
    jsonschema_checks += 1
    validator = _validator(str(schema_path))
    if not isinstance(doc.data, dict):
        what = {list: "a list", str: "a single value", int: "a single value",
                float: "a single value", bool: "a single value"}.get(type(doc.data), "no mapping")
        return [doc.source.diag((), f"the top level of a spec file must be a mapping of keys "
                                    f"(such as 'descriptor: ...'), not {what}")]
    out = []
    for error in validator.iter_errors(doc.data):
        path, msg, key = _describe(error)
        out.append(doc.source.diag(path, msg, key=key))
    return out
