// bf16 GEMM on Hopper (sm_90a) built on ptxgen's generated wgmma wrappers and wgmma
// matrix descriptors: C[M][N] (bf16) = A[M][K] (bf16) * B[N][K]^T (bf16), f32 accumulators
// (the "TN" layout of torch.matmul(A, B.t()) / nn.Linear).
//
//   * ptxgen (generated/include): wgmma.mma_async m64n256k16 .f32.bf16.bf16 with both
//     operands from shared memory (ptxgen::ptx::wgmma_mma_async), its descriptors
//     (ptxgen::WgmmaDesc, 128B swizzle, K-major), wgmma.fence / commit_group / wait_group.
//   * examples/common/async_shim.cuh: the TMA (cp.async.bulk.tensor.2d loads, their
//     .multicast::cluster form, the tile stores and their bulk groups), mbarrier, fence,
//     cluster (barrier.cluster, mapa), named-barrier and setmaxnreg forms, one function per
//     instruction form, each one call of a ptxgen wrapper (issue 15: no asm anywhere in the
//     example). Tensor maps from cuTensorMapEncodeTiled, taken through
//     cudaGetDriverEntryPointByVersion (no link against libcuda).
//
// Structure: a persistent kernel, one CTA per SM, 3 warpgroups. Warpgroup 0 is the
// producer (one thread issues TMA loads of 128 x 64 tiles of A and 256 x 64 tiles of B
// into a ring of STAGES shared-memory stages, each stage guarded by a "full" and an
// "empty" mbarrier); warpgroups 1 and 2 are consumers, each computing 64 x 256 of the
// 128 x 256 output tile with four m64n256k16 per stage, one wgmma group in flight
// (wait_group 1 releases the previous stage). Tiles are visited in groups of GROUP_M row
// blocks so that the CTAs running together share A and B tiles in L2. With CLUSTER = 2 two
// CTAs share each B tile through TMA multicast; with OVERLAP the epilogue's stores run
// while the next tile's first wgmma group is on the tensor cores (see gemm_kernel).
// FP8 (issue 29): built with -DPTXGEN_GEMM_E4M3 the same source is the e4m3 x e4m3 GEMM,
// C (bf16) = scale_a scale_b (A[M][K] (e4m3) * B[N][K]^T (e4m3)), f32 accumulators, per-tensor
// scales read from device memory (as torch._scaled_mm takes them). Both operands K-major (the
// only layout wgmma has for 8-bit types: no transpose immediates). A stage then holds 128 K
// (128-byte rows, the same bytes as 64 bf16), each m64n256k32 .e4m3.e4m3 covering 32 of
// them at the same 32-byte offsets, so the pipeline, the schedule, the clusters and the
// epilogue are the bf16 kernel's; the scales multiply the f32 accumulators before the
// rounding to bf16. examples/fp8_gemm/bench.py builds, checks and times it.
//
// ptxgen first: <cuda_bf16.h> included before generated/include/ptxgen/ptx/target.hpp makes
// nvcc 13.0 report warning #62-D ("shift count is negative") in target.hpp's supported()
// during the host pass (PTXGEN_PTX_TARGET is -1 there).
#include <ptxgen/ptx/wgmma.hpp>
#include <ptxgen/wgmma_desc.hpp>

#include "../common/async_shim.cuh"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#define GEMM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace ptxgen::ptx;
namespace shim = async_shim;

#if defined(PTXGEN_GEMM_E4M3)
constexpr bool FP8 = true;
#else
constexpr bool FP8 = false;
#endif
constexpr int ELEM = FP8 ? 1 : 2;   // bytes per element of A and B
constexpr int BM = 128, BN = 256, BK = 128 / ELEM;  // a stage: 128-byte rows of K
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int A_STAGE = BM * BK * ELEM;  // bytes
constexpr int B_STAGE = BN * BK * ELEM;
constexpr int KI = 32 / ELEM;  // K of one wgmma instruction: 32 bytes of each row

__host__ __device__ constexpr int smem_bytes(int stages) {
  return stages * (A_STAGE + B_STAGE) + 2 * stages * 8 + 1024;
}

