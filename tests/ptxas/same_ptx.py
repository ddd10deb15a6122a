"""One form per instruction family: the generated wrapper against hand-written asm.

Each case is a pair of kernels with the same parameters: one calls the
ptxgen wrapper, the other holds the instruction as hand-written inline asm
(written here from the PTX ISA syntax, the way CUTLASS writes it - not
produced by ptxgen). Both are compiled to PTX with nvcc; the instruction
sequences of the two kernels must be identical.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptxas import wrappers


@dataclass(frozen=True)
class Case:
    family: str
    arch: str
    params: str
    wrapper: str
    hand: str


def _regs(prefix: str, start: int, n: int) -> str:
    return "{" + ", ".join(f"%{start + i}" for i in range(n)) + "}"


def _ops(cons: str, name: str, n: int) -> str:
    return ", ".join(f'"{cons}"({name}[{i}])' for i in range(n))


_WGMMA_D = 64  # m64n128k16 with f32 accumulators: 64 registers
_WGMMA = (
    'asm volatile("wgmma.fence.sync.aligned;" ::: "memory");\n'
    '    asm volatile("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %66, 0;\\n\\t"\n'
    '                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "\n'
    f'                 "{_regs("", 0, _WGMMA_D)}, %64, %65, p, %67, %68, %69, %70;\\n\\t}}"\n'
    f'                 : {_ops("+f", "d", _WGMMA_D)}\n'
    '                 : "l"(a), "l"(b), "r"(static_cast<std::uint32_t>(scale_d)),\n'
    '                   "n"(1), "n"(1), "n"(0), "n"(0) : "memory");\n'
    '    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");\n'
    '    asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(0) : "memory");\n'
    f'    for (int i = 0; i < {_WGMMA_D}; ++i) out[i] = d[i];')

_WGMMA_SP_D = 32  # m64n64k32 with f32 accumulators: 32 registers
_WGMMA_SP = (
    'asm volatile("wgmma.fence.sync.aligned;" ::: "memory");\n'
    '    asm volatile("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %36, 0;\\n\\t"\n'
    '                 "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.bf16.bf16 "\n'
    f'                 "{_regs("", 0, _WGMMA_SP_D)}, %32, %33, %34, %35, p, %37, %38, %39, %40;'
    '\\n\\t}"\n'
    f'                 : {_ops("+f", "d", _WGMMA_SP_D)}\n'
    '                 : "l"(a), "l"(b), "r"(meta), "n"(0),\n'
    '                   "r"(static_cast<std::uint32_t>(scale_d)), "n"(1), "n"(1), "n"(0), "n"(0)\n'
    '                 : "memory");\n'
    '    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");\n'
    '    asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(0) : "memory");\n'
    f'    for (int i = 0; i < {_WGMMA_SP_D}; ++i) out[i] = d[i];')

CASES = [
    Case("tcgen05.mma", "sm_100a",
         "std::uint32_t d, std::uint64_t a, std::uint64_t b, std::uint32_t idesc, bool p",
         "ptxgen::ptx::tcgen05_mma<1, ptxgen::ptx::tcgen05_mma_kind::f16>(d, a, b, idesc, p);",
         'asm volatile("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %4, 0;\\n\\t"\n'
         '                 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\\n\\t}"\n'
         '                 :: "r"(d), "l"(a), "l"(b), "r"(idesc), '
         '"r"(static_cast<std::uint32_t>(p)) : "memory");'),
    Case("tcgen05.mma.sp (block scale)", "sm_100f",
         "std::uint32_t d, std::uint32_t a, std::uint64_t b, std::uint32_t sp, "
         "std::uint32_t idesc, std::uint32_t sa, std::uint32_t sb, bool p",
         "ptxgen::ptx::tcgen05_mma_sp_block_scale_tmem<2, "
         "ptxgen::ptx::tcgen05_mma_kind::mxf8f6f4, "
         "ptxgen::ptx::tcgen05_mma_scale_vectorsize::block32>(d, a, b, sp, idesc, sa, sb, p);",
         'asm volatile("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %7, 0;\\n\\t"\n'
         '                 "tcgen05.mma.sp.cta_group::2.kind::mxf8f6f4.block_scale.block32 "\n'
         '                 "[%0], [%1], %2, [%3], %4, [%5], [%6], p;\\n\\t}"\n'
         '                 :: "r"(d), "r"(a), "l"(b), "r"(sp), "r"(idesc), "r"(sa), "r"(sb),\n'
         '                    "r"(static_cast<std::uint32_t>(p)) : "memory");'),
    Case("mma.sync", "sm_80",
         "const std::uint32_t* in, const float* c_in, float* out",
         "std::uint32_t a[4] = {in[0], in[1], in[2], in[3]}; std::uint32_t b[2] = {in[4], in[5]};\n"
         "    float c[4] = {c_in[0], c_in[1], c_in[2], c_in[3]}; float d[4];\n"
         "    ptxgen::ptx::mma_sync<ptxgen::ptx::mma_sync_shape::m16n8k16, "
         "ptxgen::ptx::mma_sync_alayout::row, ptxgen::ptx::mma_sync_blayout::col, "
         "ptxgen::ptx::mma_sync_dtype::f32, ptxgen::ptx::mma_sync_atype::bf16, "
         "ptxgen::ptx::mma_sync_btype::bf16, ptxgen::ptx::mma_sync_ctype::f32>(d, a, b, c);\n"
         "    for (int i = 0; i < 4; ++i) out[i] = d[i];",
         "std::uint32_t a[4] = {in[0], in[1], in[2], in[3]}; std::uint32_t b[2] = {in[4], in[5]};\n"
         "    float c[4] = {c_in[0], c_in[1], c_in[2], c_in[3]}; float d[4];\n"
         '    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "\n'
         '                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"\n'
         '                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])\n'
         '                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),\n'
         '                   "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));\n'
         "    for (int i = 0; i < 4; ++i) out[i] = d[i];"),
    Case("ldmatrix", "sm_75",
         "std::uint32_t smem, std::uint32_t* out",
         "std::uint32_t r[4];\n"
         "    ptxgen::ptx::ldmatrix<ptxgen::ptx::ldmatrix_shape::m8n8, "
         "ptxgen::ptx::ldmatrix_num::x4, ptxgen::ptx::ldmatrix_type::b16, true, "
         "ptxgen::ptx::ldmatrix_ss::shared>(r, smem);\n"
         "    for (int i = 0; i < 4; ++i) out[i] = r[i];",
         "std::uint32_t r[4];\n"
         '    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "\n'
         '                 "{%0, %1, %2, %3}, [%4];"\n'
         '                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])\n'
         '                 : "r"(smem) : "memory");\n'
         "    for (int i = 0; i < 4; ++i) out[i] = r[i];"),
    Case("stmatrix", "sm_90",
         "std::uint32_t smem, const std::uint32_t* in",
         "std::uint32_t r[2] = {in[0], in[1]};\n"
         "    ptxgen::ptx::stmatrix<ptxgen::ptx::stmatrix_shape::m8n8, "
         "ptxgen::ptx::stmatrix_num::x2, ptxgen::ptx::stmatrix_type::b16, false, "
         "ptxgen::ptx::stmatrix_ss::shared>(smem, r);",
         "std::uint32_t r[2] = {in[0], in[1]};\n"
         '    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};"\n'
         '                 :: "r"(smem), "r"(r[0]), "r"(r[1]) : "memory");'),
    Case("wgmma", "sm_90a",
         "std::uint64_t a, std::uint64_t b, bool scale_d, const float* in, float* out",
         f"float d[{_WGMMA_D}]; for (int i = 0; i < {_WGMMA_D}; ++i) d[i] = in[i];\n"
         "    ptxgen::ptx::wgmma_fence();\n"
         "    ptxgen::ptx::wgmma_mma_async<128, ptxgen::ptx::wgmma_mma_async_dtype::f32, "
         "ptxgen::ptx::wgmma_mma_async_atype::bf16, ptxgen::ptx::wgmma_mma_async_btype::bf16>(\n"
         "        d, a, b, scale_d, ptxgen::ptx::imm<1>, ptxgen::ptx::imm<1>, ptxgen::ptx::imm<0>,"
         " ptxgen::ptx::imm<0>);\n"
         "    ptxgen::ptx::wgmma_commit_group();\n"
         "    ptxgen::ptx::wgmma_wait_group(ptxgen::ptx::imm<0>);\n"
         f"    for (int i = 0; i < {_WGMMA_D}; ++i) out[i] = d[i];",
         f"float d[{_WGMMA_D}]; for (int i = 0; i < {_WGMMA_D}; ++i) d[i] = in[i];\n    "
         + _WGMMA),
    Case("mma.sp::ordered_metadata", "sm_80",
         "const std::uint32_t* in, const float* c_in, std::uint32_t meta, float* out",
         "std::uint32_t a[4] = {in[0], in[1], in[2], in[3]};\n"
         "    std::uint32_t b[4] = {in[4], in[5], in[6], in[7]};\n"
         "    float c[4] = {c_in[0], c_in[1], c_in[2], c_in[3]}; float d[4];\n"
         "    ptxgen::ptx::mma_sp_ordered_metadata<"
         "ptxgen::ptx::mma_sp_ordered_metadata_shape::m16n8k32, "
         "ptxgen::ptx::mma_sp_ordered_metadata_dtype::f32, "
         "ptxgen::ptx::mma_sp_ordered_metadata_atype::f16, "
         "ptxgen::ptx::mma_sp_ordered_metadata_btype::f16, "
         "ptxgen::ptx::mma_sp_ordered_metadata_ctype::f32>(d, a, b, c, meta, "
         "ptxgen::ptx::imm<1>);\n"
         "    for (int i = 0; i < 4; ++i) out[i] = d[i];",
         "std::uint32_t a[4] = {in[0], in[1], in[2], in[3]};\n"
         "    std::uint32_t b[4] = {in[4], in[5], in[6], in[7]};\n"
         "    float c[4] = {c_in[0], c_in[1], c_in[2], c_in[3]}; float d[4];\n"
         '    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col."\n'
         '                 "f32.f16.f16.f32 "\n'
         '                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, "\n'
         '                 "{%12, %13, %14, %15}, %16, %17;"\n'
         '                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])\n'
         '                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),\n'
         '                   "r"(b[2]), "r"(b[3]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]),\n'
         '                   "r"(meta), "n"(1));\n'
         "    for (int i = 0; i < 4; ++i) out[i] = d[i];"),
    Case("wgmma.mma_async.sp", "sm_90a",
         "std::uint64_t a, std::uint64_t b, std::uint32_t meta, bool scale_d, const float* in, "
         "float* out",
         f"float d[{_WGMMA_SP_D}]; for (int i = 0; i < {_WGMMA_SP_D}; ++i) d[i] = in[i];\n"
         "    ptxgen::ptx::wgmma_fence();\n"
         "    ptxgen::ptx::wgmma_mma_async_sp<64, ptxgen::ptx::wgmma_mma_async_sp_dtype::f32, "
         "ptxgen::ptx::wgmma_mma_async_sp_atype::bf16, "
         "ptxgen::ptx::wgmma_mma_async_sp_btype::bf16>(\n"
         "        d, a, b, meta, ptxgen::ptx::imm<0>, scale_d, ptxgen::ptx::imm<1>, "
         "ptxgen::ptx::imm<1>, ptxgen::ptx::imm<0>, ptxgen::ptx::imm<0>);\n"
         "    ptxgen::ptx::wgmma_commit_group();\n"
         "    ptxgen::ptx::wgmma_wait_group(ptxgen::ptx::imm<0>);\n"
         f"    for (int i = 0; i < {_WGMMA_SP_D}; ++i) out[i] = d[i];",
         f"float d[{_WGMMA_SP_D}]; for (int i = 0; i < {_WGMMA_SP_D}; ++i) d[i] = in[i];\n    "
         + _WGMMA_SP),
]


def source(case: Case) -> str:
    return (f'#include <cstdint>\n#include "ptxgen/ptx.hpp"\n\n'
            f'extern "C" __global__ void wrapper({case.params}) {{\n    {case.wrapper}\n}}\n\n'
            f'extern "C" __global__ void hand({case.params}) {{\n    {case.hand}\n}}\n')


def normalized(kernel_ptx: str, name: str) -> list[str]:
    return [ln.replace(f"{name}_param_", "param_") for ln in wrappers.instructions_in(kernel_ptx)]


def compare(case: Case, workdir: Path | None = None) -> tuple[list[str], list[str], str]:
    """(wrapper's instructions, hand-written asm's instructions, nvcc output)."""
    work = workdir or Path(tempfile.mkdtemp(prefix="ptxgen-same-"))
    rc, out, kernels = wrappers.compile_tu(source(case), case.arch, work, "cubin",
                                           include=wrappers.snapshot_include(work))
    if rc != 0 or "wrapper" not in kernels:
        raise RuntimeError(f"{case.family}: nvcc failed:\n{out[-3000:]}")
    return normalized(kernels["wrapper"], "wrapper"), normalized(kernels["hand"], "hand"), out
