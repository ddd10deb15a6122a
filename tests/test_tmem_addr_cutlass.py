"""Issue 16, point 2: the Tensor Memory address (spec/descriptors/tmem_addr.yaml, PTX ISA
9.7.16.1.1: lane in bits 31-16, column in bits 15-0) against an independent oracle,
CUTLASS 4.2's CuTe (nvidia-cutlass wheel, test-only; nothing of it is committed).

tests/cpp/tmem_addr_oracle.cu computes, in constant expressions, the word CuTe's
``tmem_ptr<uint32_t>`` arithmetic gives for lane * ``TMEM::DP<uint32_t>`` + column for every
cell of the 128 x 512 Tensor Memory (in CI every lane with every 7th column, 0 and 511
included; PTXGEN_FULL_MATRIX=1: every cell) and for the 16-bit limits of both fields, and
requires ptxgen's constexpr C++ ``TmemAddr`` encode/decode to agree; it prints the number
of checks, the mismatches and the sum of CuTe's words. The generated Python class must give the same
sum over the same cells, and the CLI the same words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import INCLUDE

from ptxgen.isa.tmem_addr import TmemAddr

ORACLE = harness.HERE / "tmem_addr_oracle.cu"
#: Columns of each lane the oracle checks (-DPTXGEN_TMEM_COLUMN_STEP): 7 divides 511.
STEP = 1 if os.environ.get("PTXGEN_FULL_MATRIX") == "1" else 7
CELLS = [(lane, column) for lane in range(128) for column in range(0, 512, STEP)]
LIMITS = [pair for v in range(0, 65536, 257) for pair in ((v, 65535 - v), (65535, v), (v, 65535))]


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    nvcc = harness.tool("nvcc")
    exe = tmp_path_factory.mktemp("tmem") / "oracle"
    harness.run([nvcc, "-std=c++17", "-O1", "-x", "cu", f"-I{harness.cutlass_include()}",
                 f"-I{INCLUDE}", f"-DPTXGEN_TMEM_COLUMN_STEP={STEP}", str(ORACLE),
                 "-o", str(exe)])
    proc = harness.run([str(exe)], ok=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc.stdout.splitlines()


def test_cpp_encoder_agrees_with_cute_on_every_cell(oracle: list[str]) -> None:
    assert oracle[-1] == f"checked {len(CELLS) + len(LIMITS)} mismatches 0"


def test_python_encoder_gives_cute_s_words(oracle: list[str]) -> None:
    words = [int(line.split()[1]) for line in oracle if line.startswith("words ")]
    assert words == [sum(TmemAddr(lane=la, column=co).encode() for la, co in CELLS),
                     sum(TmemAddr(lane=la, column=co).encode() for la, co in LIMITS)]
    for lane, column in CELLS[::997] + LIMITS:
        word = TmemAddr(lane=lane, column=column).encode()
        assert TmemAddr.decode(word) == TmemAddr(lane=lane, column=column)
        assert (word >> 16, word & 0xFFFF) == (lane, column)


def test_cli_encodes_and_decodes() -> None:
    run = [sys.executable, "-m", "ptxgen"]
    out = subprocess.run([*run, "encode", "tmem_addr", "lane=96", "column=128"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0x00600080"
    out = subprocess.run([*run, "decode", "tmem_addr", "0x00600080"],
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["column=128", "lane=96"]


def test_the_spec_cites_the_isa_section() -> None:
    text = (Path(__file__).resolve().parents[1] / "spec" / "descriptors" /
            "tmem_addr.yaml").read_text()
    assert "section: 9.7.16.1.1" in text and "#tensor-memory-addressing" in text
