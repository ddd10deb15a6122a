// Issue 28: wrappers given descriptor objects (tests/test_cpp_desc_objects.py compiles it).
// CASE 1 (sm_100a) and CASE 3 (sm_90a): each raw_* kernel passes words, its obj_* twin the
// descriptor objects (static_desc<obj> constants, or run-time objects): the PTX must be the same.
// CASE 2 (sm_100a) and CASE 4 (sm_90a): each bad_* kernel breaks one rule and must fail
// with the static_assert of that rule. CASE 5 (sm_100a): an object for an operand with
// descriptor rules without descriptor_rules.hpp is refused, naming it. CASE 6 (sm_100a,
// C++20): static_desc_v<obj> of a temporary and of a local constexpr object (class-type template
// arguments) gives the words' PTX; CASE 7 (C++20): such a temporary that breaks a rule fails.
#include "ptxgen/instr_desc.hpp"
#include "ptxgen/ptx.hpp"
#if CASE != 5
#include "ptxgen/ptx/descriptor_rules.hpp"  // the checks of descriptor objects
#endif
#include "ptxgen/smem_desc.hpp"
#include "ptxgen/tmem_addr.hpp"
#include "ptxgen/wgmma_desc.hpp"

using namespace ptxgen::ptx;
using ptxgen::InstrDescF16;

#if CASE == 1 || CASE == 2 || CASE == 5 || CASE == 6 || CASE == 7
static constexpr auto idesc = InstrDescF16{}.with_dtype(InstrDescF16::Dtype::F32)
    .with_m(128).with_n(64);
static constexpr auto adesc = ptxgen::SmemDesc{}.with_start_address(0x400)
    .with_leading_byte_offset(16).with_stride_byte_offset(1024);
static constexpr auto taddr = ptxgen::TmemAddr{}.with_lane(32).with_column(8);
#endif

