// mma.sync on the GPU through ptxgen::ptx::mma_sync only (tests/gpu/test_mma_sync.py).
//
// One kernel per form, one warp. The host passes every element of A (M x K, row-major),
// B (K x N, row-major) and C (M x N) as its raw bit pattern in a uint64 ("code"); the
// kernel packs the codes into the fragment registers by the PTX ISA fragment layouts
// (9.7.14.5), runs the wrapper and unpacks D the same way. A wrong layout, a wrong
// qualifier or a wrong operand order in a wrapper shows up as a wrong element of D.
//
// The list of forms (mma_forms.inc) is written by tests/gpu/build.py from the forms of
// generated/include/ptxgen/ptx/mma_sync.hpp that sm_90a supports.
#include <ptxgen/ptx/mma_sync.hpp>

#include "common.cuh"

using namespace ptxgen::ptx;
using gpu_test::from_bits;
using gpu_test::mask_bits;
using gpu_test::to_bits;

namespace {

// Standard layouts (every shape but m8n8k4 with .f16), N = 8:
//   A reg r, element j:  row = g + 8 * (r % (M/8)),  k = (r / (M/8)) * 4E + tig * E + j
//   B reg r, element j:  k = r * 4E + tig * E + j,   n = g
//   C/D element i:       row = g + 8 * (i / 2),      n = 2 * tig + i % 2
// with g = lane / 4, tig = lane % 4 and E the elements a register holds.
template <mma_sync_shape S, mma_sync_alayout AL, mma_sync_blayout BL, mma_sync_dtype DT,
          mma_sync_atype AT, mma_sync_btype BT, mma_sync_ctype CT, bool SAT, mma_sync_bitop OP,
          mma_sync_rnd RND, int M, int ABITS, int BBITS, int CBITS, int DBITS>
__global__ void mma_standard(const std::uint64_t* __restrict__ A, const std::uint64_t* __restrict__ B,
                             const std::uint64_t* __restrict__ C, std::uint64_t* __restrict__ D) {
  using Sig = gpu_test::mma_sig<mma_sync_operands<S, AL, BL, DT, AT, BT, CT, SAT, mma_sync_kind::none, OP>>;
  using AR = typename Sig::a_type;
  using BR = typename Sig::b_type;
  using CR = typename Sig::c_type;
  using DR = typename Sig::d_type;
  constexpr int N = 8;
  constexpr int EA = int(sizeof(AR)) * 8 / ABITS;
  constexpr int EB = int(sizeof(BR)) * 8 / BBITS;
  constexpr int EC = int(sizeof(CR)) * 8 / CBITS;
  constexpr int ED = int(sizeof(DR)) * 8 / DBITS;
  constexpr int MG = M / 8;
  constexpr int K = Sig::nb * 4 * EB;
  static_assert(Sig::na / MG * 4 * EA == K, "A and B fragments disagree on K");
  static_assert(Sig::nc * EC == M * N / 32 && Sig::nd * ED == M * N / 32, "C/D fragment size");

  const int lane = threadIdx.x;
  const int g = lane >> 2, tig = lane & 3;

  AR a[Sig::na];
  BR b[Sig::nb];
  CR c[Sig::nc];
  DR d[Sig::nd];
#pragma unroll
  for (int r = 0; r < Sig::na; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < EA; ++j) {
      const int row = g + 8 * (r % MG);
      const int k = (r / MG) * 4 * EA + tig * EA + j;
      bits |= (A[row * K + k] & mask_bits(ABITS)) << (j * ABITS);
    }
    a[r] = from_bits<AR>(bits);
  }
#pragma unroll
  for (int r = 0; r < Sig::nb; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < EB; ++j) {
      const int k = r * 4 * EB + tig * EB + j;
      bits |= (B[k * N + g] & mask_bits(BBITS)) << (j * BBITS);
    }
    b[r] = from_bits<BR>(bits);
  }
#pragma unroll
  for (int r = 0; r < Sig::nc; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < EC; ++j) {
      const int i = r * EC + j;
      bits |= (C[(g + 8 * (i / 2)) * N + 2 * tig + (i % 2)] & mask_bits(CBITS)) << (j * CBITS);
    }
    c[r] = from_bits<CR>(bits);
  }

  mma_sync<S, AL, BL, DT, AT, BT, CT, SAT, mma_sync_kind::none, OP, RND>(d, a, b, c);

#pragma unroll
  for (int r = 0; r < Sig::nd; ++r) {
    const std::uint64_t bits = to_bits(d[r]);
#pragma unroll
    for (int j = 0; j < ED; ++j) {
      const int i = r * ED + j;
      D[(g + 8 * (i / 2)) * N + 2 * tig + (i % 2)] = (bits >> (j * DBITS)) & mask_bits(DBITS);
    }
  }
}

// m8n8k4 with .f16 A/B: four independent 8x8x4 products, one per quad pair
// (lanes 4q..4q+3 and 4q+16..4q+19); t = lane % 4 + 4 * (lane >= 16) within the pair.
//   A .row: row = t, k = i             A .col: row = i + 4 * (t / 4), k = t % 4
//   B .row: k = t % 4, n = i + 4*(t/4) B .col: k = i, n = t
//   C/D .f16 element i: row = t, n = i
//   C/D .f32 element i: row = t % 2 + (i & 2) + 4 * (t / 4), n = (i & 4) + (t & 2) + (i & 1)
// Buffers hold the four problems one after the other.
__device__ __forceinline__ void qp_cd_index(int bits, int t, int i, int& row, int& col) {
  if (bits == 16) {
    row = t;
    col = i;
  } else {
    row = (t & 1) + (i & 2) + 4 * (t >> 2);
    col = (i & 4) + (t & 2) + (i & 1);
  }
}

