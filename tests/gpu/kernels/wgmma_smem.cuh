// Shared-memory operand layouts of the wgmma GPU tests (wgmma.cu, wgmma_sp.cu): the
// canonical layouts of PTX ISA 9.7.15.5.1 ("Shared Memory Matrix Layout"; the same
// layouts as CUTLASS's make_gmma_desc), described by ptxgen::WgmmaDesc.
#pragma once

#include <ptxgen/wgmma_desc.hpp>

#include <cstdint>

namespace gpu_test {

using Desc = ptxgen::WgmmaDesc;

__device__ __forceinline__ int swizzle_chunks(int swz) {  // 16-byte chunks per swizzle row
  return swz == 1 ? 8 : swz == 2 ? 4 : swz == 3 ? 2 : 1;
}

// Byte offset (from a 1024-byte aligned base) of 16-byte chunk c of strided row s of an
// operand with S strided rows: K-major s = M/N row, c = K chunk; MN-major s = k, c =
// M/N chunk. Both majors use the same placement:
//   no swizzle : core matrices (8 rows of 16 bytes) 128 bytes apart along c and C * 128
//                bytes apart along s / 8 (C = chunks per row);
//   swizzle W  : rows of T = 16W bytes, row s at s * T, atoms of W chunks S * T bytes
//                apart along c, then Swizzle<log2 W, 4, 3> (address bits 4.. ^= bits 7..).
__device__ __forceinline__ std::uint32_t chunk_offset(int swz, int S, int C, int s, int c) {
  const int W = swizzle_chunks(swz);
  const int T = 16 * W;
  std::uint32_t off;
  if (swz == 0) {
    off = (s % 8) * 16 + c * 128 + (s / 8) * C * 128;
  } else {
    off = (c / W) * (S * T) + s * T + (c % W) * 16;
    off ^= ((off >> 7) & (W - 1)) << 4;
  }
  return off;
}

// The descriptor of one instruction's slice: K-major, the slice starting at 16-byte chunk
// `first` of K; MN-major, the slice starting at k row `first`.
__device__ __forceinline__ Desc make_desc(std::uint32_t base, bool mn_major, int swz, int S, int C,
                                          int first) {
  const int W = swizzle_chunks(swz);
  const int T = 16 * W;
  Desc d{};
  d.swizzle = static_cast<Desc::Swizzle>(swz);
  d.base_offset = 0;
  if (!mn_major) {
    const int c0 = first;
    if (swz == 0) {
      d.start_address = base + c0 * 128;
      d.leading_byte_offset = 128;        // next core matrix along K
      d.stride_byte_offset = C * 128;     // next 8 rows
    } else {
      d.start_address = base + (c0 / W) * (S * T) + (c0 % W) * 16;
      d.leading_byte_offset = 16;         // not used by swizzled K-major layouts
      d.stride_byte_offset = 8 * T;       // next 8 rows
    }
  } else {
    const int s0 = first;
    if (swz == 0) {
      d.start_address = base + (s0 / 8) * C * 128;
      d.leading_byte_offset = C * 128;    // next 8 rows of K
      d.stride_byte_offset = 128;         // next core matrix along M/N
    } else {
      d.start_address = base + s0 * T;
      d.leading_byte_offset = S * T;      // next swizzle atom along M/N
      d.stride_byte_offset = 8 * T;       // next 8 rows of K
    }
  }
  return d;
}

// Copy an operand of S rows of C 16-byte chunks from global memory (row-major bytes) into
// `region` in the layout of swizzle mode `swz`.
__device__ __forceinline__ void copy_operand(std::uint8_t* region, const std::uint8_t* src, int S,
                                             int C, int swz) {
  for (int i = threadIdx.x; i < S * C; i += blockDim.x) {
    const int s = i / C, c = i % C;
    const uint4 v = *reinterpret_cast<const uint4*>(src + s * C * 16 + c * 16);
    *reinterpret_cast<uint4*>(region + chunk_offset(swz, S, C, s, c)) = v;
  }
}

}  // namespace gpu_test
