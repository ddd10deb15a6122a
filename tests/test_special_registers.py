"""Special registers (kind special: a fixed operand text) through the Python builders.

ptxas holds every form of spec/instructions/special_registers.yaml in the conformance
matrix; here the builder's contract: the register is chosen by name (True), takes no
text, and the type rules refuse a read of the wrong width with the spec's message.
"""

from __future__ import annotations

import pytest

from ptxgen.isa import ptx
from ptxgen.model.instructions import PtxFormError


def test_a_register_is_chosen_by_name() -> None:
    assert ptx.mov_special(type="u32", d="%r1", smid=True) == "mov.u32 %r1, %smid;"
    assert ptx.mov_special(type="u64", d="%rd1", clock64=True) == "mov.u64 %rd1, %clock64;"
    assert ptx.mov_special(type="u32", d="r", tid_x=True) == "mov.u32 r, %tid.x;"
    assert ptx.mov_special(type="pred", p="%p1", is_explicit_cluster=True) == \
        "mov.pred %p1, %is_explicit_cluster;"


def test_the_width_rule_refuses_a_wrong_read() -> None:
    with pytest.raises(PtxFormError, match=r"the 64-bit registers are read as \.u64"):
        ptx.mov_special(type="u32", d="%r1", clock64=True)
    with pytest.raises(PtxFormError, match="give exactly one of"):
        ptx.mov_special(type="u32", d="%r1", smid=True, laneid=True)


def test_a_special_operand_takes_only_true() -> None:
    with pytest.raises(PtxFormError, match=r"allowed: True \(writes %smid\)"):
        ptx.mov_special(type="u32", d="%r1", smid="%smid")


def test_every_register_is_one_wrapper() -> None:
    ins = ptx.instruction_set().get("mov_special")
    names = [w.name for w in ins.wrappers]
    assert len(names) == len(set(names)) == len(ins.forms) == 101
    assert {"smid", "laneid", "clock64", "globaltimer", "dynamic_smem_size",
            "cluster_ctarank", "tid_x", "is_explicit_cluster"} <= set(names)