template <mma_sync_shape S, mma_sync_alayout AL, mma_sync_blayout BL, mma_sync_dtype DT,
          mma_sync_atype AT, mma_sync_btype BT, mma_sync_ctype CT, bool SAT, mma_sync_bitop OP,
          mma_sync_rnd RND, int M, int ABITS, int BBITS, int CBITS, int DBITS>
__global__ void mma_quadpair(const std::uint64_t* __restrict__ A, const std::uint64_t* __restrict__ B,
                             const std::uint64_t* __restrict__ C, std::uint64_t* __restrict__ D) {
  using Sig = gpu_test::mma_sig<mma_sync_operands<S, AL, BL, DT, AT, BT, CT, SAT, mma_sync_kind::none, OP>>;
  using CR = typename Sig::c_type;
  using DR = typename Sig::d_type;
  static_assert(Sig::na == 2 && Sig::nb == 2, "m8n8k4 .f16: two A and two B registers");
  constexpr int EC = int(sizeof(CR)) * 8 / CBITS;
  constexpr int ED = int(sizeof(DR)) * 8 / DBITS;
  const int lane = threadIdx.x;
  const int q = (lane >> 2) & 3;
  const int t = (lane & 3) + 4 * (lane >> 4);
  const std::uint64_t* Aq = A + q * 32;  // 8 x 4
  const std::uint64_t* Bq = B + q * 32;  // 4 x 8
  const std::uint64_t* Cq = C + q * 64;  // 8 x 8
  std::uint64_t* Dq = D + q * 64;

  using AR = typename Sig::a_type;
  using BR = typename Sig::b_type;
  AR a[2];
  BR b[2];
  CR c[Sig::nc];
  DR d[Sig::nd];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    std::uint32_t bits = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = 2 * r + h;
      int row, k;
      if constexpr (AL == mma_sync_alayout::row) {
        row = t; k = i;
      } else {
        row = i + 4 * (t >> 2); k = t & 3;
      }
      bits |= static_cast<std::uint32_t>(Aq[row * 4 + k] & 0xffffu) << (16 * h);
    }
    a[r] = from_bits<AR>(bits);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    std::uint32_t bits = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = 2 * r + h;
      int k, n;
      if constexpr (BL == mma_sync_blayout::row) {
        k = t & 3; n = i + 4 * (t >> 2);
      } else {
        k = i; n = t;
      }
      bits |= static_cast<std::uint32_t>(Bq[k * 8 + n] & 0xffffu) << (16 * h);
    }
    b[r] = from_bits<BR>(bits);
  }
#pragma unroll
  for (int r = 0; r < Sig::nc; ++r) {
    std::uint64_t bits = 0;
#pragma unroll
    for (int j = 0; j < EC; ++j) {
      int row, col;
      qp_cd_index(CBITS, t, r * EC + j, row, col);
      bits |= (Cq[row * 8 + col] & mask_bits(CBITS)) << (j * CBITS);
    }
    c[r] = from_bits<CR>(bits);
  }

  mma_sync<S, AL, BL, DT, AT, BT, CT, SAT, mma_sync_kind::none, OP, RND>(d, a, b, c);

#pragma unroll
  for (int r = 0; r < Sig::nd; ++r) {
    const std::uint64_t bits = to_bits(d[r]);
#pragma unroll
    for (int j = 0; j < ED; ++j) {
      int row, col;
      qp_cd_index(DBITS, t, r * ED + j, row, col);
      Dq[row * 8 + col] = (bits >> (j * DBITS)) & mask_bits(DBITS);
    }
  }
}

using launcher_t = void (*)(const std::uint64_t*, const std::uint64_t*, const std::uint64_t*,
                            std::uint64_t*);

struct Form {
  const char* name;
  launcher_t launch;
};

#define PTXGEN_MMA_FORM(ID, KERNEL, SH, AL, BL, DT, AT, BT, CT, SAT, OP, RND, M, AB, BB, CB, DB, NAME) \
  void launch_##ID(const std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* c,       \
                   std::uint64_t* d) {                                                           \
    KERNEL<mma_sync_shape::SH, mma_sync_alayout::AL, mma_sync_blayout::BL, mma_sync_dtype::DT,  \
           mma_sync_atype::AT, mma_sync_btype::BT, mma_sync_ctype::CT, SAT, mma_sync_bitop::OP, \
           mma_sync_rnd::RND, M, AB, BB, CB, DB><<<1, 32>>>(a, b, c, d);                       \
  }
#include "mma_forms.inc"
#undef PTXGEN_MMA_FORM

const Form kForms[] = {
#define PTXGEN_MMA_FORM(ID, KERNEL, SH, AL, BL, DT, AT, BT, CT, SAT, OP, RND, M, AB, BB, CB, DB, NAME) \
  {NAME, launch_##ID},
#include "mma_forms.inc"
#undef PTXGEN_MMA_FORM
};

}  // namespace

PTXGEN_GPU_EXPORT int mma_count() { return int(sizeof(kForms) / sizeof(kForms[0])); }

PTXGEN_GPU_EXPORT const char* mma_name(int i) { return kForms[i].name; }

PTXGEN_GPU_EXPORT int mma_run(int i, const void* a, const void* b, const void* c, void* d) {
  kForms[i].launch(static_cast<const std::uint64_t*>(a), static_cast<const std::uint64_t*>(b),
                   static_cast<const std::uint64_t*>(c), static_cast<std::uint64_t*>(d));
  return gpu_test::finish_launch();
}