// Waits on an mbarrier phase. A safety net rather than a feature: a wait that polls 2^22
// times (seconds) gives up and makes every later wait of the thread return at once, so that
// a protocol error shows as a wrong C instead of a hung GPU.
__device__ __forceinline__ void wait_parity(std::uint64_t* bar, std::uint32_t parity,
                                            bool& gave_up) {
  for (std::uint32_t n = 0; !gave_up; ++n) {
    if (shim::mbarrier_try_wait_parity(bar, parity)) return;
    if (n == (1u << 22)) gave_up = true;
  }
}

// ---- ptxgen: descriptors and wgmma -----------------------------------------------------
// A K-major tile written by TMA with 128-byte swizzle is the canonical SWIZZLE_128B K-major
// layout: rows of 128 bytes, 8-row groups 1024 bytes apart (stride byte offset); the
// leading byte offset is not used by swizzled K-major layouts. The k-th slice of 16
// elements (32 bytes) starts 32 k bytes into the rows.
__host__ __device__ constexpr ptxgen::WgmmaDesc tile_desc_fields(std::uint32_t addr) {
  ptxgen::WgmmaDesc d{};
  d.start_address = addr;
  d.leading_byte_offset = 16;
  d.stride_byte_offset = 1024;
  d.base_offset = 0;
  d.swizzle = ptxgen::WgmmaDesc::Swizzle::SWIZZLE_128B;
  return d;
}

// encode_unchecked(), not encode(): encode() checks every field at run time and traps on an
// invalid one. In the main loop that check is a branch between the wgmma instructions, and
// ptxas 13.0 then serializes them (C7520 "wgmma.mma_async instructions are serialized due
// to program dependence on compiler-inserted WG.AR in divergent path": a wait after each
// instruction); and in a cluster launch the shared-memory address of the descriptor did not
// pass the check (the kernel trapped on the H100), while the truncated field (18 bits of
// address, as the hardware reads it) is right. The offsets within the shared memory are
// checked at compile time instead: the last k slice of the last B stage, 1024-aligned as in
// the kernel, is a valid descriptor (encode() in a constant expression).
__device__ __forceinline__ std::uint64_t tile_desc(std::uint32_t addr) {
  return tile_desc_fields(addr).encode_unchecked();
}
static_assert(tile_desc_fields(4 * A_STAGE + 3 * B_STAGE + 32 * (BK / KI - 1)).encode() != 0);

// One stage of a consumer warpgroup: four m64n256k16 (k = 0..3 of the stage's 64; FP8:
// four m64n256k32 of its 128, at the same byte offsets) as one
// wgmma group, committed and left in flight. accumulate = false for the first stage of a
// tile (scale-d 0: the group overwrites the accumulators).
__device__ __forceinline__ void issue_stage(float (&d)[BN / 2], std::uint32_t a_stage,
                                            std::uint32_t b_stage, bool accumulate) {
  fence_operand(d);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < BK / KI; ++k) {
    const std::uint64_t da = tile_desc(a_stage + 32 * k);
    const std::uint64_t db = tile_desc(b_stage + 32 * k);
    if constexpr (FP8) {  // 8-bit types: no transpose immediates
      wgmma_mma_async<BN, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::e4m3,
                      wgmma_mma_async_btype::e4m3>(d, da, db, accumulate || k > 0, imm_t<1>{},
                                                   imm_t<1>{});
    } else {
      wgmma_mma_async<BN, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::bf16,
                      wgmma_mma_async_btype::bf16>(d, da, db, accumulate || k > 0, imm_t<1>{},
                                                   imm_t<1>{}, imm_t<0>{}, imm_t<0>{});
    }
  }
  wgmma_commit_group();
}

__device__ __forceinline__ void tile_coords(int tile, int num_m, int num_n, int group_m, int& mb,
                                            int& nb) {
  const int group_size = group_m * num_n;
  const int group = tile / group_size;
  const int first_m = group * group_m;
  const int gm = min(num_m - first_m, group_m);
  const int in_group = tile % group_size;
  mb = first_m + in_group % gm;
  nb = in_group / gm;
}

// Accumulators e, e + 1 rounded to bf16 (FP8: times the product of the two scales first).
__device__ __forceinline__ __nv_bfloat162 out_pair(const float (&d)[BN / 2], int e, float scale) {
  if constexpr (FP8) return __floats2bfloat162_rn(d[e] * scale, d[e + 1] * scale);
  return __floats2bfloat162_rn(d[e], d[e + 1]);
}

