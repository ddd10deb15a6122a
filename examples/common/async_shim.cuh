// The hand-written PTX the examples still need until ptxgen wraps TMA, mbarriers and
// setmaxnreg (issue 15): one function per instruction form, each named after it, so that
// replacing this header by the generated wrappers is a mechanical edit of the call sites.
// Everything that touches the tensor cores (wgmma, its fence / commit / wait and the matrix
// descriptors) already comes from ptxgen (generated/include/ptxgen).
//
// Used by examples/sparse_gemm/gemm_sp.cu and examples/wgmma_gemm/gemm.cu. sm_90 and later (sm_90a for setmaxnreg); the
// cluster forms need a kernel launched with a cluster dimension.
#pragma once

#include <cuda.h>  // CUtensorMap

#include <cstdint>

namespace async_shim {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// mbarrier.init.shared::cta.b64 [bar], count;
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}

// fence.mbarrier_init.release.cluster;
__device__ __forceinline__ void fence_mbarrier_init_release_cluster() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], tx_count;
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar,
                                                          std::uint32_t tx_count) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)),
               "r"(tx_count)
               : "memory");
}

// mbarrier.arrive.shared::cta.b64 _, [bar];
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64 waitComplete, [bar], parity;  (one try)
__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar,
                                                         std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//     [dst], [map, {c0, c1}], [bar];
__device__ __forceinline__ void cp_async_bulk_tensor_2d_global_to_shared(void* dst,
                                                                        const CUtensorMap* map,
                                                                        int c0, int c1,
                                                                        std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [bar];
// (dst, src 16-byte aligned, size a multiple of 16)
__device__ __forceinline__ void cp_async_bulk_global_to_shared(void* dst, const void* src,
                                                               std::uint32_t size,
                                                               std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<std::uint64_t>(src)), "r"(size),
      "r"(smem_u32(bar))
      : "memory");
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//     .multicast::cluster [dst], [map, {c0, c1}], [bar], cta_mask;
// (the tile lands at dst's offset, and completes on bar's offset, in each CTA of cta_mask)
__device__ __forceinline__ void cp_async_bulk_tensor_2d_global_to_shared_multicast(
    void* dst, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar,
    std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar)),
      "h"(cta_mask)
      : "memory");
}

// mov.u32 rank, %cluster_ctarank;
__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// mapa.shared::cluster.u32 remote, addr, rank;  (addr: a shared::cta address of this CTA)
__device__ __forceinline__ std::uint32_t mapa_shared_cluster(std::uint32_t addr,
                                                             std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}

// mbarrier.arrive.shared::cluster.b64 _, [remote];  (remote: from mapa; the default
// .release.cta: the .release.cluster form costs a MEMBAR.ALL.GPU per arrive in ptxas 13.0's
// SASS, which halved the cluster kernel's speed)
__device__ __forceinline__ void mbarrier_arrive_shared_cluster(std::uint32_t remote) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// barrier.cluster.arrive.release.aligned;
__device__ __forceinline__ void barrier_cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

// barrier.cluster.wait.acquire.aligned;
__device__ __forceinline__ void barrier_cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [map, {c0, c1}], [src];
// (src: the box in shared memory, laid out as the tensor map's swizzle says)
__device__ __forceinline__ void cp_async_bulk_tensor_2d_shared_to_global(const CUtensorMap* map,
                                                                        int c0, int c1,
                                                                        const void* src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
      ::"l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(src))
      : "memory");
}

// cp.async.bulk.commit_group;
__device__ __forceinline__ void cp_async_bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// cp.async.bulk.wait_group.read N;  (the source reads of all but the newest N bulk groups done)
template <int N>
__device__ __forceinline__ void cp_async_bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// cp.async.bulk.wait_group N;  (all but the newest N bulk groups complete)
template <int N>
__device__ __forceinline__ void cp_async_bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// fence.proxy.async.shared::cta;  (generic-proxy shared-memory writes before this are seen by
// later async-proxy operations, such as a bulk copy reading them)
__device__ __forceinline__ void fence_proxy_async_shared_cta() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// barrier.sync.aligned id, count;  (a named barrier of count threads, whole warps)
__device__ __forceinline__ void barrier_sync_aligned(std::uint32_t id, std::uint32_t count) {
  asm volatile("barrier.sync.aligned %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// setmaxnreg.inc.sync.aligned.u32 R;
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}

// setmaxnreg.dec.sync.aligned.u32 R;
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}

}  // namespace async_shim
