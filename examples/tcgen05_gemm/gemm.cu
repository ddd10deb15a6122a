// bf16 GEMM for Blackwell (sm_100a; also builds for sm_103a, sm_107a, sm_110a) built on
// ptxgen's generated tcgen05 wrappers and descriptors:
//   C[M][N] (bf16) = alpha * A[M][K] (bf16) * B[N][K]^T (bf16), f32 accumulation
// (the "TN" layout of torch.matmul(A, B.t()) / nn.Linear).
//
// COMPILE-PROVEN ONLY: no Blackwell GPU was available to this project. CI builds it for
// every tcgen05 target and checks its SASS (tests/test_tcgen05_gemm_build.py); README.md
// says how to run and check it on a B200.
//
//   * ptxgen (generated/include): Tensor Memory allocation (tcgen05.alloc / dealloc /
//     relinquish_alloc_permit), the MMA (tcgen05.mma.cta_group::1.kind::f16, both operands
//     from shared memory) with its shared memory descriptors (ptxgen::SmemDesc, PTX ISA
//     Table 40, 128-byte swizzle, K-major) and instruction descriptor
//     (ptxgen::InstrDescF16, Table 42, built at compile time), tcgen05.commit to an
//     mbarrier, tcgen05.ld of the accumulator into registers with tcgen05.wait::ld,
//     tcgen05.fence around thread synchronization, and Tensor Memory addresses
//     (ptxgen::TmemAddr, PTX ISA 9.7.16.1.1).
//   * TMA (cp.async.bulk.tensor.2d) and mbarriers: examples/common/async_shim.cuh (issue
//     15 replaces its bodies with ptxgen's generated wrappers; this file calls nothing
//     else). No asm statement in this file.
//
// Structure: one CTA of 4 warps (one warpgroup) per 128 x 128 output tile. Warp 0 allocates
// 128 Tensor Memory columns (the 128 x 128 f32 accumulator: lane = row, column = column)
// and its lane 0 is the TMA producer: 128 x 64 tiles of A and B into a ring of STAGES
// shared-memory stages, each guarded by a "full" mbarrier (TMA bytes arrive) and an "empty"
// mbarrier (tcgen05.commit arrives once the MMAs that read the stage are done). Warp 1's
// lane 0 issues four m128n128k16 MMAs per stage (K = 64 = 4 x 16 along the 128-byte
// swizzle atom) and, after the last stage, commits to the "done" mbarrier. Epilogue: every
// warp w waits on "done", loads its 32 lanes (rows 32w .. 32w+31; a warp may only reach
// those, PTX ISA 9.7.16.8.1) 32 columns at a time with tcgen05.ld.32x32b.x32, scales by
// alpha, rounds to bf16 and stores its row segment.
#include <ptxgen/instr_desc.hpp>
#include <ptxgen/ptx/tcgen05_mma.hpp>
#include <ptxgen/ptx/tcgen05_tmem.hpp>
#include <ptxgen/smem_desc.hpp>
#include <ptxgen/tmem_addr.hpp>

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "../common/async_shim.cuh"

#define GEMM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace ptxgen::ptx;

constexpr int BM = 128, BN = 128, BK = 64, UMMA_K = 16;
constexpr int THREADS = 128;
constexpr int TMEM_COLS = 128;  // f32 accumulator: BN columns, power of 2 in [32, 512]
constexpr int A_STAGE = BM * BK * 2;      // bytes (bf16)
constexpr int B_STAGE = BN * BK * 2;

__host__ __device__ constexpr int smem_bytes(int stages) {
  // stages (1024-aligned for the 128-byte swizzle) + barriers + the TMEM address slot,
  // + 1024 to align the dynamic shared memory base
  return stages * (A_STAGE + B_STAGE) + (2 * stages + 1) * 8 + 16 + 1024;
}

// The instruction descriptor (PTX ISA Table 42, .kind::f16): D f32, A and B bf16, both
// K-major (not transposed), dense, M = 128, N = 128. Checked at compile time.
constexpr std::uint32_t IDESC = ptxgen::InstrDescF16{}
                                    .with_dtype(ptxgen::InstrDescF16::Dtype::F32)
                                    .with_atype(ptxgen::InstrDescF16::Atype::BF16)
                                    .with_btype(ptxgen::InstrDescF16::Btype::BF16)
                                    .with_m(BM)
                                    .with_n(BN)
                                    .encode();

