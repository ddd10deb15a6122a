// The asynchronous data-movement and synchronisation families on the GPU (issue 17, part 2;
// tests/gpu/test_async.py): TMA tile loads 1d-5d and stores, im2col loads 3d-5d, a TMA load
// multicast to a 2-CTA cluster, mbarrier phases / parities / transaction counts / pending
// counts, setmaxnreg in a warp-specialised TMA pipeline, the fences such a pipeline needs,
// and cp.async (the sm_80 path: .ca / .cg, 4 / 8 / 16 bytes, groups, zero fill, ignore-src,
// cp.async.mbarrier.arrive with and without .noinc).
//
// Every PTX instruction under test comes from the generated wrappers in
// generated/include/ptxgen/ptx: this file holds no asm statement
// (tests/test_gpu_kernels_build.py checks it). Tensor maps come from the driver's
// cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col, taken through
// cudaGetDriverEntryPointByVersion (no link against libcuda). Launchers return 0, a
// cudaError_t, 1001 / 1002 (no encode function), 2000 + the CUresult of an encode call, or
// -1 (arguments the kernels do not take).
#include <ptxgen/ptx/cp_async.hpp>
#include <ptxgen/ptx/cp_async_bulk.hpp>
#include <ptxgen/ptx/cp_async_bulk_tensor.hpp>
#include <ptxgen/ptx/fence.hpp>
#include <ptxgen/ptx/mbarrier.hpp>
#include <ptxgen/ptx/sync.hpp>
#include <ptxgen/wgmma_desc.hpp>

#include <cuda.h>  // CUtensorMap and the encode functions' types

#include "common.cuh"

namespace px = ptxgen::ptx;

namespace {

// ---- wrappers' qualifiers used throughout (each call is one generated wrapper) -----------

using arrive_sem = px::mbarrier_arrive_sem;
using arrive_scope = px::mbarrier_arrive_scope;
using arrive_space = px::mbarrier_arrive_space;
using test_sem = px::mbarrier_test_wait_sem;
using test_scope = px::mbarrier_test_wait_scope;
using test_space = px::mbarrier_test_wait_space;
using try_sem = px::mbarrier_try_wait_sem;
using try_scope = px::mbarrier_try_wait_scope;
using try_space = px::mbarrier_try_wait_space;

__device__ __forceinline__ void bar_init(std::uint64_t* bar, std::uint32_t count) {
  px::mbarrier_init<px::mbarrier_init_layout::none, px::mbarrier_init_space::shared_cta>(bar,
                                                                                        count);
}

// Waits for the phase of the given parity; traps (the launch fails with an error, rather
// than hanging the test run) after 2^24 unsuccessful tries.
template <try_sem Sem = try_sem::none, try_scope Scope = try_scope::none>
__device__ __forceinline__ void wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  for (int i = 0; !px::mbarrier_try_wait_parity<Sem, Scope, try_space::shared_cta>(bar, parity);
       ++i) {
    if (i == (1 << 24)) __trap();
  }
}

__device__ __forceinline__ void expect_arrive(std::uint64_t* bar, std::uint32_t bytes) {
  px::mbarrier_arrive_expect_tx<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(
      bar, bytes);
}

template <int R>
__host__ __device__ constexpr px::cp_async_bulk_tensor_dim tensor_dim() {
  return R == 1   ? px::cp_async_bulk_tensor_dim::dim_1d
         : R == 2 ? px::cp_async_bulk_tensor_dim::dim_2d
         : R == 3 ? px::cp_async_bulk_tensor_dim::dim_3d
         : R == 4 ? px::cp_async_bulk_tensor_dim::dim_4d
                  : px::cp_async_bulk_tensor_dim::dim_5d;
}

struct Coords {
  int v[5];
};

constexpr int kBoxBytes = 16384;  // shared memory for one TMA box (tile and im2col tests)

// ---- TMA tile loads and stores, 1d-5d --------------------------------------------------

// One thread loads the box at c into shared memory (destination .shared::cluster or
// .shared::cta), completing on an mbarrier with the box's byte count; every thread waits on
// the barrier's phase 0 and copies the box out.
template <int R, bool CtaDst>
__global__ void tma_load_kernel(const __grid_constant__ CUtensorMap map, Coords c, int* out,
                                int n) {
  __shared__ __align__(128) int box[kBoxBytes / 4];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    bar_init(&bar, 1);
    // the initialised barrier is seen by the async proxy (the TMA unit) that completes on it
    px::fence_proxy<px::fence_proxy_proxykind::async_shared_cta>();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    expect_arrive(&bar, static_cast<std::uint32_t>(n) * 4u);
    int coords[R];
#pragma unroll
    for (int i = 0; i < R; ++i) coords[i] = c.v[i];
    px::cp_async_bulk_tensor_load<tensor_dim<R>(),
                                  CtaDst ? px::cp_async_bulk_tensor_dst::shared_cta
                                         : px::cp_async_bulk_tensor_dst::shared_cluster,
                                  px::cp_async_bulk_tensor_load_mode::tile>(box, &map, coords,
                                                                            &bar);
  }
  wait_parity(&bar, 0);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = box[i];
}

