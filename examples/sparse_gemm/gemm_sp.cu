// 2:4-sparse bf16 GEMM on Hopper (sm_90a) built on ptxgen's generated wgmma.mma_async.sp
// wrappers and wgmma matrix descriptors: C[M][N] (bf16) = A[M][K] * B[N][K]^T, f32
// accumulators, where A is 2:4 structured-sparse along K and passed compressed:
//
//   A_c[M][K/2] (bf16)  the two kept elements of each group of 4 along K, in order;
//   E (M K / 8 bytes)   the metadata: per group a 4-bit field, bits 1:0 / 3:2 = the positions
//                       (0..3) of the first / second kept element, pre-arranged in the order
//                       the consumer threads read it (see meta_layout below and bench.py).
//
//   * ptxgen (generated/include): wgmma.mma_async.sp m64n256k32 .f32.bf16.bf16 with A and B
//     from shared memory (ptxgen::ptx::wgmma_mma_async_sp), its descriptors
//     (ptxgen::WgmmaDesc: 64B swizzle for the compressed A, 128B swizzle for B, K-major),
//     wgmma.fence / commit_group / wait_group, fence_operand.
//   * examples/common/async_shim.cuh: the TMA (cp.async.bulk.tensor.2d, its
//     .multicast::cluster form, and the non-tensor cp.async.bulk for E), mbarrier, cluster
//     (barrier.cluster, mapa) and setmaxnreg forms, each one call of a ptxgen wrapper (no asm
//     anywhere in the example). Tensor maps from cuTensorMapEncodeTiled through
//     cudaGetDriverEntryPointByVersion (no link against libcuda).
//
// Structure (as examples/wgmma_gemm): a persistent kernel, one CTA per SM, 3 warpgroups.
// Warpgroup 0 is the producer: one thread loads, per stage, the 128 x 32 compressed A tile
// (8 KB), the 256 x 64 B tile (32 KB) and the tile's 1 KB of metadata into a ring of STAGES
// shared-memory stages, each guarded by a "full" and an "empty" mbarrier. Warpgroups 1 and 2
// each compute 64 x 256 of the 128 x 256 output tile with two m64n256k32 per stage (64 dense
// K) as one wgmma group, waited for (wait_group 0: see consume_stages) before the stage is
// released; the two consumers' groups alternate on the tensor cores. With cluster = 2 (4),
// two (four) CTAs share each B tile through TMA multicast (see gemm_sp_kernel). With G = 2
// (group_stages) a group covers two stages (see consume_stages and the consumer loop).
//
// Metadata layout (PTX ISA 9.7.15.6.2, Figure 176; tests/gpu/test_wgmma_sp.py checks it
// instruction by instruction): with sp-sel 0, thread 4g + j (j = 0, 1) of warp w holds, for
// an m64nNk32 instruction, the fields of rows 16w + g (bits 15:0) and 16w + g + 8 (bits
// 31:16), 4 groups = 16 columns from column 16j each; threads 4g + 2, 4g + 3 are not read.
// meta_layout: per (row block of 128, k block of 64) 1 KB, ordered [warpgroup][warp][g][j]
// [instruction] of 32-bit words, so each consumer thread reads its two words with one 8-byte
// load (threads 4g + 2 + j read the same words as 4g + j).
//
// ptxgen first: <cuda_bf16.h> included before generated/include/ptxgen/ptx/target.hpp makes
// nvcc 13.0 report warning #62-D in the host pass (see examples/wgmma_gemm/gemm.cu).
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

constexpr int BM = 128, BN = 256, BK = 64;  // BK: dense K per stage
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int A_STAGE = BM * (BK / 2) * 2;  // bytes: compressed A, 128 rows of 64 bytes
constexpr int B_STAGE = BN * BK * 2;        // 256 rows of 128 bytes
constexpr int E_STAGE = BM * BK / 8;        // 1 KB of metadata
constexpr int A_WG = 64 * (BK / 2) * 2;     // bytes of A per consumer warpgroup

