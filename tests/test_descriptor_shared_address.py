"""A descriptor's start address is a shared-memory address, and the ISA's encode() masks it:
matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4 (seed 004 for wgmma's descriptor, seed 003's
Table 40 for tcgen05's; 0x7FFFF in the sm107 layout, spec/descriptors/smem_desc.yaml). In a
CTA cluster a CTA's shared::cta addresses carry its rank above bit 17: on the H100 the
generated WgmmaDesc refused them (encode() trapped), and the 2-CTA sparse GEMM of
examples/sparse_gemm stopped with "unspecified launch failure"
(tests/gpu/test_async.py::test_cluster_shared_address_in_a_descriptor measures the
addresses; tests/gpu/test_gemm_sp.py runs the GEMM). The oracle here is the seeds' formula,
read from the seeds themselves (tests/seeds): the Python classes and the host C++ (g++)
encode an address with high bits as the formula does, and still refuse a misaligned one;
the offsets, which are not addresses, keep their range."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import GXX_FLAGS, INCLUDE

from ptxgen.isa import DescriptorError
from ptxgen.isa.smem_desc import SmemDesc, SmemDescSm107
from ptxgen.isa.wgmma_desc import WgmmaDesc

SEEDS = Path(__file__).parent / "seeds"
# cluster-like addresses: rank bits above the 18-bit window, low bits 16-byte aligned
ADDRESSES = [0x0100_3F0F0, 0x0200_0400, 0xFFFF_FFF0, 0x0004_0000]


def _seed_mask(seed: str) -> int:
    """The mask of the seed's matrix-descriptor-encode formula."""
    text = next(SEEDS.glob(f"{seed}_*.txt")).read_text()
    m = re.search(r"encode\(x\) = \(x & (0x[0-9A-Fa-f]+)\) >> 4", text)
    assert m, f"seed {seed} has no encode() formula"
    return int(m.group(1), 16)


@pytest.mark.parametrize("addr", ADDRESSES, ids=hex)
@pytest.mark.parametrize(("cls", "seed", "mask"), [
    (WgmmaDesc, "004", None), (SmemDesc, "003", None), (SmemDescSm107, None, 0x7FFFF)],
    ids=["wgmma_desc", "smem_desc", "smem_desc_sm107"])
def test_python_encodes_a_cluster_address_as_the_formula(cls: type, seed: str | None,
                                                         mask: int | None, addr: int) -> None:
    mask = mask if seed is None else _seed_mask(seed)
    assert mask is not None
    word = cls(start_address=addr).encode()
    low = cls(start_address=addr & mask).encode()
    assert word == low
    assert word & ((mask + 1) // 16 - 1) == (addr & mask) >> 4


@pytest.mark.parametrize("cls", [WgmmaDesc, SmemDesc, SmemDescSm107])
def test_python_still_refuses_what_is_no_address(cls: type) -> None:
    with pytest.raises(DescriptorError, match="start_address"):
        cls(start_address=0x0100_0008)  # not 16-byte aligned
    with pytest.raises(DescriptorError, match="start_address"):
        cls(start_address=1 << 32)  # not a 32-bit address
    with pytest.raises(DescriptorError, match="leading_byte_offset"):
        cls(leading_byte_offset=0x0100_0000)  # an offset, not an address


HOST = """#include "ptxgen/ptxgen.hpp"
#include <cstdio>
int main() {
  const unsigned addrs[] = {ADDRS};
  for (unsigned a : addrs) {
    ptxgen::WgmmaDesc w{}; w.start_address = a;
    ptxgen::SmemDesc s{}; s.start_address = a;
    std::printf("%#x %#llx %#llx\\n", a, static_cast<unsigned long long>(w.encode()),
                static_cast<unsigned long long>(s.encode()));
  }
  constexpr auto c = ptxgen::WgmmaDesc{}.with_start_address(0x0100'3F0F0u).encode();
  static_assert(c == ((0x0100'3F0F0u & 0x3FFFFu) >> 4), "masked at compile time too");
  return 0;
}
"""


def test_host_cpp_encodes_a_cluster_address_as_the_formula(tmp_path: Path) -> None:
    src = tmp_path / "host.cpp"
    src.write_text(HOST.replace("ADDRS", ", ".join(f"{a:#x}u" for a in ADDRESSES)))
    exe = tmp_path / "host"
    harness.run([harness.tool("g++"), *GXX_FLAGS, f"-I{INCLUDE}", str(src), "-o", str(exe)])
    out = harness.run([str(exe)]).stdout.split("\n")
    wg, t40 = _seed_mask("004"), _seed_mask("003")
    for line, addr in zip(out, ADDRESSES, strict=False):
        a, w, s = (int(x, 16) for x in line.split())
        assert a == addr
        assert w == (addr & wg) >> 4  # the other fields are 0
        assert s & 0x3FFF == (addr & t40) >> 4
