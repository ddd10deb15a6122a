"""The byte offsets of a shared memory matrix descriptor against the tile it describes.

PTX ISA 9.7.18.3 (tcgen05) and 9.7.15.5.1 (wgmma) define the leading dimension byte
offset (LBO) and the stride dimension byte offset (SBO) over the canonical layouts, with
elements normalized to 128 bits (T = 16 bytes of elements):

* K-major: SBO is the offset from one group of 8 rows to the next; LBO, without
  swizzling, the offset between the two 16-byte columns of the 8x2 core-matrix tile
  (swizzled layouts do not use it: "assumed to be 1");
* MN-major: without swizzling, SBO steps over 16 bytes of the M/N dimension and LBO over 8
  K columns; swizzled, LBO steps over the swizzle width of the M/N dimension and SBO over
  8 K columns.

A zero offset where the tile has a second group makes the groups read the same bytes:
the instruction computes with repeated data, and neither ptxas nor the hardware says so.
This module says which offsets a tile needs; the lint checks reads them from the known
bits of the descriptor word.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: Bytes of one swizzle pattern row, by the descriptors' swizzle names (0: none).
SWIZZLE_BYTES = {"none": 0, "32b": 32, "64b": 64, "128b": 128, "128b_base32b": 128}

#: Bits of one element, by PTX type name (the types wgmma and tcgen05.mma read from
#: shared memory as whole bytes or more).
ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
                "b1": 1}


@dataclass(frozen=True)
class Tile:
    """What one instruction reads through one descriptor, in this CTA."""

    operand: str  # "A" or "B"
    rows: int | None  # the M (A) or N (B) extent in elements; None: unknown
    k_bytes: int  # the K extent in bytes (32 for dense operands)
    elem_bits: int | None  # None: unknown or sub-byte (then only K-major is judged)
    k_major: bool

    def layout(self, swizzle: str) -> str:
        major = "K-major" if self.k_major else "MN-major"
        sw = "no swizzling" if SWIZZLE_BYTES.get(swizzle, 0) == 0 else f"{swizzle} swizzle"
        return f"{major}, {sw}"


def needed(tile: Tile, swizzle: str) -> dict[str, str]:
    """{descriptor field: what it steps over} for each byte offset the tile needs to be
    non-zero (two or more groups in its direction)."""
    out: dict[str, str] = {}
    sw = SWIZZLE_BYTES.get(swizzle)
    if sw is None:
        return out
    if tile.k_major:
        if tile.rows is not None and tile.rows > 8:
            out["stride_byte_offset"] = (f"{tile.rows} rows of {tile.operand} are "
                                         f"{tile.rows // 8} groups of 8")
        if sw == 0 and tile.k_bytes > 16:
            out["leading_byte_offset"] = (f"{tile.k_bytes} bytes of K are "
                                          f"{tile.k_bytes // 16} columns of 16 bytes")
        return out
    if tile.elem_bits is None or tile.elem_bits < 8:
        return out
    k_groups = tile.k_bytes // tile.elem_bits  # K elements / 8
    k_text = f"{k_groups * 8} K elements of {tile.operand} are {k_groups} groups of 8"
    mn_bytes = tile.rows * tile.elem_bits // 8 if tile.rows is not None else None
    if sw == 0:
        if mn_bytes is not None and mn_bytes > 16:
            out["stride_byte_offset"] = (f"{mn_bytes} bytes of the M/N dimension of "
                                         f"{tile.operand} are {mn_bytes // 16} groups of 16")
        if k_groups > 1:
            out["leading_byte_offset"] = k_text
    else:
        if mn_bytes is not None and mn_bytes > sw:
            out["leading_byte_offset"] = (f"{mn_bytes} bytes of the M/N dimension of "
                                          f"{tile.operand} are {mn_bytes // sw} swizzle rows "
                                          f"of {sw} bytes")
        if k_groups > 1:
            out["stride_byte_offset"] = k_text
    return out


def wgmma_tile(params: Mapping[str, str], texts: Mapping[str, str], operand: str,
               sparse: bool) -> Tile | None:
    """The tile a wgmma.mma_async form reads through ``a_desc`` / ``b_desc``; None where
    its transpose immediate is not a literal."""
    which = "A" if operand == "a_desc" else "B"
    elem = ELEMENT_BITS.get(params.get("atype" if which == "A" else "btype", ""))
    trans = texts.get(f"imm_trans_{which.lower()}", "0").strip()
    if trans not in ("0", "1"):
        return None
    rows = 64 if which == "A" else int(params.get("n", "0")) or None
    k_bytes = 64 if sparse and which == "B" else 32
    return Tile(which, rows, k_bytes, elem, trans == "0")


def tcgen05_tile(params: Mapping[str, str], operand: str,
                 idesc: Mapping[str, object] | None, transposed: int | None) -> Tile | None:
    """The tile a tcgen05.mma form reads through ``a_desc`` / ``b_desc`` in this CTA, from
    the instruction descriptor (``idesc``: its decoded fields, None where not known whole)
    and the operand's transpose bit (None where not known)."""
    if transposed is None:
        return None
    which = "A" if operand == "a_desc" else "B"
    pair = params.get("cta_group") == "2"
    rows: int | None = None
    elem: int | None = None
    if idesc is not None:
        dim = idesc.get("m" if which == "A" else "n")
        if isinstance(dim, int):
            rows = dim // 2 if pair else dim  # a CTA pair splits M (A) and N (B)
        kind = params.get("kind", "")
        if kind == "tf32":
            elem = 32
        elif kind in ("f16", "i8", "f8f6f4", "mxf8f6f4"):
            elem = ELEMENT_BITS.get(str(idesc.get("atype" if which == "A" else "btype")))
    elif which == "A":
        rows = 32  # each CTA holds 32 rows of A or more with every tcgen05.mma M
    k_bytes = 64 if params.get("sp") == "true" and which == "B" else 32
    return Tile(which, rows, k_bytes, elem, transposed == 0)


__all__ = ["ELEMENT_BITS", "SWIZZLE_BYTES", "Tile", "needed", "tcgen05_tile", "wgmma_tile"]
