// rcp / ex2 / lg2 / tanh .approx.f32, and tanh / ex2 .approx on f16 / bf16 (and their x2
// forms), on the GPU through the generated wrappers of ptxgen/ptx/math.hpp only
// (tests/gpu/test_approx.py): out[i] = op(a[i]) for n inputs.
// The host holds every result against a float64 reference and the PTX ISA's stated error.
#include <ptxgen/ptx/math.hpp>

#include <utility>

#include "common.cuh"

using namespace ptxgen::ptx;

namespace {

template <int Op>
__global__ void approx_kernel(long long n, const float* a, float* out) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float x = a[i];
    if constexpr (Op == 0) out[i] = rcp_approx_f32(x);
    else if constexpr (Op == 1) out[i] = ex2_approx_f32(x);
    else if constexpr (Op == 2) out[i] = lg2_approx_f32(x);
    else out[i] = tanh_approx_f32(x);
  }
}

template <int Op>
int launch(long long n, const void* a, void* out) {
  approx_kernel<Op><<<2048, 256>>>(n, static_cast<const float*>(a), static_cast<float*>(out));
  return gpu_test::finish_launch();
}

// The 16-bit forms: a[i] holds one f16 / bf16 in its low half, or an f16x2 / bf16x2.
template <int Op>
__global__ void approx16_kernel(int n, const std::uint32_t* a, std::uint32_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t x = a[i];
  const auto h = static_cast<std::uint16_t>(x);
  if constexpr (Op == 0) out[i] = tanh_approx_f16(h);
  else if constexpr (Op == 1) out[i] = tanh_approx_bf16(h);
  else if constexpr (Op == 2) out[i] = ex2_approx_f16(h);
  else if constexpr (Op == 3) out[i] = ex2_approx_bf16(h);
  else if constexpr (Op == 4) out[i] = tanh_approx_f16x2(x);
  else if constexpr (Op == 5) out[i] = tanh_approx_bf16x2(x);
  else if constexpr (Op == 6) out[i] = ex2_approx_f16x2(x);
  else out[i] = ex2_approx_bf16x2(x);
}

template <int... Op>
int dispatch16(int op, int n, const void* a, void* out, std::integer_sequence<int, Op...>) {
  int err = -1;
  ((op == Op ? (approx16_kernel<Op><<<(n + 255) / 256, 256>>>(
                    n, static_cast<const std::uint32_t*>(a), static_cast<std::uint32_t*>(out)),
                err = gpu_test::finish_launch(), 0)
             : 0),
   ...);
  return err;
}

}  // namespace

// op: 0 tanh.approx.f16, 1 tanh.approx.bf16, 2 ex2.approx.f16, 3 ex2.approx.ftz.bf16, 4-7:
// the same on f16x2 / bf16x2.
PTXGEN_GPU_EXPORT int approx16_run(int op, int n, const void* a, void* out) {
  return dispatch16(op, n, a, out, std::make_integer_sequence<int, 8>{});
}

// op: 0 rcp.approx.f32, 1 ex2.approx.f32, 2 lg2.approx.f32, 3 tanh.approx.f32.
PTXGEN_GPU_EXPORT int approx_run(int op, long long n, const void* a, void* out) {
  switch (op) {
    case 0: return launch<0>(n, a, out);
    case 1: return launch<1>(n, a, out);
    case 2: return launch<2>(n, a, out);
    case 3: return launch<3>(n, a, out);
    default: return -1;
  }
}