// Every thread writes its part of the box into shared memory with ordinary stores (the
// generic proxy), makes them visible to the async proxy with fence.proxy.async.shared::cta,
// and after the CTA barrier one thread stores the box at c with a TMA store, commits the
// bulk group and waits for it.
template <int R, bool WaitRead>
__global__ void tma_store_kernel(const __grid_constant__ CUtensorMap map, Coords c,
                                 const int* src, int n) {
  __shared__ __align__(128) int box[kBoxBytes / 4];
  for (int i = threadIdx.x; i < n; i += blockDim.x) box[i] = src[i];
  px::fence_proxy<px::fence_proxy_proxykind::async_shared_cta>();
  __syncthreads();
  if (threadIdx.x == 0) {
    int coords[R];
#pragma unroll
    for (int i = 0; i < R; ++i) coords[i] = c.v[i];
    px::cp_async_bulk_tensor_store<tensor_dim<R>(), px::cp_async_bulk_tensor_load_mode::tile>(
        &map, coords, box);
    px::cp_async_bulk_commit_group();
    px::cp_async_bulk_wait_group<WaitRead>(px::imm<0>);
  }
}

// ---- TMA im2col loads, 3d-5d ------------------------------------------------------------

template <int R>
__global__ void tma_im2col_kernel(const __grid_constant__ CUtensorMap map, Coords c,
                                  Coords offs, int* out, int n) {
  __shared__ __align__(128) int box[kBoxBytes / 4];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    bar_init(&bar, 1);
    px::fence_proxy<px::fence_proxy_proxykind::async_shared_cta>();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    expect_arrive(&bar, static_cast<std::uint32_t>(n) * 4u);
    int coords[R];
    std::uint16_t offsets[R - 2];
#pragma unroll
    for (int i = 0; i < R; ++i) coords[i] = c.v[i];
#pragma unroll
    for (int i = 0; i < R - 2; ++i) offsets[i] = static_cast<std::uint16_t>(offs.v[i]);
    px::cp_async_bulk_tensor_load_im2col<tensor_dim<R>(),
                                         px::cp_async_bulk_tensor_dst::shared_cluster>(
        box, &map, coords, &bar, offsets);
  }
  wait_parity(&bar, 0);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = box[i];
}

// ---- TMA multicast to a cluster of 2 CTAs ------------------------------------------------

// The box is [2 * half_rows][cols]; CTA r loads rows r * half_rows.. of it (the map's box is
// one half) and multicasts them to both CTAs (cta_mask 0b11), at the same offset in each.
// Each CTA's barrier expects the whole box: it completes only when both halves, one from
// each CTA's load, have landed in it. out[r] is CTA r's box; out[2 * n + r] (n: the box's
// size) is 1 once CTA r's second barrier completed by the other CTA's remote arrival.
__global__ void __cluster_dims__(2, 1, 1)
    tma_multicast_kernel(const __grid_constant__ CUtensorMap map, int col0, int row0,
                         int half_rows, int cols, int* out) {
  __shared__ __align__(128) int box[kBoxBytes / 4];
  __shared__ std::uint64_t bar;
  __shared__ std::uint64_t peer;
  const unsigned rank = __clusterRelativeBlockRank();
  const int n = 2 * half_rows * cols;
  if (threadIdx.x == 0) {
    bar_init(&bar, 1);
    bar_init(&peer, 1);
    px::fence_mbarrier_init();  // both CTAs' barriers initialised before either CTA's load
  }
  px::barrier_cluster_arrive<px::barrier_cluster_sem::release, true>();
  px::barrier_cluster_wait<px::barrier_cluster_sem::acquire, true>();
  if (threadIdx.x == 0) {
    expect_arrive(&bar, static_cast<std::uint32_t>(n) * 4u);
    const int coords[2] = {col0, row0 + static_cast<int>(rank) * half_rows};
    px::cp_async_bulk_tensor_load_multicast<px::cp_async_bulk_tensor_dim::dim_2d,
                                            px::cp_async_bulk_tensor_load_mode::tile,
                                            px::cp_async_bulk_tensor_multicast::multicast_cluster>(
        box + rank * half_rows * cols, &map, coords, &bar, static_cast<std::uint16_t>(0b11));
  }
  wait_parity(&bar, 0);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[rank * n + i] = box[i];
  // then each CTA arrives on the other's second barrier, through its .shared::cluster address
  // from mapa, and waits on its own: both complete only if the remote arrivals land
  if (threadIdx.x == 0) {
    const std::uint32_t remote = px::mapa<px::mapa_address_type::u32,
                                          px::mapa_address_space::shared_cluster>(
        static_cast<std::uint32_t>(__cvta_generic_to_shared(&peer)), rank ^ 1u);
    px::mbarrier_arrive<arrive_sem::release, arrive_scope::cluster,
                        arrive_space::shared_cluster>(remote);
  }
  wait_parity<try_sem::acquire, try_scope::cluster>(&peer, 0);
  if (threadIdx.x == 0) out[2 * n + rank] = 1;
  // neither CTA exits while the other's multicast may still write into it
  px::barrier_cluster_arrive<px::barrier_cluster_sem::release, true>();
  px::barrier_cluster_wait<px::barrier_cluster_sem::acquire, true>();
}