// Epilogue: accumulator element e is row 16 warp + lane/4 + 8 ((e/2) % 2), column
// 8 (e/4) + 2 (lane % 4) + e % 2 of the warpgroup's 64 x 256 block.
__device__ __forceinline__ void store_c(const float (&d)[BN / 2], __nv_bfloat16* __restrict__ C,
                                        int N, int row0, int col0, float scale) {
#pragma unroll
  for (int e = 0; e < BN / 2; e += 2) {
    const int row = row0 + 8 * ((e >> 1) & 1);
    const int col = col0 + 8 * (e >> 2);
    *reinterpret_cast<__nv_bfloat162*>(C + static_cast<std::size_t>(row) * N + col) =
        out_pair(d, e, scale);
  }
}

// The work of one cluster (one CTA when CLUSTER is 1): a sequence of items, each a unit (a
// tile, or with CLUSTER 2 a pair of row blocks of one column block) and a range of its k
// blocks. Units are numbered in the grouped order of tile_coords.
//
// Data-parallel part: units first, first + step, ... below dp_units (whole units).
// Stream-K tail (units from dp_units on, between step and 2 step - 1 of them): their k blocks,
// taken in order, are cut into step equal ranges, one per cluster, so that the last wave is
// not partly idle. A unit cut between the ranges of clusters i - 1 and i is computed in the
// same k order as a whole one: cluster i - 1 computes its first k blocks and writes the f32
// accumulators to a workspace, cluster i loads them and continues with the remaining k blocks
// (the same wgmma instructions in the same order, so C is bit-identical to the
// data-parallel kernel's). To keep cluster i from waiting, each cluster takes its items in
// the order: the first part of the unit its range ends in, its whole units, then the second
// part of the unit its range starts in.
struct Item {
  int unit, k0, k1;
};

struct Schedule {
  int first, step, units, dp_units, k_tiles;
  int j = 0;       // data-parallel items taken
  int phase = 0;   // 0: data-parallel, 1: tail's first part, 2: whole units, 3: second part, 4: done
  int u_begin = 0, ks = 0, u_end = 0, ke = 0, u = 0;

  __device__ Schedule(int first_, int step_, int units_, int dp_units_, int k_tiles_)
      : first(first_), step(step_), units(units_), dp_units(dp_units_), k_tiles(k_tiles_) {
    const long long tail_iters = static_cast<long long>(units - dp_units) * k_tiles;
    const long long begin = tail_iters * first / step, end = tail_iters * (first + 1) / step;
    u_begin = static_cast<int>(begin / k_tiles);
    ks = static_cast<int>(begin % k_tiles);
    u_end = static_cast<int>(end / k_tiles);
    ke = static_cast<int>(end % k_tiles);
    u = ks > 0 ? u_begin + 1 : u_begin;
  }

  __device__ bool next(Item& w) {
    if (phase == 0) {
      const int unit = first + step * j;
      if (unit < dp_units) {
        ++j;
        w = {unit, 0, k_tiles};
        return true;
      }
      phase = 1;
    }
    if (phase == 1) {
      phase = 2;
      if (ke > 0) {
        w = {dp_units + u_end, 0, ke};
        return true;
      }
    }
    if (phase == 2) {
      if (u < u_end) {
        w = {dp_units + u, 0, k_tiles};
        ++u;
        return true;
      }
      phase = 3;
    }
    if (phase == 3) {
      phase = 4;
      if (ks > 0) {
        w = {dp_units + u_begin, ks, k_tiles};
        return true;
      }
    }
    return false;
  }
};

