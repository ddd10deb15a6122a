"""Issue 5, point 1: a descriptor built from constants folds to an immediate. The kernels
of tests/cpp/kernels.cu that build one descriptor each from constants are compiled to PTX
(nvcc and NVRTC); each must store the expected word as a literal and do no bit arithmetic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import INCLUDE, NVCC_FLAGS

KERNELS = harness.HERE / "kernels.cu"

#: kernel -> the word it stores (the values CUTLASS computes for the same fields).
FOLDED = {
    "ptxgen_fold_instr_desc": 0x08400490,
    "ptxgen_fold_smem_desc": 0x4000404000010040,
    "ptxgen_fold_wgmma_desc": 0x4000004000010040,
    "ptxgen_fold_zero_column_mask_desc": 0x0203028301020100,
}

#: PTX opcodes that compute bits (or branch on them); none may survive folding.
ARITHMETIC = re.compile(r"^\s*(?:@%p\d+\s+)?(shl|shr|and|or|xor|not|bfi|bfe|prmt|lop3|add|sub|"
                        r"mul|mad|selp|setp|min|max|cvt|bra|call)\b", re.M)


def entry_body(ptx: str, name: str) -> str:
    m = re.search(rf"\.entry {name}\(.*?\n\{{(.*?)\n\}}", ptx, flags=re.S)
    assert m, f"no kernel {name} in the PTX"
    return m.group(1)


def check_folded(ptx: str) -> None:
    for name, word in FOLDED.items():
        body = entry_body(ptx, name)
        literals = {int(x, 0) for x in re.findall(r"\b(0[xX][0-9a-fA-F]+|\d+)\b", body)}
        assert word in literals, f"{name}: {word:#x} is not a literal in\n{body}"
        assert not ARITHMETIC.search(body), f"{name}: bit arithmetic left in\n{body}"


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_nvcc_folds_constant_descriptors(arch: str, tmp_path: Path) -> None:
    nvcc = harness.tool("nvcc")
    out = tmp_path / "kernels.ptx"
    harness.run([nvcc, *NVCC_FLAGS, f"-arch={arch}", "-ptx", str(KERNELS), "-o", str(out)])
    check_folded(out.read_text())


def test_nvrtc_folds_constant_descriptors() -> None:
    ok, log, ptx = harness.nvrtc_compile(KERNELS.read_text(), "kernels.cu", [
        "-arch=compute_100a", "-std=c++17", f"-I{INCLUDE}"])
    assert ok, log
    check_folded(ptx)


def test_the_check_sees_arithmetic(tmp_path: Path) -> None:
    """Guard against a vacuous pass: the run-time kernel must trip the arithmetic check."""
    nvcc = harness.tool("nvcc")
    out = tmp_path / "kernels.ptx"
    harness.run([nvcc, *NVCC_FLAGS, "-arch=sm_100a", "-ptx", str(KERNELS), "-o", str(out)])
    assert ARITHMETIC.search(entry_body(out.read_text(), "ptxgen_runtime"))
