// cvt packs on the GPU through the generated wrappers of ptxgen/ptx/cvt.hpp only
// (tests/gpu/test_cvt.py): f32 pairs to bf16x2 / f16x2 (.rn with and without .relu and
// .satfinite, and .rz), f32 pairs and f16x2 to e4m3x2 / e5m2x2 (.rn.satfinite, with and
// without .relu), and e4m3x2 / e5m2x2 to f16x2 (.rn, with and without .relu).
//
// Each launch converts n elements with one variant: element i takes a[i] (and b[i] where
// the form has two sources) and writes the destination register to out[i] (32 or 16
// bits). The host compares every result with its own reference (torch on the CPU).
#include <ptxgen/ptx/cvt.hpp>

#include <utility>

#include "common.cuh"

using namespace ptxgen::ptx;
using R = cvt_float_rnd;

namespace {

// The conversion of variant V (kVariants[V]) of one element: a and b as the form takes them.
template <int V, class In>
__device__ __forceinline__ auto convert(In x, In y) {
  if constexpr (V == 0) return cvt_bf16x2_f32<R::rn>(x, y);
  else if constexpr (V == 1) return cvt_bf16x2_f32<R::rn, true>(x, y);
  else if constexpr (V == 2) return cvt_bf16x2_f32<R::rn, false, true>(x, y);
  else if constexpr (V == 3) return cvt_bf16x2_f32<R::rn, true, true>(x, y);
  else if constexpr (V == 4) return cvt_bf16x2_f32<R::rz>(x, y);
  else if constexpr (V == 5) return cvt_f16x2_f32<R::rn>(x, y);
  else if constexpr (V == 6) return cvt_f16x2_f32<R::rn, true>(x, y);
  else if constexpr (V == 7) return cvt_f16x2_f32<R::rn, false, true>(x, y);
  else if constexpr (V == 8) return cvt_f16x2_f32<R::rn, true, true>(x, y);
  else if constexpr (V == 9) return cvt_e4m3x2_f32<R::rn>(x, y);
  else if constexpr (V == 10) return cvt_e4m3x2_f32<R::rn, true>(x, y);
  else if constexpr (V == 11) return cvt_e5m2x2_f32<R::rn>(x, y);
  else if constexpr (V == 12) return cvt_e5m2x2_f32<R::rn, true>(x, y);
  else if constexpr (V == 13) return cvt_e4m3x2_f16x2<R::rn>(x);
  else if constexpr (V == 14) return cvt_e4m3x2_f16x2<R::rn, true>(x);
  else if constexpr (V == 15) return cvt_e5m2x2_f16x2<R::rn>(x);
  else if constexpr (V == 16) return cvt_e5m2x2_f16x2<R::rn, true>(x);
  else if constexpr (V == 17) return cvt_f16x2_e4m3x2(x);
  else if constexpr (V == 18) return cvt_f16x2_e4m3x2<true>(x);
  else if constexpr (V == 19) return cvt_f16x2_e5m2x2(x);
  else return cvt_f16x2_e5m2x2<true>(x);
}

// The source register type of a kind (see kVariants).
template <int Kind>
using source_t = std::conditional_t<Kind <= 1, float,
                 std::conditional_t<Kind == 2, std::uint32_t, std::uint16_t>>;

template <int V, class In>
__global__ void convert_kernel(long long n, const In* a, const In* b, void* out) {
  using Out = decltype(convert<V, In>(In{}, In{}));
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    static_cast<Out*>(out)[i] = convert<V, In>(a[i], b ? b[i] : In{});
}

// {name, kind}: kind 0: f32 pair -> 32 bits; 1: f32 pair -> 16 bits; 2: f16x2 -> 16 bits;
// 3: 16 bits -> f16x2. The names are the PTX instructions.
struct Variant {
  const char* name;
  int kind;
};
constexpr Variant kVariants[] = {
    {"cvt.rn.bf16x2.f32", 0},
    {"cvt.rn.relu.bf16x2.f32", 0},
    {"cvt.rn.satfinite.bf16x2.f32", 0},
    {"cvt.rn.relu.satfinite.bf16x2.f32", 0},
    {"cvt.rz.bf16x2.f32", 0},
    {"cvt.rn.f16x2.f32", 0},
    {"cvt.rn.relu.f16x2.f32", 0},
    {"cvt.rn.satfinite.f16x2.f32", 0},
    {"cvt.rn.relu.satfinite.f16x2.f32", 0},
    {"cvt.rn.satfinite.e4m3x2.f32", 1},
    {"cvt.rn.satfinite.relu.e4m3x2.f32", 1},
    {"cvt.rn.satfinite.e5m2x2.f32", 1},
    {"cvt.rn.satfinite.relu.e5m2x2.f32", 1},
    {"cvt.rn.satfinite.e4m3x2.f16x2", 2},
    {"cvt.rn.satfinite.relu.e4m3x2.f16x2", 2},
    {"cvt.rn.satfinite.e5m2x2.f16x2", 2},
    {"cvt.rn.satfinite.relu.e5m2x2.f16x2", 2},
    {"cvt.rn.f16x2.e4m3x2", 3},
    {"cvt.rn.relu.f16x2.e4m3x2", 3},
    {"cvt.rn.f16x2.e5m2x2", 3},
    {"cvt.rn.relu.f16x2.e5m2x2", 3},
};
constexpr int kCount = sizeof(kVariants) / sizeof(kVariants[0]);

}  // namespace

PTXGEN_GPU_EXPORT int cvt_count() { return kCount; }
PTXGEN_GPU_EXPORT const char* cvt_name(int v) { return v >= 0 && v < kCount ? kVariants[v].name : nullptr; }
PTXGEN_GPU_EXPORT int cvt_kind(int v) { return v >= 0 && v < kCount ? kVariants[v].kind : -1; }

template <int V>
int launch(long long n, const void* a, const void* b, void* out) {
  using In = source_t<kVariants[V].kind>;
  convert_kernel<V, In><<<2048, 256>>>(n, static_cast<const In*>(a), static_cast<const In*>(b), out);
  return gpu_test::finish_launch();
}

template <int... V>
int dispatch(int v, long long n, const void* a, const void* b, void* out,
             std::integer_sequence<int, V...>) {
  int err = -1;
  ((v == V ? (err = launch<V>(n, a, b, out), 0) : 0), ...);
  return err;
}

// a, b: n sources each (b: null for the one-source forms); out: n results (32 bits for
// kinds 0 and 3, 16 bits for kinds 1 and 2).
PTXGEN_GPU_EXPORT int cvt_run(int v, long long n, const void* a, const void* b, void* out) {
  return dispatch(v, n, a, b, out, std::make_integer_sequence<int, kCount>{});
}