// CLUSTER 1: one CTA per 128 x 256 tile. CLUSTER 2: CTAs 2i and 2i + 1 form a cluster that
// works on row blocks 2u and 2u + 1 of one column block: each loads its own A tile and half
// of the B tile (128 of its 256 rows), multicast into both CTAs' shared memory, so B crosses
// L2 once for the two (32 KB instead of 48 KB per CTA and stage). A stage goes back to the
// producers only when the consumers of both CTAs are done with it (each "empty" barrier
// counts 4 arrivals, 2 of them from the other CTA).
//
// ws / flags (stream-K tail, dp_units < units): per cut unit and CTA rank a slot of
// 2 x 128 x 128 f32 (each consumer thread's accumulators, [warpgroup][i / 4][thread] as
// float4) and 256 flags, one per consumer thread, set to epoch (a number new to each launch)
// once that thread's accumulators are written: thread t of the CTA that continues the unit
// reads exactly what thread t of the CTA that started it wrote.
//
// TMA_STORE false: each consumer thread stores its accumulators, rounded to bf16, straight to
// C (64 4-byte stores). TMA_STORE true: the consumers keep the last two stages of a tile
// (instead of releasing them), write the tile's C, rounded to bf16, into those stages' B
// buffers (warpgroup c into the B buffer of the second-last stage for c = 0, of the last for
// c = 1: 64 x 256 bf16 = 32 KB, as 4 boxes of 64 x 64 in the 128B-swizzled layout of tm_c,
// which makes the shared-memory writes free of bank conflicts) and store them with 4 TMA
// stores per warpgroup; the two stages go back to the producers once the TMA stores have read
// them, checked after the next tile's first wgmma group is issued. So the writes of C to
// memory overlap the next tile's main loop instead of stalling the consumers (at the end of
// a wave every SM stores its 64 KB at once). Items of fewer than 2 k blocks store directly.
template <int STAGES, int CLUSTER, bool TMA_STORE>
__global__ void __launch_bounds__(THREADS, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                const __grid_constant__ CUtensorMap tm_c, __nv_bfloat16* __restrict__ C, int M, int N, int K, int group_m, int dp_units,
                float4* __restrict__ ws, unsigned* __restrict__ flags, unsigned epoch,
                const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
  extern __shared__ std::uint8_t smem_raw[];
  // 1024-byte aligned (128B swizzle) by pointer arithmetic on smem_raw, the same offset in
  // every CTA of a cluster (multicast writes at the same offsets in each).
  std::uint8_t* smem = smem_raw + ((1024 - (shim::smem_u32(smem_raw) & 1023)) & 1023);
  std::uint8_t* s_a = smem;
  std::uint8_t* s_b = smem + STAGES * A_STAGE;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(s_b + STAGES * B_STAGE);
  std::uint64_t* empty = full + STAGES;

  const int wg = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  const int num_m = M / BM, num_n = N / BN, k_tiles = K / BK;
  // Units: tiles (CLUSTER 1), or pairs of row blocks 2u, 2u + 1 of one column block
  // (CLUSTER 2: the CTA of cluster rank r takes row block 2u + r).
  const int rank = CLUSTER == 2 ? static_cast<int>(shim::cluster_ctarank()) : 0;
  const int units = num_m / CLUSTER * num_n;
  const int first = blockIdx.x / CLUSTER, step = gridDim.x / CLUSTER;
  const int unit_group_m = max(1, group_m / CLUSTER);
  bool gave_up = false;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      shim::mbarrier_init(&full[s], 1);
      shim::mbarrier_init(&empty[s], CONSUMERS * CLUSTER);
    }
    shim::fence_mbarrier_init_release_cluster();
  }
  if constexpr (CLUSTER == 2) {  // the other CTA's barriers are initialised before any use
    shim::barrier_cluster_arrive_release();
    shim::barrier_cluster_wait_acquire();
  } else {
    __syncthreads();
  }

  if (wg == 0) {
    // Producer.
    shim::setmaxnreg_dec<40>();
    if (tid == 0) {
      int it = 0;
      Schedule sched(first, step, units, dp_units, k_tiles);
      Item w;
      while (sched.next(w)) {
        int mu, nb;
        tile_coords(w.unit, num_m / CLUSTER, num_n, unit_group_m, mu, nb);
        const int mb = mu * CLUSTER + rank;
        for (int kt = w.k0; kt < w.k1; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) wait_parity(&empty[s], ((it / STAGES) + 1) & 1, gave_up);
          shim::mbarrier_arrive_expect_tx(&full[s], A_STAGE + B_STAGE);
          shim::cp_async_bulk_tensor_2d_global_to_shared(s_a + s * A_STAGE, &tm_a, kt * BK,
                                                         mb * BM, &full[s]);
          if constexpr (CLUSTER == 2) {
            shim::cp_async_bulk_tensor_2d_global_to_shared_multicast(
                s_b + s * B_STAGE + rank * (B_STAGE / 2), &tm_b, kt * BK,
                nb * BN + rank * (BN / 2), &full[s], 0b11);
          } else {
            shim::cp_async_bulk_tensor_2d_global_to_shared(s_b + s * B_STAGE, &tm_b, kt * BK,
                                                           nb * BN, &full[s]);
          }
        }
      }
    }
  } else {
    // Consumers: warpgroup c computes rows 64c..64c+63 of the tile.
    shim::setmaxnreg_inc<232>();
    const int c = wg - 1;
    const int warp = tid / 32, lane = tid % 32;
    const float scale = FP8 ? *scale_a * *scale_b : 1.f;  // unused by the bf16 kernel
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
    const std::uint32_t a_base = shim::smem_u32(s_a) + c * 64 * 128;
    const std::uint32_t b_base = shim::smem_u32(s_b);
    // The other CTA's "empty" barriers (CLUSTER 2).
    const std::uint32_t peer_empty =
        CLUSTER == 2 ? shim::mapa_shared_cluster(shim::smem_u32(empty), rank ^ 1) : 0u;
    int it = 0;
    auto slot_of = [&](const Item& w) {
      return static_cast<std::size_t>((w.unit - dp_units) * CLUSTER + rank) * CONSUMERS + c;
    };
    auto release = [&](int s) {  // this warpgroup is done with stage s
      shim::mbarrier_arrive(&empty[s]);
      if constexpr (CLUSTER == 2) shim::mbarrier_arrive_shared_cluster(peer_empty + 8 * s);
    };
    int held0 = -1, held1 = -1;  // TMA_STORE: the stages holding the previous tile's C
    auto release_held = [&]() {
      if (held0 >= 0) {
        if (tid == 0) {
          shim::cp_async_bulk_wait_group_read<0>();
          release(held0);
          release(held1);
        }
        held0 = held1 = -1;
      }
    };
    // One item; cont: its k range continues accumulators (already in d) from an earlier one.
    auto run = [&](const Item& w, bool cont) {
      int mu, nb;
      tile_coords(w.unit, num_m / CLUSTER, num_n, unit_group_m, mu, nb);
      const int mb = mu * CLUSTER + rank;
      const bool staged = TMA_STORE && w.k1 == k_tiles && w.k1 - w.k0 >= 2;
      for (int kt = w.k0; kt < w.k1; ++kt, ++it) {
        const int s = it % STAGES;
        wait_parity(&full[s], (it / STAGES) & 1, gave_up);
        issue_stage(d, a_base + s * A_STAGE, b_base + s * B_STAGE, cont || kt > 0);
        if constexpr (TMA_STORE) {
          if (kt == w.k0) release_held();
        }
        wgmma_wait_group(imm_t<1>{});  // the previous stage's group is done: release it
        fence_operand(d);
        if (kt > w.k0 && tid == 0 && !(staged && kt == w.k1 - 1)) release((it - 1) % STAGES);
      }
      wgmma_wait_group(imm_t<0>{});
      fence_operand(d);
      if (staged) {
        const int s0 = (it - 2) % STAGES, s1 = (it - 1) % STAGES;
        // Both warpgroups' wgmma groups, which read both stages' B, are complete.
        shim::barrier_sync_aligned(1, 128 * CONSUMERS);
        std::uint8_t* stage_c = s_b + (c == 0 ? s0 : s1) * B_STAGE;
        // Element e: row r = 16 warp + lane/4 + 8 ((e/2) % 2), column 8 j + 2 (lane % 4) with
        // j = e/4, in box j/8 at 16-byte chunk j % 8, which the 128B swizzle moves to chunk
        // (j % 8) ^ (r % 8), r % 8 = lane/4.
        const int g = lane / 4, q = lane % 4;
#pragma unroll
        for (int e = 0; e < BN / 2; e += 2) {
          const int r = warp * 16 + g + 8 * ((e >> 1) & 1), j = e >> 2;
          const __nv_bfloat162 v = out_pair(d, e, scale);
          *reinterpret_cast<__nv_bfloat162*>(stage_c + (j >> 3) * 8192 + r * 128 +
                                             (((j & 7) ^ g) * 16) + 4 * q) = v;
        }
        shim::fence_proxy_async_shared_cta();
        shim::barrier_sync_aligned(2 + c, 128);
        if (tid == 0) {
#pragma unroll
          for (int box = 0; box < BN / 64; ++box) {
            shim::cp_async_bulk_tensor_2d_shared_to_global(&tm_c, nb * BN + 64 * box,
                                                          mb * BM + 64 * c, stage_c + box * 8192);
          }
          shim::cp_async_bulk_commit_group();
        }
        held0 = s0;
        held1 = s1;
        return;
      }
      if (tid == 0) release((it - 1) % STAGES);
      if (w.k1 == k_tiles) {
        store_c(d, C, N, mb * BM + c * 64 + warp * 16 + lane / 4, nb * BN + 2 * (lane % 4),
                scale);
      } else {  // the first part of a cut unit: hand the accumulators over
        const std::size_t slot = slot_of(w);
        float4* dst = ws + slot * (32 * 128) + tid;
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
          __stcg(dst + i * 128, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
        }
        __threadfence();
        *static_cast<volatile unsigned*>(flags + slot * 128 + tid) = epoch;
      }
    };
    // The item that continues another cluster's accumulators is always the last one; it runs
    // after the loop, so that ptxas sees the loads into the accumulators outside the loop
    // that keeps a wgmma group in flight (inside it, ptxas 13.0 serializes every wgmma: C7515
    // "non wgmma instructions defining accumulator registers ... between start and end of
    // the pipeline stage").
    Schedule sched(first, step, units, dp_units, k_tiles);
    Item w;
    bool last_continues = false;
    while (sched.next(w)) {
      if (w.k0 > 0) {
        last_continues = true;
        break;
      }
      run(w, false);
    }
    if (last_continues) {
      const std::size_t slot = slot_of(w);
      volatile unsigned* flag = flags + slot * 128 + tid;
      for (std::uint32_t n = 0; *flag != epoch && !gave_up; ++n) {
        if (n == (1u << 24)) gave_up = true;
      }
      __threadfence();
      const float4* src = ws + slot * (32 * 128) + tid;
#pragma unroll
      for (int i = 0; i < BN / 8; ++i) {
        const float4 v = __ldcg(src + i * 128);
        d[4 * i] = v.x;
        d[4 * i + 1] = v.y;
        d[4 * i + 2] = v.z;
        d[4 * i + 3] = v.w;
      }
      run(w, true);
    }
    if constexpr (TMA_STORE) {  // the last TMA stores are complete before the CTA leaves
      if (tid == 0) shim::cp_async_bulk_wait_group<0>();
    }
  }
  if constexpr (CLUSTER == 2) {  // neither CTA leaves while the other may still signal it
    shim::barrier_cluster_arrive_release();
    shim::barrier_cluster_wait_acquire();
  }
}

