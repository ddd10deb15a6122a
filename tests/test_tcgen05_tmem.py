"""Issue 16, point 1: the tcgen05 Tensor Memory family (spec/instructions/tcgen05_tmem.yaml)
beyond the ptxas conformance matrix (generated/tests/test_ptxas_conformance.py) and the
per-form wrapper builds (tests/test_instr_wrappers.py):

* the form counts per instruction (Table 49/50 register counts, the ptxas-derived rules);
* opcodes as PTX writes them, ``::`` right after the name included (``tcgen05.wait::ld``),
  for ``ptxgen support`` and the builders; one-valued qualifiers (.sync.aligned, .b32) are
  the builders' defaults;
* a scalar output register (ld.red's redval) is an output of the asm statement: nvcc's PTX
  stores the very register tcgen05.ld.red wrote (before, the wrapper passed it as an input
  and the reduction was lost);
* the 16-bit CTA mask of tcgen05.commit.multicast::cluster is a 16-bit register in the PTX;
* tcgen05.shift's lane-alignment descriptor rule.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import toolkits

from conftest import run_main
from ptxgen.isa import ptx

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "generated" / "include"

COUNTS = {
    "tcgen05_alloc": 8,        # cta_group x state space x .exclusive
    "tcgen05_dealloc": 4,      # cta_group x .exclusive
    "tcgen05_relinquish_alloc_permit": 2,
    "tcgen05_ld": 74,          # Table 49: 37 shape x num, x .pack::16b
    "tcgen05_ld_red": 168,     # 2 shapes x 7 nums (>= .x2) x 2 ops x (f32: 4 abs/NaN, u32, s32)
    "tcgen05_ld_red_spcompress": 48,
    "tcgen05_st": 74,
    "tcgen05_wait": 2,
    "tcgen05_fence": 2,
    "tcgen05_cp": 36,          # 2 cta_group x 6 shape/multicast x 3 formats
    "tcgen05_shift": 2,
    "tcgen05_commit": 32,      # 2 cta_group x 2 state spaces x 2 sync_restrict x 4 multicast
}


def test_form_counts() -> None:
    assert {k: ptx.FORM_COUNTS[k] for k in COUNTS} == COUNTS


@pytest.mark.parametrize("opcode", [
    "tcgen05.ld.sync.aligned.32x32b.x8.b32",
    "tcgen05.ld.sync.aligned.16x256b.x32.pack::16b.b32",
    "tcgen05.st.sync.aligned.16x32bx2.x128.unpack::16b.b32",
    "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
    "tcgen05.alloc.exclusive.cta_group::2.sync.aligned.b32",
    "tcgen05.wait::ld.sync.aligned",
    "tcgen05.wait::st.sync.aligned",
    "tcgen05.fence::before_thread_sync",
    "tcgen05.fence::after_thread_sync",
    "tcgen05.cp.cta_group::1.64x128b.warpx2::01_23.b8x16.b6x16_p32",
    "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
    "tcgen05.ld.red.sync.aligned.16x32bx2.x4.max.abs.NaN.f32",
])
def test_support_knows_the_opcode(opcode: str) -> None:
    res = run_main("support", opcode)
    assert res.code == 0, res.out + res.err
    assert res.out.startswith(f"{opcode}: a valid ")


@pytest.mark.parametrize(("opcode", "why"), [
    ("tcgen05.ld.sync.aligned.16x256b.x64.b32", ".16x256b takes .x1 to .x32"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x1.min.f32", "needs .num of at least .x2"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.u32", ".abs and .NaN are only for .f32"),
    ("tcgen05.cp.cta_group::1.32x128b.warpx2::02_13", ".32x128b needs .warpx4"),
    ("tcgen05.cp.cta_group::1.128x256b.warpx4", "take no multicast qualifier"),
])
def test_support_gives_the_rule(opcode: str, why: str) -> None:
    res = run_main("support", opcode)
    assert res.code == 2 and why in res.out + res.err, res.out + res.err


def test_builders() -> None:
    assert ptx.tcgen05_alloc(cta_group=1, ss="shared::cta", dst="%r1", ncols="%r2") == (
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], %r2;")
    assert ptx.tcgen05_wait(op="ld") == "tcgen05.wait::ld.sync.aligned;"
    assert ptx.tcgen05_ld(shape="16x32bx2", num=2, r=["%r0", "%r1"], taddr="%r2",
                          imm_half_splitoff=16) == (
        "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r0, %r1}, [%r2], 16;")
    assert ptx.tcgen05_ld_red(shape="32x32b", num=2, red_op="max", type="f32", abs=True,
                              r=["%f0", "%f1"], redval="%f2", taddr="%r0") == (
        "tcgen05.ld.red.sync.aligned.32x32b.x2.max.abs.f32 {%f0, %f1}, %f2, [%r0];")
    with pytest.raises(ptx.PtxFormError, match="take no multicast"):
        ptx.tcgen05_cp(cta_group=1, shape="128x256b", multicast="warpx4", taddr="%r0",
                       s_desc="%rd0")


def _ptx(tmp_path: Path, source: str, arch: str) -> str:
    nvcc = toolkits.require("nvcc", "13.0")
    (tmp_path / "k.cu").write_text(source)
    subprocess.run([nvcc, "-std=c++17", f"-arch={arch}", "-ptx", f"-I{INCLUDE}",
                    str(tmp_path / "k.cu"), "-o", str(tmp_path / "k.ptx")],
                   check=True, capture_output=True, text=True)
    return (tmp_path / "k.ptx").read_text()


def test_redval_is_an_output(tmp_path: Path) -> None:
    text = _ptx(tmp_path, """#include <ptxgen/ptx/tcgen05_tmem.hpp>
