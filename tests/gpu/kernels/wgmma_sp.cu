// wgmma.mma_async.sp on the GPU through ptxgen::ptx::wgmma_mma_async_sp{,_regs},
// wgmma_fence / commit_group / wait_group and ptxgen::WgmmaDesc only
// (tests/gpu/test_wgmma_sp.py).
//
// One warpgroup computes D (64 x N) = C + A (64 x K) * B (K x N) with a 2:4 (.tf32: 1:2)
// structured-sparse A in KSTEPS instructions. The host passes the compressed A (64 rows of
// K/2 elements, 32 bytes per instruction), B (64 bytes of K per instruction) as bytes,
// "K-major" (B: N rows of K) or, with imm-trans-b, "MN-major" (K rows of N 16-bit
// elements), C as codes, and one 32-bit metadata word per thread and instruction. The
// kernel places A and B in shared memory in the canonical layouts of the swizzle modes it
// is given (tests/gpu/kernels/wgmma_smem.cuh), or A in registers in the wgmma fragment
// layout of A (PTX ISA 9.7.15.6.2: the dense layout of the compressed 64 x K/2 matrix),
// passes the metadata word as sp-meta and the selector as imm sp-sel, and unpacks D.
//
// The cases (wgmma_sp_cases.inc, one part of them per library) are written by
// tests/gpu/build.py from forms.wgmma_sp_cases().
#include <ptxgen/ptx/wgmma.hpp>
#include <ptxgen/wgmma_desc.hpp>

#include <type_traits>

#include "common.cuh"
#include "wgmma_smem.cuh"

using namespace ptxgen::ptx;
using gpu_test::from_bits;
using gpu_test::to_bits;