// ---- cp.async.bulk (non-tensor): global -> shared -> global ----------------------------

// One thread copies n bytes (a multiple of 16) of src into shared memory by cp.async.bulk
// completing on an mbarrier, in chunks of `chunk` bytes (one barrier phase's transaction
// count covering them all); every thread waits, then one thread writes the bytes to out by
// cp.async.bulk to global (a bulk group) and waits for the group.
__global__ void bulk_copy_kernel(const unsigned char* src, unsigned char* out, int n,
                                 int chunk) {
  __shared__ __align__(128) unsigned char buf[kBoxBytes];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    bar_init(&bar, 1);
    px::fence_proxy<px::fence_proxy_proxykind::async_shared_cta>();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    expect_arrive(&bar, static_cast<std::uint32_t>(n));
    for (int off = 0; off < n; off += chunk) {
      px::cp_async_bulk<px::cp_async_bulk_dst::shared_cluster>(
          static_cast<void*>(buf + off), static_cast<const void*>(src + off),
          static_cast<std::uint32_t>(chunk), &bar);
    }
  }
  wait_parity(&bar, 0);
  if (threadIdx.x == 0) {
    px::cp_async_bulk_to_global(static_cast<void*>(out), static_cast<const void*>(buf),
                                static_cast<std::uint32_t>(n));
    px::cp_async_bulk_commit_group();
    px::cp_async_bulk_wait_group<false>(px::imm<0>);
  }
}

// ---- mbarrier semantics, one thread ------------------------------------------------------

