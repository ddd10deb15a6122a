"""The CLI contract of issue 4 (scripts are built against it).

Expected words are restated from the PTX tables (bit positions written out
below), or taken from CUTLASS where noted; never from ptxgen's own output.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_cli


def ok(*args: str) -> str:
    res = run_cli(*args)
    assert res.code == 0, res.err
    assert res.err == ""
    return res.out


def fails(*args: str) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr."""
    res = run_cli(*args)
    assert res.code == 2, (res.out, res.err)
    assert res.out == ""
    lines = res.err.splitlines()
    assert len(lines) == 1, res.err
    return lines[0]


# -- encode ------------------------------------------------------------------------------

def test_encode_instr_desc_f16() -> None:
    # Table 42: dtype bits 4-5 (F32 = 1), atype 7-9 / btype 10-12 (BF16 = 1), N>>3 at 17-22,
    # M>>4 at 24-28.
    want = (1 << 4) | (1 << 7) | (1 << 10) | ((256 >> 3) << 17) | ((128 >> 4) << 24)
    out = ok("encode", "instr_desc", "--kind", "f16", "dtype=f32", "atype=bf16", "btype=bf16",
             "n=256", "m=128")
    assert out == f"0x{want:08x}\n"


def test_encode_accepts_raw_codes_and_names_alike() -> None:
    a = ok("encode", "instr_desc", "--kind", "i8", "dtype=s32", "atype=s8", "btype=u8",
           "saturate=1", "n=64", "m=64")
    b = ok("encode", "instr_desc", "--kind", "i8", "dtype=2", "atype=1", "btype=0",
           "saturate=1", "n=0x40", "m=64")
    assert a == b == f"0x{(1 << 3) | (2 << 4) | (1 << 7) | (8 << 17) | (4 << 24):08x}\n"


def test_encode_block_scaled_m_uses_m_shift_7() -> None:
    # Table 44: M>>7 at bits 27-28, scale type bit 23 (UE4M3 = 0 for mxf4nvf4), K bit 31.
    out = ok("encode", "instr_desc", "--kind", "mxf4nvf4", "atype=e2m1", "btype=e2m1",
             "scale_type=ue4m3", "n=128", "m=256", "scale_a_id=2", "scale_b_id=2", "k_dim=1")
    want = (2 << 4) | (1 << 7) | (1 << 10) | (16 << 17) | (2 << 27) | (2 << 29) | (1 << 31)
    assert out == f"0x{want:08x}\n"


def test_encode_smem_desc_matches_cutlass_probe() -> None:
    # CUTLASS 4.2 UMMA::SmemDescriptor with start 0x400, LBO 16, SBO 1024, version 1,
    # SWIZZLE_128B printed 0x4000404000010040.
    out = ok("encode", "smem_desc", "start_address=0x400", "leading_byte_offset=16",
             "stride_byte_offset=1024", "swizzle=128b")
    assert out == "0x4000404000010040\n"


def test_encode_pads_64_bit_words_and_leaves_fields_at_zero() -> None:
    assert ok("encode", "wgmma_desc") == "0x0000000000000000\n"
    assert ok("encode", "smem_desc") == f"0x{1 << 46:016x}\n"  # only the fixed 0b001 at 46-48
    assert ok("encode", "wgmma_desc", "swizzle=32b", "base_offset=7") == \
        f"0x{(3 << 62) | (7 << 49):016x}\n"


# -- decode ------------------------------------------------------------------------------

def test_decode_json_uses_encode_spellings() -> None:
    word = ok("encode", "instr_desc", "--kind", "f8f6f4", "dtype=f16", "atype=e2m3",
              "btype=e3m2", "negate_b=1", "transpose_a=1", "n=240", "m=256",
              "max_shift=3", "sparsity=sparse", "sparsity_selector=2").strip()
    values = json.loads(ok("decode", "instr_desc", "--kind", "f8f6f4", word, "--json"))
    assert values == {
        "sparsity_selector": 2, "sparsity": "sparse", "saturate": 0, "dtype": "f16",
        "atype": "e2m3", "btype": "e3m2", "negate_a": 0, "negate_b": 1, "transpose_a": 1,
        "transpose_b": 0, "n": 240, "m": 256, "max_shift": 3,
    }
    again = ok("encode", "instr_desc", "--kind", "f8f6f4",
               *[f"{k}={v}" for k, v in values.items()]).strip()
    assert again == word


def test_decode_text_and_bare_hex() -> None:
    out = ok("decode", "smem_desc", "4000404000010040")
    assert out.splitlines() == ["start_address=1024", "leading_byte_offset=16",
                                "stride_byte_offset=1024", "base_offset=0", "lbo_mode=0",
                                "swizzle=128b"]


# -- zero-column mask -------------------------------------------------------------------------

def test_zero_column_mask_worked_example_4() -> None:
    # Table 45, example 4 (M = 32): sc = {1, 2, 1, 0}, fs = {0, 0, 1, 1}, skip 2, use 3, shift 2.
    word = (0 | 1 << 8 | 2 << 16 | 1 << 24 | 1 << 32 | 1 << 33 | 1 << 39 | 2 << 40 | 3 << 48
            | 2 << 56)
    enc = ok("encode", "zero_column_mask_desc", "start_count_1=1", "start_count_2=2",
             "start_count_3=1", "first_span_0=1", "first_span_1=1", "non_zero_mask=1",
             "skip_span=2", "use_span=3", "column_shift=2")
    assert enc == f"0x{word:016x}\n"
    masks = json.loads(ok("zero-column-mask", hex(word), "--m", "32", "--n", "64", "--json"))
    assert list(masks) == ["masks"] and len(masks["masks"]) == 4
    seed = ["0000111 0000111", "0000111 000011", "1110000111 00", "1110000111 000"]
    for got, pattern in zip(masks["masks"], seed, strict=True):
        bits = pattern.replace(" ", "")
        assert got & ((1 << len(bits)) - 1) == int(bits, 2)
        assert got < 1 << 16  # 64 / 4 columns per sub-mask


