"""Issue 12: the generated descriptor objects behave as immutable Python values (copy,
deepcopy and pickle round-trip; fields can be neither set nor deleted), take the value
names their error messages list, and the helpers around them fail with DescriptorError
naming the argument; the support answer's repr is short."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from cpp.pyfields import baseline

from ptxgen.isa import DESCRIPTORS, DescriptorError, ptx
from ptxgen.isa.instr_desc import InstrDescF16
from ptxgen.isa.smem_desc import SmemDesc, base_offset

CLASSES = [cls for kinds in DESCRIPTORS.values() for cls in kinds.values()]


def sample(cls: Any) -> Any:
    """A valid descriptor of the class whose fields are not all defaults."""
    desc = cls(**baseline(cls))
    for f in cls.FIELDS:  # flip one flag or bump one int field, where the table allows it
        try:
            return desc.replace(**{f.name: int(getattr(desc, f.name)) ^ 1})
        except DescriptorError:
            continue
    return desc


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_copy_deepcopy_and_pickle_round_trip(cls: Any) -> None:
    desc = sample(cls)
    for other in (copy.copy(desc), copy.deepcopy(desc), copy.deepcopy([desc])[0],
                  *(pickle.loads(pickle.dumps(desc, protocol=p))
                    for p in range(pickle.HIGHEST_PROTOCOL + 1))):
        assert type(other) is cls
        assert other == desc
        assert other.encode() == desc.encode()
        assert repr(other) == repr(desc)
        assert hash(other) == hash(desc)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_fields_can_be_neither_set_nor_deleted(cls: Any) -> None:
    desc = sample(cls)
    word = desc.encode()
    for f in cls.FIELDS:
        with pytest.raises(AttributeError, match="immutable"):
            delattr(desc, f.name)
        with pytest.raises(AttributeError, match="immutable"):
            setattr(desc, f.name, 0)
    assert desc.encode() == word
    assert repr(desc).startswith(cls.__name__)


def test_enum_fields_take_the_names_the_message_lists() -> None:
    """The message lists 'f16 (0), f32 (1)': those names are accepted, as `ptxgen encode`
    spells them."""
    by_name = InstrDescF16(dtype="f32", atype="bf16", btype="bf16", m=128, n=256)
    by_enum = InstrDescF16(dtype=InstrDescF16.Dtype.F32, atype=InstrDescF16.Atype.BF16,
                           btype=InstrDescF16.Btype.BF16, m=128, n=256)
    assert by_name == by_enum
    assert by_name.dtype is InstrDescF16.Dtype.F32
    assert by_name.hex() == "0x08400490"
    assert SmemDesc(swizzle="128b").swizzle is SmemDesc.Swizzle.SWIZZLE_128B


@pytest.mark.parametrize("value", ["f64", "F32", " f32", "", "1"])
def test_an_unknown_name_is_refused_listing_the_names(value: str) -> None:
    with pytest.raises(DescriptorError) as err:
        InstrDescF16(dtype=value, m=128, n=256)
    assert err.value.field == "dtype"
    assert "f16 (0), f32 (1)" in str(err.value)


def test_base_offset_takes_the_swizzle_name() -> None:
    code = base_offset(0x280, SmemDesc.Swizzle.SWIZZLE_64B)
    assert code == 5  # Table 41: (0x280 >> 7) & 7
    assert base_offset(0x280, "64b") == code
    assert base_offset(0x280, int(SmemDesc.Swizzle.SWIZZLE_64B)) == code


@pytest.mark.parametrize(("args", "field"), [
    ((0x280, "16b"), "swizzle"), ((0x280, 7), "swizzle"), ((0x280, 2.0), "swizzle"),
    ((0x280, None), "swizzle"), ((-1, "64b"), "pattern_start"), (("0x280", "64b"), "pattern_start"),
])
def test_base_offset_refuses_naming_the_argument(args: tuple[Any, Any], field: str) -> None:
    with pytest.raises(DescriptorError) as err:
        base_offset(*args)
    assert err.value.field == field


@pytest.mark.parametrize("opcode", ["tcgen05.mma.cta_group::1.kind::f16",
                                    "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
                                    "mma.sync.aligned.m16n8k16.row.row.f32.bf16.bf16.f32",
                                    "tcgen5.mma"])
def test_support_repr_is_short(opcode: str) -> None:
    found = ptx.support(opcode)
    text = repr(found)
    assert len(text) < 600, len(text)
    assert opcode in text
    assert ("valid" if found.valid else "invalid") in text
    assert len(repr(ptx.instruction_set())) < 600
    if found.instruction is not None:
        assert len(repr(found.instruction)) < 200
