"""The Python builders of ptxgen.isa.ptx: PTX text of valid forms, clear errors otherwise.

Expected texts are written out from the PTX ISA syntax (seeds 002 / 004).
"""

from __future__ import annotations

from typing import Any

import pytest

from ptxgen.isa import ptx


def test_tcgen05_mma_sp_seed_example() -> None:
    # Seed 002: tcgen05.mma.sp.cta_group::1.kind::f16 [taddr0], adesc, bdesc, [tmem_spmeta0],
    # idesc, p;
    text = ptx.tcgen05_mma(sp=True, cta_group=1, kind="f16", d_tmem="taddr0", a_desc="adesc",
                           b_desc="bdesc", sp_meta_tmem="tmem_spmeta0", idesc="idesc",
                           enable_input_d="p")
    assert text == ("tcgen05.mma.sp.cta_group::1.kind::f16 [taddr0], adesc, bdesc, "
                    "[tmem_spmeta0], idesc, p;")


def test_tcgen05_mma_block_scale_with_tmem_a() -> None:
    text = ptx.tcgen05_mma(sp=True, cta_group=2, kind="mxf4nvf4", block_scale=True,
                           scale_vectorsize="block16", d_tmem="%r1", a_tmem="%r2",
                           b_desc="%rd1", sp_meta_tmem="%r3", idesc="%r4",
                           scale_a_tmem="%r5", scale_b_tmem="%r6", enable_input_d="%p1")
    assert text == ("tcgen05.mma.sp.cta_group::2.kind::mxf4nvf4.block_scale.block16 [%r1], "
                    "[%r2], %rd1, [%r3], %r4, [%r5], [%r6], %p1;")


def test_disable_output_lane_and_scale_input_d() -> None:
    text = ptx.tcgen05_mma(cta_group=2, kind="tf32", d_tmem="d", a_desc="a", b_desc="b",
                           idesc="i", disable_output_lane=[f"m{i}" for i in range(8)],
                           enable_input_d="p", scale_input_d=15)
    assert text.endswith("i, {m0, m1, m2, m3, m4, m5, m6, m7}, p, 15;")


def test_wgmma_with_register_a() -> None:
    # Seed 004 example: m64n8k16.f32.f16.f16 {4 f32}, {4 f16x2}, descB, 1, -1, -1, 1;
    text = ptx.wgmma_mma_async(n=8, k=16, dtype="f32", atype="f16", btype="f16",
                               d=["d0", "d1", "d2", "d3"], a_regs=["a0", "a1", "a2", "a3"],
                               b_desc="descB", scale_d="p", imm_scale_a=-1, imm_scale_b=-1,
                               imm_trans_b=1)
    assert text == ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1, d2, d3}, "
                    "{a0, a1, a2, a3}, descB, p, -1, -1, 1;")


