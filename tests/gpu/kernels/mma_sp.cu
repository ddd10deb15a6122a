// mma.sp / mma.sp::ordered_metadata on the GPU through ptxgen::ptx::mma_sp and
// ptxgen::ptx::mma_sp_ordered_metadata only (tests/gpu/test_mma_sp.py).
//
// One kernel per form and selector value, one warp. The host passes the compressed A
// (M x K/2: the non-zero elements of each row of the 2:4 sparse A, in order), B (K x N) and
// C (M x N) as raw bit patterns in uint64 ("codes"); the kernel packs them into the fragment
// registers by the PTX ISA layouts (the compressed A has the layout of the dense A of shape
// m16n8k(K/2), B and C/D those of the dense layouts extended to K), passes the metadata
// register and the selector, runs the wrapper and unpacks D.
//
// Metadata: the threads of each group of four that the selector names (4 / (number of
// selector values) consecutive threads from selector * that) get `meta_sel`, the others
// `meta_other`. The host uses one 2:4 pattern for every chunk of A (every 4-bit field of
// meta_sel is the same), so the test does not depend on which bits of which register
// describe which chunk.
//
// The list of forms (mma_sp_forms.inc) is written by tests/gpu/build.py from the forms of
// generated/include/ptxgen/ptx/mma_sp.hpp that sm_90a supports.
#include <ptxgen/ptx/mma_sp.hpp>

#include "common.cuh"

using namespace ptxgen::ptx;
using gpu_test::from_bits;
using gpu_test::mask_bits;
using gpu_test::to_bits;

namespace {

// Standard layouts, N = 8, g = lane / 4, tig = lane % 4, E elements per register:
//   compressed A reg r, element j: row = g + 8 * (r % (M/8)), col = (r / (M/8)) * 4E + tig * E + j
//   B reg r, element j:            k = r * 4E + tig * E + j,    n = g
//   C/D element i:                 row = g + 8 * (i / 2),       n = 2 * tig + i % 2
template <class OP, int SEL, class DR, int ND, class CR, int NC, int NA, int NB, int M, int KC,
          int K, int ABITS, int BBITS, int CBITS, int DBITS, int NSEL>
__global__ void mma_sparse(const std::uint64_t* __restrict__ A, const std::uint64_t* __restrict__ B,
                           const std::uint64_t* __restrict__ C, std::uint64_t* __restrict__ D,
                           std::uint32_t meta_sel, std::uint32_t meta_other) {
  constexpr int N = 8;
  constexpr int EA = 32 / ABITS;
  constexpr int EB = 32 / BBITS;
  constexpr int EC = int(sizeof(CR)) * 8 / CBITS;
  constexpr int ED = int(sizeof(DR)) * 8 / DBITS;
  constexpr int MG = M / 8;
  static_assert(NA / MG * 4 * EA == KC, "the compressed A fragment holds K / 2 columns");
  static_assert(NB * 4 * EB == K, "the B fragment holds K rows");
  static_assert(NC * EC == M * N / 32 && ND * ED == M * N / 32, "C/D fragment size");
  static_assert(SEL < NSEL, "selector out of range");

  const int lane = threadIdx.x;
  const int g = lane >> 2, tig = lane & 3;
  constexpr int HOLDERS = 4 / NSEL;  // threads of a group of four that hold metadata
  const std::uint32_t meta = (tig / HOLDERS == SEL) ? meta_sel : meta_other;

  std::uint32_t a[NA];
  std::uint32_t b[NB];
  CR c[NC];
  DR d[ND];
#pragma unroll
  for (int r = 0; r < NA; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < EA; ++j) {
      const int row = g + 8 * (r % MG);
      const int col = (r / MG) * 4 * EA + tig * EA + j;
      bits |= (A[row * KC + col] & mask_bits(ABITS)) << (j * ABITS);
    }
    a[r] = static_cast<std::uint32_t>(bits);
  }
#pragma unroll
  for (int r = 0; r < NB; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < EB; ++j) {
      const int k = r * 4 * EB + tig * EB + j;
      bits |= (B[k * N + g] & mask_bits(BBITS)) << (j * BBITS);
    }
    b[r] = static_cast<std::uint32_t>(bits);
  }
#pragma unroll
  for (int r = 0; r < NC; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < EC; ++j) {
      const int i = r * EC + j;
      bits |= (C[(g + 8 * (i / 2)) * N + 2 * tig + (i % 2)] & mask_bits(CBITS)) << (j * CBITS);
    }
    c[r] = from_bits<CR>(bits);
  }

  OP::template run<SEL>(d, a, b, c, meta);

