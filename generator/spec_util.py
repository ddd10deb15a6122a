"""Small helpers over spec data as YAML loads it, shared by validation and the model.

The spec's own small languages live here, below both stages: bit ranges, the
string form of qualifier values, PTX ISA version order, target names and
selectors, and the values a condition names. Validation checks documents with
them before any model exists; the model builds on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from functools import cache
from typing import Any, Generic, TypeVar, overload

NONE = "none"
TRUE = "true"
FALSE = "false"


_T = TypeVar("_T")


class cached_property(Generic[_T]):  # named after functools.cached_property
    """:func:`functools.cached_property` without its lock: Python 3.11's takes an RLock on
    every first access (about 0.7 us of 1.2 us), ~50,000 times per ``ptxgen generate``.
    The value is computed on first access and stored in the instance's ``__dict__``
    (frozen dataclasses too), where later reads find it without calling this. The model
    is built and read by one thread; two threads racing would compute the same value."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value


def norm(value: object) -> str:
    """The string form of a spec value (``True`` -> ``"true"``, ``1`` -> ``"1"``)."""
    if isinstance(value, bool):
        return TRUE if value else FALSE
    return str(value)


@cache
def vkey(version: str) -> tuple[int, int]:
    """``"8.6"`` -> (8, 6), for ordering PTX ISA versions."""
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


_TARGET = re.compile(r"^sm_(\d+)([af]?)$")


def parse_target(name: str) -> tuple[int, str]:
    m = _TARGET.match(name)
    if not m:
        raise ValueError(f"{name!r} is not a target name (sm_NN, sm_NNa or sm_NNf)")
    return int(m.group(1)), m.group(2)


def selector_problem(selector: str, names: Collection[str]) -> KeyError | ValueError | None:
    """Why ``selector`` selects no targets among ``names`` (the error that selecting
    raises), or None. ``sm_NN+``: every target from sm_NN; ``sm_NNa`` / ``sm_NNf``:
    a target of the spec; a plain ``sm_NN`` is no selector."""
    try:
        if selector.endswith("+"):
            parse_target(selector[:-1])
            return None
        _, suffix = parse_target(selector)
    except ValueError as exc:
        return exc
    if selector not in names:
        return KeyError(f"unknown target {selector!r}")
    if suffix == "":
        return ValueError(f"{selector!r}: a plain target is not a selector; write "
                          f"{selector}+ (that target and every later one)")
    return None


def range_values(r: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The numbers of a range ``{from, to, step}``; None without ``to``."""
    if "to" not in r:
        return None
    return tuple(range(r["from"], r["to"] + 1, r.get("step", 1)))


def condition_values(raw: Any) -> tuple[frozenset[str], bool]:
    """The values one item of a condition names, and whether it negates them: a value,
    a list, a range ``{from, to}`` or ``{not: [...]}``."""
    if isinstance(raw, dict) and "not" in raw:
        return frozenset(norm(v) for v in raw["not"]), True
    if isinstance(raw, dict):
        vals = range_values(raw)
        if vals is None:
            raise ValueError("a range in a condition needs 'to'")
        return frozenset(norm(v) for v in vals), False
    if isinstance(raw, list):
        return frozenset(norm(v) for v in raw), False
    return frozenset({norm(raw)}), False


def parse_bits(bits: int | str) -> tuple[int, int]:
    """``17`` -> (17, 17); ``"17-22"`` -> (17, 22). LSB first."""
    if isinstance(bits, int):
        return bits, bits
    lo_s, _, hi_s = str(bits).partition("-")
    lo, hi = int(lo_s), int(hi_s or lo_s)
    if lo > hi:
        raise ValueError(f"bit range {bits!r} must be written LSB-MSB (low bit first)")
    return lo, hi


def entry_kind(entry: dict[str, Any]) -> str:
    """``field``, ``reserved`` or ``fixed``."""
    if "reserved" in entry:
        return "reserved"
    if "fixed" in entry:
        return "fixed"
    return "field"


def value_sets_for_kind(entry: dict[str, Any], kind: str) -> tuple[Any, tuple[str, ...]]:
    """The value set of a field for one MMA kind ('' when the descriptor has none)."""
    per_kind = entry.get("per_kind", {})
    if kind in per_kind:
        return per_kind[kind], ("per_kind", kind)
    if "values" in entry:
        return entry["values"], ("values",)
    return None, ()