def test_mma_sync_and_ldmatrix() -> None:
    assert ptx.mma_sync(shape="m8n8k128", alayout="row", blayout="col", dtype="s32",
                        atype="b1", btype="b1", ctype="s32", bitop="and",
                        d=["d0", "d1"], a=["a"], b=["b"], c=["c0", "c1"]) == (
        "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc {d0, d1}, {a}, {b}, "
        "{c0, c1};")
    assert ptx.ldmatrix(shape="m8n8", num="x4", trans=True, ss="shared", type="b16",
                        d=["r0", "r1", "r2", "r3"], p="%r9") == (
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {r0, r1, r2, r3}, [%r9];")
    assert ptx.wgmma_wait_group(n=0) == "wgmma.wait_group.sync.aligned 0;"
    assert ptx.wgmma_fence() == "wgmma.fence.sync.aligned;"


@pytest.mark.parametrize("kwargs, message", [
    (dict(cta_group=1, kind="mxf8f6f4", d_tmem="d", a_desc="a", b_desc="b", idesc="i",
          enable_input_d="p"), "need .block_scale"),
    (dict(cta_group=1, kind="f16", ashift=True, d_tmem="d", a_desc="a", b_desc="b",
          idesc="i", enable_input_d="p"), ".ashift needs the A matrix in Tensor Memory"),
    (dict(cta_group=3, kind="f16", d_tmem="d", a_desc="a", b_desc="b", idesc="i",
          enable_input_d="p"), "cta_group: 3 is not allowed; allowed: 1, 2"),
    (dict(cta_group=1, kind="f16", d_tmem="d", a_desc="a", b_desc="b", idesc="i",
          enable_input_d="p", scale_input_d=16), "scale_input_d: 16 is not allowed"),
    (dict(cta_group=2, kind="f16", d_tmem="d", a_desc="a", b_desc="b", idesc="i",
          disable_output_lane=["m0", "m1", "m2", "m3"], enable_input_d="p"),
     "4 registers given; this form takes 8"),
    (dict(cta_group=1, kind="f16", d_tmem="d", a_desc="a", a_tmem="t", b_desc="b",
          idesc="i", enable_input_d="p"), "give exactly one of a_desc, a_tmem"),
    (dict(cta_group=1, kind="f16", d_tmem="d", a_desc="a", b_desc="b", idesc="i",
          enable_input_d="p", sp_meta_tmem="s"), "operand sp_meta_tmem is not part of this form"),
    (dict(cta_group=1, kind="f16", sp=True, d_tmem="d", a_desc="a", b_desc="b", idesc="i",
          enable_input_d="p"), "operand sp_meta_tmem is required by this form"),
])
def test_invalid_tcgen05_forms_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ptx.PtxFormError) as info:
        ptx.tcgen05_mma(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_wgmma_integer_n_and_immediates() -> None:
    with pytest.raises(ptx.PtxFormError) as info:
        ptx.wgmma_mma_async(n=40, k=32, dtype="s32", atype="s8", btype="s8",
                            d=[f"d{i}" for i in range(20)], a_desc="a", b_desc="b",
                            scale_d="p")
    assert "steps of 16" in str(info.value)
    with pytest.raises(ptx.PtxFormError) as info:
        ptx.wgmma_mma_async(n=64, k=16, dtype="f32", atype="bf16", btype="bf16",
                            d=[f"d{i}" for i in range(32)], a_desc="a", b_desc="b",
                            scale_d="p", imm_scale_a=2, imm_scale_b=1, imm_trans_a=0,
                            imm_trans_b=0)
    assert "imm_scale_a: 2 is not allowed; allowed: -1, 1" in str(info.value)


# -- sparse MMA (seed 004 section 5: sp-meta, sp-sel; operand order from ptxas 13.0) -------

def test_mma_sp_text() -> None:
    text = ptx.mma_sp(shape="m16n8k32", alayout="row", blayout="col", dtype="f32", atype="f16",
                      btype="f16", ctype="f32", d=["d0", "d1", "d2", "d3"],
                      a=["a0", "a1", "a2", "a3"], b=["b0", "b1", "b2", "b3"],
                      c=["c0", "c1", "c2", "c3"], sp_meta="e", sp_sel=1)
    assert text == ("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {d0, d1, d2, d3}, "
                    "{a0, a1, a2, a3}, {b0, b1, b2, b3}, {c0, c1, c2, c3}, e, 1;")


def test_mma_sp_ordered_metadata_block_scale_text() -> None:
    text = ptx.mma_sp_ordered_metadata(
        shape="m16n8k128", alayout="row", blayout="col", kind="mxf4nvf4", block_scale=True,
        scale_vec_size="scale_vec::4X", dtype="f32", atype="e2m1", btype="e2m1", ctype="f32",
        stype="ue4m3", d=["d0", "d1", "d2", "d3"], a=["a0", "a1", "a2", "a3"],
        b=["b0", "b1", "b2", "b3"], c=["c0", "c1", "c2", "c3"], sp_meta="e", sp_sel=0,
        scale_a="sa", selector_a=[0, 1], scale_b="sb", selector_b=[0, 0])
    assert text == ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4nvf4"
                    ".block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 {d0, d1, d2, d3}, "
                    "{a0, a1, a2, a3}, {b0, b1, b2, b3}, {c0, c1, c2, c3}, e, 0, sa, {0, 1}, "
                    "sb, {0, 0};")


