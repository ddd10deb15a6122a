// The TMA / mbarrier / fence / cluster / setmaxnreg calls of the examples, one function per
// instruction form, each named after it. Every PTX instruction comes from ptxgen's generated
// wrappers (generated/include/ptxgen/ptx: mbarrier.hpp, cp_async_bulk_tensor.hpp,
// cp_async_bulk.hpp, fence.hpp, sync.hpp): this header holds no asm statement (issue 15;
// tests/test_async_examples.py checks that no asm remains under examples/). It only fixes
// the qualifiers the examples use, so that the call sites read as before.
//
// Used by examples/sparse_gemm/gemm_sp.cu and examples/wgmma_gemm/gemm.cu. sm_90 and later
// (sm_90a for setmaxnreg); the cluster forms need a kernel launched with a cluster dimension.
#pragma once

#include <ptxgen/ptx/cp_async_bulk.hpp>
#include <ptxgen/ptx/cp_async_bulk_tensor.hpp>
#include <ptxgen/ptx/fence.hpp>
#include <ptxgen/ptx/mbarrier.hpp>
#include <ptxgen/ptx/sync.hpp>

#include <cuda.h>  // CUtensorMap

#include <cstdint>

namespace async_shim {

namespace px = ptxgen::ptx;

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// mbarrier.init.shared::cta.b64 [bar], count;
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
  px::mbarrier_init<px::mbarrier_init_layout::none, px::mbarrier_init_space::shared_cta>(bar,
                                                                                        count);
}

// fence.mbarrier_init.release.cluster;
__device__ __forceinline__ void fence_mbarrier_init_release_cluster() {
  px::fence_mbarrier_init();
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], tx_count;
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar,
                                                          std::uint32_t tx_count) {
  px::mbarrier_arrive_expect_tx<px::mbarrier_arrive_sem::none, px::mbarrier_arrive_scope::none,
                                px::mbarrier_arrive_space::shared_cta>(bar, tx_count);
}

// mbarrier.arrive.shared::cta.b64 _, [bar];
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  px::mbarrier_arrive<px::mbarrier_arrive_sem::none, px::mbarrier_arrive_scope::none,
                      px::mbarrier_arrive_space::shared_cta>(bar);
}