// ---- host ------------------------------------------------------------------------------
using encode_fn_t = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

encode_fn_t encode_fn() {
  static encode_fn_t fn = nullptr;
  if (fn == nullptr) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess) {
      fn = reinterpret_cast<encode_fn_t>(p);
    }
  }
  return fn;
}

// A row-major [rows][cols] matrix of elem_bytes elements (2: bf16, 1: e4m3), boxes of
// box_rows x 128 bytes with 128-byte swizzle (K-major operand tiles, or 64 x 64 of bf16 C).
int make_map(CUtensorMap* map, const void* ptr, int rows, int cols, int box_rows,
             int elem_bytes) {
  encode_fn_t fn = encode_fn();
  if (fn == nullptr) return 1001;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * elem_bytes};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(128 / elem_bytes),
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem[2] = {1, 1};
  const CUtensorMapDataType type =
      elem_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUresult r = fn(map, type, 2, const_cast<void*>(ptr), dims,
                        strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 2000 + static_cast<int>(r);
}

// The largest grid (a multiple of cluster) of which every CTA is resident at once: one CTA
// per SM, and with clusters only as many as the GPCs can place. (The stream-K tail needs
// every CTA resident: a CTA may wait for another's accumulators.)
template <int STAGES, int CLUSTER, bool TMA_STORE>
int resident_ctas(int grid) {
  grid -= grid % CLUSTER;  // a cluster launch (and the query below) needs whole clusters
  if constexpr (CLUSTER > 1) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(grid));
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem_bytes(STAGES);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = CLUSTER;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, gemm_kernel<STAGES, CLUSTER, TMA_STORE>, &cfg) ==
            cudaSuccess &&
        clusters > 0 && clusters * CLUSTER < grid) {
      grid = clusters * CLUSTER;
    }
    (void)cudaGetLastError();  // a failed query must not read as the launch's error
  }
  return grid;
}