// A fixed sequence of mbarrier operations by one thread, each observation (a wait result or
// a pending count) written to out in order; test_async.py holds the values the PTX ISA's
// semantics give.
__global__ void mbarrier_sequence_kernel(std::uint32_t* out) {
  __shared__ std::uint64_t bars[4];
  int k = 0;
  // (a) phases and parities: 3 expected arrivals, four phases
  std::uint64_t* b = &bars[0];
  bar_init(b, 3);
  for (std::uint32_t p = 0; p < 4; ++p) {
    out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                             test_space::shared_cta>(b, p & 1);
    out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                             test_space::shared_cta>(b, (p + 1) & 1);
    const std::uint64_t tok =
        px::mbarrier_arrive_token<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(
            b);
    out[k++] = px::mbarrier_test_wait<test_sem::none, test_scope::none, test_space::shared_cta>(
        b, tok);
    const std::uint64_t tok2 =
        px::mbarrier_arrive_token<arrive_sem::release, arrive_scope::cta,
                                  arrive_space::shared_cta>(b, 2u);  // completes the phase
    out[k++] = px::mbarrier_test_wait<test_sem::acquire, test_scope::cta,
                                      test_space::shared_cta>(b, tok);
    out[k++] = px::mbarrier_try_wait<try_sem::none, try_scope::none, try_space::shared_cta>(
        b, tok2);
    out[k++] = px::mbarrier_test_wait_parity<test_sem::acquire, test_scope::cta,
                                             test_space::shared_cta>(b, p & 1);
    out[k++] = px::mbarrier_try_wait_parity<try_sem::acquire, try_scope::cta,
                                            try_space::shared_cta>(b, p & 1, 1000u);
    out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                             test_space::shared_cta>(b, (p + 1) & 1);
  }
  px::mbarrier_inval<px::mbarrier_inval_space::shared_cta>(b);
  // (b) transaction counts: 1 expected arrival
  b = &bars[1];
  bar_init(b, 1);
  expect_arrive(b, 64);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 0);
  px::mbarrier_complete_tx<px::mbarrier_complete_tx_sem::none,
                           px::mbarrier_complete_tx_scope::none,
                           px::mbarrier_complete_tx_space::shared_cta>(b, 48);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 0);
  px::mbarrier_complete_tx<px::mbarrier_complete_tx_sem::none,
                           px::mbarrier_complete_tx_scope::none,
                           px::mbarrier_complete_tx_space::shared_cta>(b, 16);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 0);
  px::mbarrier_expect_tx<px::mbarrier_expect_tx_sem::none, px::mbarrier_expect_tx_scope::none,
                         px::mbarrier_expect_tx_space::shared_cta>(b, 32);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 1);
  px::mbarrier_arrive<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(b);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 1);
  px::mbarrier_complete_tx<px::mbarrier_complete_tx_sem::none,
                           px::mbarrier_complete_tx_scope::none,
                           px::mbarrier_complete_tx_space::shared_cta>(b, 32);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 1);
  // (c) pending counts of the tokens of .noComplete arrivals: 5 expected arrivals
  b = &bars[2];
  bar_init(b, 5);
  const std::uint64_t t1 = px::mbarrier_arrive_no_complete_token<
      arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(b, 1u);
  out[k++] = px::mbarrier_pending_count(t1);
  const std::uint64_t t2 = px::mbarrier_arrive_no_complete_token<
      arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(b, 2u);
  out[k++] = px::mbarrier_pending_count(t2);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 0);
  px::mbarrier_arrive<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(b, 2u);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 0);
  // (d) arrive_drop: 2 expected arrivals, then 1 from the next phase on
  b = &bars[3];
  bar_init(b, 2);
  px::mbarrier_arrive_drop<px::mbarrier_arrive_drop_sem::none,
                           px::mbarrier_arrive_drop_scope::none,
                           px::mbarrier_arrive_drop_space::shared_cta>(b);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 0);
  px::mbarrier_arrive<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(b);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 0);
  px::mbarrier_arrive<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(b);
  out[k++] = px::mbarrier_test_wait_parity<test_sem::none, test_scope::none,
                                           test_space::shared_cta>(b, 1);
  // (e) a generic address (no state space) on a re-initialised barrier
  px::mbarrier_inval<px::mbarrier_inval_space::shared_cta>(&bars[1]);
  px::mbarrier_init<px::mbarrier_init_layout::none, px::mbarrier_init_space::none>(&bars[1], 1);
  out[k++] = px::mbarrier_test_wait_parity(&bars[1], 0);
  px::mbarrier_arrive(&bars[1]);
  out[k++] = px::mbarrier_test_wait_parity(&bars[1], 0);
  out[k++] = static_cast<std::uint32_t>(k);  // number of observations, last
}

// ---- mbarrier phases with 128 threads in 4 warps -----------------------------------------

// Phase p: every thread writes in[p][t] into buffer p % 2, arrives, waits for phase p by its
// parity, then reads its neighbour's value: out[p][t] = in[p][(t + 1 + p) % 128]. Without
// the barrier's release / acquire ordering and phase tracking, a thread reads a stale value.
__global__ void mbarrier_phases_kernel(int phases, const int* in, int* out) {
  __shared__ int buf[2][128];
  __shared__ std::uint64_t bar;
  const int t = threadIdx.x;
  if (t == 0) bar_init(&bar, 128);
  __syncthreads();
  for (int p = 0; p < phases; ++p) {
    buf[p & 1][t] = in[p * 128 + t];
    px::mbarrier_arrive<arrive_sem::release, arrive_scope::cta, arrive_space::shared_cta>(&bar);
    wait_parity<try_sem::acquire, try_scope::cta>(&bar, static_cast<std::uint32_t>(p & 1));
    out[p * 128 + t] = buf[p & 1][(t + 1 + p) % 128];
  }
}

// ---- a warp-specialised TMA pipeline with setmaxnreg -------------------------------------

constexpr int kPipeStages = 2;
constexpr int kPipeTile = 32;  // 32 x 32 int32 tiles (4 KiB)
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

