"""What the tests learn about a descriptor class's fields from the Python classes alone
(ptxgen.isa): the valid values of each field, its step and maximum."""

from __future__ import annotations

import functools
import inspect
import itertools
from dataclasses import dataclass
from typing import Any

from ptxgen.isa import DescriptorError


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


@dataclass
class FieldInfo:
    name: str
    enum: Any  # the IntEnum class, or None
    valid: list[int]  # every valid value (dimension/address: the step and the maximum)
    step: int
    maximum: int
    width: int

    @property
    def count(self) -> int:
        """How many values the field allows."""
        return len(self.valid) if self.valid else self.maximum // self.step + 1


@functools.cache  # the classes are fixed; the tests ask again for every sample
def _wide_shape(cls: Any) -> tuple[tuple[str, int], ...]:
    return tuple(_find_wide_shape(cls).items())


def wide_shape(cls: Any) -> dict[str, int]:
    """_find_wide_shape(cls), computed once per class."""
    return dict(_wide_shape(cls))


def _find_wide_shape(cls: Any) -> dict[str, int]:
    """For a class with shapes (instr_desc: m and n are checked together), a shape whose
    first dimension allows every second dimension of the kind and whose second dimension
    every first one allows (m = 128, n = 64 for every kind): probing one field against it
    finds that field's whole domain. Empty for a class without shapes."""
    shapes = getattr(cls, "SHAPES", None)
    if shapes is None:
        return {}
    firsts = sorted(shapes.runs)
    seconds = sorted({n for a in firsts for n in range(1024) if shapes.allows(a, n)})
    first = next(a for a in firsts if all(shapes.allows(a, n) for n in seconds))
    second = next(n for n in seconds if all(shapes.allows(a, n) for a in firsts))
    return dict(zip(shapes.fields, (first, second), strict=True))


def shape_pairs(cls: Any) -> list[tuple[int, int]]:
    """Every (first, second) dimension pair of the class's shapes, e.g. every (m, n)."""
    return list(_shape_pairs(cls))


@functools.cache  # the classes are fixed; the tests ask again for every sample
def _shape_pairs(cls: Any) -> tuple[tuple[int, int], ...]:
    shapes = cls.SHAPES
    return tuple((a, n) for a in sorted(shapes.runs) for n in range(1024)
                 if shapes.allows(a, n))


def baseline(cls: Any) -> dict[str, int]:
    """A valid field set: the defaults, the first member for required enum fields, and
    the wide shape for the dimensions of a shape."""
    out = {}
    shape = wide_shape(cls)
    for spec in cls.FIELDS:
        param = inspect.signature(cls).parameters[spec.name]
        if spec.name in shape:
            out[spec.name] = shape[spec.name]
        elif param.default is not inspect.Parameter.empty:
            out[spec.name] = int(param.default)
        else:
            out[spec.name] = int(next(iter(getattr(cls, camel(spec.name)))))
    return out


def accepts(cls: Any, base: dict[str, int], name: str, value: int) -> bool:
    try:
        cls(**{**base, name: value})
    except DescriptorError as exc:
        assert exc.field == name
        return False
    return True


def field_infos(cls: Any) -> list[FieldInfo]:
    """One FieldInfo per field; the dimensions of a shape list every value some shape has
    (with the wide shape's other dimension)."""
    base = baseline(cls)
    shape = wide_shape(cls)
    infos = []
    for spec in cls.FIELDS:
        enum = getattr(cls, camel(spec.name)) if spec.type == "enum" else None
        if spec.name in shape:
            valid = [v for v in range(1 << (spec.width + 8)) if accepts(cls, base, spec.name, v)]
            step = min(b - a for a, b in itertools.pairwise(valid))
            infos.append(FieldInfo(spec.name, enum, valid, step, max(valid), spec.width))
        elif spec.type in ("dimension", "address"):
            step = next(1 << k for k in range(16) if accepts(cls, base, spec.name, 1 << k))
            maximum = step * ((1 << spec.width) - 1)
            assert accepts(cls, base, spec.name, maximum)
            if accepts(cls, base, spec.name, maximum + step):
                # a shared-memory address: encode() masks the bits above the field's window
                # (matrix-descriptor-encode); the values compared are the window's
                word = cls(**{**base, spec.name: maximum + step}).encode()
                assert word == cls(**{**base, spec.name: 0}).encode()
            infos.append(FieldInfo(spec.name, enum, [], step, maximum, spec.width))
        else:
            valid = [c for c in range(1 << spec.width) if accepts(cls, base, spec.name, c)]
            infos.append(FieldInfo(spec.name, enum, valid, 1, max(valid), spec.width))
    return infos
