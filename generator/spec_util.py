"""Small helpers over validated spec data, shared by validation and the model."""

from __future__ import annotations

from typing import Any


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