using namespace ptxgen::ptx;
__global__ void k(float* out, unsigned taddr) {
  float r[2];
  float red = -1.0f;
  red = tcgen05_ld_red<tcgen05_ld_red_shape::shape_32x32b, 2, tcgen05_ld_red_red_op::max,
                       tcgen05_ld_red_type::f32, true>(r, taddr);
  tcgen05_wait_ld();
  out[0] = red;
}
""", "sm_103a")
    m = re.search(r"tcgen05\.ld\.red\.sync\.aligned\.32x32b\.x2\.max\.abs\.f32\s+"
                  r"\{%f\d+, %f\d+\}, (%f\d+), \[%r\d+\];", text)
    assert m, text
    stores = re.findall(r"st\.global\.f32\s+\[%rd\d+\], (%f\d+);", text)
    assert stores == [m.group(1)], text
    assert "-1.0" not in text and "0fBF800000" not in text  # the initial value is dead


def test_commit_mask_is_16_bit(tmp_path: Path) -> None:
    text = _ptx(tmp_path, """#include <ptxgen/ptx/tcgen05_tmem.hpp>
using namespace ptxgen::ptx;
__global__ void k(unsigned bar, unsigned short mask) {
  tcgen05_commit_multicast<1, tcgen05_commit_ss::shared_cluster>(bar, mask);
}
""", "sm_100a")
    assert re.search(r"tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster"
                     r"\.multicast::cluster\.b64 \[%r\d+\], %rs\d+;", text), text


def test_shift_lane_rule() -> None:
    opcode = "tcgen05.shift.cta_group::1.down"
    assert ptx.descriptor_problems(opcode, taddr=0x0040_0010) == []
    problems = ptx.descriptor_problems(opcode, taddr=0x0010_0000)
    assert len(problems) == 1 and "[shift-lane-aligned]" in problems[0]


# -- tcgen05.mma's Tensor Memory operands are tmem_addr words too ----------------------------

MMA_TMEM = ("d_tmem", "a_tmem", "lut_tmem", "sp_meta_tmem", "scale_a_tmem", "scale_b_tmem")


def test_every_tensor_memory_address_is_linked() -> None:
    """Every operand (or alternative) of a tcgen05 instruction that the spec describes as a
    Tensor Memory address is linked to the tmem_addr descriptor, tcgen05.mma's included."""
    from ptxgen.pipeline import load_model

    iset = load_model(ROOT / "spec").instructions  # with the descriptions (ptx.py has none)
    assert iset is not None
    seen = {}
    for ins in iset.instructions:
        if not ins.name.startswith("tcgen05."):
            continue
        for op in ins.operands:
            for name, desc in [(op.name, op.description)] + [(a.name, a.description)
                                                             for a in op.choice]:
                if desc.startswith("Tensor Memory address"):
                    seen[f"{ins.id}.{name}"] = ins.descriptor_links.get(name)
    assert {f"tcgen05_mma.{n}" for n in MMA_TMEM} <= set(seen), sorted(seen)
    assert {k: v for k, v in seen.items() if v != ("tmem_addr", None)} == {}


