"""``ptxgen support``: the contract of issue 6, item 5.

Expected answers are restated from the seeds' target notes (002, 004) and
from the ptxas 13.0 findings recorded in the spec's notes, never read back
from ptxgen's own output.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_main


def support(*args: str) -> tuple[int, str, str]:
    res = run_main("support", *args)
    return res.code, res.out, res.err


def invalid(*args: str) -> str:
    code, out, err = support(*args)
    assert code == 2, (out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- the four examples of the issue ---------------------------------------------------

@pytest.mark.parametrize("opcode, target", [
    ("tcgen05.mma.sp.cta_group::2.kind::mxf4nvf4.block_scale.block16", "sm_100a"),
    ("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "sm_90a"),
    ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "sm_75"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "sm_80"),
])
def test_issue_examples_are_supported(opcode: str, target: str) -> None:
    code, out, err = support(opcode, "--target", target)
    assert (code, err) == (0, "")
    assert out.startswith(f"{opcode}: supported on {target} at PTX ISA 9.5")


def test_not_supported_lists_where_it_is() -> None:
    # Seed 004: wgmma requires sm_90a; ptxas 13.0 refuses it on sm_100a.
    code, out, _ = support("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
                           "--target", "sm_100a")
    assert code == 1
    assert "not supported on sm_100a" in out
    assert "supported on: sm_90a (from 8.0)" in out


def test_kind_i8_targets_from_seed_002() -> None:
    # ".kind::i8 is supported on sm_100a, sm_101a (renamed sm_110a), sm_110a".
    op = "tcgen05.mma.sp.cta_group::1.kind::i8"
    assert support(op, "--target", "sm_100a")[0] == 0
    assert support(op, "--target", "sm_110a")[0] == 0
    assert support(op, "--target", "sm_101a", "--ptx-isa", "8.6")[0] == 0
    for t in ("sm_103a", "sm_100f", "sm_110f", "sm_120a", "sm_90a"):
        assert support(op, "--target", t)[0] == 1, t


def test_versions_from_seed_002() -> None:
    # mxf4nvf4 from PTX ISA 8.7, block16/block32 from 8.8, tcgen05.mma.sp from 8.6.
    nvf4 = "tcgen05.mma.sp.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
    assert support(nvf4, "--target", "sm_100a", "--ptx-isa", "8.6")[0] == 1
    assert support(nvf4, "--target", "sm_100a", "--ptx-isa", "8.7")[0] == 0
    b16 = "tcgen05.mma.sp.cta_group::1.kind::mxf4nvf4.block_scale.block16"
    assert support(b16, "--target", "sm_100a", "--ptx-isa", "8.7")[0] == 1
    assert support(b16, "--target", "sm_100a", "--ptx-isa", "8.8")[0] == 0
    f16 = "tcgen05.mma.sp.cta_group::1.kind::f16"
    assert support(f16, "--target", "sm_100a", "--ptx-isa", "8.5")[0] == 1
    assert support(f16, "--target", "sm_100a", "--ptx-isa", "8.6")[0] == 0


def test_family_specific_targets() -> None:
    # .block32 runs on the family-specific targets; .scale_vec::NX only on `a` targets.
    op = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"
    for t in ("sm_100f", "sm_103f", "sm_110f", "sm_103a", "sm_110a"):
        assert support(op, "--target", t)[0] == 0, t
    vec = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X"
    assert support(vec, "--target", "sm_100f")[0] == 1
    assert support(vec, "--target", "sm_103a")[0] == 0


@pytest.mark.parametrize("target, version, why", [
    ("sm_100f", "8.7", "sm_100f does not exist at PTX ISA 8.7 (it exists from 8.8)"),
    ("sm_110a", "8.8", "sm_110a does not exist at PTX ISA 8.8 (it exists from 9.0)"),
    ("sm_101a", "9.0", "sm_101a does not exist at PTX ISA 9.0 (renamed sm_110a from 9.0)"),
])
def test_a_target_that_does_not_exist_at_the_version_is_not_supported(
        target: str, version: str, why: str) -> None:
    code, out, err = support("tcgen05.mma.cta_group::1.kind::f16", "--target", target,
                             "--ptx-isa", version)
    assert (code, err) == (1, "")
    assert why in out


def test_default_version_is_the_newest() -> None:
    code, out, _ = support("tcgen05.mma.cta_group::1.kind::f16", "--target", "sm_110a")
    assert code == 0 and "at PTX ISA 9.5" in out


def test_table_without_target() -> None:
    code, out, err = support("wgmma.fence.sync.aligned")
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == ["  sm_90a   from PTX ISA 8.0",
                                    "  C++:    ptxgen::ptx::wgmma_fence();",
                                    "  Python: ptxgen.isa.ptx.wgmma_fence()"]


def test_table_per_shape_from_ptxas() -> None:
    # Seed 004 gives "sm_75 / sm_80" for .f16; ptxas: m16n8k8 needs sm_75, m16n8k16 sm_80;
    # m16n8k8 exists from PTX ISA 6.5 ("Feature '.m16n8k8' requires PTX ISA .version 6.5").
    out = support("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32")[1]
    assert "  sm_75    from PTX ISA 6.5" in out.splitlines()
    out = support("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")[1]
    assert not any(line.startswith("  sm_75 ") for line in out.splitlines())


def test_operand_variants_with_narrower_support_are_noted() -> None:
    # Seed 002: scale-input-d requires sm_100a / sm_100f+ (not sm_101a / sm_110a).
    code, out, _ = support("tcgen05.mma.cta_group::1.kind::f16", "--target", "sm_110a")
    assert code == 0
    assert "note: with scale_input_d: sm_100a (from 8.6), sm_100f (from 8.8), sm_103a " \
           "(from 8.8), sm_103f (from 8.8)" in out


def test_json() -> None:
    code, out, _ = support("ldmatrix.sync.aligned.m16n16.x1.trans.b8", "--target", "sm_120a",
                           "--json")
    data = json.loads(out)
    assert code == 0 and data["supported"] is True
    assert data["support"]["sm_100a"] == "8.6"
    assert "sm_90a" not in data["support"] and "sm_100" not in data["support"]


# -- sparse MMA (issue 6, seed 004 section 5; targets and versions from ptxas 13.0) -------

@pytest.mark.parametrize("opcode, target, first", [
    ("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", "sm_80", "7.1"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", "sm_80", "8.5"),
    ("wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.f16.f16", "sm_90a", "8.2"),
])
def test_sparse_examples_are_supported(opcode: str, target: str, first: str) -> None:
    code, out, err = support(opcode, "--target", target)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"{opcode}: supported on {target} at PTX ISA 9.5 (from {first})"
    assert out.splitlines()[1].startswith("  C++:    ptxgen::ptx::")  # the calls follow


def test_sparse_gating_from_ptxas() -> None:
    # "Feature 'Sparse MMA' requires .target sm_80 or higher" / "... PTX ISA .version 7.1".
    sp = "mma.sp.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    assert support(sp, "--target", "sm_75")[0] == 1
    assert support(sp, "--target", "sm_80", "--ptx-isa", "7.0")[0] == 1
    assert support(sp, "--target", "sm_120")[0] == 0
    # "Feature 'Sparse WGMMA with floating point types' requires PTX ISA .version 8.2".
    wg = "wgmma.mma_async.sp.sync.aligned.m64n64k64.f32.e4m3.e5m2"
    assert support(wg, "--target", "sm_90a", "--ptx-isa", "8.1")[0] == 1
    assert support(wg, "--target", "sm_90a", "--ptx-isa", "8.2")[0] == 0
    for t in ("sm_90", "sm_100a"):
        assert support(wg, "--target", t)[0] == 1, t
    # Sparse .kind::mxf4 is on sm_120a / sm_121a only ("... with .sp modifier' not
    # supported on .target 'sm_120f'"); dense .kind::mxf4 is on the f targets too.
    code, out, _ = support("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4"
                           ".block_scale.f32.e2m1.e2m1.f32.ue8m0")
    assert code == 0
    assert out.splitlines()[1:3] == ["  sm_120a  from PTX ISA 8.7", "  sm_121a  from PTX ISA 8.8"]
    assert out.splitlines()[3].startswith("  C++:    ")
    # FP8 with .f16 accumulators: ordered metadata only, sm_120 family only.
    f16acc = "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16"
    assert support(f16acc, "--target", "sm_120f")[0] == 0
    assert support(f16acc, "--target", "sm_89")[0] == 1


# -- exit 2 ------------------------------------------------------------------------------

def test_seed_002_collector_typo_is_invalid() -> None:
    line = invalid("tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4.collector::a:fill")
    assert line.startswith("ptxgen: error: tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4."
                           "collector::a:fill: not a valid form")
    assert "cannot read '.collector::a:fill'" in line


@pytest.mark.parametrize("opcode, reason", [
    ("tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4.collector::a::fill", "need .block_scale"),
    ("tcgen05.mma.cta_group::1.kind::f16.ashift.collector::a::fill",
     "cannot be combined with .ashift"),
    ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale", "explicit .scale_vectorsize"),
    ("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block16", ".kind::mxf8f6f4 takes"),
    ("tcgen05.mma.ws.cta_group::2.kind::f16", "only exists with .cta_group::1"),
    ("wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8", "steps of 16"),
    ("mma.sync.aligned.m16n8k16.col.row.f32.bf16.bf16.f32", "only .m8n8k4"),
    ("ldmatrix.sync.aligned.m16n16.x4.trans.b8", ".m16n16 takes .x1 or .x2"),
    ("stmatrix.sync.aligned.m16n8.x1.b8", ".m16n8 needs .trans"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e2m1.e2m1.f32", "need .kind::f8f6f4"),
    ("mma.sp.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16", "needs mma.sp::ordered_metadata"),
    ("mma.sp.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32", ".row.col only"),
    ("mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f32", ".dtype must equal .ctype"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4nvf4.block_scale"
     ".f32.e2m1.e2m1.f32.ue8m0", ".kind::mxf4nvf4 needs .scale_vec::2X"),
    ("wgmma.mma_async.sp.sync.aligned.m64n40k64.s32.s8.s8", "steps of 16"),
    ("wgmma.mma_async.sp.sync.aligned.m64n64k32.satfinite.f32.f16.f16", ".satfinite is only"),
])
def test_invalid_combinations_say_why(opcode: str, reason: str) -> None:
    assert reason in invalid(opcode)


def test_qualifiers_out_of_order_are_invalid() -> None:
    # ptxas reads .ws only right after tcgen05.mma ("Unknown modifier '.ws'"); the orders
    # it reads are tests/test_spellings.py's.
    assert "cannot read" in invalid("tcgen05.mma.cta_group::1.ws.kind::f16")
    # .kind exists only for mma.sp::ordered_metadata ("Illegal modifier '.sp'" with mma.sp).
    assert "cannot read '.kind::f8f6f4" in invalid(
        "mma.sp.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32")


def test_unknown_instruction_target_and_version() -> None:
    assert "unknown instruction" in invalid("mma.async.m16")
    assert "--target: unknown target 'sm_70'" in invalid(
        "wgmma.fence.sync.aligned", "--target", "sm_70")
    assert "--ptx-isa: '9.6' is not a PTX ISA version" in invalid(
        "wgmma.fence.sync.aligned", "--ptx-isa", "9.6")


# -- issue 13: versions where each instruction starts, and toolkit deviations -------------

@pytest.mark.parametrize(("opcode", "first"), [
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "6.4"),  # "Feature 'mma' ... 6.4"
    ("ldmatrix.sync.aligned.m8n8.x4.b16", "6.5"),  # "Feature 'ldmatrix' ... 6.5"
    ("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", "6.5"),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", "7.0"),
])
def test_versions_start_where_the_instruction_starts(opcode: str, first: str) -> None:
    code, out, err = support(opcode, "--target", "sm_75")
    assert (code, err) == (0, "")
    assert out.splitlines()[0].endswith(f"(from {first})"), out


BLOCK_SCALE = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"


def test_toolkit_deviations_answer_per_toolkit() -> None:
    # ISA (and ptxas 13.1-13.5): the form without .scale_vectorsize exists from 8.6
    code, out, _ = support(BLOCK_SCALE, "--target", "sm_100a", "--ptx-isa", "8.6")
    assert code == 0 and "(from 8.6)" in out
    # ptxas 13.0: "Feature '.block32' requires PTX ISA .version 8.8 or later"
    code, out, _ = support(BLOCK_SCALE, "--target", "sm_100a", "--ptx-isa", "8.6",
                           "--toolkit", "13.0")
    assert code == 1 and "needs PTX ISA 8.8 on sm_100a" in out
    # sm_88: the ISA introduced it in 9.0; ptxas 13.0 accepts it from 7.3
    mma = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    assert support(mma, "--target", "sm_88", "--ptx-isa", "8.0")[0] == 1
    assert support(mma, "--target", "sm_88", "--ptx-isa", "8.0", "--toolkit", "13.0")[0] == 0
    assert support(mma, "--target", "sm_88", "--ptx-isa", "8.0", "--toolkit", "13.5")[0] == 1


def test_toolkit_versions_and_targets_are_its_own() -> None:
    mma = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    code, out, err = support(mma, "--target", "sm_80", "--toolkit", "13.0")
    assert code == 0 and "at PTX ISA 9.0" in out  # the newest version 13.0 knows
    code, _, err = support(mma, "--target", "sm_80", "--ptx-isa", "9.5", "--toolkit", "13.0")
    assert code == 2 and "CUDA 13.0 knows PTX ISA versions up to 9.0" in err
    code, out, err = support(mma, "--target", "sm_107a", "--toolkit", "13.0")
    assert code == 1 and "CUDA 13.0 does not know sm_107a" in out, err  # issue 28
    code, _, err = support(mma, "--target", "sm_107x", "--toolkit", "13.0")
    assert code == 2 and "unknown target 'sm_107x'" in err
    code, _, err = support(mma, "--toolkit", "12.42")
    assert code == 2 and "--toolkit: unknown toolkit '12.42'" in err
    code, out, _ = support(mma, "--target", "sm_107a", "--toolkit", "13.5")
    assert code == 0 and "at PTX ISA 9.5 (from 9.4)" in out