#if CASE == 1
extern "C" __global__ void raw_mma() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr.encode(), adesc.encode(), adesc.encode(),
                                          idesc.encode(), true);
}
extern "C" __global__ void obj_mma() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(static_desc<taddr>{}, static_desc<adesc>{}, static_desc<adesc>{},
                                          static_desc<idesc>{}, true);
}
extern "C" __global__ void raw_desc() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr.encode(), adesc.encode(), adesc.encode(),
                                          idesc.encode(), true);
}
extern "C" __global__ void obj_desc() {  // static_desc_v<obj>: static_desc<obj>{} as a value
    tcgen05_mma<1, tcgen05_mma_kind::f16>(static_desc_v<taddr>, static_desc_v<adesc>, static_desc_v<adesc>, static_desc_v<idesc>,
                                          true);
}
extern "C" __global__ void raw_cp() {
    tcgen05_cp<1, tcgen05_cp_shape::shape_128x256b>(taddr.encode(), adesc.encode());
}
extern "C" __global__ void obj_cp() {
    static constexpr auto local = ptxgen::SmemDesc{}.with_start_address(0x400)
        .with_leading_byte_offset(16).with_stride_byte_offset(1024);  // function scope
    tcgen05_cp<1, tcgen05_cp_shape::shape_128x256b>(static_desc<taddr>{}, static_desc<local>{});
}
extern "C" __global__ void raw_shift() { tcgen05_shift<1>(taddr.encode()); }
extern "C" __global__ void obj_shift() { tcgen05_shift<1>(static_desc<taddr>{}); }
// a run-time object (its m from a register), and a raw word next to objects
extern "C" __global__ void raw_rt(unsigned m, std::uint64_t a) {
    InstrDescF16 d = idesc;
    d.m = m;
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr.encode(), a, adesc.encode(),
                                          d.encode_unchecked(), true);
}
extern "C" __global__ void obj_rt(unsigned m, std::uint64_t a) {
    InstrDescF16 d = idesc;
    d.m = m;
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr, a, adesc, d, true);
}
#elif CASE == 2
static constexpr auto m256 = idesc.with_m(256);  // M = 256 needs .cta_group::2
static constexpr auto lbo_abs = adesc.with_lbo_mode(1);  // sm_103a only
static constexpr auto lane16 = taddr.with_lane(16);
static constexpr auto i8 = ptxgen::InstrDescI8{}.with_m(128).with_n(64);
extern "C" __global__ void bad_m256() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr, adesc, adesc, static_desc<m256>{}, true);
}
extern "C" __global__ void bad_lbo_mode() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr, static_desc<lbo_abs>{}, adesc, idesc, true);
}
extern "C" __global__ void bad_cp_lbo_mode() {
    tcgen05_cp<1, tcgen05_cp_shape::shape_128x256b>(taddr, static_desc<lbo_abs>{});
}
extern "C" __global__ void bad_shift_lane() { tcgen05_shift<1>(static_desc<lane16>{}); }
extern "C" __global__ void bad_kind() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr, adesc, adesc, static_desc<i8>{}, true);
}
extern "C" __global__ void bad_kind_rt(unsigned n) {
    ptxgen::InstrDescI8 d = i8;  // a run-time object: its class says its kind
    d.n = n;
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr, adesc, adesc, d, true);
}
extern "C" __global__ void bad_class() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr, adesc, adesc, adesc, true);
}
#elif CASE == 5
extern "C" __global__ void no_rules_header() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr.encode(), adesc.encode(), adesc.encode(),
                                          idesc, true);
}
#elif CASE == 6
extern "C" __global__ void raw_cxx20() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr.encode(), adesc.encode(), adesc.encode(),
                                          idesc.encode(), true);
}
extern "C" __global__ void obj_cxx20() {
    constexpr auto local = ptxgen::SmemDesc{}.with_start_address(0x400)
        .with_leading_byte_offset(16).with_stride_byte_offset(1024);  // not static
    tcgen05_mma<1, tcgen05_mma_kind::f16>(
        static_desc_v<ptxgen::TmemAddr{}.with_lane(32).with_column(8)>, static_desc_v<local>,
        static_desc<local>{},
        static_desc_v<InstrDescF16{}.with_dtype(InstrDescF16::Dtype::F32).with_m(128).with_n(64)>, true);
}
#elif CASE == 7
extern "C" __global__ void bad_cxx20_m256() {
    tcgen05_mma<1, tcgen05_mma_kind::f16>(taddr.encode(), adesc.encode(), adesc.encode(),
                                          static_desc_v<idesc.with_m(256)>, true);
}
#elif CASE == 3 || CASE == 4
static constexpr auto wdesc = ptxgen::WgmmaDesc{}.with_start_address(0x400)
    .with_leading_byte_offset(16).with_stride_byte_offset(1024);
#if CASE == 3
extern "C" __global__ void raw_wgmma(float* out) {
    float d[64] = {};
    wgmma_mma_async<128, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::bf16,
                    wgmma_mma_async_btype::bf16>(d, wdesc.encode(), wdesc.encode(), true,
                                                 imm<1>, imm<1>, imm<0>, imm<0>);
    out[0] = d[0];
}
extern "C" __global__ void obj_wgmma(float* out) {
    float d[64] = {};
    wgmma_mma_async<128, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::bf16,
                    wgmma_mma_async_btype::bf16>(d, static_desc<wdesc>{}, wdesc, true,
                                                 imm<1>, imm<1>, imm<0>, imm<0>);
    out[0] = d[0];
}
#else
extern "C" __global__ void bad_wgmma_class(float* out) {
    float d[64] = {};
    static constexpr auto idesc = InstrDescF16{}.with_m(128).with_n(64);
    wgmma_mma_async<128, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::bf16,
                    wgmma_mma_async_btype::bf16>(d, wdesc, static_desc<idesc>{}, true,
                                                 imm<1>, imm<1>, imm<0>, imm<0>);
    out[0] = d[0];
}
#endif
#endif