// mbarrier.try_wait.parity.shared::cta.b64 waitComplete, [bar], parity;  (one try)
__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar,
                                                         std::uint32_t parity) {
  return px::mbarrier_try_wait_parity<px::mbarrier_try_wait_sem::none,
                                      px::mbarrier_try_wait_scope::none,
                                      px::mbarrier_try_wait_space::shared_cta>(bar, parity);
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//     [dst], [map, {c0, c1}], [bar];
__device__ __forceinline__ void cp_async_bulk_tensor_2d_global_to_shared(void* dst,
                                                                        const CUtensorMap* map,
                                                                        int c0, int c1,
                                                                        std::uint64_t* bar) {
  const int coords[2] = {c0, c1};
  px::cp_async_bulk_tensor_load<px::cp_async_bulk_tensor_dim::dim_2d,
                                px::cp_async_bulk_tensor_dst::shared_cluster,
                                px::cp_async_bulk_tensor_load_mode::tile>(dst, map, coords, bar);
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [bar];
// (dst, src 16-byte aligned, size a multiple of 16)
__device__ __forceinline__ void cp_async_bulk_global_to_shared(void* dst, const void* src,
                                                               std::uint32_t size,
                                                               std::uint64_t* bar) {
  px::cp_async_bulk<px::cp_async_bulk_dst::shared_cluster>(dst, src, size, bar);
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//     .multicast::cluster [dst], [map, {c0, c1}], [bar], cta_mask;
// (the tile lands at dst's offset, and completes on bar's offset, in each CTA of cta_mask)
__device__ __forceinline__ void cp_async_bulk_tensor_2d_global_to_shared_multicast(
    void* dst, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar,
    std::uint16_t cta_mask) {
  const int coords[2] = {c0, c1};
  px::cp_async_bulk_tensor_load_multicast<px::cp_async_bulk_tensor_dim::dim_2d,
                                          px::cp_async_bulk_tensor_load_mode::tile,
                                          px::cp_async_bulk_tensor_multicast::multicast_cluster>(
      dst, map, coords, bar, cta_mask);
}

// mov.u32 rank, %cluster_ctarank;  (CUDA's own intrinsic: no asm)
__device__ __forceinline__ std::uint32_t cluster_ctarank() { return __clusterRelativeBlockRank(); }

// mapa.shared::cluster.u32 remote, addr, rank;  (addr: a shared::cta address of this CTA)
__device__ __forceinline__ std::uint32_t mapa_shared_cluster(std::uint32_t addr,
                                                             std::uint32_t rank) {
  return px::mapa<px::mapa_address_type::u32, px::mapa_address_space::shared_cluster>(addr,
                                                                                      rank);
}

// mbarrier.arrive.shared::cluster.b64 _, [remote];  (remote: from mapa; the default
// .release.cta: the .release.cluster form costs a MEMBAR.ALL.GPU per arrive in ptxas 13.0's
// SASS, which halved the cluster kernel's speed)
__device__ __forceinline__ void mbarrier_arrive_shared_cluster(std::uint32_t remote) {
  px::mbarrier_arrive<px::mbarrier_arrive_sem::none, px::mbarrier_arrive_scope::none,
                      px::mbarrier_arrive_space::shared_cluster>(remote);
}

// barrier.cluster.arrive.release.aligned;
__device__ __forceinline__ void barrier_cluster_arrive_release() {
  px::barrier_cluster_arrive<px::barrier_cluster_sem::release, true>();
}

// barrier.cluster.wait.acquire.aligned;
__device__ __forceinline__ void barrier_cluster_wait_acquire() {
  px::barrier_cluster_wait<px::barrier_cluster_sem::acquire, true>();
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [map, {c0, c1}], [src];
// (src: the box in shared memory, laid out as the tensor map's swizzle says)
__device__ __forceinline__ void cp_async_bulk_tensor_2d_shared_to_global(const CUtensorMap* map,
                                                                        int c0, int c1,
                                                                        const void* src) {
  const int coords[2] = {c0, c1};
  px::cp_async_bulk_tensor_store<px::cp_async_bulk_tensor_dim::dim_2d,
                                 px::cp_async_bulk_tensor_load_mode::tile>(map, coords, src);
}

// cp.async.bulk.commit_group;
__device__ __forceinline__ void cp_async_bulk_commit_group() { px::cp_async_bulk_commit_group(); }

// cp.async.bulk.wait_group.read N;  (the source reads of all but the newest N bulk groups done)
template <int N>
__device__ __forceinline__ void cp_async_bulk_wait_group_read() {
  px::cp_async_bulk_wait_group<true>(px::imm<N>);
}

// cp.async.bulk.wait_group N;  (all but the newest N bulk groups complete)
template <int N>
__device__ __forceinline__ void cp_async_bulk_wait_group() {
  px::cp_async_bulk_wait_group<false>(px::imm<N>);
}

// fence.proxy.async.shared::cta;  (generic-proxy shared-memory writes before this are seen by
// later async-proxy operations, such as a bulk copy reading them)
__device__ __forceinline__ void fence_proxy_async_shared_cta() {
  px::fence_proxy<px::fence_proxy_proxykind::async_shared_cta>();
}

// barrier.sync.aligned id, count;  (a named barrier of count threads, whole warps)
__device__ __forceinline__ void barrier_sync_aligned(std::uint32_t id, std::uint32_t count) {
  px::barrier_sync<false, true>(id, count);
}

// setmaxnreg.inc.sync.aligned.u32 R;
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  px::setmaxnreg<px::setmaxnreg_action_action::inc>(px::imm<R>);
}

// setmaxnreg.dec.sync.aligned.u32 R;
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  px::setmaxnreg<px::setmaxnreg_action_action::dec>(px::imm<R>);
}

}  // namespace async_shim
