// wgmma.mma_async on the GPU through ptxgen::ptx::wgmma_* and ptxgen::WgmmaDesc only
// (tests/gpu/test_wgmma.py).
//
// One warpgroup computes D (64 x N) = C + A (64 x K) * B (K x N) in KSTEPS instructions of
// 32 bytes of K each. A and B come from global memory as bytes, "K-major" (A: 64 rows of
// K, B: N rows of K) or, with imm-trans, "MN-major" (K rows of 64 / N 16-bit elements);
// the kernel places them in shared memory in the canonical layout of the swizzle mode it
// is given (PTX ISA 9.7.15.5.1, "Shared Memory Matrix Layout"; the same layouts as
// CUTLASS's make_gmma_desc) and describes them with ptxgen::WgmmaDesc. A from registers
// follows the wgmma register fragment layout of A (9.7.15.5.1.1); D the accumulator
// fragment layout (9.7.15.5.1.2).
//
// The cases (wgmma_cases.inc) are written by tests/gpu/build.py from forms.WGMMA_CASES.
#include <ptxgen/ptx/wgmma.hpp>
#include <ptxgen/wgmma_desc.hpp>

#include <type_traits>

#include "common.cuh"
#include "wgmma_smem.cuh"

using namespace ptxgen::ptx;
using gpu_test::from_bits;
using gpu_test::to_bits;

namespace {

constexpr int KSTEPS = 4;       // instructions per test, 32 bytes of K each
constexpr int KBYTES = 32 * KSTEPS;
constexpr int A_REGION = 8192;  // bytes of shared memory for A (64 x 128 bytes)

struct Params {
  const std::uint8_t* a;   // K-major: [64][KBYTES]; MN-major: [K][128]
  const std::uint8_t* b;   // K-major: [N][KBYTES]; MN-major: [K][2N]
  const std::uint64_t* c;  // C codes [64][N]
  std::uint64_t* d;        // D codes [64][N]
  std::uint64_t* descs;    // out: the descriptor words, A then B, KSTEPS each
  int* status;             // out: 0, or 1 + the first field encode_checked refused
  int swz_a, swz_b;        // WgmmaDesc::Swizzle codes: 0 none, 1 128B, 2 64B, 3 32B
  int use_c;               // 0: the first instruction has scale-d = 0 (D = A * B)
};

using gpu_test::Desc;
using gpu_test::copy_operand;
using gpu_test::make_desc;

template <wgmma_mma_async_dtype DT>
using acc_t = std::conditional_t<DT == wgmma_mma_async_dtype::f32, float,
                                 std::conditional_t<DT == wgmma_mma_async_dtype::s32, std::int32_t,
                                                    std::uint32_t>>;

// FAM 0: f16/bf16 (imm scale and trans), 1: tf32/fp8 (imm scale), 2: integer and b1.
template <int N, wgmma_mma_async_dtype DT, wgmma_mma_async_atype AT, wgmma_mma_async_btype BT,
          bool SAT, wgmma_mma_async_bitop OP, int FAM, bool AREGS, int SA, int SB, int TA, int TB,
          int ND>
__device__ __forceinline__ void issue(acc_t<DT> (&d)[ND], std::uint64_t adesc,
                                      const std::uint32_t (&areg)[4], std::uint64_t bdesc,
                                      bool scale_d) {
  if constexpr (AREGS) {
    if constexpr (FAM == 0) {
      wgmma_mma_async_regs<N, DT, AT, BT, SAT, OP>(d, areg, bdesc, scale_d, imm_t<SA>{}, imm_t<SB>{},
                                                   imm_t<TB>{});
    } else if constexpr (FAM == 1) {
      wgmma_mma_async_regs<N, DT, AT, BT, SAT, OP>(d, areg, bdesc, scale_d, imm_t<SA>{}, imm_t<SB>{});
    } else {
      wgmma_mma_async_regs<N, DT, AT, BT, SAT, OP>(d, areg, bdesc, scale_d);
    }
  } else {
    if constexpr (FAM == 0) {
      wgmma_mma_async<N, DT, AT, BT, SAT, OP>(d, adesc, bdesc, scale_d, imm_t<SA>{}, imm_t<SB>{},
                                              imm_t<TA>{}, imm_t<TB>{});
    } else if constexpr (FAM == 1) {
      wgmma_mma_async<N, DT, AT, BT, SAT, OP>(d, adesc, bdesc, scale_d, imm_t<SA>{}, imm_t<SB>{});
    } else {
      wgmma_mma_async<N, DT, AT, BT, SAT, OP>(d, adesc, bdesc, scale_d);
    }
  }
}

template <int N, wgmma_mma_async_dtype DT, wgmma_mma_async_atype AT, wgmma_mma_async_btype BT,
          bool SAT, wgmma_mma_async_bitop OP, int FAM, bool AREGS, int SA, int SB, int TA, int TB>
__global__ void __launch_bounds__(128, 1) wgmma_kernel(Params p) {
  using R = acc_t<DT>;
  constexpr int DBITS = DT == wgmma_mma_async_dtype::f16 ? 16 : 32;
  constexpr int E = 32 / DBITS;  // accumulator elements per register
  constexpr int ND = N * 64 / 128 / E;
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023));
  std::uint8_t* a_smem = smem;
  std::uint8_t* b_smem = smem + A_REGION;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, tig = lane % 4;

  // A: 64 x KBYTES (K-major) or 64 k-rows x 128 bytes (MN-major, 16-bit types only).
  // B: N x KBYTES (K-major) or 64 k-rows x 2N bytes (MN-major).
  const int a_S = 64, a_C = 8;
  const int b_S = TB ? 64 : N, b_C = TB ? N * 2 / 16 : KBYTES / 16;
  if (!AREGS) copy_operand(a_smem, p.a, a_S, a_C, p.swz_a);
  copy_operand(b_smem, p.b, b_S, b_C, p.swz_b);
  // Generic-proxy stores read by the async proxy (wgmma): fence, then barrier.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();

  const std::uint32_t a_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(a_smem));
  const std::uint32_t b_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(b_smem));
  std::uint64_t adesc[KSTEPS], bdesc[KSTEPS];
  int status = 0;
