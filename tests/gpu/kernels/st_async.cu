// st.async and red.async across a cluster of 2 CTAs (issue 29; tests/gpu/test_st_async.py),
// through the generated wrappers of ptxgen/ptx/{st_red_async,getctarank,mbarrier,sync,fence}.hpp
// only: this file holds no asm statement (tests/test_gpu_kernels_build.py checks it).
//
// Each CTA of a cluster initialises two mbarrier objects of its own (one for the stores, one
// for the reductions), zeroes the buffers the other CTA stores into, seeds the reduction
// slots, and announces the bytes it expects (mbarrier.arrive.expect_tx). After a cluster
// barrier every thread of CTA r stores into CTA r^1's shared memory with st.async (.u32,
// .b64, .v4.f32 and .v2.f64 through .shared::cluster addresses from mapa, .u32 through
// generic addresses) and reduces into its slots with red.async (add / min / max / inc / dec /
// and / or / xor of 32 bits, add of 64 bits), each completing on CTA r^1's mbarrier
// (complete_tx of the bytes). Each CTA waits for its own two barriers, then writes what it
// received, whether each barrier completed, and getctarank of a remote address to out.
#include <ptxgen/ptx/fence.hpp>
#include <ptxgen/ptx/getctarank.hpp>
#include <ptxgen/ptx/mbarrier.hpp>
#include <ptxgen/ptx/st_red_async.hpp>
#include <ptxgen/ptx/sync.hpp>

#include "common.cuh"

namespace px = ptxgen::ptx;

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr int kThreads = 64;
constexpr int kCols = 20;       // input words per thread: 0-6 the stores, 8-19 the reductions
constexpr int kRed32 = 11;      // 32-bit reduction slots (kRedOps order), then one .add.u64
constexpr int kOut = 592;       // output words per CTA (test_st_async.py's OUT layout)
// bytes each CTA receives: per thread .u32 + .b64 + .v4.f32 + .v2.f64 + generic .u32
constexpr u32 kStoreBytes = kThreads * (4 + 8 + 16 + 16 + 4);
constexpr u32 kRedBytes = kThreads * (kRed32 * 4 + 8);

struct Smem {
  alignas(16) float quads[kThreads * 4];
  alignas(16) double pairs[kThreads * 2];
  alignas(8) u64 longs[kThreads];
  u32 words[kThreads];
  u32 generic[kThreads];
  u32 red32[kRed32];
  alignas(8) u64 red64;
  u64 bar_st;
  u64 bar_red;
};

