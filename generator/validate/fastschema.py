"""A fast yes/no JSON Schema check for the spec's own schemas.

:func:`compile_schema` turns a draft 2020-12 schema into one Python predicate: True
exactly when the instance is valid. It knows the keywords the spec schemas use
(``type``, ``properties``, ``required``, ``additionalProperties``, ``items``,
``prefixItems``, ``enum``, ``const``, ``pattern``, ``minimum`` ..., ``oneOf``,
``anyOf``, ``allOf``, ``not``, ``if``/``then``/``else`` and ``$ref`` into the same
document); for a schema that uses any other keyword it returns None. Validation
(:func:`ptxgen.validate.schema.check_schema`) asks it first and runs
``jsonschema`` only for a document it refuses, to say why: a valid spec never
imports ``jsonschema`` (about half of ``ptxgen validate``). The test suite holds
it to ``jsonschema``'s verdict on the spec files and on many broken variants of
them (tests/test_validate.py).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

#: Keywords that do not constrain the instance.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description",
                          "default", "examples", "deprecated", "readOnly", "writeOnly"})
_KNOWN = _ANNOTATIONS | {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems",
    "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "pattern", "enum", "const", "oneOf", "anyOf",
    "allOf", "not", "if", "then", "else", "minProperties", "maxProperties", "$ref"}


class Unsupported(Exception):
    """The schema uses something this checker does not implement."""


def compile_schema(schema: Any) -> Check | None:
    """The predicate of ``schema`` (a parsed JSON document), or None when it uses a
    keyword or reference this module does not implement."""
    if not isinstance(schema, Mapping) or schema.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
        return None
    try:
        return _Compiler(schema).compile(schema, "#")
    except Unsupported:
        return None


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": _is_number,
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool))
    or (isinstance(x, float) and x.is_integer()),
}


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema defines it (``true`` is not ``1``; ``1`` is ``1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(json_equal(a[k], b[k]) for k in a))
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(json_equal(x, y) for x, y in zip(a, b, strict=True)))
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return a is None and b is None


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any, where: str) -> Check:
        if schema is True:
            return lambda x: True
        if schema is False:
            return lambda x: False
        if not isinstance(schema, Mapping):
            raise Unsupported(where)
        unknown = set(schema) - _KNOWN
        if unknown or ("$id" in schema and schema is not self.root):
            raise Unsupported(f"{where}: {sorted(unknown) or '$id'}")
        checks: list[Check] = []
        add = checks.append
        if "$ref" in schema:
            add(self.ref(schema["$ref"]))
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not all(n in _TYPES for n in names):
                raise Unsupported(f"{where}: type {names}")
            preds = [_TYPES[n] for n in names]
            add(preds[0] if len(preds) == 1 else (lambda x: any(p(x) for p in preds)))
        if "enum" in schema:
            add(self.enum(list(schema["enum"])))
        if "const" in schema:
            const = schema["const"]
            add(lambda x: json_equal(x, const))
        obj = self.object_checks(schema, where)
        if obj is not None:
            add(lambda x: not isinstance(x, dict) or obj(x))
        arr = self.array_checks(schema, where)
        if arr is not None:
            add(lambda x: not isinstance(x, list) or arr(x))
        string = self.string_checks(schema)
        if string is not None:
            add(lambda x: not isinstance(x, str) or string(x))
        num = self.number_checks(schema)
        if num is not None:
            add(lambda x: not _is_number(x) or num(x))
        for key in ("allOf", "anyOf", "oneOf"):
            if key in schema:
                subs = [self.compile(s, f"{where}/{key}/{i}")
                        for i, s in enumerate(schema[key])]
                add(_combined(key, subs))
        if "not" in schema:
            neg = self.compile(schema["not"], f"{where}/not")
            add(lambda x: not neg(x))
        if "if" in schema:
            cond = self.compile(schema["if"], f"{where}/if")
            then = self.compile(schema.get("then", True), f"{where}/then")
            else_ = self.compile(schema.get("else", True), f"{where}/else")
            add(lambda x: then(x) if cond(x) else else_(x))
        if not checks:
            return lambda x: True
        if len(checks) == 1:
            return checks[0]
        return lambda x: all(c(x) for c in checks)

    def ref(self, ref: Any) -> Check:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise Unsupported(f"$ref {ref!r}")
        hit = self.refs.get(ref)
        if hit is not None:
            return hit
        node: Any = self.root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise Unsupported(f"$ref {ref!r}")
        cell: list[Check] = []
        self.refs[ref] = lambda x: cell[0](x)  # what a reference to itself calls
        cell.append(self.compile(node, ref))
        self.refs[ref] = cell[0]
        return cell[0]

    def enum(self, values: list[Any]) -> Check:
        if all(isinstance(v, str) for v in values):
            strings = frozenset(values)
            return lambda x: isinstance(x, str) and x in strings
        return lambda x: any(json_equal(x, v) for v in values)

    def object_checks(self, schema: Mapping[str, Any], where: str) -> Check | None:
        props = {k: self.compile(v, f"{where}/properties/{k}")
                 for k, v in schema.get("properties", {}).items()}
        required = tuple(schema.get("required", ()))
        extra: Check | None = None
        if "additionalProperties" in schema:
            extra = self.compile(schema["additionalProperties"],
                                 f"{where}/additionalProperties")
        lo = schema.get("minProperties")
        hi = schema.get("maxProperties")
        if not props and not required and extra is None and lo is None and hi is None:
            return None

        def check(x: dict[Any, Any]) -> bool:
            for k in required:
                if k not in x:
                    return False
            if lo is not None and len(x) < lo:
                return False
            if hi is not None and len(x) > hi:
                return False
            for k, v in x.items():
                p = props.get(k)
                if p is not None:
                    if not p(v):
                        return False
                elif extra is not None and not extra(v):
                    return False
            return True

        return check

    def array_checks(self, schema: Mapping[str, Any], where: str) -> Check | None:
        prefix = [self.compile(s, f"{where}/prefixItems/{i}")
                  for i, s in enumerate(schema.get("prefixItems", ()))]
        items: Check | None = None
        if "items" in schema:
            if isinstance(schema["items"], list):
                raise Unsupported(f"{where}: items as a list (before 2020-12)")
            items = self.compile(schema["items"], f"{where}/items")
        lo = schema.get("minItems")
        hi = schema.get("maxItems")
        if not prefix and items is None and lo is None and hi is None:
            return None
        n = len(prefix)

        def check(x: list[Any]) -> bool:
            if lo is not None and len(x) < lo:
                return False
            if hi is not None and len(x) > hi:
                return False
            for p, v in zip(prefix, x, strict=False):
                if not p(v):
                    return False
            if items is not None:
                for v in x[n:]:
                    if not items(v):
                        return False
            return True

        return check

    def string_checks(self, schema: Mapping[str, Any]) -> Check | None:
        lo = schema.get("minLength")
        hi = schema.get("maxLength")
        pattern = re.compile(schema["pattern"]) if "pattern" in schema else None
        if lo is None and hi is None and pattern is None:
            return None

        def check(x: str) -> bool:
            if lo is not None and len(x) < lo:
                return False
            if hi is not None and len(x) > hi:
                return False
            return pattern is None or pattern.search(x) is not None

        return check

    def number_checks(self, schema: Mapping[str, Any]) -> Check | None:
        # Written as jsonschema's keywords fail (a NaN passes every bound there too).
        fails = [(schema[k], op) for k, op in _BOUNDS if k in schema]
        if not fails:
            return None
        return lambda x: not any(op(x, b) for b, op in fails)


#: Numeric bounds, as the test that makes them fail.
_BOUNDS: tuple[tuple[str, Callable[[Any, Any], bool]], ...] = (
    ("minimum", operator.lt), ("maximum", operator.gt),
    ("exclusiveMinimum", operator.le), ("exclusiveMaximum", operator.ge))


def _combined(key: str, subs: list[Check]) -> Check:
    """allOf / anyOf / oneOf of the compiled subschemas."""
    if key == "allOf":
        return lambda x: all(s(x) for s in subs)
    if key == "anyOf":
        return lambda x: any(s(x) for s in subs)
    return lambda x: sum(1 for s in subs if s(x)) == 1