def test_zero_column_mask_disabled_is_all_zero() -> None:
    word = 4 << 40 | 3 << 48  # example 1: Non-Zero Mask = 0
    assert json.loads(ok("zero-column-mask", hex(word), "--m", "64", "--n", "128", "--json")) \
        == {"masks": [0, 0]}


def test_zero_column_mask_text() -> None:
    word = 1 << 39 | 0 << 40 | 0 << 48  # alternate single columns, starting with B used
    assert ok("zero-column-mask", hex(word), "--m", "128", "--n", "8") == \
        "mask0 columns 0-7: 0b10101010\n"


MXF4 = ["atype=e2m1", "btype=e2m1", "scale_type=ue8m0"]


# -- errors: exit 2, nothing on stdout, one line naming the field and what is allowed -------

@pytest.mark.parametrize(("args", "needles"), [
    (["encode", "instr_desc", "--kind", "tf32", "dtype=f16"], ["dtype", "f32 (1)"]),
    (["encode", "instr_desc", "--kind", "i8", "atype=e4m3"], ["atype", "u8 (0)", "s8 (1)"]),
    (["encode", "instr_desc", "--kind", "i8", "dtype=s32", "negate_a=1"], ["negate_a", "only 0"]),
    (["encode", "instr_desc", "--kind", "i8", "negate_a=0"], ["dtype: 0 (left out, so 0)", "s32"]),
    (["encode", "instr_desc", "--kind", "f16", "n=12"], ["n:", "8 to 256 in steps of 8"]),
    (["encode", "instr_desc", "--kind", "f16", "n=512"], ["n:", "8 to 256 in steps of 8"]),
    (["encode", "instr_desc", "--kind", "mxf8f6f4", "scale_type=ue8m0", "m=64"],
     ["m:", "128 or 256"]),
    (["encode", "instr_desc", "--kind", "mxf4", *MXF4, "scale_a_id=1"], ["scale_a_id", "0, 2"]),
    (["encode", "instr_desc", "--kind", "mxf4", *MXF4, "transpose_b=1"], ["transpose_b", "only 0"]),
    (["encode", "instr_desc", "--kind", "mxf4", "scale_type=ue4m3"], ["scale_type", "ue8m0"]),
    (["encode", "smem_desc", "start_address=0x1008"], ["start_address", "multiple of 16"]),
    (["encode", "smem_desc", "stride_byte_offset=0x40000"], ["stride_byte_offset", "0x3fff0"]),
    (["encode", "smem_desc", "swizzle=3"], ["swizzle", "32b (6)"]),
    (["encode", "smem_desc", "swizzle=16b"], ["swizzle", "128b_base32b (1)"]),
    (["encode", "wgmma_desc", "swizzle=4"], ["swizzle", "32b (3)"]),
    (["encode", "smem_desc", "bogus=1"], ["bogus", "start_address"]),
    (["encode", "smem_desc", "lbo_mode=2"], ["lbo_mode", "0 to 1"]),
    (["encode", "smem_desc", "base_offset=x"], ["base_offset", "0 to 7"]),
    (["encode", "smem_desc", "swizzle=1", "swizzle=2"], ["swizzle", "twice"]),
    (["encode", "zero_column_mask_desc", "column_shift=33"], ["column_shift", "0 to 32"]),
    (["encode", "instr_desc", "dtype=f32"], ["--kind", "tf32"]),
    (["encode", "instr_desc", "--kind", "f64"], ["--kind", "mxf4nvf4"]),
    (["encode", "smem_desc", "--kind", "f16"], ["--kind", "no MMA kinds"]),
    (["encode", "nope"], ["DESCRIPTOR", "smem_desc"]),
    (["decode", "instr_desc", "--kind", "f16", "0x40"], ["reserved", "bit 6"]),
    (["decode", "instr_desc", "--kind", "mxf4", "0x1"], ["reserved", "bits 0-1"]),
    (["decode", "instr_desc", "--kind", "f16", "0x30"], ["dtype", "f16 (0)"]),
    (["decode", "smem_desc", "0x0"], ["fixed", "bits 46-48"]),
    (["decode", "smem_desc", "0x6000400000000000"], ["swizzle", "none (0)"]),
    (["decode", "smem_desc", "0xzz"], ["HEX", "hexadecimal"]),
    (["decode", "instr_desc", "--kind", "f16", "0x100000000"], ["HEX", "32-bit"]),
    (["zero-column-mask", "0x0", "--m", "16", "--n", "8"], ["--m", "128"]),
    (["zero-column-mask", "0x0", "--m", "32", "--n", "6"], ["n:", "multiple of 4"]),
    (["zero-column-mask", hex(20 << 56), "--m", "32", "--n", "8"], ["column_shift", "16"]),
])
def test_errors(args: list[str], needles: list[str]) -> None:
    line = fails(*args)
    assert line.startswith("ptxgen: error: ")
    for needle in needles:
        assert needle in line, line


def test_usage_error_is_one_line() -> None:
    line = fails("encode")
    assert "DESCRIPTOR" in line