// The shared memory descriptor (PTX ISA Table 40) of a K-major operand tile of `rows` x 64
// bf16 written by TMA with 128-byte swizzle: rows of 128 bytes, 8-row core-matrix groups
// 1024 bytes apart (SBO); LBO is not used by a swizzled K-major layout whose K extent fits
// one swizzle atom (16 bytes, as CUTLASS writes it). `k` (0..3) selects the 16-element K
// slice: its start is 32 bytes further into the same swizzle atom. The stage is
// 1024-aligned, so the pattern starts at a 1024-byte boundary (base offset 0).
__device__ __forceinline__ std::uint64_t operand_desc(std::uint32_t stage_addr, int k) {
  ptxgen::SmemDesc d{};
  d.start_address = stage_addr + static_cast<std::uint32_t>(k * UMMA_K * 2);
  d.leading_byte_offset = 16;
  d.stride_byte_offset = 1024;
  d.base_offset = ptxgen::SmemDesc::base_offset_for(stage_addr, ptxgen::SmemDesc::Swizzle::SWIZZLE_128B);
  d.swizzle = ptxgen::SmemDesc::Swizzle::SWIZZLE_128B;
  return d.encode();
}

// f32 -> bf16 bits, rounding to nearest even (NaN stays a quiet NaN). Done by hand so that
// the example needs no <cuda_bf16.h> (whose <nv/target> the CUDA 13.5 nvcc wheels lack).
__device__ __forceinline__ std::uint32_t bf16_bits(float x) {
  const std::uint32_t u = __float_as_uint(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

__device__ __forceinline__ void wait(std::uint64_t* bar, std::uint32_t parity) {
  while (!async_shim::mbarrier_try_wait_parity(bar, parity)) {
  }
}

template <int STAGES>
__global__ void __launch_bounds__(THREADS, 1)
    tcgen05_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, std::uint16_t* C, int M,
                        int N, int K, float alpha) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  unsigned char* a_stages = smem;
  unsigned char* b_stages = smem + STAGES * A_STAGE;
  auto* full = reinterpret_cast<std::uint64_t*>(b_stages + STAGES * B_STAGE);
  std::uint64_t* empty = full + STAGES;
  std::uint64_t* done = empty + STAGES;
  auto* tmem_slot = reinterpret_cast<std::uint32_t*>(done + 1);

  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int m0 = static_cast<int>(blockIdx.y) * BM;
  const int n0 = static_cast<int>(blockIdx.x) * BN;
  const int k_blocks = K / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      async_shim::mbarrier_init(&full[s], 1);
      async_shim::mbarrier_init(&empty[s], 1);
    }
    async_shim::mbarrier_init(done, 1);
    async_shim::fence_mbarrier_init_release_cluster();
  }
  if (warp == 0) {  // warp-collective: the address of the allocation lands in tmem_slot
    // imm<>: a column count tcgen05.alloc does not take fails to compile
    tcgen05_alloc<1, tcgen05_alloc_ss::shared_cta>(async_shim::smem_u32(tmem_slot), imm<TMEM_COLS>);
    tcgen05_relinquish_alloc_permit<1>();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const std::uint32_t tmem_base = *tmem_slot;  // lane 0, the allocation's first column

  if (warp == 0 && lane == 0) {
    // TMA producer
    for (int kb = 0; kb < k_blocks; ++kb) {
      const int s = kb % STAGES;
      const std::uint32_t phase = static_cast<std::uint32_t>(kb / STAGES) & 1u;
      wait(&empty[s], phase ^ 1u);  // a fresh barrier passes parity 1 at once
      async_shim::mbarrier_arrive_expect_tx(&full[s], A_STAGE + B_STAGE);
      async_shim::cp_async_bulk_tensor_2d_global_to_shared(a_stages + s * A_STAGE, &map_a,
                                                           kb * BK, m0, &full[s]);
      async_shim::cp_async_bulk_tensor_2d_global_to_shared(b_stages + s * B_STAGE, &map_b,
                                                           kb * BK, n0, &full[s]);
    }
  } else if (warp == 1 && lane == 0) {
    // MMA issuer: D (Tensor Memory) += A (smem) * B (smem)^T
    for (int kb = 0; kb < k_blocks; ++kb) {
      const int s = kb % STAGES;
      wait(&full[s], static_cast<std::uint32_t>(kb / STAGES) & 1u);
      tcgen05_fence_after_thread_sync();
      const std::uint32_t a_addr = async_shim::smem_u32(a_stages + s * A_STAGE);
      const std::uint32_t b_addr = async_shim::smem_u32(b_stages + s * B_STAGE);
#pragma unroll
      for (int k = 0; k < BK / UMMA_K; ++k) {
        tcgen05_mma<1, tcgen05_mma_kind::f16>(tmem_base, operand_desc(a_addr, k),
                                              operand_desc(b_addr, k), IDESC, kb > 0 || k > 0);
      }
      // the stage is free again once these MMAs have read it
      tcgen05_commit<1, tcgen05_commit_ss::shared_cluster>(async_shim::smem_u32(&empty[s]));
    }
    tcgen05_commit<1, tcgen05_commit_ss::shared_cluster>(async_shim::smem_u32(done));
  }

  // Epilogue: every warp reads its 32 lanes of the accumulator.
  __syncwarp();
  wait(done, 0);
  tcgen05_fence_after_thread_sync();
  const ptxgen::TmemAddr base = ptxgen::TmemAddr::decode(tmem_base);
  const int row = m0 + warp * 32 + lane;
#pragma unroll 1
  for (int c = 0; c < BN; c += 32) {
    ptxgen::TmemAddr at = base;
    at.lane += static_cast<std::uint32_t>(warp * 32);
    at.column += static_cast<std::uint32_t>(c);
    std::uint32_t r[32];
    tcgen05_ld<tcgen05_ld_shape::shape_32x32b, 32>(r, at.encode());
    tcgen05_wait_ld();
    fence_operand(r);  // the registers are defined only after the wait: no use moves above it
    if (row < M) {
      // 32 bf16 = 64 bytes of the row, as 16 words of two bf16 each
      auto* out = reinterpret_cast<std::uint32_t*>(
          C + static_cast<std::size_t>(row) * static_cast<std::size_t>(N) + n0 + c);
#pragma unroll
      for (int j = 0; j < 32; j += 2) {
        out[j / 2] = bf16_bits(alpha * __uint_as_float(r[j])) |
                     (bf16_bits(alpha * __uint_as_float(r[j + 1])) << 16);
      }
    }
  }

  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 0) {
    tcgen05_fence_after_thread_sync();
    tcgen05_dealloc<1>(tmem_base, imm<TMEM_COLS>);
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

// A K-major [rows][K] bf16 matrix, boxes of 128 rows x 64 with 128-byte swizzle.
int make_map(CUtensorMap* map, const void* ptr, int rows, int K) {
  encode_fn_t fn = encode_fn();
  if (fn == nullptr) return 1001;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(K), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(K) * 2};
  const cuuint32_t box[2] = {BK, 128};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(ptr), dims,
                        strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 2000 + static_cast<int>(r);
}