__device__ __forceinline__ u32 smem(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

// the .shared::cluster address of p's counterpart in CTA `rank`
__device__ __forceinline__ u32 remote(const void* p, u32 rank) {
  return px::mapa<px::mapa_address_type::u32, px::mapa_address_space::shared_cluster>(smem(p),
                                                                                       rank);
}

// the generic address of p's counterpart in CTA `rank`
template <class T>
__device__ __forceinline__ T* remote_generic(T* p, u32 rank) {
  return reinterpret_cast<T*>(px::mapa<px::mapa_address_type::u64, px::mapa_address_space::none>(
      reinterpret_cast<u64>(p), rank));
}

// 1 once the barrier's phase 0 completed, 0 if it did not within 2^22 tries
__device__ int wait_phase0(u64* bar) {
  for (int i = 0; i < (1 << 22); ++i)
    if (px::mbarrier_try_wait_parity<px::mbarrier_try_wait_sem::acquire,
                                     px::mbarrier_try_wait_scope::cluster,
                                     px::mbarrier_try_wait_space::shared_cta>(bar, 0u))
      return 1;
  return 0;
}

template <px::red_async_op Op, px::red_async_type Type, class B>
__device__ __forceinline__ void red(void* slot, B b, u32 peer, u64* bar) {
  px::red_async<Op, Type, px::red_async_space::shared_cluster>(remote(slot, peer), b,
                                                                remote(bar, peer));
}

__global__ void __cluster_dims__(2, 1, 1)
    st_red_async_kernel(const u64* vals, const u64* init, u32 bound, u64* out) {
  __shared__ Smem s;
  const u32 t = threadIdx.x;
  const u32 rank = blockIdx.x % 2;
  const u32 peer = rank ^ 1u;
  const u64* in = vals + (static_cast<u64>(blockIdx.x) * kThreads + t) * kCols;
  for (int i = 0; i < 4; ++i) s.quads[4 * t + i] = 0.0f;
  s.pairs[2 * t] = s.pairs[2 * t + 1] = 0.0;
  s.longs[t] = 0;
  s.words[t] = 0;
  s.generic[t] = 0;
  if (t == 0) {
    for (int k = 0; k < kRed32; ++k) s.red32[k] = static_cast<u32>(init[blockIdx.x * 12 + k]);
    s.red64 = init[blockIdx.x * 12 + kRed32];
    px::mbarrier_init<px::mbarrier_init_layout::none, px::mbarrier_init_space::shared_cta>(
        &s.bar_st, 1);
    px::mbarrier_init<px::mbarrier_init_layout::none, px::mbarrier_init_space::shared_cta>(
        &s.bar_red, 1);
    px::fence_mbarrier_init();
    px::mbarrier_arrive_expect_tx<px::mbarrier_arrive_sem::none, px::mbarrier_arrive_scope::none,
                                  px::mbarrier_arrive_space::shared_cta>(&s.bar_st, kStoreBytes);
    px::mbarrier_arrive_expect_tx<px::mbarrier_arrive_sem::none, px::mbarrier_arrive_scope::none,
                                  px::mbarrier_arrive_space::shared_cta>(&s.bar_red, kRedBytes);
  }
  // both CTAs' buffers, slots and barriers are ready before either CTA stores into the other
  px::barrier_cluster_arrive<px::barrier_cluster_sem::release, true>();
  px::barrier_cluster_wait<px::barrier_cluster_sem::acquire, true>();

  const u32 bar_st = remote(&s.bar_st, peer);
  px::st_async<px::st_async_type::u32, px::st_async_sem::none,
               px::st_async_space::shared_cluster>(remote(&s.words[t], peer),
                                                    static_cast<u32>(in[0]), bar_st);
  px::st_async<px::st_async_type::b64, px::st_async_sem::none,
               px::st_async_space::shared_cluster>(remote(&s.longs[t], peer), in[1], bar_st);
  const float q[4] = {static_cast<float>(in[2] & 0xffffffu),
                      static_cast<float>((in[2] >> 32) & 0xffffffu),
                      static_cast<float>(in[3] & 0xffffffu),
                      static_cast<float>((in[3] >> 32) & 0xffffffu)};
  px::st_async_v<px::st_async_type::f32, px::st_async_sem::weak,
                 px::st_async_space::shared_cluster, px::st_async_vec::v4>(
      remote(&s.quads[4 * t], peer), q, bar_st);
  const double d[2] = {static_cast<double>(in[4] >> 11), static_cast<double>(in[5] >> 11)};
  px::st_async_v<px::st_async_type::f64, px::st_async_sem::none,
                 px::st_async_space::shared_cluster, px::st_async_vec::v2>(
      remote(&s.pairs[2 * t], peer), d, bar_st);
  px::st_async<px::st_async_type::u32>(remote_generic(&s.generic[t], peer),
                                       static_cast<u32>(in[6]), remote_generic(&s.bar_st, peer));

  using op = px::red_async_op;
  using ty = px::red_async_type;
  u64* rb = &s.bar_red;
  red<op::add, ty::u32>(&s.red32[0], static_cast<u32>(in[8]), peer, rb);
  red<op::add, ty::s32>(&s.red32[1], static_cast<std::int32_t>(in[9]), peer, rb);
  red<op::min, ty::u32>(&s.red32[2], static_cast<u32>(in[10]), peer, rb);
  red<op::max, ty::u32>(&s.red32[3], static_cast<u32>(in[11]), peer, rb);
  red<op::min, ty::s32>(&s.red32[4], static_cast<std::int32_t>(in[12]), peer, rb);
  red<op::max, ty::s32>(&s.red32[5], static_cast<std::int32_t>(in[13]), peer, rb);
  red<op::inc, ty::u32>(&s.red32[6], bound, peer, rb);
  red<op::dec, ty::u32>(&s.red32[7], bound, peer, rb);
  red<op::op_and, ty::b32>(&s.red32[8], static_cast<u32>(in[16]), peer, rb);
  red<op::op_or, ty::b32>(&s.red32[9], static_cast<u32>(in[17]), peer, rb);
  red<op::op_xor, ty::b32>(&s.red32[10], static_cast<u32>(in[18]), peer, rb);
  red<op::add, ty::u64>(&s.red64, in[19], peer, rb);

  const int st_done = wait_phase0(&s.bar_st);
  const int red_done = wait_phase0(&s.bar_red);
  __syncthreads();
  u64* o = out + static_cast<u64>(blockIdx.x) * kOut;
  o[t] = s.words[t];
  o[64 + t] = s.longs[t];
  for (int i = 0; i < 4; ++i) o[128 + 4 * t + i] = __float_as_uint(s.quads[4 * t + i]);
  for (int i = 0; i < 2; ++i)
    o[384 + 2 * t + i] = static_cast<u64>(__double_as_longlong(s.pairs[2 * t + i]));
  o[512 + t] = s.generic[t];
  if (t == 0) {
    for (int k = 0; k < kRed32; ++k) o[576 + k] = s.red32[k];
    o[576 + kRed32] = s.red64;
    o[588] = static_cast<u64>(st_done);
    o[589] = static_cast<u64>(red_done);
    o[590] = px::getctarank<px::getctarank_type::u32, px::getctarank_space::shared_cluster>(
        remote(&s.words[0], peer));
    o[591] = px::getctarank<px::getctarank_type::u64>(reinterpret_cast<u64>(&s.words[0]));
  }
  // neither CTA exits while the other may still store into it
  px::barrier_cluster_arrive<px::barrier_cluster_sem::release, true>();
  px::barrier_cluster_wait<px::barrier_cluster_sem::acquire, true>();
}

}  // namespace

PTXGEN_GPU_EXPORT int st_async_layout(int what) {
  return what == 0 ? kThreads : what == 1 ? kCols : kOut;
}

// clusters: the number of 2-CTA clusters; vals: [2 * clusters][kThreads][kCols] u64,
// init: [2 * clusters][12] u64, out: [2 * clusters][kOut] u64.
PTXGEN_GPU_EXPORT int st_async_run(int clusters, const void* vals, const void* init,
                                   unsigned bound, void* out) {
  st_red_async_kernel<<<2 * clusters, kThreads>>>(static_cast<const u64*>(vals),
                                                  static_cast<const u64*>(init), bound,
                                                  static_cast<u64*>(out));
  return gpu_test::finish_launch();
}