__host__ __device__ constexpr int smem_bytes(int stages) {
  return stages * (A_STAGE + B_STAGE + E_STAGE) + 2 * stages * 8 + 1024;
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

// ---- ptxgen: descriptors -----------------------------------------------------------------
// TMA with 64B (A) / 128B (B) swizzle writes the canonical K-major swizzled layouts: rows of
// 64 / 128 bytes, 8-row groups 512 / 1024 bytes apart (stride byte offset); the leading byte
// offset is not used by swizzled K-major layouts. Instruction k of a stage starts 32 k bytes
// into the compressed rows of A and 64 k bytes into the rows of B.
//
// CHECKED: encode() (checks every field at run time, traps on an invalid one: the kernels of
// one stage per group, as written by hand first). Unchecked: encode_unchecked() (the kernels
// of two stages per group, issue 29): no branches between the wait for a group and the next
// issue; the fields are checked at compile time instead (below), the run-time addresses
// being shared-memory offsets below 228 KB, which the 18-bit field holds.
__host__ __device__ constexpr ptxgen::WgmmaDesc desc_fields(std::uint32_t addr, bool b) {
  ptxgen::WgmmaDesc d{};
  d.start_address = addr;
  d.leading_byte_offset = 16;
  d.stride_byte_offset = b ? 1024 : 512;
  d.base_offset = 0;
  d.swizzle = b ? ptxgen::WgmmaDesc::Swizzle::SWIZZLE_128B : ptxgen::WgmmaDesc::Swizzle::SWIZZLE_64B;
  return d;
}

template <bool CHECKED = true>
__device__ __forceinline__ std::uint64_t desc_a(std::uint32_t addr) {
  const ptxgen::WgmmaDesc d = desc_fields(addr, false);
  return CHECKED ? d.encode() : d.encode_unchecked();
}

template <bool CHECKED = true>
__device__ __forceinline__ std::uint64_t desc_b(std::uint32_t addr) {
  const ptxgen::WgmmaDesc d = desc_fields(addr, true);
  return CHECKED ? d.encode() : d.encode_unchecked();
}

// One stage of a consumer warpgroup: the stage's two m64n256k32 (64 dense K; instruction k
// starts 32 k bytes into the compressed rows of A and 64 k bytes into the rows of B, with
// sp-meta word k) as one wgmma group, waited for before returning (see the consumer loop).
// The descriptors are computed before the fence so that only the two instructions lie
// between it and the commit.
//
// G stages per group (GROUP_STAGES, issue 29): the consumer waits for G stages and issues
// their 2 G instructions as one group, so that the wait for the group's completion (which
// the sp-meta race forces, see the consumer loop) comes once per G stages.
// The unchecked descriptors' fields at the largest offsets the kernels use are valid.
static_assert(desc_fields(5 * B_STAGE + 5 * A_STAGE - A_WG + 32, false).encode() != 0);
static_assert(desc_fields(5 * B_STAGE - B_STAGE + 64, true).encode() != 0);

template <int G>
__device__ __forceinline__ void consume_stages(float (&d)[BN / 2], const uint2 (&meta)[G],
                                               const std::uint32_t (&a_stage)[G],
                                               const std::uint32_t (&b_stage)[G],
                                               bool accumulate) {
  std::uint64_t da[2 * G], db[2 * G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    da[2 * g] = desc_a<G == 1>(a_stage[g]);
    da[2 * g + 1] = desc_a<G == 1>(a_stage[g] + 32);
    db[2 * g] = desc_b<G == 1>(b_stage[g]);
    db[2 * g + 1] = desc_b<G == 1>(b_stage[g] + 64);
  }
  fence_operand(d);
  wgmma_fence();  // after the register writes (accumulators, sp-meta) it orders
#pragma unroll
  for (int g = 0; g < G; ++g) {
    wgmma_mma_async_sp<BN, wgmma_mma_async_sp_dtype::f32, wgmma_mma_async_sp_atype::bf16,
                       wgmma_mma_async_sp_btype::bf16>(d, da[2 * g], db[2 * g], meta[g].x,
                                                       imm_t<0>{}, accumulate || g > 0,
                                                       imm_t<1>{}, imm_t<1>{}, imm_t<0>{},
                                                       imm_t<0>{});
    wgmma_mma_async_sp<BN, wgmma_mma_async_sp_dtype::f32, wgmma_mma_async_sp_atype::bf16,
                       wgmma_mma_async_sp_btype::bf16>(d, da[2 * g + 1], db[2 * g + 1],
                                                       meta[g].y, imm_t<0>{}, true, imm_t<1>{},
                                                       imm_t<1>{}, imm_t<0>{}, imm_t<0>{});
    if (G > 1) wgmma_commit_group();  // one commit group per stage: released one by one
  }
  if (G == 1) wgmma_commit_group();
}

// Waits for the group issued by consume_stages (see the consumer loop for why at once).
__device__ __forceinline__ void finish_stages(float (&d)[BN / 2]) {
  wgmma_wait_group(imm_t<0>{});
  fence_operand(d);
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

// CLUSTER 1: one CTA per tile as above. CLUSTER 2 (4): CTAs ci .. ci + CLUSTER - 1 form a
// cluster that works on CLUSTER row blocks of the same column block; each loads its own A and
// metadata and 1 / CLUSTER of the B tile (256 / CLUSTER of its rows), multicast into every
// CTA's shared memory of the cluster, so B crosses L2 once for them. A stage is then released
// to the producers only when the consumers of every CTA are done with it (the "empty" barrier
// counts 2 CLUSTER arrivals, 2 of them from each other CTA).
template <int STAGES, int CLUSTER, int G>
__global__ void __launch_bounds__(THREADS, 1)
    gemm_sp_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                   const std::uint8_t* __restrict__ E, __nv_bfloat16* __restrict__ C, int M, int N,
                   int K, int group_m) {
  extern __shared__ std::uint8_t smem_raw[];
  // 1024-byte aligned by pointer arithmetic on smem_raw, so that the compiler still sees
  // shared memory (the metadata loads below stay LDS, not generic loads).
  std::uint8_t* smem = smem_raw + ((1024 - (shim::smem_u32(smem_raw) & 1023)) & 1023);
  std::uint8_t* s_b = smem;                       // 1024-aligned stages of 32 KB
  std::uint8_t* s_a = s_b + STAGES * B_STAGE;     // 8 KB each
  std::uint8_t* s_e = s_a + STAGES * A_STAGE;     // 1 KB each
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(s_e + STAGES * E_STAGE);
  std::uint64_t* empty = full + STAGES;

  const int wg = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  const int num_m = M / BM, num_n = N / BN, k_tiles = K / BK;
  // The work units: tiles (CLUSTER 1), or pairs of row blocks 2u, 2u + 1 of one column block
  // (CLUSTER 2: the CTA of cluster rank r takes row block 2u + r).
  const int rank = CLUSTER > 1 ? static_cast<int>(shim::cluster_ctarank()) : 0;
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
  if constexpr (CLUSTER > 1) {  // the other CTAs' barriers are initialised before any use
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
      for (int unit = first; unit < units; unit += step) {
        int mu, nb;
        tile_coords(unit, num_m / CLUSTER, num_n, unit_group_m, mu, nb);
        const int mb = mu * CLUSTER + rank;
        const std::uint8_t* e_tile = E + static_cast<std::size_t>(mb) * k_tiles * E_STAGE;
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) {
            wait_parity(&empty[s], ((it / STAGES) + 1) & 1, gave_up);
          }
          shim::mbarrier_arrive_expect_tx(&full[s], A_STAGE + B_STAGE + E_STAGE);
          shim::cp_async_bulk_tensor_2d_global_to_shared(s_a + s * A_STAGE, &tm_a, kt * (BK / 2),
                                                         mb * BM, &full[s]);
          if constexpr (CLUSTER > 1) {
            shim::cp_async_bulk_tensor_2d_global_to_shared_multicast(
                s_b + s * B_STAGE + rank * (B_STAGE / CLUSTER), &tm_b, kt * BK,
                nb * BN + rank * (BN / CLUSTER), &full[s], (1u << CLUSTER) - 1);
          } else {
            shim::cp_async_bulk_tensor_2d_global_to_shared(s_b + s * B_STAGE, &tm_b, kt * BK,
                                                           nb * BN, &full[s]);
          }
          shim::cp_async_bulk_global_to_shared(s_e + s * E_STAGE, e_tile + kt * E_STAGE,
                                               E_STAGE, &full[s]);
        }
      }
    }
  } else {
    // Consumers: warpgroup c computes rows 64c..64c+63 of the tile.
    shim::setmaxnreg_inc<232>();
    const int c = wg - 1;
    const int warp = tid / 32, lane = tid % 32;
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
    const std::uint32_t a_base = shim::smem_u32(s_a) + c * A_WG;
    const std::uint32_t b_base = shim::smem_u32(s_b);
    // This thread's two metadata words (instructions 0 and 1) of each stage.
    const int e_off = (((c * 4 + warp) * 8 + lane / 4) * 2 + (lane & 1)) * 8;
    // The other CTAs' "empty" barriers (CLUSTER > 1).
    std::uint32_t peer_empty[CLUSTER > 1 ? CLUSTER - 1 : 1];
#pragma unroll
    for (int i = 0; i + 1 < CLUSTER; ++i) {
      peer_empty[i] = shim::mapa_shared_cluster(shim::smem_u32(empty), rank ^ (i + 1));
    }
    // sp-meta, like the A fragment registers, is read by the tensor cores when the
    // instruction executes, not when it is issued, and ptxas 13.0 treats its register as free
    // once the instruction is issued: with one group left in flight (wait_group 1, as
    // examples/wgmma_gemm does), the next stage's metadata load landed in the register of the
    // group still queued and the H100 computed with it (wrong C, worse the less the consumer
    // waited for data). fence_operand cannot prevent that: it binds nvcc's front end, and the
    // empty asm does not reach ptxas. So each stage waits for its own group (wait_group 0,
    // in finish_stages) before the next metadata load, as CUTLASS's sparse mainloop does;
    // the other consumer warpgroup's group keeps the tensor cores busy meanwhile.
    int it = 0;
    for (int unit = first; unit < units; unit += step) {
      int mu, nb;
      tile_coords(unit, num_m / CLUSTER, num_n, unit_group_m, mu, nb);
      const int mb = mu * CLUSTER + rank;
      for (int kt = 0; kt < k_tiles; kt += G, it += G) {  // k_tiles: a multiple of G
        uint2 meta[G];
        std::uint32_t a_st[G], b_st[G];
#pragma unroll
        for (int g = 0; g < G; ++g) {
          const int s = (it + g) % STAGES;
          // G > 1: the group's stages were waited for while the previous group ran (below),
          // except the first group of a tile.
          if (G == 1 || kt == 0) wait_parity(&full[s], ((it + g) / STAGES) & 1, gave_up);
          meta[g] = *reinterpret_cast<const uint2*>(s_e + s * E_STAGE + e_off);
          a_st[g] = a_base + s * A_STAGE;
          b_st[g] = b_base + s * B_STAGE;
        }
        consume_stages<G>(d, meta, a_st, b_st, kt > 0);
        if constexpr (G > 1) {  // the next group's stages of this tile, while this one runs
          if (kt + G < k_tiles) {
#pragma unroll
            for (int g = 0; g < G; ++g) {
              const int n = it + G + g;
              wait_parity(&full[n % STAGES], (n / STAGES) & 1, gave_up);
            }
          }
        }
        auto release = [&](int s) {  // this warpgroup is done with stage s
          if (tid == 0) {
            shim::mbarrier_arrive(&empty[s]);
#pragma unroll
            for (int i = 0; i + 1 < CLUSTER; ++i) {
              shim::mbarrier_arrive_shared_cluster(peer_empty[i] + 8 * s);
            }
          }
        };
        if constexpr (G == 2) {  // the first stage goes back while the second one's run
          wgmma_wait_group(imm_t<1>{});
          fence_operand(d);
          release(it % STAGES);
          finish_stages(d);
          release((it + 1) % STAGES);
        } else {
          finish_stages(d);
#pragma unroll
          for (int g = 0; g < G; ++g) release((it + g) % STAGES);
        }
      }

      // Epilogue: accumulator element e is row 16 warp + lane/4 + 8 ((e/2) % 2), column
      // 8 (e/4) + 2 (lane % 4) + e % 2 of this warpgroup's 64 x 256 block.
      const int row0 = mb * BM + c * 64 + warp * 16 + lane / 4;
      const int col0 = nb * BN + 2 * (lane % 4);
#pragma unroll
      for (int e = 0; e < BN / 2; e += 2) {
        const int row = row0 + 8 * ((e >> 1) & 1);
        const int col = col0 + 8 * (e >> 2);
        *reinterpret_cast<__nv_bfloat162*>(C + static_cast<std::size_t>(row) * N + col) =
            __floats2bfloat162_rn(d[e], d[e + 1]);
      }
    }
  }
  if constexpr (CLUSTER > 1) {  // no CTA leaves while another may still signal it
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

// A row-major [rows][cols] bf16 matrix, boxes of box_rows x box_cols.
int make_map(CUtensorMap* map, const void* ptr, int rows, int cols, int box_rows, int box_cols,
             CUtensorMapSwizzle swizzle) {
  encode_fn_t fn = encode_fn();
  if (fn == nullptr) return 1001;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(ptr), dims,
                        strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 2000 + static_cast<int>(r);
}

template <int STAGES, int CLUSTER, int G = 1>
int launch(const void* A, const void* E, const void* B, void* C, int M, int N, int K, int group_m,
           int grid) {
  CUtensorMap ma, mb;
  if (int e = make_map(&ma, A, M, K / 2, BM, BK / 2, CU_TENSOR_MAP_SWIZZLE_64B)) return e;
  if (int e = make_map(&mb, B, N, K, BN / CLUSTER, BK, CU_TENSOR_MAP_SWIZZLE_128B)) return e;
  auto kern = gemm_sp_kernel<STAGES, CLUSTER, G>;
  cudaError_t err = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         smem_bytes(STAGES));
  if (err != cudaSuccess) return static_cast<int>(err);
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  if constexpr (CLUSTER > 2) {  // no more clusters than the GPCs can hold at once
    cfg.gridDim = dim3(static_cast<unsigned>(grid));
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem_bytes(STAGES);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg) == cudaSuccess && clusters > 0 &&
        clusters * CLUSTER < grid) {
      grid = clusters * CLUSTER;
    }
    (void)cudaGetLastError();  // a failed query must not read as the launch's error
  }
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(THREADS);
  cfg.dynamicSmemBytes = smem_bytes(STAGES);
  cfg.stream = nullptr;
  cfg.attrs = attr;
  cfg.numAttrs = CLUSTER > 1 ? 1 : 0;  // CLUSTER 1: a plain launch
  err = cudaLaunchKernelEx(&cfg, kern, ma, mb, static_cast<const std::uint8_t*>(E),
                           static_cast<__nv_bfloat16*>(C), M, N, K, group_m);
  if (err != cudaSuccess) return static_cast<int>(err);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