template <int STAGES>
int launch(const void* A, const void* B, void* C, int M, int N, int K, float alpha) {
  CUtensorMap ma, mb;
  if (int e = make_map(&ma, A, M, K)) return e;
  if (int e = make_map(&mb, B, N, K)) return e;
  auto kern = tcgen05_gemm_kernel<STAGES>;
  cudaError_t err = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         smem_bytes(STAGES));
  if (err != cudaSuccess) return static_cast<int>(err);
  const dim3 grid(static_cast<unsigned>(N / BN), static_cast<unsigned>(M / BM));
  kern<<<grid, THREADS, smem_bytes(STAGES)>>>(ma, mb, static_cast<std::uint16_t*>(C), M, N, K,
                                              alpha);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

// C = alpha * A * B^T. Returns 0, a cudaError_t, 1001 (no cuTensorMapEncodeTiled),
// 2000 + CUresult of the tensor map, 3000 (sizes not multiples of the 128 x 128 x 64 tile)
// or 3001 (stages not 2 or 4).
GEMM_EXPORT int ptxgen_tcgen05_gemm_bf16(const void* A, const void* B, void* C, int M, int N,
                                         int K, float alpha, int stages) {
  if (M % BM || N % BN || K % BK || K < BK) return 3000;
  switch (stages) {
    case 2: return launch<2>(A, B, C, M, N, K, alpha);
    case 4: return launch<4>(A, B, C, M, N, K, alpha);
    default: return 3001;
  }
}

GEMM_EXPORT const char* ptxgen_tcgen05_gemm_error_string(int e) {
  return cudaGetErrorString(static_cast<cudaError_t>(e));
}