// 3 warpgroups: warpgroup 0 gives registers back (setmaxnreg.dec 40) and one of its threads
// loads tile t of a [tiles * 32][32] int32 tensor into stage t % 2 by TMA, after waiting for
// the stage's "empty" barrier; warpgroups 1 and 2 take registers (setmaxnreg.inc 232), wait
// on the stage's "full" barrier, arrive on "empty" once they have read it, and write
// 2 * v + t into output buffer t % 2, which one consumer thread stores to tile t of out by
// TMA. The fences and waits are those of such an epilogue: before the buffer is rewritten,
// the store that read it two tiles earlier has finished reading (cp.async.bulk.wait_group.read
// 1, then a named barrier of the 256 consumer threads); after writing it, every thread's
// fence.proxy.async.shared::cta and a named barrier, then the store. The producer's first wait
// on each empty barrier is on parity 1, which the PTX ISA says completes at once (the phase
// before the first).
__global__ void __launch_bounds__(384, 1)
    setmaxnreg_pipeline_kernel(const __grid_constant__ CUtensorMap map,
                               const __grid_constant__ CUtensorMap out_map, int tiles) {
  __shared__ __align__(128) int stage[kPipeStages][kPipeTile * kPipeTile];
  __shared__ __align__(128) int ostage[2][kPipeTile * kPipeTile];
  __shared__ std::uint64_t full[kPipeStages];
  __shared__ std::uint64_t empty[kPipeStages];
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kPipeStages; ++s) {
      bar_init(&full[s], 1);
      bar_init(&empty[s], 256);
    }
    px::fence_mbarrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    px::setmaxnreg<px::setmaxnreg_action_action::dec>(px::imm<kProducerRegs>);
    if (threadIdx.x == 0) {
      for (int t = 0; t < tiles; ++t) {
        const int s = t % kPipeStages;
        wait_parity(&empty[s], static_cast<std::uint32_t>(((t / kPipeStages) & 1) ^ 1));
        expect_arrive(&full[s], kPipeTile * kPipeTile * 4);
        const int coords[2] = {0, t * kPipeTile};
        px::cp_async_bulk_tensor_load<px::cp_async_bulk_tensor_dim::dim_2d,
                                      px::cp_async_bulk_tensor_dst::shared_cluster,
                                      px::cp_async_bulk_tensor_load_mode::tile>(
            stage[s], &map, coords, &full[s]);
      }
    }
  } else {
    px::setmaxnreg<px::setmaxnreg_action_action::inc>(px::imm<kConsumerRegs>);
    const int c = threadIdx.x - 128;  // 0..255
    constexpr std::uint32_t kConsumerBarrier = 1, kConsumers = 256;
    for (int t = 0; t < tiles; ++t) {
      const int s = t % kPipeStages;
      int v[kPipeTile * kPipeTile / 256];
      wait_parity(&full[s], static_cast<std::uint32_t>((t / kPipeStages) & 1));
#pragma unroll
      for (int j = 0; j < kPipeTile * kPipeTile / 256; ++j) v[j] = stage[s][c + 256 * j];
      px::mbarrier_arrive<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(
          &empty[s]);
      if (c == 0) px::cp_async_bulk_wait_group<true>(px::imm<1>);  // store t - 2 has read
      px::barrier_sync<false, true>(kConsumerBarrier, kConsumers);
#pragma unroll
      for (int j = 0; j < kPipeTile * kPipeTile / 256; ++j) {
        ostage[t & 1][c + 256 * j] = 2 * v[j] + t;
      }
      px::fence_proxy<px::fence_proxy_proxykind::async_shared_cta>();
      px::barrier_sync<false, true>(kConsumerBarrier, kConsumers);
      if (c == 0) {
        const int coords[2] = {0, t * kPipeTile};
        px::cp_async_bulk_tensor_store<px::cp_async_bulk_tensor_dim::dim_2d,
                                       px::cp_async_bulk_tensor_load_mode::tile>(
            &out_map, coords, ostage[t & 1]);
        px::cp_async_bulk_commit_group();
      }
    }
    if (c == 0) px::cp_async_bulk_wait_group<false>(px::imm<0>);
  }
}

// ---- cp.async (sm_80) ------------------------------------------------------------------

constexpr int kCpBytes = 4096;

template <int Size, px::cp_async_cache Cache, px::cp_async_space Space>
__device__ __forceinline__ void cp_chunk(void* dst, const void* src) {
  if constexpr (Size == 16 && Cache == px::cp_async_cache::ca) {  // with an L2 prefetch size
    px::cp_async<Cache, Space, false, px::cp_async_prefetch::L2_128B>(dst, src, px::imm<Size>);
  } else {
    px::cp_async<Cache, Space>(dst, src, px::imm<Size>);
  }
}

