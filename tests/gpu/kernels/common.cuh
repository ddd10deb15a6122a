// Shared helpers of the GPU test kernels (tests/gpu). Each kernels/*.cu file is built by
// tests/gpu/build.py into a shared library with extern "C" launchers that Python calls
// through ctypes on torch tensors. Only the generated ptxgen headers provide the PTX
// instructions under test; the helpers here are plain CUDA.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cuda_runtime.h>

#define PTXGEN_GPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpu_test {

// Launch result: 0, or the cudaError_t of the launch / of the synchronisation.
inline int finish_launch() {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return static_cast<int>(e);
  e = cudaDeviceSynchronize();
  return static_cast<int>(e);
}

// The low `bits` bits set (all 64 for bits >= 64).
__host__ __device__ constexpr std::uint64_t mask_bits(int bits) {
  return bits >= 64 ? ~0ull : ((1ull << bits) - 1ull);
}

// Bit casts between register types and raw bits.
template <class R>
__device__ __forceinline__ R from_bits(std::uint64_t bits) {
  R r;
  if constexpr (sizeof(R) == 4) {
    std::uint32_t u = static_cast<std::uint32_t>(bits);
    memcpy(&r, &u, 4);
  } else {
    memcpy(&r, &bits, 8);
  }
  return r;
}

template <class R>
__device__ __forceinline__ std::uint64_t to_bits(R r) {
  if constexpr (sizeof(R) == 4) {
    std::uint32_t u;
    memcpy(&u, &r, 4);
    return u;
  } else {
    std::uint64_t u;
    memcpy(&u, &r, 8);
    return u;
  }
}

// The register types and counts of a wrapper's fragments, from its public array-operand
// trait (e.g. ptxgen::ptx::mma_sync_operands<...>: using d = float[4], ...).
template <class Ops>
struct mma_sig {
  using d_type = std::remove_extent_t<typename Ops::d>;
  using a_type = std::remove_extent_t<typename Ops::a>;
  using b_type = std::remove_extent_t<typename Ops::b>;
  using c_type = std::remove_extent_t<typename Ops::c>;
  static constexpr int nd = static_cast<int>(std::extent_v<typename Ops::d>);
  static constexpr int na = static_cast<int>(std::extent_v<typename Ops::a>);
  static constexpr int nb = static_cast<int>(std::extent_v<typename Ops::b>);
  static constexpr int nc = static_cast<int>(std::extent_v<typename Ops::c>);
};

}  // namespace gpu_test

PTXGEN_GPU_EXPORT const char* ptxgen_gpu_error_string(int e) {
  return cudaGetErrorString(static_cast<cudaError_t>(e));
}
