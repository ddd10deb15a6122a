"""Stage 1: safe YAML loading with duplicate keys refused and positions kept."""

from __future__ import annotations

import pytest

from ptxgen.errors import SpecError
from ptxgen.load import load_text


def _errors(text: str) -> list[str]:
    with pytest.raises(SpecError) as exc:
        load_text(text, "x.yaml")
    return [str(d) for d in exc.value.diagnostics]


def test_positions_are_kept_for_values_and_keys() -> None:
    doc = load_text("a:\n  b: [1, 2]\n  c: hello\n", "x.yaml")
    assert doc.data == {"a": {"b": [1, 2], "c": "hello"}}
    assert doc.source.values[("a", "b", 1)] == (2, 10)
    assert doc.source.keys[("a", "c")] == (3, 3)
    assert doc.source.diag(("a", "c"), "boom").__str__() == "x.yaml:3:6: boom"


def test_duplicate_keys_are_refused_with_both_positions() -> None:
    errors = _errors("a: 1\nb:\n  x: 1\n  x: 2\na: 3\n")
    assert errors == [
        "x.yaml:4:3: duplicate key 'x' (first defined at line 3, column 3)",
        "x.yaml:5:1: duplicate key 'a' (first defined at line 1, column 1)",
    ]


def test_syntax_error_has_line_and_column() -> None:
    (error,) = _errors("a: [1, 2\nb: 3\n")
    assert error.startswith("x.yaml:2:")
    assert "YAML syntax error" in error


def test_only_safe_tags() -> None:
    (error,) = _errors("a: !!python/object:os.system {}\n")
    assert error.startswith("x.yaml:1:4: unsupported YAML tag")
    (error,) = _errors("a: !!python/name:os.system ''\n")
    assert error.startswith("x.yaml:1:4: YAML syntax error")
    assert "python/name" in error


def test_merge_keys_are_refused() -> None:
    errors = _errors("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n")
    assert errors == ["x.yaml:3:3: merge keys ('<<') are not supported in specs"]


def test_empty_document() -> None:
    assert _errors("# nothing\n") == ["x.yaml:1:1: empty document"]


def test_binary_and_hex_integers() -> None:
    assert load_text("a: 0b001\nb: 0x3FFFF\n", "x.yaml").data == {"a": 1, "b": 0x3FFFF}
