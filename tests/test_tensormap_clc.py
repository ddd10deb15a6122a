"""Issue 15: tensormap.replace, tensormap.cp_fenceproxy and clusterlaunchcontrol, against
ptxas 13.0 and 13.5 (tests/toolkits.py): what the builders write assembles where the spec
says, and the immediate ranges the builders enforce are ptxas's own."""

from __future__ import annotations

from pathlib import Path

import pytest
import toolkits
from cpp import harness

from ptxgen.isa.ptx import (
    PtxFormError,
    clusterlaunchcontrol_query_cancel,
    clusterlaunchcontrol_try_cancel,
    support,
    tensormap_cp_fenceproxy,
    tensormap_replace,
)

_DECLS = ".reg .b32 r<4>;\n.reg .b64 rd<4>;\n.reg .pred p<2>;\n.reg .b128 q<2>;\n"


def _assemble(ptxas: str, tmp_path: Path, body: str, target: str, version: str
              ) -> tuple[int, str]:
    return toolkits.assemble(ptxas, tmp_path, body, target, version, _DECLS)


def test_tensormap_replace_forms_assemble_on_sm_90a(tmp_path: Path) -> None:
    texts = [
        tensormap_replace(field="global_address", space="shared::cta", type="b64",
                          addr="r1", new_val="rd1"),
        tensormap_replace(field="box_dim", space="global", type="b32", addr="rd2", ord=4,
                          new_val=16),
        tensormap_replace(field="global_stride", type="b64", addr="rd2", ord=0,
                          new_val="rd1"),
        tensormap_replace(field="elemtype", space="global", type="b32", addr="rd2",
                          new_val_imm=12),
    ]
    assert texts[1] == "tensormap.replace.tile.box_dim.global.b1024.b32 [rd2], 4, 16;"
    for ptxas in toolkits.all_ptxas():
        for text in texts:
            rc, out = _assemble(ptxas, tmp_path, text, "sm_90a", "8.3")
            assert rc == 0, (ptxas, text, out)


@pytest.mark.parametrize("field, value, message", [
    ("elemtype", 16, "value '16' expected to be in range [0..12] when .elemtype"),
    ("interleave_layout", 3, "expected to be in range [0..2] when .interleave_layout"),
    ("fill_mode", 2, "expected to be in range [0..1] when .fill_mode"),
])
def test_tensormap_replace_codes_outside_the_range_are_refused_by_both(
        tmp_path: Path, field: str, value: int, message: str) -> None:
    with pytest.raises(PtxFormError, match=f"operand new_val_imm: {value} is not allowed"):
        tensormap_replace(field=field, space="global", type="b32", addr="rd2",
                          new_val_imm=value)
    text = f"tensormap.replace.tile.{field}.global.b1024.b32 [rd2], {value};"
    for ptxas in toolkits.all_ptxas():
        rc, out = _assemble(ptxas, tmp_path, text, "sm_90a", "8.3")
        assert rc != 0 and message in out, (ptxas, out)


def test_tensormap_replace_ord_range_is_ptxas_range(tmp_path: Path) -> None:
    with pytest.raises(PtxFormError, match="operand ord: 5 is not allowed"):
        tensormap_replace(field="box_dim", space="global", type="b32", addr="rd2", ord=5,
                          new_val="r1")
    rc, out = _assemble(harness.tool("ptxas"), tmp_path,
                        "tensormap.replace.tile.box_dim.global.b1024.b32 [rd2], 5, r1;",
                        "sm_90a", "8.3")
    assert rc != 0
    assert "value '5' expected to be in range [0..4] when .box_dim modifier is used" in out


_CP_FENCEPROXY = ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release."
                  "{}.sync.aligned [rd1], [r1], 128;")


@pytest.mark.parametrize("scope", ["cta", "cluster", "gpu", "sys"])
def test_tensormap_cp_fenceproxy_assembles_from_8_3_on_sm_90(tmp_path: Path, scope: str) -> None:
    text = tensormap_cp_fenceproxy(scope=scope, dst="rd1", src="r1", size=128)
    assert text == _CP_FENCEPROXY.format(scope)
    for ptxas in toolkits.all_ptxas():
        # the baseline sm_90 has it (not only sm_90a), from PTX ISA 8.3
        for target in ("sm_90", "sm_100", "sm_120"):
            rc, out = _assemble(ptxas, tmp_path, text, target, "8.8")
            assert rc == 0, (ptxas, target, out)
        rc, out = _assemble(ptxas, tmp_path, text, "sm_90", "8.2")
        assert rc != 0 and ("Feature 'tensormap.cp_fenceproxy' requires PTX ISA .version 8.3 "
                            "or later") in out, (ptxas, out)
        rc, out = _assemble(ptxas, tmp_path, text, "sm_89", "8.3")
        assert rc != 0 and ("Instruction 'tensormap.cp_fenceproxy' not supported on .target "
                            "'sm_89'") in out, (ptxas, out)


def test_tensormap_cp_fenceproxy_gate_is_ptxas_gate() -> None:
    opcode = _CP_FENCEPROXY.format("gpu").split(" ")[0]
    lookup = support(opcode)
    assert lookup.valid and len(lookup.forms) == 1
    form = lookup.forms[0].support
    # what the test above measured: from 8.3 (sm_90), every target from sm_90 on, none before
    assert form.since == "8.3"
    assert {"sm_90", "sm_90a", "sm_100", "sm_120"} <= form.targets
    assert not {"sm_80", "sm_86", "sm_89"} & form.targets


def test_tensormap_cp_fenceproxy_size_is_128_only(tmp_path: Path) -> None:
    with pytest.raises(PtxFormError, match="operand size: 64 is not allowed"):
        tensormap_cp_fenceproxy(scope="cta", dst="rd1", src="r1", size=64)
    for ptxas in toolkits.all_ptxas():
        rc, out = _assemble(ptxas, tmp_path,
                            _CP_FENCEPROXY.format("cta").replace("128;", "64;"), "sm_90", "8.3")
        assert rc != 0 and ("Argument 2 of instruction 'tensormap.cp_fenceproxy': unexpected "
                            "value '64', expected to be 128") in out, (ptxas, out)


def test_clusterlaunchcontrol_forms_assemble_on_sm_100a(tmp_path: Path) -> None:
    texts = [
        clusterlaunchcontrol_try_cancel(space="shared::cta", multicast=True, addr="r1",
                                        mbar="r2"),
        clusterlaunchcontrol_query_cancel(query="is_canceled", type="pred", canceled="p1",
                                          response="q1"),
        clusterlaunchcontrol_query_cancel(query="get_first_ctaid", vec="v4", type="b32",
                                          ctaids=["r0", "r1", "r2", "r3"], response="q1"),
    ]
    assert texts[2] == ("clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 "
                        "{r0, r1, r2, r3}, q1;")
    for ptxas in toolkits.all_ptxas():
        for text in texts:
            rc, out = _assemble(ptxas, tmp_path, text, "sm_100a", "8.6")
            assert rc == 0, (ptxas, text, out)
        # multicast is family-specific: the baseline target refuses it, as the spec says
        rc, out = _assemble(ptxas, tmp_path, texts[0], "sm_100", "8.6")
        assert "Feature '.multicast::cluster::all' not supported on .target 'sm_100'" in out