// n bytes (a multiple of 16, at most kCpBytes) from src into shared memory in chunks of
// Size bytes, chunk i by thread i % blockDim.x, then back to out. mode:
// 0: two groups (src[0, n) and src[n, 2n)), wait_group 1 then reading the first group's
//    chunks (each thread its own), wait_group 0 then the second's;
// 1: wait_all, CTA barrier, every thread reads every chunk;
// 2: cp.async with src-size (chunk i copies i % (Size + 1) bytes and zero-fills the rest);
// 3: ignore-src (chunk i is zero-filled when i % 3 == 0), wait_all;
// 4: cp.async.mbarrier.arrive.noinc on a barrier expecting blockDim.x arrivals;
// 5: cp.async.mbarrier.arrive (without .noinc) and each thread's own mbarrier.arrive.
template <int Size, px::cp_async_cache Cache, px::cp_async_space Space>
__global__ void cp_async_kernel(int mode, const unsigned char* src, unsigned char* out, int n) {
  __shared__ __align__(128) unsigned char buf[2][kCpBytes];
  __shared__ std::uint64_t bar;
  const int chunks = n / Size;
  const int t = threadIdx.x;
  if (mode >= 4) {
    if (t == 0) bar_init(&bar, blockDim.x);
    __syncthreads();
  }
  for (int i = t; i < chunks; i += blockDim.x) {
    if (mode == 2) {
      px::cp_async_src_size<Cache, Space>(buf[0] + i * Size, src + i * Size, px::imm<Size>,
                                          static_cast<std::uint32_t>(i % (Size + 1)));
    } else if (mode == 3) {
      px::cp_async_ignore_src<Cache, Space>(buf[0] + i * Size, src + i * Size, px::imm<Size>,
                                            i % 3 == 0);
    } else {
      cp_chunk<Size, Cache, Space>(buf[0] + i * Size, src + i * Size);
    }
  }
  if (mode == 0) {
    px::cp_async_commit_group();
    for (int i = t; i < chunks; i += blockDim.x) {
      cp_chunk<Size, Cache, Space>(buf[1] + i * Size, src + n + i * Size);
    }
    px::cp_async_commit_group();
    px::cp_async_wait_group(px::imm<1>);  // this thread's first group is complete
    for (int i = t; i < chunks; i += blockDim.x) {
      for (int j = 0; j < Size; ++j) out[i * Size + j] = buf[0][i * Size + j];
    }
    px::cp_async_wait_group(px::imm<0>);
    for (int i = t; i < chunks; i += blockDim.x) {
      for (int j = 0; j < Size; ++j) out[n + i * Size + j] = buf[1][i * Size + j];
    }
    return;
  }
  if (mode == 4) {
    px::cp_async_mbarrier_arrive<true, px::cp_async_mbarrier_arrive_space::shared_cta>(&bar);
    wait_parity(&bar, 0);
  } else if (mode == 5) {
    px::cp_async_mbarrier_arrive<false, px::cp_async_mbarrier_arrive_space::shared_cta>(&bar);
    px::mbarrier_arrive<arrive_sem::none, arrive_scope::none, arrive_space::shared_cta>(&bar);
    wait_parity(&bar, 0);
  } else {
    px::cp_async_wait_all();
    __syncthreads();
  }
  for (int i = t; i < n; i += blockDim.x) out[i] = buf[0][i];
}

// ---- host: tensor maps -------------------------------------------------------------------

using encode_tiled_t = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                    const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                    const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using encode_im2col_t = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                     const cuuint64_t*, const cuuint64_t*, const int*,
                                     const int*, cuuint32_t, cuuint32_t, const cuuint32_t*,
                                     CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

void* driver_fn(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess) {
    return p;
  }
  return nullptr;
}

// An int32 tensor of `rank` dimensions (innermost first), strides in bytes of dimensions
// 1.., box sizes; element strides 1, no interleave or swizzle, out-of-bound elements zero.
int make_tiled(CUtensorMap* map, int rank, void* gmem, const unsigned long long* dims,
               const unsigned long long* strides, const unsigned* box) {
  static auto fn = reinterpret_cast<encode_tiled_t>(driver_fn("cuTensorMapEncodeTiled"));
  if (fn == nullptr) return 1001;
  cuuint64_t d[5], s[4];
  cuuint32_t b[5], e[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
    e[i] = 1;
    if (i + 1 < rank) s[i] = strides[i];
  }
  const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_INT32, static_cast<cuuint32_t>(rank), gmem,
                        d, s, b, e, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 2000 + static_cast<int>(r);
}

int box_elems(int rank, const unsigned* box) {
  int n = 1;
  for (int i = 0; i < rank; ++i) n *= static_cast<int>(box[i]);
  return n;
}

template <int R>
int launch_tile(int store, int cta_dst, const CUtensorMap& map, Coords c, int* io, int n) {
  if (store != 0) {
    if (cta_dst != 0) {
      tma_store_kernel<R, true><<<1, 128>>>(map, c, io, n);
    } else {
      tma_store_kernel<R, false><<<1, 128>>>(map, c, io, n);
    }
  } else if (cta_dst != 0) {
    tma_load_kernel<R, true><<<1, 128>>>(map, c, io, n);
  } else {
    tma_load_kernel<R, false><<<1, 128>>>(map, c, io, n);
  }
  return gpu_test::finish_launch();
}

