// prmt, lop3, bfe and bfi on the GPU through the generated wrappers of ptxgen/ptx/bits.hpp
// only (tests/gpu/test_bits.py). Element i takes a[i], b[i] (64 bits each; the 32-bit forms
// their low halves), c[i] and d[i] (32 bits) and writes its result to out[i]; lop3_run
// writes all 256 truth tables of element i to out[i * 256 + lut]. The host computes every
// result from the PTX ISA's semantics.
#include <ptxgen/ptx/bits.hpp>

#include <utility>

#include "common.cuh"

using namespace ptxgen::ptx;

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

template <int Op>
__device__ __forceinline__ u64 bit_op(u64 a, u64 b, u32 c, u32 d) {
  using M = prmt_bytes_mode;
  const u32 a32 = static_cast<u32>(a), b32 = static_cast<u32>(b);
  if constexpr (Op == 0) return prmt(a32, b32, c);
  else if constexpr (Op == 1) return prmt<M::f4e>(a32, b32, c);
  else if constexpr (Op == 2) return prmt<M::b4e>(a32, b32, c);
  else if constexpr (Op == 3) return prmt<M::rc8>(a32, b32, c);
  else if constexpr (Op == 4) return prmt<M::ecl>(a32, b32, c);
  else if constexpr (Op == 5) return prmt<M::ecr>(a32, b32, c);
  else if constexpr (Op == 6) return prmt<M::rc16>(a32, b32, c);
  else if constexpr (Op == 7) return bfe<bfe_extract_type::u32>(a32, c, d);
  else if constexpr (Op == 8) return static_cast<u32>(bfe<bfe_extract_type::s32>(static_cast<std::int32_t>(a32), c, d));
  else if constexpr (Op == 9) return bfe<bfe_extract_type::u64>(a, c, d);
  else if constexpr (Op == 10) return static_cast<u64>(bfe<bfe_extract_type::s64>(static_cast<std::int64_t>(a), c, d));
  else if constexpr (Op == 11) return bfi<bfi_insert_type::b32>(a32, b32, c, d);
  else return bfi<bfi_insert_type::b64>(a, b, c, d);
}

constexpr int kOps = 13;

template <int Op>
__global__ void bits_kernel(int n, const u64* a, const u64* b, const u32* c, const u32* d, u64* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = bit_op<Op>(a[i], b[i], c[i], d[i]);
}

template <int... Lut>
__device__ __forceinline__ void all_luts(u32 a, u32 b, u32 c, u32* out,
                                         std::integer_sequence<int, Lut...>) {
  ((out[Lut] = lop3(a, b, c, imm<static_cast<long long>(Lut)>)), ...);
}

__global__ void lop3_kernel(int n, const u64* a, const u64* b, const u32* c, u32* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    all_luts(static_cast<u32>(a[i]), static_cast<u32>(b[i]), c[i], out + static_cast<long long>(i) * 256,
             std::make_integer_sequence<int, 256>{});
}

template <int Op>
int launch(int n, const void* a, const void* b, const void* c, const void* d, void* out) {
  bits_kernel<Op><<<(n + 127) / 128, 128>>>(n, static_cast<const u64*>(a), static_cast<const u64*>(b),
                                            static_cast<const u32*>(c), static_cast<const u32*>(d),
                                            static_cast<u64*>(out));
  return gpu_test::finish_launch();
}

template <int... Op>
int dispatch(int op, int n, const void* a, const void* b, const void* c, const void* d, void* out,
             std::integer_sequence<int, Op...>) {
  int err = -1;
  ((op == Op ? (err = launch<Op>(n, a, b, c, d, out), 0) : 0), ...);
  return err;
}

}  // namespace

PTXGEN_GPU_EXPORT int bits_ops() { return kOps; }

// op 0-6: prmt (generic, f4e, b4e, rc8, ecl, ecr, rc16); 7-10: bfe u32, s32, u64, s64;
// 11, 12: bfi b32, b64.
PTXGEN_GPU_EXPORT int bits_run(int op, int n, const void* a, const void* b, const void* c,
                               const void* d, void* out) {
  return dispatch(op, n, a, b, c, d, out, std::make_integer_sequence<int, kOps>{});
}

PTXGEN_GPU_EXPORT int lop3_run(int n, const void* a, const void* b, const void* c, void* out) {
  lop3_kernel<<<(n + 127) / 128, 128>>>(n, static_cast<const u64*>(a), static_cast<const u64*>(b),
                                        static_cast<const u32*>(c), static_cast<u32*>(out));
  return gpu_test::finish_launch();
}
