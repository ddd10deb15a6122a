"""Issue 26: multimem.ld_reduce, multimem.st and multimem.red (spec/instructions/multimem.yaml).

ptxas 13.0 and 13.5 where they part from the document: a memory order takes a scope and a
scope an order (the document's syntax makes both optional: note multimem-order-scope),
.f16/.bf16 need a vector (the syntax lists them; the document's table does not), .acc::f32
goes with .add only. The generic-address forms, the fp8 types and the async forms are
tests/test_doc_94_families.py's (issue 25).
The whole matrix is generated/tests/test_ptxas_conformance.py's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import toolkits

from ptxgen.isa import ptx
from ptxgen.model.instructions import PtxFormError

DECLS = ".reg .b16 h<4>;\n.reg .b32 r<4>;\n.reg .b64 rd<2>;\n.reg .f32 f<4>;\n"


def test_builders_follow_ptxas() -> None:
    assert ptx.multimem_ld_reduce(sem="acquire", scope="sys", space="global", op="add",
                                  type="u32", d="%r1", a="%rd1") == \
        "multimem.ld_reduce.acquire.sys.global.add.u32 %r1, [%rd1];"
    assert ptx.multimem_st(space="global", vec="v2", type="bf16x2", a="%rd1",
                           v=["%r1", "%r2"]) == "multimem.st.global.v2.bf16x2 [%rd1], {%r1, %r2};"
    with pytest.raises(PtxFormError, match="take a scope"):
        ptx.multimem_red(sem="release", space="global", op="add", type="u32", a="%rd1", b="%r1")
    with pytest.raises(PtxFormError, match="32 or 64 bits"):
        ptx.multimem_st(space="global", type="f16", a="%rd1", b="%h1")
    with pytest.raises(PtxFormError, match=r"goes with \.add"):
        ptx.multimem_ld_reduce(space="global", op="min", acc=True, type="f16x2", d="%r1",
                               a="%rd1")


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_against_the_document(release: str, tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    for body, ok in [
            ("multimem.ld_reduce.acquire.global.add.u32 r0, [rd0];", False),  # no scope
            ("multimem.red.gpu.global.add.u32 [rd0], r0;", False),  # a scope, no order
            ("multimem.st.global.f16 [rd0], h0;", False),  # .f16 without a vector
            ("multimem.ld_reduce.global.min.acc::f32.f16x2 r0, [rd0];", False),
            ("multimem.red.global.min.f16x2 [rd0], r0;", False),  # floats reduce by .add
            ("multimem.red.add.u32 [rd0], r0;", True),  # generic: ptxas_accepts
            ("multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.f16x2 "
             "{r0, r1, r2, r3}, [rd0];", True)]:
        rc, out = toolkits.assemble(ptxas, tmp_path, body, "sm_90a", "8.2", decls=DECLS)
        assert (rc == 0) == ok, f"{release} {body}: {out}"
