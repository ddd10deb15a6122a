"""Issue 26: ld / st with every hint that CCCL's cuda::ptx writes (spec/instructions/ld_st.yaml),
setp's p|q and .BoolOp forms (spec/instructions/logic.yaml), and atom / red on vectors and
atom's .b128 (spec/instructions/atom_red.yaml).

* ``ptxgen support`` reads the combinations of an L1 eviction priority or a cache operator,
  ``.L2::cache_hint`` and a prefetch size, ``ld.global.nc`` (in both of the document's
  orders: ``.cg.nc`` and ``.nc.L1::evict_last``; ld has no ``spelling:``, so other orders
  that ptxas reads, such as ``.nc.cg``, are not read), ``.b128`` and the 256-bit L2 eviction
  priorities, and refuses what ptxas 13.0 and 13.5 refuse (``.v2.b128``, a scalar
  ``.L2::evict_last``, ``ld.nc`` without ``.global``).
* ptxas 13.0 and 13.5 agree with those answers on a few statements (both directions).
* setp: p|q (an optional joined output: the ``setp_<type>_pair`` wrappers return both),
  .and/.or/.xor with the predicate c, .f16/.bf16 (p only: ptxas refuses p|q there).
* One nvcc TU per toolkit (sm_100a): the wrappers write the same PTX instructions as
  hand-written asm of the same forms.
The whole matrix is generated/tests/test_ptxas_conformance.py's (covering arrays) and
``python benchmarks/dev_matrix.py ld_st.yaml`` (every form).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import toolkits
from cpp.harness import INCLUDE

from conftest import run_main

KNOWN = ["ld.global.nc.L1::evict_last.L2::cache_hint.L2::256B.b128",
         "ld.global.L1::evict_first.L2::cache_hint.L2::64B.b32",
         "ld.global.nc.L2::cache_hint.L2::128B.b16",
         "ld.global.cg.nc.u32",
         "ld.global.cs.L2::cache_hint.L2::256B.b64",
         "ld.global.L2::evict_last.v8.f32", "ld.relaxed.sys.global.b128",
         "st.global.L1::no_allocate.L2::cache_hint.b128",
         "st.global.L1::evict_unchanged.L2::cache_hint.b8",
         "st.global.L2::evict_first.v4.u64", "setp.lt.and.f32", "setp.ne.xor.b32",
         "setp.lt.ftz.f16x2", "setp.gtu.or.bf16", "atom.global.add.noftz.v2.f16",
         "atom.global.add.v4.f32", "atom.global.cas.b128", "atom.relaxed.sys.global.exch.b128",
         "red.global.max.noftz.v8.f16", "red.global.min.noftz.v4.bf16x2",
         "ld.mmio.relaxed.sys.global.b128", "st.mmio.release.sys.u64"]
REFUSED = ["ld.global.v2.b128", "ld.global.L2::evict_last.u64", "ld.nc.u32",
           "ld.relaxed.gpu.global.nc.u32", "ld.global.nc.lu.u32", "st.relaxed.gpu.local.u32",
           "setp.lo.f16", "setp.lt.ftz.bf16", "atom.shared.add.noftz.v2.f16",
           "atom.global.add.v8.f32", "atom.global.min.noftz.f16", "atom.global.add.b128",
           "ld.mmio.relaxed.gpu.global.u32", "ld.mmio.relaxed.sys.global.v2.u32"]


def test_support_reads_the_hint_combinations() -> None:
    for opcode in KNOWN:
        res = run_main("support", opcode)
        assert res.code == 0, (opcode, res.err)
    for opcode in REFUSED:
        res = run_main("support", opcode)
        assert res.code == 2, (opcode, res.out)


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_agrees(release: str, tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    decls = (".reg .b64 rd<5>;\n.reg .b32 r<9>;\n.reg .f32 f<9>;\n"
             ".reg .b128 q<2>;\n.reg .pred p<3>;\n.reg .b16 h<2>;\n")
    cases = [
        ("ld.global.nc.L1::evict_last.L2::cache_hint.L2::256B.b128 q0, [rd0], rd1;", True),
        ("ld.global.cg.nc.u32 r0, [rd0];", True),
        ("ld.global.L2::evict_last.v8.f32 {f0, f1, f2, f3, f4, f5, f6, f7}, [rd0];", True),
        ("st.global.L1::evict_first.L2::cache_hint.b128 [rd0], q0, rd1;", True),
        ("ld.global.v2.b128 {q0, q1}, [rd0];", False),
        ("ld.global.L2::evict_last.u64 rd2, [rd0];", False),
        ("ld.nc.u32 r0, [rd0];", False),
        ("ld.global.nc.lu.u32 r0, [rd0];", False),
        ("st.relaxed.gpu.local.u32 [rd0], r0;", False),
        ("setp.lt.and.f32 p0|p1, f0, f1, !p2;", True),
        ("setp.lt.f16 p0|p1, h0, h1;", False),
        ("atom.global.add.v4.f32 {f0, f1, f2, f3}, [rd0], {f4, f5, f6, f7};", True),
        ("atom.global.cas.b128 q0, [rd0], q1, q0;", True),
        ("ld.mmio.relaxed.sys.global.b128 q0, [rd0];", True),
        ("ld.mmio.relaxed.gpu.global.u32 r0, [rd0];", False),
        ("atom.shared::cta.add.noftz.v2.f16 {h0, h1}, [r0], {h0, h1};", False),
        ("atom.global.add.v8.f32 {f0, f1, f2, f3, f4, f5, f6, f7}, [rd0], "
         "{f0, f1, f2, f3, f4, f5, f6, f7};", False)]
    for body, ok in cases:
        rc, out = toolkits.assemble(ptxas, tmp_path, body, "sm_100a", "8.8", decls=decls)
        assert (rc == 0) == ok, f"{release} {body}: {out}"


TU = r"""
#include <cstdint>
#include <ptxgen/ptx.hpp>
namespace px = ptxgen::ptx;
__global__ void wrapped(const std::uint32_t* p, std::uint64_t pol, std::uint32_t* o) {
  std::uint32_t a = px::ld<px::load_type::b32, px::load_space::space_global, px::load_cop::none,
      true, px::load_cache::L1_evict_last, true, px::load_prefetch::L2_256B>(p, pol);
  std::uint32_t b = px::ld<px::load_type::u32, px::load_space::space_global, px::load_cop::cg,
      true>(p + 1);
  float v[8];
  px::ld_v<px::load_type::f32, px::load_space::space_global, px::load_cop::none, false,
      px::load_cache::none, px::load_evict_l2::L2_evict_first, false, px::load_prefetch::none,
      px::load_vec::v8>(v, reinterpret_cast<const float*>(p + 8));
  px::st<px::store_type::b32, px::store_space::space_global,
      px::store_cache::L1_no_allocate, true>(o, a + b + static_cast<std::uint32_t>(v[7]), pol);
}
__global__ void pair_wrapped(float x, float y, int z, int* o) {
  px::setp_f32_pair_result r = px::setp_f32_pair<px::setp_op_cmp::lt,
      px::setp_op_boolop::boolop_and>(x, y, z > 3);
  px::setp_f32_pair_result s = px::setp_f32_pair<px::setp_op_cmp::ge>(x, y);
  o[0] = int(r.p) + 2 * int(r.q) + 4 * int(s.p) + 8 * int(s.q);
}
__global__ void pair_written(float x, float y, int z, int* o) {
  std::uint32_t a, b, c, d;
  asm volatile("{\n\t.reg .pred p, q, c;\n\tsetp.ne.b32 c, %5, 0;\n\t"
               "setp.lt.and.f32 p|q, %4, %6, c;\n\tselp.u32 %0, 1, 0, p;\n\t"
               "selp.u32 %1, 1, 0, q;\n\tsetp.ge.f32 p|q, %4, %6;\n\t"
               "selp.u32 %2, 1, 0, p;\n\tselp.u32 %3, 1, 0, q;\n\t}"
               : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "f"(x), "r"(int(z > 3)), "f"(y));
  o[0] = int(a) + 2 * int(b) + 4 * int(c) + 8 * int(d);
}
__global__ void vec_wrapped(float* g, float* o) {
  float old[2]; const float add[2] = {o[0], o[1]};
  px::atom_v<px::atom_scalar_op::add, px::atom_scalar_type::f32, px::atom_scalar_sem::none,
      px::atom_scalar_scope::none, px::atom_scalar_space::space_global, false, false,
      px::atom_scalar_vec::v2>(old, g, add);
  o[2] = old[0] + old[1];
}
__global__ void vec_written(float* g, float* o) {
  float a, b;
  asm volatile("atom.global.add.v2.f32 {%0, %1}, [%2], {%3, %4};"
               : "=f"(a), "=f"(b) : "l"(g), "f"(o[0]), "f"(o[1]) : "memory");
  o[2] = a + b;
}
__global__ void written(const std::uint32_t* p, std::uint64_t pol, std::uint32_t* o) {
  std::uint32_t a, b; float v[8];
  asm volatile("ld.global.nc.L1::evict_last.L2::cache_hint.L2::256B.b32 %0, [%1], %2;"
               : "=r"(a) : "l"(p), "l"(pol));
  asm volatile("ld.global.cg.nc.u32 %0, [%1];" : "=r"(b) : "l"(p + 1));
  asm volatile("ld.global.L2::evict_first.v8.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3]), "=f"(v[4]), "=f"(v[5]),
                 "=f"(v[6]), "=f"(v[7]) : "l"(p + 8));
  asm volatile("st.global.L1::no_allocate.L2::cache_hint.b32 [%0], %1, %2;"
               :: "l"(o), "r"(a + b + static_cast<std::uint32_t>(v[7])), "l"(pol) : "memory");
}
"""


def _instructions(ptx: str, kernel: str) -> list[str]:
    body = ptx.split(f".entry {kernel}", 1)[1].split("\n}", 1)[0]
    ops = re.findall(r"^\s+((?:ld|st)\.global\.[\w:.]+)", body, re.M)
    return ops


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_wrappers_write_the_hand_written_ptx(release: str, tmp_path: Path) -> None:
    nvcc = toolkits.require("nvcc", release)
    src = tmp_path / "k.cu"
    src.write_text(TU)
    out = tmp_path / "k.ptx"
    proc = subprocess.run([nvcc, "-std=c++17", "-O3", "-arch=sm_100a", "-ptx", f"-I{INCLUDE}",
                           str(src), "-o", str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ptx = out.read_text()
    mine = _instructions(ptx, "_Z7wrapped")
    theirs = _instructions(ptx, "_Z7written")
    assert "ld.global.nc.L1::evict_last.L2::cache_hint.L2::256B.b32" in mine
    assert sorted(mine) == sorted(theirs)
    bodies = [ptx.split(f".entry {k}", 1)[1].split("\n}", 1)[0]
              for k in ("_Z12pair_wrapped", "_Z12pair_written")]
    pairs = [sorted(re.findall(r"(setp\.[\w.]+)\s+\w+\|\w+,", b)) for b in bodies]
    assert pairs[0] == pairs[1] == ["setp.ge.f32", "setp.lt.and.f32"]
    vecs = [re.findall(r"^\s+(atom\.[\w:.]+)", ptx.split(f".entry {k}", 1)[1].split("\n}", 1)[0],
                       re.M) for k in ("_Z11vec_wrapped", "_Z11vec_written")]
    assert vecs[0] == vecs[1] == ["atom.global.add.v2.f32"]