def test_mma_tmem_operands_take_descriptor_words() -> None:
    dense = "tcgen05.mma.cta_group::1.kind::f16"
    scaled = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"
    word = 0x0040_0080  # lane 64, column 128
    assert ptx.descriptor_problems(dense, d_tmem=word, a_tmem=word) == []
    assert ptx.descriptor_problems(scaled, scale_a_tmem=word, scale_b_tmem=word) == []
    assert ptx.descriptor_problems("tcgen05.mma.sp.cta_group::1.kind::f16",
                                   sp_meta_tmem=word) == []
    with pytest.raises(ptx.PtxFormError, match="enable_input_d is not a descriptor operand"):
        ptx.descriptor_problems(dense, enable_input_d=0)
    # a_desc is a shared memory descriptor (Table 40), not a tensor memory address
    (msg,) = ptx.descriptor_problems(dense, a_desc=word)
    assert msg.startswith("a_desc: "), msg
    with pytest.raises(ptx.PtxFormError, match="no form of it takes the operand scale_a_tmem"):
        ptx.descriptor_problems(dense, scale_a_tmem=word)


def test_wrappers_and_docs_name_the_descriptor() -> None:
    # the wrappers and their documentation are in the device part of the family's headers
    hpp = (INCLUDE / "ptxgen" / "ptx" / "tcgen05_mma.device.hpp").read_text()
    for name in MMA_TMEM:
        assert f"{name}: " in hpp and re.search(
            rf"\* +{name}: [^\n]*\[tmem_addr descriptor: ptxgen/tmem_addr\.hpp\]", hpp), name
    docs = (ROOT / "generated" / "docs" / "instructions.md").read_text()
    assert "| d_tmem | address | b32, tmem_addr descriptor (tmem_addr.md) |" in docs
    assert "a_tmem: address b32, tmem_addr descriptor (tmem_addr.md)" in docs
    doc = " ".join((ptx.tcgen05_mma.__doc__ or "").split())
    assert "[tmem_addr descriptor: ptxgen.isa.tmem_addr; (register, object) checks" in doc


def test_mma_takes_a_constexpr_tmem_addr(tmp_path: Path) -> None:
    """A TmemAddr built in C++ is what the wrapper puts in the brackets of d_tmem."""
    text = _ptx(tmp_path, """#include <ptxgen/ptx/tcgen05_mma.hpp>
#include <ptxgen/tmem_addr.hpp>
using namespace ptxgen::ptx;
__global__ void k(unsigned long long a, unsigned long long b, unsigned idesc, unsigned base) {
  constexpr std::uint32_t acc = ptxgen::TmemAddr{}.with_lane(0).with_column(64).encode();
  static_assert(acc == 64u, "column 64");
  tcgen05_mma<1, tcgen05_mma_kind::f16>(base + acc, a, b, idesc, true);
}
""", "sm_100a")
    add = re.search(r"add\.s32\s+(%r\d+), %r\d+, 64;", text)
    assert add, text
    assert re.search(r"tcgen05\.mma\.cta_group::1\.kind::f16\s+\[" + re.escape(add.group(1))
                     + r"\], %rd\d+, %rd\d+, %r\d+, p;", text), text