def test_wgmma_sp_text() -> None:
    text = ptx.wgmma_mma_async_sp(n=8, k=32, dtype="f32", atype="bf16", btype="bf16",
                                  d=["d0", "d1", "d2", "d3"], a_desc="da", b_desc="db",
                                  sp_meta="e", sp_sel=1, scale_d="p", imm_scale_a=-1,
                                  imm_scale_b=1, imm_trans_a=0, imm_trans_b=1)
    assert text == ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16 {d0, d1, d2, d3}, "
                    "da, db, e, 1, p, -1, 1, 0, 1;")


@pytest.mark.parametrize("builder, kwargs, message", [
    # ptxas 13.0: "value '2' out of range, expected to be in range [0..1]" (m16n8k32 .f16)
    (ptx.mma_sp, dict(shape="m16n8k32", alayout="row", blayout="col", dtype="f16", atype="f16",
                      btype="f16", ctype="f16", d=["d0", "d1"], a=["a0", "a1", "a2", "a3"],
                      b=["b0", "b1", "b2", "b3"], c=["c0", "c1"], sp_meta="e", sp_sel=2),
     "sp_sel: 2 is not allowed; allowed: 0, 1"),
    # m16n8k16 .f16 takes 0-3 ("expected to be in range [0..3]")
    (ptx.mma_sp, dict(shape="m16n8k16", alayout="row", blayout="col", dtype="f16", atype="f16",
                      btype="f16", ctype="f16", d=["d0", "d1"], a=["a0", "a1"], b=["b0", "b1"],
                      c=["c0", "c1"], sp_meta="e", sp_sel=4),
     "sp_sel: 4 is not allowed; allowed: 0, 1, 2, 3"),
    # "Argument 4 of instruction 'Sparse wgmma.mma_async with FP8 types': ... expected to be 0"
    (ptx.wgmma_mma_async_sp, dict(n=8, k=64, dtype="f32", atype="e4m3", btype="e4m3",
                                  d=["d0", "d1", "d2", "d3"], a_desc="da", b_desc="db",
                                  sp_meta="e", sp_sel=1, scale_d="p", imm_scale_a=1,
                                  imm_scale_b=1),
     "sp_sel: 1 is not allowed; allowed: 0"),
    # .kind::mxf4 (scale_vec::2X): "unexpected value '1', expected to be 0 or 2"
    (ptx.mma_sp_ordered_metadata,
     dict(shape="m16n8k128", alayout="row", blayout="col", kind="mxf4", block_scale=True,
          dtype="f32", atype="e2m1", btype="e2m1", ctype="f32", stype="ue8m0",
          d=["d0", "d1", "d2", "d3"], a=["a0", "a1", "a2", "a3"], b=["b0", "b1", "b2", "b3"],
          c=["c0", "c1", "c2", "c3"], sp_meta="e", sp_sel=0, scale_a="sa", selector_a=[1, 0],
          scale_b="sb", selector_b=[0, 0]),
     "selector_a.byte_id: 1 is not allowed; allowed: 0, 2"),
    # mma.sp has no .kind: FP6/FP4 operands need mma.sp::ordered_metadata
    (ptx.mma_sp, dict(shape="m16n8k64", alayout="row", blayout="col", dtype="f32", atype="e2m1",
                      btype="e2m1", ctype="f32", d=["d0", "d1", "d2", "d3"],
                      a=["a0", "a1", "a2", "a3"], b=["b0", "b1", "b2", "b3"],
                      c=["c0", "c1", "c2", "c3"], sp_meta="e", sp_sel=0),
     "atype: 'e2m1' is not allowed"),
])
def test_invalid_sparse_forms_are_refused(builder: Any, kwargs: dict[str, object],
                                          message: str) -> None:
    with pytest.raises(ptx.PtxFormError) as info:
        builder(**kwargs)
    assert message in str(info.value)