// The stream-K workspace, grown on demand (never shrunk; flags zeroed when allocated).
struct Workspace {
  float4* ws = nullptr;
  unsigned* flags = nullptr;
  std::size_t slots = 0;
  unsigned epoch = 0;
};

int workspace(std::size_t slots, Workspace*& out) {
  static Workspace w;
  if (slots > w.slots) {
    cudaDeviceSynchronize();  // an earlier launch may still use the old buffers
    cudaFree(w.ws);
    cudaFree(w.flags);
    w = Workspace{};
    cudaError_t e = cudaMalloc(&w.ws, slots * 32 * 128 * sizeof(float4));
    if (e == cudaSuccess) e = cudaMalloc(&w.flags, slots * 128 * sizeof(unsigned));
    if (e == cudaSuccess) e = cudaMemset(w.flags, 0, slots * 128 * sizeof(unsigned));
    if (e != cudaSuccess) return static_cast<int>(e);
    w.slots = slots;
  }
  if (++w.epoch == 0) w.epoch = 1;  // 0 is the flags' initial value
  out = &w;
  return 0;
}

template <int STAGES, int CLUSTER, bool TMA_STORE>
int launch(const void* A, const void* B, void* C, const float* scale_a, const float* scale_b,
           int M, int N, int K, int group_m, int grid, bool streamk) {
  CUtensorMap ma, mb, mc;
  if (int e = make_map(&ma, A, M, K, BM, ELEM)) return e;
  if (int e = make_map(&mb, B, N, K, BN / CLUSTER, ELEM)) return e;
  if (int e = make_map(&mc, C, M, N, 64, 2)) return e;  // boxes of 64 x 64 of C (bf16)
  auto kern = gemm_kernel<STAGES, CLUSTER, TMA_STORE>;
  cudaError_t err = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         smem_bytes(STAGES));
  if (err != cudaSuccess) return static_cast<int>(err);
  grid = resident_ctas<STAGES, CLUSTER, TMA_STORE>(grid);
  // Stream-K tail: the last (units mod P) + P units when the units do not fill the P
  // clusters evenly; otherwise (or when off) every unit is whole (dp_units = units).
  const int units = (M / BM / CLUSTER) * (N / BN), p = grid / CLUSTER;
  int dp_units = units;
  if (streamk && units % p != 0 && units > p) dp_units = (units / p - 1) * p;
  Workspace* w = nullptr;
  if (dp_units < units) {
    if (int e = workspace(static_cast<std::size_t>(units - dp_units) * CLUSTER * CONSUMERS, w)) {
      return e;
    }
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(THREADS);
  cfg.dynamicSmemBytes = smem_bytes(STAGES);
  cfg.stream = nullptr;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = CLUSTER > 1 ? 1 : 0;  // CLUSTER 1: a plain launch
  err = cudaLaunchKernelEx(&cfg, kern, ma, mb, mc, static_cast<__nv_bfloat16*>(C), M, N, K, group_m,
                           dp_units, w ? w->ws : nullptr, w ? w->flags : nullptr,
                           w ? w->epoch : 0u, scale_a, scale_b);
  if (err != cudaSuccess) return static_cast<int>(err);
  return static_cast<int>(cudaGetLastError());
}

