"""Table 41 base-offset helper and other hand-checked facts of the bindings.

Expected values follow the rule as Table 41 states it: 0 when the repeating
pattern starts on its boundary (1024 / 512 / 256 bytes for 128 / 64 / 32-Byte
swizzling), otherwise (pattern start addr >> 0x7) & 0x7, which must be non-zero.
"""

from __future__ import annotations

import pytest

from ptxgen.isa import DescriptorError, SmemDesc
from ptxgen.isa.smem_desc import base_offset

SW = SmemDesc.Swizzle


@pytest.mark.parametrize(("addr", "swizzle", "expected"), [
    (0x0000, SW.SWIZZLE_128B, 0),
    (0x0400, SW.SWIZZLE_128B, 0),
    (0x0480, SW.SWIZZLE_128B, 1),
    (0x1380, SW.SWIZZLE_128B, 7),
    (0x0200, SW.SWIZZLE_64B, 0),      # on the 512-Byte boundary although (0x200 >> 7) & 7 == 4
    (0x0280, SW.SWIZZLE_64B, 5),
    (0x0100, SW.SWIZZLE_32B, 0),
    (0x0180, SW.SWIZZLE_32B, 3),
    (0x0480, SW.SWIZZLE_128B_BASE32B, 1),
    (0x0480, SW.SWIZZLE_NONE, 0),     # no swizzling, no repeating pattern
    (0x0480, 2, 1),                   # raw code of 128-Byte swizzling
])
def test_base_offset(addr: int, swizzle: int, expected: int) -> None:
    assert base_offset(addr, swizzle) == expected


@pytest.mark.parametrize(("addr", "swizzle", "field"), [
    (0x0410, SW.SWIZZLE_32B, "pattern_start"),   # off the boundary, formula gives 0
    (0x0c10, SW.SWIZZLE_128B, "pattern_start"),
    (-16, SW.SWIZZLE_128B, "pattern_start"),
    (0x400, 3, "swizzle"),                        # 3, 5 and 7 are invalid (Table 40)
    (0x400, 7, "swizzle"),
])
def test_base_offset_refuses(addr: int, swizzle: int, field: str) -> None:
    with pytest.raises(DescriptorError) as err:
        base_offset(addr, swizzle)
    assert err.value.field == field


def test_descriptors_are_immutable_values() -> None:
    a = SmemDesc(start_address=0x400, swizzle=SW.SWIZZLE_64B)
    with pytest.raises(AttributeError):
        a.start_address = 0  # type: ignore[misc]
    b = a.replace(base_offset=base_offset(0x280, a.swizzle))
    assert (a.base_offset, b.base_offset) == (0, 5)
    assert b == SmemDesc.decode(b.encode()) and hash(b) == hash(SmemDesc.decode(b.encode()))
    assert "swizzle=<Swizzle.SWIZZLE_64B: 4>" in repr(a)
    with pytest.raises(TypeError):
        a.replace(bogus=1)
