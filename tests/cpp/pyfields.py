"""What the tests learn about a descriptor class's fields from the Python classes alone
(ptxgen.isa): the valid values of each field, its step and maximum."""

from __future__ import annotations

import inspect
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


def baseline(cls: Any) -> dict[str, int]:
    """A valid field set: the defaults, and the first member for required enum fields."""
    out = {}
    for spec in cls.FIELDS:
        param = inspect.signature(cls).parameters[spec.name]
        if param.default is not inspect.Parameter.empty:
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
    base = baseline(cls)
    infos = []
    for spec in cls.FIELDS:
        enum = getattr(cls, camel(spec.name)) if spec.type == "enum" else None
        if spec.type in ("dimension", "address"):
            step = next(1 << k for k in range(16) if accepts(cls, base, spec.name, 1 << k))
            maximum = step * ((1 << spec.width) - 1)
            assert accepts(cls, base, spec.name, maximum)
            assert not accepts(cls, base, spec.name, maximum + step)
            infos.append(FieldInfo(spec.name, enum, [], step, maximum, spec.width))
        else:
            valid = [c for c in range(1 << spec.width) if accepts(cls, base, spec.name, c)]
            infos.append(FieldInfo(spec.name, enum, valid, 1, max(valid), spec.width))
    return infos