// C = A * B^T with A 2:4-sparse, given as A_c (M x K/2 bf16) and E (M K / 8 bytes, the layout
// above). Returns 0, a cudaError_t, 1001 (no cuTensorMapEncodeTiled), 2000 + CUresult of the
// tensor map, 3000 (sizes not multiples of the 128 x 256 x 64 tile, or M of 256 with
// cluster 2) or 3001 (stages not 4 or 5, cluster not 1 or 2). group_m: row blocks per tile
// group; grid: CTAs (0: one per SM; rounded down to a multiple of the cluster); cluster: CTAs
// per cluster sharing B tiles (CLUSTER above).
GEMM_EXPORT int ptxgen_gemm_sp_bf16_config(const void* A_c, const void* E, const void* B,
                                           void* C, int M, int N, int K, int stages,
                                           int group_m, int grid, int cluster,
                                           int group_stages) {
  if (M % BM || N % BN || K % BK || K < BK) return 3000;
  if ((cluster != 1 && cluster != 2 && cluster != 4) ||
      (group_stages != 1 && group_stages != 2)) {
    return 3001;
  }
  if (M % (BM * cluster) || (K / BK) % group_stages) return 3000;
  if (grid <= 0) {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    grid = sms;
  }
  const int tiles = (M / BM) * (N / BN);
  if (grid > tiles) grid = tiles;
  grid -= grid % cluster;
  if (group_m <= 0) group_m = 16;
  switch (group_stages * 100 + stages * 10 + cluster) {
    case 141: return launch<4, 1>(A_c, E, B, C, M, N, K, group_m, grid);
    case 142: return launch<4, 2>(A_c, E, B, C, M, N, K, group_m, grid);
    case 151: return launch<5, 1>(A_c, E, B, C, M, N, K, group_m, grid);
    case 152: return launch<5, 2>(A_c, E, B, C, M, N, K, group_m, grid);
#if !defined(PTXGEN_GEMM_SP_HAND_WRITTEN_KERNELS)  // the hand-written version's kernels only
    case 154: return launch<5, 4>(A_c, E, B, C, M, N, K, group_m, grid);
    case 251: return launch<5, 1, 2>(A_c, E, B, C, M, N, K, group_m, grid);
    case 242: return launch<4, 2, 2>(A_c, E, B, C, M, N, K, group_m, grid);
    case 252: return launch<5, 2, 2>(A_c, E, B, C, M, N, K, group_m, grid);
    case 254: return launch<5, 4, 2>(A_c, E, B, C, M, N, K, group_m, grid);
#endif
    default: return 3001;
  }
}