template <int Size, px::cp_async_cache Cache, px::cp_async_space Space>
int launch_cp(int mode, int threads, const void* src, void* out, int n) {
  cp_async_kernel<Size, Cache, Space><<<1, threads>>>(
      mode, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(out), n);
  return gpu_test::finish_launch();
}

}  // namespace

// store 0: load the box at coords of the int32 tensor gmem into io (box elements; cta_dst:
// the .shared::cta destination, else .shared::cluster). store 1: store io (the box) into
// gmem at coords (cta_dst: wait_group.read, else wait_group).
PTXGEN_GPU_EXPORT int async_tma_tile(int store, int cta_dst, int rank, void* gmem,
                                     const unsigned long long* dims,
                                     const unsigned long long* strides, const unsigned* box,
                                     const int* coords, void* io) {
  if (rank < 1 || rank > 5 || box_elems(rank, box) * 4 > kBoxBytes) return -1;
  alignas(64) CUtensorMap map;
  if (const int e = make_tiled(&map, rank, gmem, dims, strides, box)) return e;
  Coords c{};
  for (int i = 0; i < rank; ++i) c.v[i] = coords[i];
  int* p = static_cast<int*>(io);
  const int n = box_elems(rank, box);
  switch (rank) {
    case 1: return launch_tile<1>(store, cta_dst, map, c, p, n);
    case 2: return launch_tile<2>(store, cta_dst, map, c, p, n);
    case 3: return launch_tile<3>(store, cta_dst, map, c, p, n);
    case 4: return launch_tile<4>(store, cta_dst, map, c, p, n);
    default: return launch_tile<5>(store, cta_dst, map, c, p, n);
  }
}

// An im2col load of the int32 tensor gmem (rank 3-5: C, W, (H), (D), N innermost first) with
// the bounding box corners lower / upper (rank - 2 each), channels per pixel and pixels per
// column, at coords (rank) with im2col offsets (rank - 2), into out (pixels x channels).
PTXGEN_GPU_EXPORT int async_tma_im2col(int rank, void* gmem, const unsigned long long* dims,
                                       const unsigned long long* strides, const int* lower,
                                       const int* upper, unsigned channels, unsigned pixels,
                                       const int* coords, const int* offsets, void* out) {
  const int n = static_cast<int>(channels * pixels);
  if (rank < 3 || rank > 5 || n * 4 > kBoxBytes) return -1;
  static auto fn = reinterpret_cast<encode_im2col_t>(driver_fn("cuTensorMapEncodeIm2col"));
  if (fn == nullptr) return 1002;
  alignas(64) CUtensorMap map;
  cuuint64_t d[5], s[4];
  cuuint32_t e[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    e[i] = 1;
    if (i + 1 < rank) s[i] = strides[i];
  }
  const CUresult r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, static_cast<cuuint32_t>(rank), gmem,
                        d, s, lower, upper, channels, pixels, e, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return 2000 + static_cast<int>(r);
  Coords c{}, o{};
  for (int i = 0; i < rank; ++i) c.v[i] = coords[i];
  for (int i = 0; i < rank - 2; ++i) o.v[i] = offsets[i];
  int* p = static_cast<int*>(out);
  switch (rank) {
    case 3: tma_im2col_kernel<3><<<1, 128>>>(map, c, o, p, n); break;
    case 4: tma_im2col_kernel<4><<<1, 128>>>(map, c, o, p, n); break;
    default: tma_im2col_kernel<5><<<1, 128>>>(map, c, o, p, n); break;
  }
  return gpu_test::finish_launch();
}

// The [2 * half_rows][cols] box at (row0, col0) of the [rows][cols_total] int32 tensor gmem,
// multicast to both CTAs of a cluster of 2; out: [2][2 * half_rows][cols], CTA r's box at r.
PTXGEN_GPU_EXPORT int async_tma_multicast(void* gmem, int rows, int cols_total, int row0,
                                          int col0, int half_rows, int cols, void* out) {
  if (2 * half_rows * cols * 4 > kBoxBytes) return -1;
  const unsigned long long dims[2] = {static_cast<unsigned long long>(cols_total),
                                      static_cast<unsigned long long>(rows)};
  const unsigned long long strides[1] = {static_cast<unsigned long long>(cols_total) * 4};
  const unsigned box[2] = {static_cast<unsigned>(cols), static_cast<unsigned>(half_rows)};
  alignas(64) CUtensorMap map;
  if (const int e = make_tiled(&map, 2, gmem, dims, strides, box)) return e;
  tma_multicast_kernel<<<2, 128>>>(map, col0, row0, half_rows, cols, static_cast<int*>(out));
  return gpu_test::finish_launch();
}

