"""The compiled schema check (ptxgen.validate.fastschema) against jsonschema, the oracle:
the same verdict on every spec file and on thousands of broken variants of them, and
validation that still reports, through jsonschema, why a document is not valid."""

from __future__ import annotations

import copy
import json
import os
import random
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import SPEC
from ptxgen.load import load_spec_dir
from ptxgen.validate.fastschema import compile_schema, json_equal

SCHEMAS = sorted((SPEC / "schema").glob("*.schema.json"))


def _schema(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@cache  # read-only: every test mutates copies
def _docs() -> list[tuple[str, Any, Path]]:
    return [(d.rel, d.data, d.schema_path) for d in load_spec_dir(SPEC)
            if d.schema_path is not None]


def test_every_spec_schema_compiles() -> None:
    for path in SCHEMAS:
        assert compile_schema(_schema(path)) is not None, path.name


def test_the_spec_files_are_valid_for_both() -> None:
    for rel, data, schema_path in _docs():
        schema = _schema(schema_path)
        check = compile_schema(schema)
        assert check is not None
        assert jsonschema.validators.validator_for(schema)(schema).is_valid(data), rel
        assert check(data), rel


_VALUES: list[Any] = [0, 1, -1, 7, 2.5, float("nan"), True, False, None, "", "x", "Bad-Name",
                      "sm_90a", "f16", "8.6", "17-22", "003", [], [1], ["a"], {}, {"x": 1},
                      {"name": "a"}]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, path + (i,))
    return out


def _mutate(data: Any, rng: random.Random) -> Any:
    out = copy.deepcopy(data)
    for _ in range(rng.choice((1, 1, 1, 2))):
        paths = _paths(out)
        path = rng.choice(paths[1:]) if len(paths) > 1 else ()
        parent: Any = out
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1] if path else None
        node = parent[key] if path else out
        how = rng.randrange(6)
        if how == 0 and path:  # delete
            del parent[key]
        elif how == 1 and isinstance(node, dict):  # an unknown or a known key
            node[rng.choice(["bogus", "name", "values", "since", "kind", "targets"])] = \
                rng.choice(_VALUES)
        elif how == 2 and isinstance(node, list):
            if node and rng.random() < 0.5:
                node.append(copy.deepcopy(rng.choice(node)))
            else:
                node.clear()
        elif path:  # another value, often of another type
            parent[key] = copy.deepcopy(rng.choice(_VALUES))
    return out


#: Broken variants per spec file; more: ``FASTSCHEMA_VARIANTS=1000 pytest
#: tests/test_fastschema.py``.
VARIANTS = int(os.environ.get("FASTSCHEMA_VARIANTS", "60"))


def _trim(node: Any, keep: int = 3) -> Any:
    """``node`` with every list cut to its first ``keep`` items: the same keys and kinds
    of values, so the same keywords of the schema, at a fraction of the size (jsonschema
    takes ~0.15 s on a whole instruction file, most of a variant's time)."""
    if isinstance(node, dict):
        return {k: _trim(v, keep) for k, v in node.items()}
    if isinstance(node, list):
        return [_trim(v, keep) for v in node[:keep]]
    return node


@pytest.mark.parametrize("rel", [rel for rel, _, _ in _docs()])
def test_same_verdict_as_jsonschema_on_broken_variants(rel: str) -> None:
    _, whole, schema_path = next(d for d in _docs() if d[0] == rel)
    schema = _schema(schema_path)
    check = compile_schema(schema)
    assert check is not None
    oracle = jsonschema.validators.validator_for(schema)(schema)
    data = _trim(whole)
    assert oracle.is_valid(data) and check(data), rel  # the trimmed file is still valid
    rng = random.Random(rel)
    verdicts = {True: 0, False: 0}
    for i in range(VARIANTS):
        variant = _mutate(data, rng)
        want = oracle.is_valid(variant)
        assert check(variant) == want, (rel, i, [e.message for e in oracle.iter_errors(variant)])
        verdicts[want] += 1
    # Both sides are exercised: valid variants (a value the schema allows, an optional
    # key dropped) and invalid ones.
    assert verdicts[True] >= VARIANTS // 24 and verdicts[False] >= VARIANTS // 3, verdicts


def test_json_equality_is_the_schema_s() -> None:
    assert json_equal(1, 1.0) and not json_equal(True, 1) and not json_equal(0, False)
    assert json_equal({"a": [1, "x"]}, {"a": [1.0, "x"]}) and not json_equal("1", 1)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "enum": [1, "a", None]}
    check = compile_schema(schema)
    oracle = jsonschema.Draft202012Validator(schema)
    assert check is not None
    for v in (1, 1.0, True, "a", None, False, 0, "b", [1]):
        assert check(v) == oracle.is_valid(v), v


def test_unknown_keywords_fall_back_to_jsonschema() -> None:
    draft = "https://json-schema.org/draft/2020-12/schema"
    assert compile_schema({"$schema": draft, "uniqueItems": True}) is None
    assert compile_schema({"$schema": draft, "$ref": "other.json#/x"}) is None
    assert compile_schema({"$schema": "http://json-schema.org/draft-07/schema#"}) is None


def test_a_broken_document_is_still_explained_by_jsonschema(spec_core: Path) -> None:
    from ptxgen.errors import SpecError
    from ptxgen.pipeline import load_model

    path = spec_core / "instructions" / "ldmatrix.yaml"
    text = path.read_text()
    path.write_text(text.replace("title:", "titel:", 1))
    with pytest.raises(SpecError) as exc:
        load_model(spec_core)
    msgs = [str(d) for d in exc.value.diagnostics]
    assert any("unknown key 'titel'" in m and "ldmatrix.yaml:" in m for m in msgs), msgs