# -- immediates whose range the ptxas of 13.0 and 13.5 check differently --------------------

IMMEDIATES = [
    # (builder, its other arguments, the immediate operand)
    ("tcgen05_alloc", {"cta_group": 1, "ss": "shared::cta", "dst": "r0"}, "ncols"),
    ("tcgen05_dealloc", {"cta_group": 1, "taddr": "r0"}, "ncols"),
    ("tcgen05_commit", {"cta_group": 1, "ss": "shared::cluster", "mbar": "r0",
                        "multicast_mode": "multicast::cluster"}, "cta_mask"),
]
CANDIDATES = (-1, 0, 16, 32, 64, 96, 128, 256, 512, 544, 1024, 65535, 65536)


def _immediate_text(builder: str, others: dict[str, object], operand: str
                    ) -> tuple[str, Any, dict[str, str]]:
    """The builder's text with the immediate 32 (a placeholder), the operand's model and
    the form's qualifiers."""
    from ptxgen.model.instructions import lookup

    text = getattr(ptx, builder)(**others, **{operand: 32})
    assert text.endswith(" 32;"), text
    found = lookup(ptx.instruction_set(), text.split()[0])
    assert found.valid and found.instruction is not None, found.problems
    op = next(o for o in found.instruction.operands if o.name == operand)
    return text, op, found.forms[0].params


@pytest.mark.parametrize("release", ["13.0", "13.5"])
@pytest.mark.parametrize(("builder", "others", "operand"), IMMEDIATES)
def test_immediate_ranges_are_what_each_ptxas_takes(tmp_path: Path, release: str, builder: str,
                                                    others: dict[str, object],
                                                    operand: str) -> None:
    """The spec's immediate set of the operand (the ISA's, or the toolkit's immediate
    deviation) is exactly what that toolkit's ptxas accepts, value for value."""
    ptxas = toolkits.require("ptxas", release)
    text, op, params = _immediate_text(builder, others, operand)
    allowed = op.immediates_for(params, release)
    got, want = {}, {}
    for v in CANDIDATES:
        src = tmp_path / f"k{v}.ptx".replace("-", "m")
        src.write_text(".version 8.6\n.target sm_100a\n.address_size 64\n"
                       ".visible .entry k() {\n  .reg .b32 r<2>;\n"
                       f"  {text[:-len(' 32;')]} {v};\n  ret;\n}}\n")
        proc = subprocess.run([ptxas, "-arch=sm_100a", str(src), "-o", os.devnull],
                              capture_output=True, text=True, check=False)
        got[v] = proc.returncode == 0
        want[v] = v in allowed
    assert got == want, f"{release} {text}: {got} != spec {want}"
    if release == "13.5":
        # the ISA's set is 13.5's: no deviation of it
        assert allowed == op.immediates_for(params, None)


def test_builders_check_the_immediates() -> None:
    with pytest.raises(ptx.PtxFormError, match="96 is not allowed; allowed: 32, 64, 128, 256"):
        ptx.tcgen05_dealloc(cta_group=1, taddr="%r0", ncols=96)
    assert ptx.tcgen05_alloc(exclusive=True, cta_group=1, dst="%rd0", ncols=96).endswith(
        "[%rd0], 96;")
    with pytest.raises(ptx.PtxFormError, match="65536 is not allowed; allowed: 0-65535"):
        ptx.tcgen05_commit(cta_group=1, multicast_mode="multicast::cluster", mbar="%rd0",
                           cta_mask=65536)