#pragma unroll
  for (int r = 0; r < ND; ++r) {
    const std::uint64_t bits = to_bits(d[r]);
#pragma unroll
    for (int j = 0; j < ED; ++j) {
      const int i = r * ED + j;
      D[(g + 8 * (i / 2)) * N + 2 * tig + (i % 2)] = (bits >> (j * DBITS)) & mask_bits(DBITS);
    }
  }
}

using launcher_t = void (*)(int, const std::uint64_t*, const std::uint64_t*, const std::uint64_t*,
                            std::uint64_t*, std::uint32_t, std::uint32_t);

struct Form {
  const char* name;
  int selectors;
  launcher_t launch;
};

// One functor per form calls the wrapper with the selector as imm<SEL>; the launcher picks
// the kernel instance of the selector asked for.
#define PTXGEN_MMA_SP_FORM(ID, FN, PFX, SH, DT, AT, BT, CT, SAT, DR, ND, CR, NC, NA, NB, M, KC, K, \
                           AB, BB, CB, DB, NSEL, NAME)                                          \
  struct op_##ID {                                                                              \
    template <int SEL>                                                                          \
    __device__ static void run(DR (&d)[ND], const std::uint32_t (&a)[NA],                      \
                               const std::uint32_t (&b)[NB], const CR (&c)[NC],                \
                               std::uint32_t meta) {                                            \
      FN<PFX##_shape::SH, PFX##_dtype::DT, PFX##_atype::AT, PFX##_btype::BT, PFX##_ctype::CT,   \
         SAT>(d, a, b, c, meta, imm<SEL>);                                                      \
    }                                                                                           \
  };                                                                                            \
  template <int SEL>                                                                            \
  void launch_##ID##_sel(const std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* c, \
                         std::uint64_t* d, std::uint32_t ms, std::uint32_t mo) {                \
    if constexpr (SEL < NSEL) {                                                                 \
      mma_sparse<op_##ID, SEL, DR, ND, CR, NC, NA, NB, M, KC, K, AB, BB, CB, DB, NSEL>          \
          <<<1, 32>>>(a, b, c, d, ms, mo);                                                      \
    }                                                                                           \
  }                                                                                             \
  void launch_##ID(int sel, const std::uint64_t* a, const std::uint64_t* b,                     \
                   const std::uint64_t* c, std::uint64_t* d, std::uint32_t ms, std::uint32_t mo) { \
    switch (sel) {                                                                              \
      case 0: launch_##ID##_sel<0>(a, b, c, d, ms, mo); break;                                  \
      case 1: launch_##ID##_sel<1>(a, b, c, d, ms, mo); break;                                  \
      case 2: launch_##ID##_sel<2>(a, b, c, d, ms, mo); break;                                  \
      default: launch_##ID##_sel<3>(a, b, c, d, ms, mo); break;                                 \
    }                                                                                           \
  }
#include "mma_sp_forms.inc"
#undef PTXGEN_MMA_SP_FORM

const Form kForms[] = {
#define PTXGEN_MMA_SP_FORM(ID, FN, PFX, SH, DT, AT, BT, CT, SAT, DR, ND, CR, NC, NA, NB, M, KC, K, \
                           AB, BB, CB, DB, NSEL, NAME)                                          \
  {NAME, NSEL, launch_##ID},
#include "mma_sp_forms.inc"
#undef PTXGEN_MMA_SP_FORM
};

}  // namespace

PTXGEN_GPU_EXPORT int mma_sp_count() { return int(sizeof(kForms) / sizeof(kForms[0])); }

PTXGEN_GPU_EXPORT const char* mma_sp_name(int i) { return kForms[i].name; }

PTXGEN_GPU_EXPORT int mma_sp_selectors(int i) { return kForms[i].selectors; }

PTXGEN_GPU_EXPORT int mma_sp_run(int i, int sel, const void* a, const void* b, const void* c,
                                 void* d, unsigned meta_sel, unsigned meta_other) {
  if (sel < 0 || sel >= kForms[i].selectors) return -1;
  kForms[i].launch(sel, static_cast<const std::uint64_t*>(a), static_cast<const std::uint64_t*>(b),
                   static_cast<const std::uint64_t*>(c), static_cast<std::uint64_t*>(d), meta_sel,
                   meta_other);
  return gpu_test::finish_launch();
}
