// bf16 GEMM on Hopper (sm_90a) built on ptxgen's generated wgmma wrappers and wgmma
// matrix descriptors: C[M][N] (bf16) = A[M][K] (bf16) * B[N][K]^T (bf16), f32 accumulators
// (the "TN" layout of torch.matmul(A, B.t()) / nn.Linear).
//
//   * ptxgen (generated/include): wgmma.mma_async m64n256k16 .f32.bf16.bf16 with both
//     operands from shared memory (ptxgen::ptx::wgmma_mma_async), its descriptors
//     (ptxgen::WgmmaDesc, 128B swizzle, K-major), wgmma.fence / commit_group / wait_group.
//   * ptxgen too: the bulk tensor copy (TMA, cp.async.bulk.tensor.2d, ptxgen::ptx::
//     cp_async_bulk_tensor_load) with tensor maps from cuTensorMapEncodeTiled (taken through
//     cudaGetDriverEntryPointByVersion: no link against libcuda), the mbarriers
//     (mbarrier_init / arrive / arrive_expect_tx / try_wait_parity), fence_mbarrier_init and
//     setmaxnreg. The example holds no asm statement (tests/test_async_examples.py).
//
// Structure: a persistent kernel, one CTA per SM, 3 warpgroups. Warpgroup 0 is the
// producer (one thread issues TMA loads of 128 x 64 tiles of A and 256 x 64 tiles of B
// into a ring of STAGES shared-memory stages, each stage guarded by a "full" and an
// "empty" mbarrier); warpgroups 1 and 2 are consumers, each computing 64 x 256 of the
// 128 x 256 output tile with four m64n256k16 per stage, one wgmma group in flight
// (wait_group 1 releases the previous stage). Tiles are visited in groups of GROUP_M row
// blocks so that the CTAs running together share A and B tiles in L2.
// ptxgen first: <cuda_bf16.h> included before generated/include/ptxgen/ptx/target.hpp makes
// nvcc 13.0 report warning #62-D ("shift count is negative") in target.hpp's supported()
// during the host pass (PTXGEN_PTX_TARGET is -1 there).
#include <ptxgen/ptx/cp_async_bulk_tensor.hpp>
#include <ptxgen/ptx/fence.hpp>
#include <ptxgen/ptx/mbarrier.hpp>
#include <ptxgen/ptx/sync.hpp>
#include <ptxgen/ptx/wgmma.hpp>
#include <ptxgen/wgmma_desc.hpp>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#define GEMM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace ptxgen::ptx;

constexpr int BM = 128, BN = 256, BK = 64;
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int A_STAGE = BM * BK * 2;  // bytes
constexpr int B_STAGE = BN * BK * 2;

__host__ __device__ constexpr int smem_bytes(int stages) {
  return stages * (A_STAGE + B_STAGE) + 2 * stages * 8 + 1024;
}

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- ptxgen: mbarrier, TMA, setmaxnreg (generated/include/ptxgen/ptx/{mbarrier,
// cp_async_bulk_tensor,fence,sync}.hpp) ---------------------------------------------------
// The mbarriers are std::uint64_t objects in shared memory; the wrappers take the pointer
// (or its 32-bit shared address) and the tensor maps as const void* with int coordinates.
constexpr auto SHARED_CTA = mbarrier_arrive_space::shared_cta;

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  mbarrier_init<mbarrier_init_layout::none, mbarrier_init_space::shared_cta>(bar, count);
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
  mbarrier_arrive_expect_tx<mbarrier_arrive_sem::none, mbarrier_arrive_scope::none, SHARED_CTA>(
      bar, bytes);
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  mbarrier_arrive<mbarrier_arrive_sem::none, mbarrier_arrive_scope::none, SHARED_CTA>(bar);
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  const shared_address addr(bar);
  while (!mbarrier_try_wait_parity<mbarrier_try_wait_sem::none, mbarrier_try_wait_scope::none,
                                   mbarrier_try_wait_space::shared_cta>(addr, parity)) {
  }
}
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1,
                                            std::uint64_t* bar) {
  const int coords[2] = {c0, c1};
  cp_async_bulk_tensor_load<cp_async_bulk_tensor_dim::dim_2d,
                            cp_async_bulk_tensor_dst::shared_cluster,
                            cp_async_bulk_tensor_load_mode::tile>(dst, map, coords, bar);
}

