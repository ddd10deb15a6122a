// Device-side use of the generated headers, compiled by tests/test_cpp_headers.py with
// nvcc for every target architecture of issue 5 (warnings are errors) and with NVRTC,
// and to PTX by tests/test_cpp_ptx.py. Includes nothing but the umbrella header, so that
// NVRTC (which has no standard headers) compiles it as it is.
#include "ptxgen/ptxgen.hpp"

using ptxgen::InstrDescF16;
using ptxgen::SmemDesc;
using ptxgen::WgmmaDesc;
using ptxgen::ZeroColumnMaskDesc;

// ---- Descriptors built from constants: each store must be a literal in the PTX, with no
// bit arithmetic. The expected words are the ones CUTLASS computes for the same fields.

// kind::f16, A = B = bf16, D = f32, M = 128, N = 256, both K-major: 0x08400490.
extern "C" __global__ void ptxgen_fold_instr_desc(ptxgen::uint32_t* out) {
  out[0] = InstrDescF16{}
               .with_dtype(InstrDescF16::Dtype::F32)
               .with_atype(InstrDescF16::Atype::BF16)
               .with_btype(InstrDescF16::Btype::BF16)
               .with_m(128)
               .with_n(256)
               .encode();
}

// start 0x400, LBO 16, SBO 1024, 128-Byte swizzle: 0x4000404000010040.
extern "C" __global__ void ptxgen_fold_smem_desc(ptxgen::uint64_t* out) {
  out[0] = SmemDesc{}
               .with_start_address(0x400)
               .with_leading_byte_offset(16)
               .with_stride_byte_offset(1024)
               .with_swizzle(SmemDesc::Swizzle::SWIZZLE_128B)
               .encode();
}

// The same matrix for wgmma (128B = 1 at bits 62-63): 0x4000004000010040.
extern "C" __global__ void ptxgen_fold_wgmma_desc(ptxgen::uint64_t* out) {
  out[0] = WgmmaDesc{}
               .with_start_address(0x400)
               .with_leading_byte_offset(16)
               .with_stride_byte_offset(1024)
               .with_swizzle(WgmmaDesc::Swizzle::SWIZZLE_128B)
               .encode();
}

// Table 45, example 4: 0x0203028301020100.
extern "C" __global__ void ptxgen_fold_zero_column_mask_desc(ptxgen::uint64_t* out) {
  out[0] = ZeroColumnMaskDesc{}
               .with_start_count_1(1)
               .with_start_count_2(2)
               .with_start_count_3(1)
               .with_first_span_0(1)
               .with_first_span_1(1)
               .with_non_zero_mask(1)
               .with_skip_span(2)
               .with_use_span(3)
               .with_column_shift(2)
               .encode();
}

// ---- Run-time use of every entry point in device code (values from kernel arguments).

extern "C" __global__ void ptxgen_runtime(const ptxgen::uint32_t* in, ptxgen::uint64_t* out) {
  InstrDescF16 idesc{};
  idesc.m = in[0];
  idesc.n = in[1];
  idesc.dtype = static_cast<InstrDescF16::Dtype>(in[2]);
  out[0] = idesc.encode();
  const auto checked = idesc.encode_checked();
  out[1] = checked.ok() ? checked.value : 0xdead0000u + static_cast<unsigned>(checked.field);
  const auto back = InstrDescF16::decode_checked(static_cast<ptxgen::uint32_t>(out[0]));
  out[2] = back.ok() ? back.value.m : static_cast<ptxgen::uint64_t>(back.error);
  out[3] = InstrDescF16::decode(static_cast<ptxgen::uint32_t>(out[0])).n;

  SmemDesc smem = SmemDesc{}.with_start_address(in[3]).with_swizzle(SmemDesc::Swizzle::SWIZZLE_64B);
  smem.base_offset = SmemDesc::base_offset_for(in[4], smem.swizzle);
  out[4] = smem.encode();
  out[5] = static_cast<ptxgen::uint64_t>(SmemDesc::base_offset_for_checked(in[4], smem.swizzle).error);
  out[6] = SmemDesc::decode_checked(out[4]).value.start_address;
  out[7] = WgmmaDesc::decode_unchecked(out[4]).encode_unchecked();

  const ZeroColumnMaskDesc zcm = ZeroColumnMaskDesc::decode_unchecked(out[4]);
  const auto masks = zcm.masks_checked(in[5], in[6]);
  out[8] = masks.ok() ? masks.value.word(0) : 0u;
  out[9] = zcm.masks(in[5], in[6]).bit(0, in[7]) ? 1u : 0u;
  out[10] = ptxgen::errc_name(masks.error)[0];
  out[11] = InstrDescF16::field_name(checked.field)[0];
}