// C = A * B^T (times *scale_a * *scale_b in the FP8 build) with a chosen configuration:
// see ptxgen_gemm_bf16_config.
int gemm_config(const void* A, const void* B, void* C, const float* scale_a,
                const float* scale_b, int M, int N, int K, int stages, int group_m, int grid,
                int cluster, int streamk, int tma_store) {
  if (M % BM || N % BN || K % BK || K < BK) return 3000;
  if ((cluster != 1 && cluster != 2) || (streamk != 0 && streamk != 1) ||
      (tma_store != 0 && tma_store != 1)) {
    return 3001;
  }
  if (M % (BM * cluster)) return 3000;
  if (grid <= 0) {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    grid = sms;
  }
  const int tiles = (M / BM) * (N / BN);
  if (grid > tiles) grid = tiles;
  if (grid < cluster) return 3000;
  if (group_m <= 0) group_m = 16;
  const bool sk = streamk != 0;
  switch (stages * 100 + cluster * 10 + tma_store) {
    case 410: return launch<4, 1, false>(A, B, C, scale_a, scale_b, M, N, K, group_m, grid, sk);
    case 420: return launch<4, 2, false>(A, B, C, scale_a, scale_b, M, N, K, group_m, grid, sk);
    case 411: return launch<4, 1, true>(A, B, C, scale_a, scale_b, M, N, K, group_m, grid, sk);
    case 421: return launch<4, 2, true>(A, B, C, scale_a, scale_b, M, N, K, group_m, grid, sk);
#if !defined(PTXGEN_GEMM_E4M3)  // the FP8 build: 4 stages only (fewer kernels to compile)
    case 310: return launch<3, 1, false>(A, B, C, scale_a, scale_b, M, N, K, group_m, grid, sk);
    case 320: return launch<3, 2, false>(A, B, C, scale_a, scale_b, M, N, K, group_m, grid, sk);
    case 321: return launch<3, 2, true>(A, B, C, scale_a, scale_b, M, N, K, group_m, grid, sk);
#endif
    default: return 3001;
  }
}