// C = A * B^T with A 2:4-sparse, given as A_c (M x K/2 bf16) and E (M K / 8 bytes, the layout
// above), one stage per wgmma group. Returns 0, a cudaError_t, 1001 (no
// cuTensorMapEncodeTiled), 2000 + CUresult of the tensor map, 3000 (sizes not multiples of
// the 128 x 256 x 64 tile, or M not a multiple of 128 cluster) or 3001 (stages not 4 or 5,
// cluster not 1, 2 or 4, or a combination not built). group_m: row blocks per tile group;
// grid: CTAs (0: one per SM; rounded down to a multiple of the cluster, and with clusters of
// 4 to as many as can be resident); cluster: CTAs per cluster sharing B tiles (CLUSTER
// above). ptxgen_gemm_sp_bf16_config adds group_stages (1 or 2: stages per wgmma group; 2
// needs K a multiple of 128).
GEMM_EXPORT int ptxgen_gemm_sp_bf16(const void* A_c, const void* E, const void* B, void* C, int M,
                                    int N, int K, int stages, int group_m, int grid,
                                    int cluster) {
  return ptxgen_gemm_sp_bf16_config(A_c, E, B, C, M, N, K, stages, group_m, grid, cluster, 1);
}

GEMM_EXPORT const char* ptxgen_gemm_sp_error_string(int e) {
  return cudaGetErrorString(static_cast<cudaError_t>(e));
}
