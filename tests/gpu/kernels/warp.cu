// Warp collectives on the GPU through the generated wrappers of ptxgen/ptx/warp.hpp only
// (tests/gpu/test_warp.py): shfl.sync (up / down / bfly / idx), vote.sync (all / any / uni /
// ballot), match.sync (any / all, b32 / b64), redux.sync (add / min / max on u32 and s32,
// and / or / xor on b32) and activemask.
//
// Warp w of the launch takes masks[w] and c[w]; its threads whose lane is in the mask run
// the operation on their a and b (the others skip it and leave out as the host set it) and
// write the 32-bit result. The host computes every result from the PTX ISA's semantics.
#include <ptxgen/ptx/warp.hpp>

#include "common.cuh"

using namespace ptxgen::ptx;

namespace {

template <int Op>
__device__ __forceinline__ std::uint32_t collective(std::uint32_t a, std::uint32_t b,
                                                    std::uint32_t c, std::uint32_t mask) {
  using O = redux_sync_op;
  using T = redux_sync_type;
  const std::uint64_t wide = (static_cast<std::uint64_t>(b) << 32) | a;
  if constexpr (Op == 0) return shfl_sync_up(a, b, c, mask);
  else if constexpr (Op == 1) return shfl_sync_down(a, b, c, mask);
  else if constexpr (Op == 2) return shfl_sync_bfly(a, b, c, mask);
  else if constexpr (Op == 3) return shfl_sync_idx(a, b, c, mask);
  else if constexpr (Op == 4) return vote_sync_all((a & 1u) != 0, mask) ? 1u : 0u;
  else if constexpr (Op == 5) return vote_sync_any((a & 1u) != 0, mask) ? 1u : 0u;
  else if constexpr (Op == 6) return vote_sync_uni((a & 1u) != 0, mask) ? 1u : 0u;
  else if constexpr (Op == 7) return vote_sync_ballot((a & 1u) != 0, mask);
  else if constexpr (Op == 8) return match_any_sync<match_sync_type::b32>(a, mask);
  else if constexpr (Op == 9) return match_any_sync<match_sync_type::b64>(wide, mask);
  else if constexpr (Op == 10) return match_all_sync<match_sync_type::b32>(a, mask);
  else if constexpr (Op == 11) return match_all_sync<match_sync_type::b64>(wide, mask);
  else if constexpr (Op == 12) return redux_sync<O::add, T::u32>(a, mask);
  else if constexpr (Op == 13) return redux_sync<O::min, T::u32>(a, mask);
  else if constexpr (Op == 14) return redux_sync<O::max, T::u32>(a, mask);
  else if constexpr (Op == 15)
    return static_cast<std::uint32_t>(redux_sync<O::add, T::s32>(static_cast<std::int32_t>(a), mask));
  else if constexpr (Op == 16)
    return static_cast<std::uint32_t>(redux_sync<O::min, T::s32>(static_cast<std::int32_t>(a), mask));
  else if constexpr (Op == 17)
    return static_cast<std::uint32_t>(redux_sync<O::max, T::s32>(static_cast<std::int32_t>(a), mask));
  else if constexpr (Op == 18) return redux_sync<O::op_and, T::b32>(a, mask);
  else if constexpr (Op == 19) return redux_sync<O::op_or, T::b32>(a, mask);
  else if constexpr (Op == 20) return redux_sync<O::op_xor, T::b32>(a, mask);
  else return activemask();
}

constexpr int kOps = 22;

template <int Op>
__global__ void warp_kernel(const std::uint32_t* masks, const std::uint32_t* a,
                            const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int warp = t / 32;
  const int lane = threadIdx.x % 32;
  const std::uint32_t mask = masks[warp];
  if (((mask >> lane) & 1u) == 0) return;
  out[t] = collective<Op>(a[t], b[t], c[warp], mask);
}

template <int Op>
int launch(int warps, const void* masks, const void* a, const void* b, const void* c, void* out) {
  using P = const std::uint32_t*;
  warp_kernel<Op><<<warps / 4, 128>>>(static_cast<P>(masks), static_cast<P>(a), static_cast<P>(b),
                                      static_cast<P>(c), static_cast<std::uint32_t*>(out));
  return gpu_test::finish_launch();
}

template <int... Op>
int dispatch(int op, int warps, const void* masks, const void* a, const void* b, const void* c,
             void* out, std::integer_sequence<int, Op...>) {
  int err = -1;
  ((op == Op ? (err = launch<Op>(warps, masks, a, b, c, out), 0) : 0), ...);
  return err;
}

}  // namespace

PTXGEN_GPU_EXPORT int warp_ops() { return kOps; }

// warps: a multiple of 4 (blocks of 128 threads); masks, c: one per warp; a, b, out: one per
// thread.
PTXGEN_GPU_EXPORT int warp_run(int op, int warps, const void* masks, const void* a,
                               const void* b, const void* c, void* out) {
  if (warps <= 0 || warps % 4 != 0) return -1;
  return dispatch(op, warps, masks, a, b, c, out, std::make_integer_sequence<int, kOps>{});
}
