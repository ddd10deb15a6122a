"""For one form per instruction family, a kernel calling the generated wrapper
yields the same PTX instruction sequence as hand-written inline asm
(issue 6, performance), and the same SASS (nvdisasm). nvcc is required in CI
(CI=true)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from ptxas import same_ptx, wrappers


@pytest.mark.parametrize("case", same_ptx.CASES, ids=lambda c: c.family)
def test_wrapper_emits_the_same_ptx_as_hand_written_asm(case: same_ptx.Case) -> None:
    if wrappers.nvcc() is None:
        if os.environ.get("CI"):
            pytest.fail("nvcc (CUDA 13.0) is required in CI")
        pytest.skip("nvcc is not on PATH")
    work = Path(tempfile.mkdtemp(prefix="ptxgen-same-"))
    mine, hand, _ = same_ptx.compare(case, work)
    assert mine == hand
    assert any(case.family.split(" ")[0] in line for line in mine)
    mine_sass, hand_sass = same_ptx.compare_sass(case, work)
    assert mine_sass == hand_sass
    assert len(mine_sass) > 2
