"""One form per instruction family: the generated wrapper against hand-written asm.

Each case is a pair of kernels with the same parameters: one calls the
ptxgen wrapper, the other holds the instruction as hand-written inline asm
(written here from the PTX ISA syntax, the way CUTLASS writes it - not
produced by ptxgen). Both are compiled with nvcc; the PTX instruction
sequences of the two kernels must be identical (registers renamed in order of
first use, and the one dead ``mov.u32 %rN, 0;`` that nvcc writes for the "C"
asm operand of the forms headers left out), and so must their SASS.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import toolkits

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
    # Issue 15: the data-movement and synchronisation families. Shared-memory operands are
    # passed as pointers (the wrappers convert them with __cvta_generic_to_shared, as a
    # kernel's own smem_u32 helper does); the hand-written side does the same.
    Case("mbarrier.try_wait", "sm_90",
         "std::uint64_t* bar, std::uint32_t bytes, std::uint32_t parity, std::uint32_t* out",
         "__shared__ std::uint64_t b[1];\n"
         "    ptxgen::ptx::mbarrier_arrive_expect_tx<ptxgen::ptx::mbarrier_arrive_sem::none, "
         "ptxgen::ptx::mbarrier_arrive_scope::none, "
         "ptxgen::ptx::mbarrier_arrive_space::shared_cta>(b, bytes);\n"
         "    *out = ptxgen::ptx::mbarrier_try_wait_parity<"
         "ptxgen::ptx::mbarrier_try_wait_sem::acquire, ptxgen::ptx::mbarrier_try_wait_scope::cta, "
         "ptxgen::ptx::mbarrier_try_wait_space::shared_cta>(b, parity) ? 1u : 0u;",
         "__shared__ std::uint64_t b[1];\n"
         "    const std::uint32_t a = static_cast<std::uint32_t>(__cvta_generic_to_shared(b));\n"
         '    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"\n'
         '                 :: "r"(a), "r"(bytes) : "memory");\n'
         "    std::uint32_t done;\n"
         '    asm volatile("{\\n\\t.reg .pred p;\\n\\t"\n'
         '                 "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;"\n'
         '                 "\\n\\t"\n'
         '                 "selp.u32 %0, 1, 0, p;\\n\\t}"\n'
         '                 : "=r"(done) : "r"(a), "r"(parity) : "memory");\n'
         "    *out = done != 0 ? 1u : 0u;"),
    Case("cp.async.bulk.tensor", "sm_90a",
         "const void* map, int x, int y, std::uint16_t mask",
         "__shared__ alignas(128) std::uint8_t buf[1024]; __shared__ std::uint64_t b[1];\n"
         "    const int c[2] = {x, y};\n"
         "    ptxgen::ptx::cp_async_bulk_tensor_load_multicast<"
         "ptxgen::ptx::cp_async_bulk_tensor_dim::dim_2d, "
         "ptxgen::ptx::cp_async_bulk_tensor_load_mode::tile, "
         "ptxgen::ptx::cp_async_bulk_tensor_multicast::multicast_cluster>(buf, map, c, b, mask);",
         "__shared__ alignas(128) std::uint8_t buf[1024]; __shared__ std::uint64_t b[1];\n"
         '    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"\n'
         '                 ".mbarrier::complete_tx::bytes.multicast::cluster"\n'
         '                 " [%0], [%1, {%2, %3}], [%4], %5;"\n'
         '                 :: "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(buf))),\n'
         '                    "l"(map), "r"(x), "r"(y),\n'
         '                    "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(b))),\n'
         '                    "h"(mask) : "memory");'),
    Case("cp.async.bulk", "sm_90",
         "const void* src, std::uint32_t size",
         "__shared__ alignas(128) std::uint8_t buf[1024]; __shared__ std::uint64_t b[1];\n"
         "    ptxgen::ptx::cp_async_bulk<ptxgen::ptx::cp_async_bulk_dst::shared_cluster>"
         "(buf, src, size, b);",
         "__shared__ alignas(128) std::uint8_t buf[1024]; __shared__ std::uint64_t b[1];\n"
         '    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"\n'
         '                 " [%0], [%1], %2, [%3];"\n'
         '                 :: "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(buf))),\n'
         '                    "l"(src), "r"(size),\n'
         '                    "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(b)))\n'
         '                 : "memory");'),
    Case("fence", "sm_90",
         "int unused",
         "ptxgen::ptx::fence_mbarrier_init();\n"
         "    ptxgen::ptx::fence_proxy<ptxgen::ptx::fence_proxy_proxykind::async_shared_cta>();",
         'asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");\n'
         '    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");'),
    Case("setmaxnreg", "sm_90a",
         "std::uint32_t addr, std::uint32_t rank, std::uint32_t* out",
         "ptxgen::ptx::setmaxnreg<ptxgen::ptx::setmaxnreg_action_action::dec>"
         "(ptxgen::ptx::imm<40>);\n"
         "    ptxgen::ptx::barrier_cluster_arrive<ptxgen::ptx::barrier_cluster_sem::release, "
         "true>();\n"
         "    ptxgen::ptx::barrier_cluster_wait<ptxgen::ptx::barrier_cluster_sem::acquire, "
         "true>();\n"
         "    *out = ptxgen::ptx::mapa<ptxgen::ptx::mapa_address_type::u32, "
         "ptxgen::ptx::mapa_address_space::shared_cluster>(addr, rank);",
         'asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(40) : "memory");\n'
         '    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");\n'
         '    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");\n'
         "    std::uint32_t r;\n"
         '    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"\n'
         '                 : "=r"(r) : "r"(addr), "r"(rank));\n'
         "    *out = r;"),
    Case("elect.sync", "sm_90",
         "std::uint32_t mask, std::uint32_t* out",
         "const auto r = ptxgen::ptx::elect_sync_lane(mask);\n"
         "    out[0] = r.lane;\n"
         "    out[1] = r.elected ? 1u : 0u;\n"
         "    out[2] = ptxgen::ptx::elect_sync(0xffffffffu) ? 1u : 0u;",
         "std::uint32_t lane, elected, leader;\n"
         '    asm volatile("{\\n\\t.reg .pred p;\\n\\telect.sync %0|p, %2;\\n\\t"\n'
         '                 "selp.u32 %1, 1, 0, p;\\n\\t}"\n'
         '                 : "=r"(lane), "=r"(elected) : "r"(mask));\n'
         "    const bool is_leader = elected != 0;\n"
         "    out[0] = lane;\n"
         "    out[1] = is_leader ? 1u : 0u;\n"
         '    asm volatile("{\\n\\t.reg .pred p;\\n\\telect.sync _|p, %1;\\n\\t"\n'
         '                 "selp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(leader) : "r"(0xffffffffu));\n'
         "    out[2] = leader != 0 ? 1u : 0u;"),
    Case("tensormap.replace", "sm_90a",
         "void* gmap, std::uint64_t address, std::uint32_t dim, std::uint32_t rank",
         "__shared__ alignas(128) std::uint8_t tmap[128];\n"
         "    ptxgen::ptx::tensormap_replace<"
         "ptxgen::ptx::tensormap_replace_field::global_address, "
         "ptxgen::ptx::tensormap_replace_space::shared_cta>(tmap, address);\n"
         "    ptxgen::ptx::tensormap_replace_dim<ptxgen::ptx::tensormap_replace_field::box_dim, "
         "ptxgen::ptx::tensormap_replace_space::shared_cta>(tmap, ptxgen::ptx::imm<1>, dim);\n"
         "    ptxgen::ptx::tensormap_replace_code<"
         "ptxgen::ptx::tensormap_replace_field::swizzle_mode, "
         "ptxgen::ptx::tensormap_replace_space::shared_cta>(tmap, ptxgen::ptx::imm<3>);\n"
         "    ptxgen::ptx::tensormap_replace<ptxgen::ptx::tensormap_replace_field::rank, "
         "ptxgen::ptx::tensormap_replace_space::space_global>(gmap, rank);",
         "__shared__ alignas(128) std::uint8_t tmap[128];\n"
         "    const std::uint32_t t = static_cast<std::uint32_t>(__cvta_generic_to_shared(tmap));\n"
         '    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64"\n'
         '                 " [%0], %1;"\n'
         '                 :: "r"(t), "l"(address) : "memory");\n'
         '    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], %1, %2;"\n'
         '                 :: "r"(t), "n"(1), "r"(dim) : "memory");\n'
         '    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], %1;"\n'
         '                 :: "r"(t), "n"(3) : "memory");\n'
         '    asm volatile("tensormap.replace.tile.rank.global.b1024.b32 [%0], %1;"\n'
         '                 :: "l"(gmap), "r"(rank) : "memory");'),
    Case("tensormap.cp_fenceproxy", "sm_90",
         "void* gmap",
         "__shared__ alignas(128) std::uint8_t tmap[128];\n"
         "    ptxgen::ptx::tensormap_cp_fenceproxy<"
         "ptxgen::ptx::tensormap_cp_fenceproxy_scope::gpu>(gmap, tmap, ptxgen::ptx::imm<128>);",
         "__shared__ alignas(128) std::uint8_t tmap[128];\n"
         '    asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic"\n'
         '                 ".release.gpu.sync.aligned [%0], [%1], 128;"\n'
         '                 :: "l"(gmap),\n'
         '                    "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(tmap)))\n'
         '                 : "memory");'),
    Case("clusterlaunchcontrol.try_cancel", "sm_100a",
         "std::uint32_t* out",
         "__shared__ alignas(16) ptxgen::ptx::uint128_t resp[1]; "
         "__shared__ std::uint64_t b[1];\n"
         "    ptxgen::ptx::clusterlaunchcontrol_try_cancel<"
         "ptxgen::ptx::clusterlaunchcontrol_try_cancel_space::shared_cta, true>(resp, b);\n"
         "    const ptxgen::ptx::uint128_t r = resp[0];\n"
         "    std::uint32_t c[4];\n"
         "    ptxgen::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid_v4(c, r);\n"
         "    const bool done = ptxgen::ptx::clusterlaunchcontrol_query_cancel_is_canceled(r);\n"
         "    out[0] = done ? 1u : 0u;\n"
         "    out[1] = ptxgen::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid<"
         "ptxgen::ptx::clusterlaunchcontrol_query_cancel_query::get_first_ctaid_y>(r);\n"
         "    out[2] = c[0];",
         "__shared__ alignas(16) unsigned __int128 resp[1]; __shared__ std::uint64_t b[1];\n"
         '    asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta"\n'
         '                 ".mbarrier::complete_tx::bytes.multicast::cluster::all.b128"\n'
         '                 " [%0], [%1];"\n'
         '                 :: "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(resp))),\n'
         '                    "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(b)))\n'
         '                 : "memory");\n'
         "    const unsigned __int128 r = resp[0];\n"
         "    std::uint32_t c[4], p, y;\n"
         '    asm volatile("clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128"\n'
         '                 " {%0, %1, %2, %3}, %4;"\n'
         '                 : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3]) : "q"(r));\n'
         '    asm volatile("{\\n\\t.reg .pred p;\\n\\t"\n'
         '                 "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, %1;"\n'
         '                 "\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(p) : "q"(r));\n'
         "    out[0] = p != 0 ? 1u : 0u;\n"
         '    asm volatile("clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128"\n'
         '                 " %0, %1;"\n'
         '                 : "=r"(y) : "q"(r));\n'
         "    out[1] = y;\n"
         "    out[2] = c[0];"),
    Case("cvt (packs)", "sm_90",
         "float a, float b, std::uint16_t h, std::uint32_t* out",
         "out[0] = ptxgen::ptx::cvt_bf16x2_f32<ptxgen::ptx::cvt_float_rnd::rn, true>(a, b);\n"
         "    out[1] = ptxgen::ptx::cvt_e4m3x2_f32<ptxgen::ptx::cvt_float_rnd::rn>(a, b);\n"
         "    out[2] = ptxgen::ptx::cvt_f16x2_e5m2x2(h);\n"
         "    out[3] = ptxgen::ptx::cvt_tf32_f32<ptxgen::ptx::cvt_float_rnd::rna>(a);",
         "std::uint32_t r0, r2, r3;\n"
         "    std::uint16_t r1;\n"
         '    asm volatile("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(r0) : "f"(a), "f"(b));\n'
         "    out[0] = r0;\n"
         '    asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r1) : "f"(a), "f"(b));\n'
         "    out[1] = r1;\n"
         '    asm volatile("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(r2) : "h"(h));\n'
         "    out[2] = r2;\n"
         '    asm volatile("cvt.rna.tf32.f32 %0, %1;" : "=r"(r3) : "f"(a));\n'
         "    out[3] = r3;"),
    Case("redux.sync (warp collectives)", "sm_80",
         "std::uint32_t v, std::uint32_t lane, std::uint32_t* out",
         "out[0] = ptxgen::ptx::redux_sync<ptxgen::ptx::redux_sync_op::add, "
         "ptxgen::ptx::redux_sync_type::u32>(v, 0xffffffffu);\n"
         "    out[1] = ptxgen::ptx::shfl_sync_bfly(v, lane, 31u, 0xffffffffu);\n"
         "    out[2] = ptxgen::ptx::vote_sync_ballot(v > 7, 0xffffffffu);\n"
         "    out[3] = ptxgen::ptx::match_any_sync<ptxgen::ptx::match_sync_type::b32>"
         "(v, 0xffffffffu);\n"
         "    out[4] = ptxgen::ptx::activemask();",
         "std::uint32_t r0, r1, r2, r3, r4;\n"
         '    asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r0) : "r"(v), "r"(0xffffffffu));\n'
         "    out[0] = r0;\n"
         '    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, %3, %4;" : "=r"(r1)\n'
         '                 : "r"(v), "r"(lane), "r"(31u), "r"(0xffffffffu));\n'
         "    out[1] = r1;\n"
         '    asm volatile("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %1, 0;\\n\\t"\n'
         '                 "vote.sync.ballot.b32 %0, p, %2;\\n\\t}"\n'
         '                 : "=r"(r2) : "r"(static_cast<std::uint32_t>(v > 7)), "r"(0xffffffffu));\n'
         "    out[2] = r2;\n"
         '    asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(r3) : "r"(v), "r"(0xffffffffu));\n'
         "    out[3] = r3;\n"
         '    asm volatile("activemask.b32 %0;" : "=r"(r4));\n'
         "    out[4] = r4;"),
    Case("lop3 (bits)", "sm_75",
         "std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t* out",
         "out[0] = ptxgen::ptx::lop3(a, b, c, ptxgen::ptx::imm<0x96>);\n"
         "    out[1] = ptxgen::ptx::prmt(a, b, c);\n"
         "    out[2] = ptxgen::ptx::bfe<ptxgen::ptx::bfe_extract_type::u32>(a, b, c);\n"
         "    out[3] = ptxgen::ptx::bfi<ptxgen::ptx::bfi_insert_type::b32>(a, b, c, 8u);",
         "std::uint32_t r0, r1, r2, r3;\n"
         '    asm volatile("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(r0) : "r"(a), "r"(b), "r"(c), "n"(0x96));\n'
         "    out[0] = r0;\n"
         '    asm volatile("prmt.b32 %0, %1, %2, %3;" : "=r"(r1) : "r"(a), "r"(b), "r"(c));\n'
         "    out[1] = r1;\n"
         '    asm volatile("bfe.u32 %0, %1, %2, %3;" : "=r"(r2) : "r"(a), "r"(b), "r"(c));\n'
         "    out[2] = r2;\n"
         '    asm volatile("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r3) : "r"(a), "r"(b), "r"(c), "r"(8u));\n'
         "    out[3] = r3;"),
    Case("ex2 (math)", "sm_90",
         "float a, std::uint32_t h2, float* out, std::uint32_t* out2",
         "out[0] = ptxgen::ptx::ex2_approx_f32<true>(a);\n"
         "    out[1] = ptxgen::ptx::tanh_approx_f32(a);\n"
         "    out[2] = ptxgen::ptx::rcp_approx_f32(a);\n"
         "    out[3] = ptxgen::ptx::lg2_approx_f32(a);\n"
         "    out2[0] = ptxgen::ptx::tanh_approx_bf16x2(h2);",
         "float r0, r1, r2, r3;\n"
         "    std::uint32_t r4;\n"
         '    asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(r0) : "f"(a));\n'
         "    out[0] = r0;\n"
         '    asm volatile("tanh.approx.f32 %0, %1;" : "=f"(r1) : "f"(a));\n'
         "    out[1] = r1;\n"
         '    asm volatile("rcp.approx.f32 %0, %1;" : "=f"(r2) : "f"(a));\n'
         "    out[2] = r2;\n"
         '    asm volatile("lg2.approx.f32 %0, %1;" : "=f"(r3) : "f"(a));\n'
         "    out[3] = r3;\n"
         '    asm volatile("tanh.approx.bf16x2 %0, %1;" : "=r"(r4) : "r"(h2));\n'
         "    out2[0] = r4;"),
    Case("cp.async", "sm_80",
         "const void* src, std::uint32_t* out",
         "__shared__ alignas(16) std::uint32_t buf[4];\n"
         "    ptxgen::ptx::cp_async<ptxgen::ptx::cp_async_cache::cg, "
         "ptxgen::ptx::cp_async_space::shared>(buf, src, ptxgen::ptx::imm<16>);\n"
         "    ptxgen::ptx::cp_async_commit_group();\n"
         "    ptxgen::ptx::cp_async_wait_group(ptxgen::ptx::imm<0>);\n"
         "    *out = buf[0];",
         "__shared__ alignas(16) std::uint32_t buf[4];\n"
         '    asm volatile("cp.async.cg.shared.global [%0], [%1], %2;"\n'
         '                 :: "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(buf))),\n'
         '                    "l"(src), "n"(16) : "memory");\n'
         '    asm volatile("cp.async.commit_group;" ::: "memory");\n'
         '    asm volatile("cp.async.wait_group %0;" :: "n"(0) : "memory");\n'
         "    *out = buf[0];"),
    # Issue 26: the special registers, one function each (the clock is read twice: asm
    # volatile keeps both reads).
    Case("mov (special registers)", "sm_90",
         "std::uint32_t* out, std::uint64_t* out64",
         "out[0] = ptxgen::ptx::smid(); out[1] = ptxgen::ptx::laneid();\n"
         "    out[2] = ptxgen::ptx::cluster_ctarank(); out[3] = ptxgen::ptx::tid_x();\n"
         "    out[4] = ptxgen::ptx::is_explicit_cluster() ? 1u : 0u;\n"
         "    out64[0] = ptxgen::ptx::clock64(); out64[1] = ptxgen::ptx::clock64();\n"
         "    out64[2] = ptxgen::ptx::globaltimer();",
         "std::uint32_t r; std::uint64_t c;\n"
         '    asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); out[0] = r;\n'
         '    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); out[1] = r;\n'
         '    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); out[2] = r;\n'
         '    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(r)); out[3] = r;\n'
         '    asm volatile("{\\n\\t.reg .pred p;\\n\\tmov.pred p, %%is_explicit_cluster;"\n'
         '                 "\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(r)); out[4] = r ? 1u : 0u;\n'
         '    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)); out64[0] = c;\n'
         '    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)); out64[1] = c;\n'
         '    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(c)); out64[2] = c;'),
]


def source(case: Case) -> str:
    return (f'#include <cstdint>\n#include "ptxgen/ptx.hpp"\n\n'
            f'extern "C" __global__ void wrapper({case.params}) {{\n    {case.wrapper}\n}}\n\n'
            f'extern "C" __global__ void hand({case.params}) {{\n    {case.hand}\n}}\n')


_PLACEHOLDER = re.compile(r"^mov\.[bu](?:32|64) (%\w+), 0;$")
_REGISTER = re.compile(r"%[a-z]+\d+")


def normalized(kernel_ptx: str, name: str) -> list[str]:
    """The kernel's PTX instructions, registers renamed in order of first use. The
    shared asm statements of the forms headers take their opcode text as a "C"
    operand, for which nvcc writes one ``mov.u32 %rN, 0;`` that no instruction reads:
    such a dead zero move is left out (SASS: see :func:`sass`)."""
    lines = [ln.replace(f"{name}_param_", "param_").replace(f"_ZZ{len(name)}{name}E", "_ZZE")
             for ln in wrappers.instructions_in(kernel_ptx)]
    uses: dict[str, int] = {}
    for ln in lines:
        for r in _REGISTER.findall(ln):
            uses[r] = uses.get(r, 0) + 1
    lines = [ln for ln in lines
             if not ((m := _PLACEHOLDER.match(ln)) and uses[m.group(1)] == 1)]
    names: dict[str, str] = {}
    counts: dict[str, int] = {}

    def rename(m: re.Match[str]) -> str:
        reg = m.group(0)
        if reg not in names:
            prefix = reg.rstrip("0123456789")
            counts[prefix] = counts.get(prefix, 0) + 1
            names[reg] = f"{prefix}{counts[prefix]}"
        return names[reg]

    return [_REGISTER.sub(rename, ln) for ln in lines]


def sass(cubin: Path) -> dict[str, list[str]]:
    """{kernel: its SASS instructions} (nvdisasm), addresses, encodings and labels
    left out."""
    out = subprocess.run([toolkits.require_nvdisasm(), "-c", str(cubin)], capture_output=True,
                         text=True, check=True).stdout
    kernels: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        m = re.match(r"^\s*\.text\.(\w+):", line)
        if m:
            current = kernels.setdefault(m.group(1), [])
            continue
        text = re.sub(r"/\*[^*]*\*/|//.*", "", line).strip()
        if current is None or not text or text.startswith(".") or text.endswith(":"):
            continue
        current.append(re.sub(r"\.L_x_\d+", ".L", " ".join(text.split())))
    return kernels


def compare(case: Case, workdir: Path | None = None) -> tuple[list[str], list[str], str]:
    """(wrapper's instructions, hand-written asm's instructions, nvcc output)."""
    work = workdir or Path(tempfile.mkdtemp(prefix="ptxgen-same-"))
    rc, out, kernels = wrappers.compile_tu(source(case), case.arch, work, "cubin",
                                           include=wrappers.snapshot_include(work))
    if rc != 0 or "wrapper" not in kernels:
        raise RuntimeError(f"{case.family}: nvcc failed:\n{out[-3000:]}")
    return normalized(kernels["wrapper"], "wrapper"), normalized(kernels["hand"], "hand"), out


def compare_sass(case: Case, workdir: Path) -> tuple[list[str], list[str]]:
    """(wrapper's SASS, hand-written asm's SASS) of the cubin :func:`compare` built in
    ``workdir``."""
    by_kernel = sass(workdir / "tu.cubin")
    return by_kernel["wrapper"], by_kernel["hand"]