// The default configuration: clusters of 2 sharing B where M is a multiple of 256 (single
// CTAs otherwise), the stream-K tail and TMA stores of C.
int gemm_default(const void* A, const void* B, void* C, const float* scale_a,
                 const float* scale_b, int M, int N, int K, int stages, int group_m, int grid) {
  if (M % BM || N % BN || K % BK || K < BK) return 3000;
  if (stages != 3 && stages != 4) return 3001;
  const int cluster = M % (2 * BM) == 0 && grid != 1 ? 2 : 1;
  return gemm_config(A, B, C, scale_a, scale_b, M, N, K, stages, group_m, grid, cluster, 1,
                     stages == 4 || cluster == 2 ? 1 : 0);
}

}  // namespace

#if defined(PTXGEN_GEMM_E4M3)
// C (bf16) = *scale_a * *scale_b * (A * B^T), A [M][K] and B [N][K] e4m3 (K-major: B^T is
// the column-major operand torch._scaled_mm takes), scales: one float each in device
// memory. Returns as ptxgen_gemm_bf16_config (sizes: multiples of 128 x 256 x 128; stages:
// 4 only, 3001 otherwise).
GEMM_EXPORT int ptxgen_gemm_e4m3_config(const void* A, const void* B, void* C,
                                        const float* scale_a, const float* scale_b, int M,
                                        int N, int K, int stages, int group_m, int grid,
                                        int cluster, int streamk, int tma_store) {
  return gemm_config(A, B, C, scale_a, scale_b, M, N, K, stages, group_m, grid, cluster,
                     streamk, tma_store);
}

// The default configuration (as ptxgen_gemm_bf16).
GEMM_EXPORT int ptxgen_gemm_e4m3(const void* A, const void* B, void* C, const float* scale_a,
                                 const float* scale_b, int M, int N, int K, int stages,
                                 int group_m, int grid) {
  return gemm_default(A, B, C, scale_a, scale_b, M, N, K, stages, group_m, grid);
}
#else
// C = A * B^T with a chosen kernel configuration. Returns 0, a cudaError_t, 1001 (no
// cuTensorMapEncodeTiled), 2000 + CUresult of a tensor map, 3000 (sizes not multiples of
// the 128 x 256 x 64 tile, or M not a multiple of 256 with cluster 2) or 3001 (stages not 3
// or 4, cluster not 1 or 2, streamk or tma_store not 0 or 1, or a combination not built).
// group_m: row blocks per tile group (0: 16); grid: CTAs (0: one per SM; fewer where
// clusters cannot all be resident; rounded down to a multiple of the cluster); cluster: CTAs
// per cluster sharing B tiles; streamk: split the last waves' units along k (the stream-K
// tail of gemm_kernel); tma_store: write C through shared memory and TMA stores (TMA_STORE).
GEMM_EXPORT int ptxgen_gemm_bf16_config(const void* A, const void* B, void* C, int M, int N,
                                        int K, int stages, int group_m, int grid, int cluster,
                                        int streamk, int tma_store) {
  return gemm_config(A, B, C, nullptr, nullptr, M, N, K, stages, group_m, grid, cluster,
                     streamk, tma_store);
}

// C = A * B^T with the default configuration: clusters of 2 sharing B where M is a multiple
// of 256 (single CTAs otherwise), the stream-K tail and TMA stores of C. Returns as
// ptxgen_gemm_bf16_config; stages: 3 or 4; group_m: row blocks per tile group; grid: CTAs
// (0: one per SM).
GEMM_EXPORT int ptxgen_gemm_bf16(const void* A, const void* B, void* C, int M, int N, int K,
                                 int stages, int group_m, int grid) {
  return gemm_default(A, B, C, nullptr, nullptr, M, N, K, stages, group_m, grid);
}
#endif

GEMM_EXPORT const char* ptxgen_gemm_error_string(int e) {
  return cudaGetErrorString(static_cast<cudaError_t>(e));
}