namespace {

constexpr int KSTEPS = 2;             // instructions per test
constexpr int ABYTES = 32 * KSTEPS;   // bytes of a compressed row of A
constexpr int BBYTES = 64 * KSTEPS;   // bytes of a row of K of B (K-major)
constexpr int A_REGION = 8192;        // bytes of shared memory for A

struct Params {
  const std::uint8_t* a;      // [64][ABYTES], compressed
  const std::uint8_t* b;      // K-major: [N][BBYTES]; MN-major: [K][2N]
  const std::uint64_t* c;     // C codes [64][N]
  const std::uint32_t* meta;  // [KSTEPS][128]: sp-meta of each thread for each instruction
  std::uint64_t* d;           // D codes [64][N]
  std::uint64_t* descs;       // out: the descriptor words, A then B, KSTEPS each
  int* status;                // out: 0, or 1 + the first field encode_checked refused
  int swz_a, swz_b;           // WgmmaDesc::Swizzle codes: 0 none, 1 128B, 2 64B, 3 32B
  int use_c;                  // 0: the first instruction has scale-d = 0 (D = A * B)
};

template <wgmma_mma_async_sp_dtype DT>
using acc_t = std::conditional_t<
    DT == wgmma_mma_async_sp_dtype::f32, float,
    std::conditional_t<DT == wgmma_mma_async_sp_dtype::s32, std::int32_t, std::uint32_t>>;

// FAM 0: f16/bf16 (imm scale and trans), 1: tf32/fp8 (imm scale), 2: u8/s8.
template <int N, wgmma_mma_async_sp_dtype DT, wgmma_mma_async_sp_atype AT,
          wgmma_mma_async_sp_btype BT, bool SAT, int FAM, bool AREGS, int SEL, int SA, int SB,
          int TB, int ND>
__device__ __forceinline__ void issue(acc_t<DT> (&d)[ND], std::uint64_t adesc,
                                      const std::uint32_t (&areg)[4], std::uint64_t bdesc,
                                      std::uint32_t meta, bool scale_d) {
  if constexpr (AREGS) {
    if constexpr (FAM == 0) {
      wgmma_mma_async_sp_regs<N, DT, AT, BT, SAT>(d, areg, bdesc, meta, imm_t<SEL>{}, scale_d,
                                                  imm_t<SA>{}, imm_t<SB>{}, imm_t<TB>{});
    } else if constexpr (FAM == 1) {
      wgmma_mma_async_sp_regs<N, DT, AT, BT, SAT>(d, areg, bdesc, meta, imm_t<SEL>{}, scale_d,
                                                  imm_t<SA>{}, imm_t<SB>{});
    } else {
      wgmma_mma_async_sp_regs<N, DT, AT, BT, SAT>(d, areg, bdesc, meta, imm_t<SEL>{}, scale_d);
    }
  } else {
    if constexpr (FAM == 0) {
      wgmma_mma_async_sp<N, DT, AT, BT, SAT>(d, adesc, bdesc, meta, imm_t<SEL>{}, scale_d,
                                             imm_t<SA>{}, imm_t<SB>{}, imm_t<0>{}, imm_t<TB>{});
    } else if constexpr (FAM == 1) {
      wgmma_mma_async_sp<N, DT, AT, BT, SAT>(d, adesc, bdesc, meta, imm_t<SEL>{}, scale_d,
                                             imm_t<SA>{}, imm_t<SB>{});
    } else {
      wgmma_mma_async_sp<N, DT, AT, BT, SAT>(d, adesc, bdesc, meta, imm_t<SEL>{}, scale_d);
    }
  }
}

template <int N, wgmma_mma_async_sp_dtype DT, wgmma_mma_async_sp_atype AT,
          wgmma_mma_async_sp_btype BT, bool SAT, int FAM, bool AREGS, int SEL, int SA, int SB,
          int TB>
__global__ void __launch_bounds__(128, 1) wgmma_sp_kernel(Params p) {
  using R = acc_t<DT>;
  constexpr int DBITS = DT == wgmma_mma_async_sp_dtype::f16 ? 16 : 32;
  constexpr int E = 32 / DBITS;  // accumulator elements per register
  constexpr int ND = N * 64 / 128 / E;
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023));
  std::uint8_t* a_smem = smem;
  std::uint8_t* b_smem = smem + A_REGION;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, tig = lane % 4;

  // A: 64 rows of ABYTES. B: N rows of BBYTES (K-major) or 64 k-rows of 2N bytes (MN-major).
  const int a_S = 64, a_C = ABYTES / 16;
  const int b_S = TB ? 32 * KSTEPS : N, b_C = TB ? N * 2 / 16 : BBYTES / 16;
  if (!AREGS) gpu_test::copy_operand(a_smem, p.a, a_S, a_C, p.swz_a);
  gpu_test::copy_operand(b_smem, p.b, b_S, b_C, p.swz_b);
  // Generic-proxy stores read by the async proxy (wgmma): fence, then barrier.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();

  const std::uint32_t a_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(a_smem));
  const std::uint32_t b_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(b_smem));
  std::uint64_t adesc[KSTEPS], bdesc[KSTEPS];
  int status = 0;
#pragma unroll
  for (int st = 0; st < KSTEPS; ++st) {
    // A: 32 bytes (2 chunks) of the compressed rows per instruction; B: 64 bytes (4 chunks)
    // of K, or 32 k-rows when N-major.
    const auto ra = gpu_test::make_desc(a_base, false, p.swz_a, a_S, a_C, 2 * st).encode_checked();
    const auto rb =
        gpu_test::make_desc(b_base, TB != 0, p.swz_b, b_S, b_C, TB ? 32 * st : 4 * st)
            .encode_checked();
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

  // A fragments (registers): warp w holds rows 16w..16w+15 of the compressed A; register r
  // of step st holds row 16w + g + 8 (r % 2) and its 4 bytes at st * 32 + (r / 2) * 16 +
  // tig * 4.
  std::uint32_t areg[KSTEPS][4];
  std::uint32_t meta[KSTEPS];
#pragma unroll
  for (int st = 0; st < KSTEPS; ++st) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = 16 * warp + g + 8 * (r % 2);
      areg[st][r] = AREGS ? *reinterpret_cast<const std::uint32_t*>(
                                p.a + row * ABYTES + st * 32 + (r / 2) * 16 + tig * 4)
                          : 0u;
    }
    meta[st] = p.meta[st * 128 + tid];
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
    issue<N, DT, AT, BT, SAT, FAM, AREGS, SEL, SA, SB, TB, ND>(d, adesc[st], areg[st], bdesc[st],
                                                               meta[st], p.use_c || st > 0);
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

