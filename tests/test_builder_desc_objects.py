"""Issue 28: the Python builders take the descriptor objects too, as the C++ wrappers do.

A descriptor operand takes a register name, or ``(register name, object)``: the text is the
register's, and the object is checked against the form first (of the operand's descriptor,
of the form's kind, none of the form's descriptor rules broken), with the messages of the
C++ wrappers' static_asserts (tests/test_cpp_desc_objects.py compiles those). The other
oracle: ``descriptor_problems``, which decodes the object's word (the path of ``ptxgen
lint``), must find the same problems for every object below.
"""

from __future__ import annotations

from typing import Any

import pytest

from ptxgen.isa import InstrDescF16, InstrDescI8, SmemDesc, TmemAddr, WgmmaDesc
from ptxgen.isa.ptx import (
    PtxFormError,
    descriptor_problems,
    tcgen05_mma,
    tcgen05_shift,
    wgmma_mma_async,
)

MMA = {"cta_group": 1, "kind": "f16", "d_tmem": "%r1", "a_desc": "%rd1", "b_desc": "%rd2",
       "enable_input_d": "%p1"}
OPCODE = "tcgen05.mma.cta_group::1.kind::f16"
GOOD = InstrDescF16(dtype="f32", m=128, n=64)


@pytest.mark.parametrize("obj", [GOOD, InstrDescF16(dtype="f16", m=64, n=256),
                                 InstrDescF16(dtype="f32", m=256, n=64),
                                 InstrDescF16(dtype="f32", m=64, n=8)])
def test_an_object_is_its_register_and_checked_like_its_word(obj: Any) -> None:
    problems = descriptor_problems(OPCODE, idesc=obj.encode())
    if problems:
        with pytest.raises(PtxFormError) as err:
            tcgen05_mma(**MMA, idesc=("%r3", obj))
        assert str(err.value) == f"{OPCODE}: " + "; ".join(problems)
    else:
        assert tcgen05_mma(**MMA, idesc=("%r3", obj)) == tcgen05_mma(**MMA, idesc="%r3")


def test_the_rule_is_the_one_the_cpp_wrapper_names() -> None:
    with pytest.raises(PtxFormError, match=r"\.cta_group::1 with \.kind::f16, \.kind::tf32 or "
                                           r"\.kind::f8f6f4 takes M = 64 or 128 and N = 8 to "
                                           r"256 in steps of 8 .*\[shape-cta-group-1\]"):
        tcgen05_mma(**MMA, idesc=("%r3", InstrDescF16(dtype="f32", m=256, n=64)))
    # .cta_group::2 takes M = 256
    assert tcgen05_mma(**{**MMA, "cta_group": 2},
                       idesc=("%r3", InstrDescF16(dtype="f32", m=256, n=64))).startswith(
        "tcgen05.mma.cta_group::2.kind::f16 [%r1]")


def test_objects_of_another_kind_or_descriptor_are_refused() -> None:
    with pytest.raises(PtxFormError, match=r"operand idesc: the descriptor object is of "
                                           r"\.kind::i8, the form of \.kind::f16"):
        tcgen05_mma(**MMA, idesc=("%r3", InstrDescI8(dtype="s32", m=128, n=64)))
    with pytest.raises(PtxFormError, match=r"operand idesc takes a register name, or "
                                           r"\(register name, an object of "
                                           r"ptxgen\.isa\.instr_desc\)"):
        tcgen05_mma(**MMA, idesc=("%r3", SmemDesc()))
    with pytest.raises(PtxFormError, match=r"operand b_desc takes a register name, or "
                                           r"\(register name, an object of "
                                           r"ptxgen\.isa\.smem_desc\)"):
        tcgen05_mma(**{**MMA, "b_desc": ("%rd2", WgmmaDesc())}, idesc="%r3")


def test_every_descriptor_operand_takes_objects() -> None:
    # a shared memory descriptor and a Tensor Memory address (tcgen05), a wgmma descriptor
    text = tcgen05_mma(**{**MMA, "a_desc": ("%rd1", SmemDesc(start_address=0x400)),
                          "d_tmem": ("%r1", TmemAddr(lane=32, column=8))}, idesc="%r3")
    assert text == tcgen05_mma(**MMA, idesc="%r3")
    with pytest.raises(PtxFormError, match=r"\[shift-lane-aligned\]"):
        tcgen05_shift(cta_group=1, taddr=("%r1", TmemAddr(lane=16, column=8)))
    assert tcgen05_shift(cta_group=1, taddr=("%r1", TmemAddr(lane=32, column=8))) == \
        tcgen05_shift(cta_group=1, taddr="%r1")
    args: dict[str, Any] = {"n": 8, "k": 16, "dtype": "f32", "atype": "bf16",
                            "btype": "bf16", "d": [f"%f{i}" for i in range(4)],
                            "scale_d": "%p1", "imm_scale_a": 1, "imm_scale_b": 1,
                            "imm_trans_a": 0, "imm_trans_b": 0}
    w = WgmmaDesc(start_address=0x400)
    assert wgmma_mma_async(**args, a_desc=("%rd1", w), b_desc=("%rd2", w)) == \
        wgmma_mma_async(**args, a_desc="%rd1", b_desc="%rd2")