// Each CTA of a cluster of 2 writes the shared::cta address of its shared buffer (what CUDA's
// __cvta_generic_to_shared gives, as kernels pass to descriptors) to out[rank], and the
// wgmma descriptor encoded on the device from it (start address only; low, high word) to
// out[2 + 2 rank], out[3 + 2 rank].
__global__ void __cluster_dims__(2, 1, 1) cluster_address_kernel(unsigned* out) {
  __shared__ __align__(128) int buf[32];
  buf[threadIdx.x % 32] = 0;
  const unsigned rank = __clusterRelativeBlockRank();
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(buf));
  if (threadIdx.x == 0) {
    ptxgen::WgmmaDesc d{};
    d.start_address = addr;
    const std::uint64_t w = d.encode();
    out[rank] = addr;
    out[2 + 2 * rank] = static_cast<unsigned>(w);
    out[3 + 2 * rank] = static_cast<unsigned>(w >> 32);
  }
}

// out: [6] unsigned (see cluster_address_kernel).
PTXGEN_GPU_EXPORT int async_cluster_address(void* out) {
  cluster_address_kernel<<<2, 32>>>(static_cast<unsigned*>(out));
  return gpu_test::finish_launch();
}

// n bytes of src to out through shared memory by cp.async.bulk, in chunks of `chunk` bytes.
PTXGEN_GPU_EXPORT int async_bulk_copy(const void* src, void* out, int n, int chunk) {
  if (n % 16 != 0 || chunk % 16 != 0 || chunk <= 0 || n % chunk != 0 || n > kBoxBytes) return -1;
  bulk_copy_kernel<<<1, 128>>>(static_cast<const unsigned char*>(src),
                               static_cast<unsigned char*>(out), n, chunk);
  return gpu_test::finish_launch();
}

PTXGEN_GPU_EXPORT int async_mbarrier_sequence(void* out) {
  mbarrier_sequence_kernel<<<1, 1>>>(static_cast<std::uint32_t*>(out));
  return gpu_test::finish_launch();
}

PTXGEN_GPU_EXPORT int async_mbarrier_phases(int phases, const void* in, void* out) {
  mbarrier_phases_kernel<<<1, 128>>>(phases, static_cast<const int*>(in), static_cast<int*>(out));
  return gpu_test::finish_launch();
}

// The [tiles * 32][32] int32 tensor gmem through the 2-stage TMA pipeline into out (same
// shape).
PTXGEN_GPU_EXPORT int async_setmaxnreg_pipeline(void* gmem, int tiles, void* out) {
  const unsigned long long dims[2] = {kPipeTile,
                                      static_cast<unsigned long long>(tiles) * kPipeTile};
  const unsigned long long strides[1] = {kPipeTile * 4};
  const unsigned box[2] = {kPipeTile, kPipeTile};
  alignas(64) CUtensorMap map, out_map;
  if (const int e = make_tiled(&map, 2, gmem, dims, strides, box)) return e;
  if (const int e = make_tiled(&out_map, 2, out, dims, strides, box)) return e;
  setmaxnreg_pipeline_kernel<<<1, 384>>>(map, out_map, tiles);
  return gpu_test::finish_launch();
}

// cp.async of n bytes (mode 0: 2n) from src to out through shared memory; size 4 / 8 / 16,
// cg: .cg (16 bytes only) else .ca; cta: .shared::cta else .shared.
PTXGEN_GPU_EXPORT int async_cp_async(int mode, int size, int cg, int cta, int threads,
                                     const void* src, void* out, int n) {
  if (n % 16 != 0 || n > kCpBytes || mode < 0 || mode > 5) return -1;
  using C = px::cp_async_cache;
  using S = px::cp_async_space;
  if (cg != 0) {
    if (size != 16) return -1;
    return cta ? launch_cp<16, C::cg, S::shared_cta>(mode, threads, src, out, n)
               : launch_cp<16, C::cg, S::shared>(mode, threads, src, out, n);
  }
  switch (size) {
    case 4:
      return cta ? launch_cp<4, C::ca, S::shared_cta>(mode, threads, src, out, n)
                 : launch_cp<4, C::ca, S::shared>(mode, threads, src, out, n);
    case 8:
      return cta ? launch_cp<8, C::ca, S::shared_cta>(mode, threads, src, out, n)
                 : launch_cp<8, C::ca, S::shared>(mode, threads, src, out, n);
    case 16:
      return cta ? launch_cp<16, C::ca, S::shared_cta>(mode, threads, src, out, n)
                 : launch_cp<16, C::ca, S::shared>(mode, threads, src, out, n);
    default: return -1;
  }
}