constexpr int kSmemBytes = A_REGION + 256 * BBYTES + 1024;

template <int N, wgmma_mma_async_sp_dtype DT, wgmma_mma_async_sp_atype AT,
          wgmma_mma_async_sp_btype BT, bool SAT, int FAM, bool AREGS, int SEL, int SA, int SB,
          int TB>
int launch_sel(const Params& p) {
  auto k = wgmma_sp_kernel<N, DT, AT, BT, SAT, FAM, AREGS, SEL, SA, SB, TB>;
  cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (e != cudaSuccess) return static_cast<int>(e);
  k<<<1, 128, kSmemBytes>>>(p);
  return gpu_test::finish_launch();
}

// sel: the selector value (0 .. NSEL - 1); -1 for one out of range.
template <int N, wgmma_mma_async_sp_dtype DT, wgmma_mma_async_sp_atype AT,
          wgmma_mma_async_sp_btype BT, bool SAT, int FAM, bool AREGS, int NSEL, int SA, int SB,
          int TB>
int launch(int sel, const Params& p) {
  if (sel == 0) return launch_sel<N, DT, AT, BT, SAT, FAM, AREGS, 0, SA, SB, TB>(p);
  if constexpr (NSEL > 1) {
    if (sel == 1) return launch_sel<N, DT, AT, BT, SAT, FAM, AREGS, 1, SA, SB, TB>(p);
  }
  return -1;
}

using launcher_t = int (*)(int, const Params&);

struct Case {
  int index;  // in forms.wgmma_sp_cases()
  const char* name;
  int selectors;
  launcher_t fn;
};

#define PTXGEN_WGMMA_SP_CASE(I, N, DT, AT, BT, SAT, FAM, AREGS, NSEL, SA, SB, TB, NAME)        \
  {I, NAME, NSEL,                                                                           \
   launch<N, wgmma_mma_async_sp_dtype::DT, wgmma_mma_async_sp_atype::AT,                     \
          wgmma_mma_async_sp_btype::BT, SAT, FAM, AREGS, NSEL, SA, SB, TB>},
const Case kCases[] = {
#include "wgmma_sp_cases.inc"
};
#undef PTXGEN_WGMMA_SP_CASE

}  // namespace

PTXGEN_GPU_EXPORT int wgmma_sp_count() { return int(sizeof(kCases) / sizeof(kCases[0])); }

PTXGEN_GPU_EXPORT int wgmma_sp_index(int i) { return kCases[i].index; }

PTXGEN_GPU_EXPORT const char* wgmma_sp_name(int i) { return kCases[i].name; }

PTXGEN_GPU_EXPORT int wgmma_sp_selectors(int i) { return kCases[i].selectors; }

PTXGEN_GPU_EXPORT int wgmma_sp_run(int i, int sel, const void* a, const void* b, const void* c,
                                   const void* meta, void* d, void* descs, void* status, int swz_a,
                                   int swz_b, int use_c) {
  Params p{static_cast<const std::uint8_t*>(a),    static_cast<const std::uint8_t*>(b),
           static_cast<const std::uint64_t*>(c),   static_cast<const std::uint32_t*>(meta),
           static_cast<std::uint64_t*>(d),         static_cast<std::uint64_t*>(descs),
           static_cast<int*>(status),              swz_a,
           swz_b,                                  use_c};
  return kCases[i].fn(sel, p);
}
