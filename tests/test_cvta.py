"""Issue 26: cvta (spec/instructions/cvta.yaml): the document's .u32 size against ptxas 13.0
and 13.5, which refuse every .u32 cvta under .address_size 64 (32-bit registers: "32-Bit
compilation is no longer supported"; 64-bit ones: an argument mismatch), so the spec offers
.u64 only (note cvta-u32)."""

from __future__ import annotations

from pathlib import Path

import pytest
import toolkits

from ptxgen.isa import ptx
from ptxgen.model.instructions import PtxFormError


def test_builder_writes_u64_only() -> None:
    assert ptx.cvta_convert(to=True, space="shared", size="u64", p="%rd1", a="%rd2") == \
        "cvta.to.shared.u64 %rd1, %rd2;"
    with pytest.raises(PtxFormError, match="u32"):
        ptx.cvta_convert(space="global", size="u32", p="%r1", a="%r2")


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_on_the_u32_size(release: str, tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    for body, ok in [("cvta.global.u32 r0, r1;", False), ("cvta.global.u32 rd0, rd1;", False),
                     ("cvta.to.shared::cluster.u64 rd0, rd1;", True)]:
        rc, out = toolkits.assemble(ptxas, tmp_path, body, "sm_90", "7.8")
        assert (rc == 0) == ok, f"{release} {body}: {out}"