// ---- ptxgen: descriptors and wgmma -----------------------------------------------------
// A K-major tile written by TMA with 128-byte swizzle is the canonical SWIZZLE_128B K-major
// layout: rows of 128 bytes, 8-row groups 1024 bytes apart (stride byte offset); the
// leading byte offset is not used by swizzled K-major layouts. The k-th slice of 16
// elements (32 bytes) starts 32 k bytes into the rows.
__device__ __forceinline__ std::uint64_t tile_desc(std::uint32_t addr) {
  ptxgen::WgmmaDesc d{};
  d.start_address = addr;
  d.leading_byte_offset = 16;
  d.stride_byte_offset = 1024;
  d.base_offset = 0;
  d.swizzle = ptxgen::WgmmaDesc::Swizzle::SWIZZLE_128B;
  return d.encode();
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

template <int STAGES>
__global__ void __launch_bounds__(THREADS, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_b,
                __nv_bfloat16* __restrict__ C, int M, int N, int K, int group_m) {
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023));
  std::uint8_t* s_a = smem;
  std::uint8_t* s_b = smem + STAGES * A_STAGE;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(s_b + STAGES * B_STAGE);
  std::uint64_t* empty = full + STAGES;

  const int wg = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  const int num_m = M / BM, num_n = N / BN, tiles = num_m * num_n, k_tiles = K / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], CONSUMERS);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // Producer.
    setmaxnreg<setmaxnreg_action_action::dec>(imm<40>);
    if (tid == 0) {
      int it = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int mb, nb;
        tile_coords(tile, num_m, num_n, group_m, mb, nb);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) mbar_wait(&empty[s], ((it / STAGES) + 1) & 1);
          mbar_expect_tx(&full[s], A_STAGE + B_STAGE);
          tma_load_2d(s_a + s * A_STAGE, &tm_a, kt * BK, mb * BM, &full[s]);
          tma_load_2d(s_b + s * B_STAGE, &tm_b, kt * BK, nb * BN, &full[s]);
        }
      }
    }
  } else {
    // Consumers: warpgroup c computes rows 64c..64c+63 of the tile.
    setmaxnreg<setmaxnreg_action_action::inc>(imm<232>);
    const int c = wg - 1;
    const int warp = tid / 32, lane = tid % 32;
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
    const std::uint32_t a_base = smem_u32(s_a) + c * 64 * 128;
    const std::uint32_t b_base = smem_u32(s_b);
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int mb, nb;
      tile_coords(tile, num_m, num_n, group_m, mb, nb);
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(&full[s], (it / STAGES) & 1);
        fence_operand(d);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) {
          const std::uint64_t da = tile_desc(a_base + s * A_STAGE + 32 * k);
          const std::uint64_t db = tile_desc(b_base + s * B_STAGE + 32 * k);
          wgmma_mma_async<BN, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::bf16,
                          wgmma_mma_async_btype::bf16>(d, da, db, kt > 0 || k > 0, imm_t<1>{},
                                                       imm_t<1>{}, imm_t<0>{}, imm_t<0>{});
        }
        wgmma_commit_group();
        wgmma_wait_group(imm_t<1>{});  // the previous stage's group is done: release it
        fence_operand(d);
        if (kt > 0 && tid == 0) mbar_arrive(&empty[(it - 1) % STAGES]);
      }
      wgmma_wait_group(imm_t<0>{});
      fence_operand(d);
      if (tid == 0) mbar_arrive(&empty[(it - 1) % STAGES]);

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

// A K-major [rows][K] bf16 matrix, boxes of box_rows x 64 with 128-byte swizzle.
int make_map(CUtensorMap* map, const void* ptr, int rows, int K, int box_rows) {
  encode_fn_t fn = encode_fn();
  if (fn == nullptr) return 1001;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(K), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(K) * 2};
  const cuuint32_t box[2] = {BK, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(ptr), dims,
                        strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 2000 + static_cast<int>(r);
}

template <int STAGES>
int launch(const void* A, const void* B, void* C, int M, int N, int K, int group_m, int grid) {
  CUtensorMap ma, mb;
  if (int e = make_map(&ma, A, M, K, BM)) return e;
  if (int e = make_map(&mb, B, N, K, BN)) return e;
  auto kern = gemm_kernel<STAGES>;
  cudaError_t err = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         smem_bytes(STAGES));
  if (err != cudaSuccess) return static_cast<int>(err);
  kern<<<grid, THREADS, smem_bytes(STAGES)>>>(ma, mb, static_cast<__nv_bfloat16*>(C), M, N, K,
                                             group_m);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

// C = A * B^T. Returns 0, a cudaError_t, 1001 (no cuTensorMapEncodeTiled), 2000 + CUresult
// of the tensor map, or 3000 (sizes not multiples of the 128 x 256 x 64 tile).
// stages: 3 or 4; group_m: row blocks per tile group; grid: CTAs (0: one per SM).
GEMM_EXPORT int ptxgen_gemm_bf16(const void* A, const void* B, void* C, int M, int N, int K,
                                 int stages, int group_m, int grid) {
  if (M % BM || N % BN || K % BK || K < BK) return 3000;
  if (grid <= 0) {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    grid = sms;
  }
  const int tiles = (M / BM) * (N / BN);
  if (grid > tiles) grid = tiles;
  if (group_m <= 0) group_m = 16;
  switch (stages) {
    case 3: return launch<3>(A, B, C, M, N, K, group_m, grid);
    case 4: return launch<4>(A, B, C, M, N, K, group_m, grid);
    default: return 3001;
  }
}

GEMM_EXPORT const char* ptxgen_gemm_error_string(int e) {
  return cudaGetErrorString(static_cast<cudaError_t>(e));
}