#pragma unroll
  for (int st = 0; st < KSTEPS; ++st) {
    const auto ra = make_desc(a_base, TA != 0, p.swz_a, a_S, a_C, TA ? 16 * st : 2 * st).encode_checked();
    const auto rb = make_desc(b_base, TB != 0, p.swz_b, b_S, b_C, TB ? 16 * st : 2 * st).encode_checked();
    if (!ra.ok() && status == 0) status = 1 + static_cast<int>(ra.field);
    if (!rb.ok() && status == 0) status = 100 + static_cast<int>(rb.field);
    adesc[st] = ra.value;
    bdesc[st] = rb.value;
  }
  if (tid == 0) {
    for (int st = 0; st < KSTEPS; ++st) {
      p.descs[st] = adesc[st];
      p.descs[KSTEPS + st] = bdesc[st];
    }
    *p.status = status;
  }

  // A fragments (registers): warp w holds rows 16w..16w+15; register r of step st holds
  // row 16w + g + 8 (r % 2) and the 4 bytes of K at st * 32 + (r / 2) * 16 + tig * 4.
  std::uint32_t areg[KSTEPS][4];
#pragma unroll
  for (int st = 0; st < KSTEPS; ++st) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = 16 * warp + g + 8 * (r % 2);
      areg[st][r] = AREGS ? *reinterpret_cast<const std::uint32_t*>(
                                p.a + row * KBYTES + st * 32 + (r / 2) * 16 + tig * 4)
                          : 0u;
    }
  }

  // Accumulator element e: row 16w + g + 8 ((e / 2) % 2), column 8 (e / 4) + 2 tig + e % 2.
  R d[ND];
#pragma unroll
  for (int r = 0; r < ND; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      const int e = r * E + j;
      const int row = 16 * warp + g + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * tig + (e & 1);
      const std::uint64_t code = p.use_c ? p.c[row * N + col] : 0x7e00u;  // f16 NaN poison
      bits |= (code & ((1ull << DBITS) - 1)) << (j * DBITS);
    }
    if (!p.use_c && DBITS == 32) bits = 0x7fc00001u;  // NaN / garbage: must be ignored
    d[r] = from_bits<R>(bits);
  }

  fence_operand(d);
  wgmma_fence();  // registers written above (accumulators, A fragments) before wgmma
#pragma unroll
  for (int st = 0; st < KSTEPS; ++st) {
    issue<N, DT, AT, BT, SAT, OP, FAM, AREGS, SA, SB, TA, TB, ND>(d, adesc[st], areg[st], bdesc[st],
                                                                  p.use_c || st > 0);
  }
  wgmma_commit_group();
  wgmma_wait_group(imm_t<0>{});
  fence_operand(d);

#pragma unroll
  for (int r = 0; r < ND; ++r) {
    const std::uint64_t bits = to_bits(d[r]);
#pragma unroll
    for (int j = 0; j < E; ++j) {
      const int e = r * E + j;
      const int row = 16 * warp + g + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * tig + (e & 1);
      p.d[row * N + col] = (bits >> (j * DBITS)) & ((1ull << DBITS) - 1);
    }
  }
}

constexpr int kSmemBytes = A_REGION + 256 * KBYTES + 1024;

using launcher_t = int (*)(const Params&);

template <int N, wgmma_mma_async_dtype DT, wgmma_mma_async_atype AT, wgmma_mma_async_btype BT,
          bool SAT, wgmma_mma_async_bitop OP, int FAM, bool AREGS, int SA, int SB, int TA, int TB>
int launch(const Params& p) {
  auto k = wgmma_kernel<N, DT, AT, BT, SAT, OP, FAM, AREGS, SA, SB, TA, TB>;
  cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (e != cudaSuccess) return static_cast<int>(e);
  k<<<1, 128, kSmemBytes>>>(p);
  return gpu_test::finish_launch();
}

struct Case {
  const char* name;
  launcher_t fn;
};

#define PTXGEN_WGMMA_CASE(N, DT, AT, BT, SAT, OP, FAM, AREGS, SA, SB, TA, TB, NAME)            \
  {NAME, launch<N, wgmma_mma_async_dtype::DT, wgmma_mma_async_atype::AT,                        \
                wgmma_mma_async_btype::BT, SAT, wgmma_mma_async_bitop::OP, FAM, AREGS, SA, SB, \
                TA, TB>},
const Case kCases[] = {
#include "wgmma_cases.inc"
};
#undef PTXGEN_WGMMA_CASE

}  // namespace

PTXGEN_GPU_EXPORT int wgmma_count() { return int(sizeof(kCases) / sizeof(kCases[0])); }

PTXGEN_GPU_EXPORT const char* wgmma_name(int i) { return kCases[i].name; }

PTXGEN_GPU_EXPORT int wgmma_run(int i, const void* a, const void* b, const void* c, void* d,
                                void* descs, void* status, int swz_a, int swz_b, int use_c) {
  Params p{static_cast<const std::uint8_t*>(a), static_cast<const std::uint8_t*>(b),
           static_cast<const std::uint64_t*>(c), static_cast<std::uint64_t*>(d),
           static_cast<std::uint64_t*>(descs), static_cast<int*>(status), swz_a, swz_b, use_c};
  return kCases[i].fn(p);
}
