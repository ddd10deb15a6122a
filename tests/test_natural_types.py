"""Issue 26: the packs in natural C++ types (ptxgen/ptx/natural.hpp, emitted by
generator/emit/cpp/wrappers/natural.py): one translation unit per nvcc (13.0 and 13.5) with a
kernel through the raw-bits wrappers and one through the natural overloads; both must give
the same PTX instructions, and the element order must be CUDA's (the float2's x is the pack's
low half, as __floats2bfloat162_rn writes it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import toolkits

INCLUDE = Path(__file__).resolve().parents[1] / "generated" / "include"
TU = r'''
#include <ptxgen/ptx/natural.hpp>
using namespace ptxgen::ptx;
using R = cvt_float_rnd;
__global__ void raw(const float* x, unsigned* o, unsigned long long* q) {
  o[0] = cvt_bf16x2_f32<R::rn, true>(x[1], x[0]);
  o[1] = cvt_f16x2_f32<R::rz>(x[3], x[2]);
  o[2] = cvt_e4m3x2_f16x2<R::rn>(o[1]);
  const std::uint32_t p[2] = {o[3], o[4]};
  q[0] = mov_pack_b64_x2(p);
  std::uint32_t u[2];
  mov_unpack_b64_x2(u, q[1]);
  o[5] = u[0] ^ u[1];
}
__global__ void natural(const float* x, unsigned* o, unsigned long long* q) {
  __nv_bfloat162 b = cvt_bf16x2_f32<R::rn, true>(make_float2(x[0], x[1]));
  __half2 h = cvt_f16x2_f32<R::rz>(make_float2(x[2], x[3]));
  o[0] = *reinterpret_cast<unsigned*>(&b);
  o[1] = *reinterpret_cast<unsigned*>(&h);
  o[2] = cvt_e4m3x2_f16x2<R::rn>(h);
  q[0] = mov_pack_b64_x2(make_uint2(o[3], o[4]));
  const uint2 u = mov_unpack_b64_x2(q[1]);
  o[5] = u.x ^ u.y;
}
__global__ void cuda(const float* x, unsigned* o) {
  __nv_bfloat162 b = __floats2bfloat162_rn(x[0], x[1]);
  o[0] = *reinterpret_cast<unsigned*>(&b);
}
'''


def _body(ptx: str, mangled: str) -> list[str]:
    text = ptx.split(f".entry {mangled}(")[1].split("\n}")[0]
    lines = [ln.strip() for ln in text.splitlines() if re.match(r"\s+(cvt|mov)\.", ln)]
    return [re.sub(r"%\w+|\w+_\w+", "R", ln) for ln in lines]


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_natural_overloads_give_the_raw_ptx(release: str, tmp_path: Path) -> None:
    nvcc = toolkits.require("nvcc", release)
    src = tmp_path / "t.cu"
    src.write_text(TU)
    out = tmp_path / "t.ptx"
    # the CUDA 13.5 wheels have no CCCL, whose <nv/target> cuda_fp16.h includes: the one
    # folder nv/ of the CUDA 13.0 toolkit (its nvcc names its include folders) stands in
    cccl = tmp_path / "cccl"
    cccl.mkdir()
    dry = subprocess.run([toolkits.require("nvcc", "13.0"), "--dryrun", "-E", "-x", "cu",
                          "/dev/null"], capture_output=True, text=True, check=False).stderr
    found = [Path(d) / "nv" for d in re.findall(r'"(?:-I)?(/[^"]+)"', dry)
             if (Path(d) / "nv" / "target").is_file()]
    assert found, dry
    (cccl / "nv").symlink_to(found[0])
    proc = subprocess.run([nvcc, "-std=c++17", f"-I{INCLUDE}", f"-I{cccl}",
                           "-arch=sm_90", "-ptx", str(src), "-o", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    ptx = out.read_text()
    raw = [ln for ln in _body(ptx, "_Z3rawPKfPjPy") if "cvt.u32" not in ln]
    assert raw == [ln for ln in _body(ptx, "_Z7naturalPKfPjPy") if "cvt.u32" not in ln]
    assert "cvt.rn.relu.bf16x2.f32" in "\n".join(raw)
    # x[1] goes to the upper half in both, as CUDA's own conversion does
    cuda = ptx.split(".entry _Z4cudaPKfPj")[1]
    loads = re.findall(r"ld\.global\.f32\s+(%f\d+), \[%rd\d+(?:\+(\d+))?\]", cuda)
    by_offset = {off or "0": reg for reg, off in loads}
    cvt = re.search(r"cvt\.rn\.bf16x2\.f32\s+%r\d+, (%f\d+), (%f\d+)", cuda)
    assert cvt is not None and (cvt.group(1), cvt.group(2)) == (by_offset["4"], by_offset["0"])


def test_ptx_hpp_does_not_include_it() -> None:
    assert "natural" not in (INCLUDE / "ptxgen" / "ptx.hpp").read_text()
    head = (INCLUDE / "ptxgen" / "ptx" / "natural.hpp").read_text()
    assert "#include <cuda_bf16.h>" in head and "#include <cuda_fp16.h>" in head
