// rcp / ex2 / lg2 / tanh .approx.f32 on the GPU through the generated wrappers of
// ptxgen/ptx/math.hpp only (tests/gpu/test_approx.py): out[i] = op(a[i]) for n inputs.
// The host holds every result against a float64 reference and the PTX ISA's stated error.
#include <ptxgen/ptx/math.hpp>

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

}  // namespace

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
