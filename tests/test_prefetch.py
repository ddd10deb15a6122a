"""Issue 26: prefetch and prefetchu (spec/instructions/prefetch.yaml).

ptxas 13.0 and 13.5 against the document where they part: the eviction priorities on a
generic address (the document writes them with .global; both assemble them: the rule's
``ptxas_accepts``), and .L1::32B, which takes .valid_addr and no .local (13.5; 13.0 reads
PTX ISA 9.0 at most). The whole matrix is generated/tests/test_ptxas_conformance.py's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import toolkits

from ptxgen.isa import ptx
from ptxgen.model.instructions import PtxFormError


def test_builders_follow_the_rules() -> None:
    assert ptx.prefetch_line(space="global", level="L2::evict_last", a="%rd1") == \
        "prefetch.global.L2::evict_last [%rd1];"
    assert ptx.prefetch_line(level="tensormap", tmap="%rd1") == "prefetch.tensormap [%rd1];"
    with pytest.raises(PtxFormError, match=r"eviction priorities are written with \.global"):
        ptx.prefetch_line(level="L2::evict_last", a="%rd1")
    with pytest.raises(PtxFormError, match=r"takes \.valid_addr"):
        ptx.prefetch_line(space="global", level="L1::32B", a="%rd1")


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_where_the_document_is_silent(release: str, tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    cases = [("prefetch.L2::evict_last [rd0];", "sm_80", "7.4", True),  # ptxas_accepts
             ("prefetch.global.L2::evict_last [rd0];", "sm_80", "7.3", False),
             ("prefetch.global.tensormap [rd0];", "sm_90", "8.0", False)]
    if release != "13.0":
        cases += [("prefetch.global.L1::32B [rd0];", "sm_90", "9.4", False),
                  ("prefetch.local.L1::32B.valid_addr [rd0];", "sm_90", "9.4", False),
                  ("prefetch.global.L1::32B.valid_addr [rd0];", "sm_90", "9.4", True)]
    for body, target, version, ok in cases:
        rc, out = toolkits.assemble(ptxas, tmp_path, body, target, version)
        assert (rc == 0) == ok, f"{release} {body} {target}@{version}: {out}"
