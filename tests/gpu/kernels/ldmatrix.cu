// ldmatrix / stmatrix (.m8n8 .b16, .x1/.x2/.x4, with and without .trans, with a generic,
// a .shared and a .shared::cta address) on the GPU through ptxgen::ptx::ldmatrix and
// ptxgen::ptx::stmatrix only (tests/gpu/test_ldmatrix.py).
//
// Shared memory holds 64 slots of 16 bytes (one 8 x b16 matrix row each). Lane l gives
// the address of slot rows[l]; the host checks every register element against the
// documented fragment layout, and the round trip (ldmatrix, then stmatrix into other
// slots) against the source rows.
#include <ptxgen/ptx/ldmatrix.hpp>

#include "common.cuh"

using namespace ptxgen::ptx;

namespace {

constexpr int kSlots = 64;

template <int X>
__host__ __device__ constexpr ldmatrix_num ld_num() {
  return X == 1 ? ldmatrix_num::x1 : X == 2 ? ldmatrix_num::x2 : ldmatrix_num::x4;
}
template <int X>
__host__ __device__ constexpr stmatrix_num st_num() {
  return X == 1 ? stmatrix_num::x1 : X == 2 ? stmatrix_num::x2 : stmatrix_num::x4;
}

// SS: 0 generic address, 1 .shared, 2 .shared::cta.
template <int X, bool T, int SS>
__device__ __forceinline__ void do_ldmatrix(std::uint32_t (&d)[X], const std::uint16_t* p) {
  if constexpr (SS == 0) {
    ldmatrix<ldmatrix_shape::m8n8, ld_num<X>(), ldmatrix_type::b16, T, ldmatrix_ss::none>(
        d, static_cast<const void*>(p));
  } else {
    const std::uint32_t a = static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
    ldmatrix<ldmatrix_shape::m8n8, ld_num<X>(), ldmatrix_type::b16, T,
             SS == 1 ? ldmatrix_ss::shared : ldmatrix_ss::shared_cta>(d, a);
  }
}

template <int X, bool T, int SS>
__device__ __forceinline__ void do_stmatrix(std::uint16_t* p, const std::uint32_t (&r)[X]) {
  if constexpr (SS == 0) {
    stmatrix<stmatrix_shape::m8n8, st_num<X>(), stmatrix_type::b16, T, stmatrix_ss::none>(
        static_cast<void*>(p), r);
  } else {
    const std::uint32_t a = static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
    stmatrix<stmatrix_shape::m8n8, st_num<X>(), stmatrix_type::b16, T,
             SS == 1 ? stmatrix_ss::shared : stmatrix_ss::shared_cta>(a, r);
  }
}

// in: the 64 slots (64 x 8 b16). rows/rows2: the slot of each lane's address.
// regs: [32][X] registers (ldmatrix: out; stmatrix: in). out: the 64 slots afterwards.
// mode 0: ldmatrix, 1: stmatrix, 2: ldmatrix then stmatrix (rows -> rows2).
template <int X, bool T, int SS>
__global__ void matrix_kernel(int mode, const std::uint16_t* in, const int* rows, const int* rows2,
                              std::uint32_t* regs, std::uint16_t* out) {
  __shared__ __align__(128) std::uint16_t smem[kSlots * 8];
  const int lane = threadIdx.x;
  for (int i = lane; i < kSlots * 8; i += 32) smem[i] = in[i];
  __syncwarp();
  std::uint32_t r[X];
  if (mode == 0 || mode == 2) {
    do_ldmatrix<X, T, SS>(r, smem + rows[lane] * 8);
  } else {
#pragma unroll
    for (int i = 0; i < X; ++i) r[i] = regs[lane * X + i];
  }
  __syncwarp();
  if (mode == 1 || mode == 2) {
    do_stmatrix<X, T, SS>(smem + (mode == 2 ? rows2 : rows)[lane] * 8, r);
  }
  __syncwarp();
  if (mode == 0) {
#pragma unroll
    for (int i = 0; i < X; ++i) regs[lane * X + i] = r[i];
  }
  for (int i = lane; i < kSlots * 8; i += 32) out[i] = smem[i];
}

using launcher_t = void (*)(int, const std::uint16_t*, const int*, const int*, std::uint32_t*,
                            std::uint16_t*);

template <int X, bool T, int SS>
void launch(int mode, const std::uint16_t* in, const int* rows, const int* rows2,
            std::uint32_t* regs, std::uint16_t* out) {
  matrix_kernel<X, T, SS><<<1, 32>>>(mode, in, rows, rows2, regs, out);
}

struct Entry {
  int num;
  bool trans;
  int ss;
  launcher_t fn;
};

#define PTXGEN_ENTRY(X, T, SS) {X, T, SS, launch<X, T, SS>}
const Entry kEntries[] = {
    PTXGEN_ENTRY(1, false, 0), PTXGEN_ENTRY(1, false, 1), PTXGEN_ENTRY(1, false, 2),
    PTXGEN_ENTRY(1, true, 0),  PTXGEN_ENTRY(1, true, 1),  PTXGEN_ENTRY(1, true, 2),
    PTXGEN_ENTRY(2, false, 0), PTXGEN_ENTRY(2, false, 1), PTXGEN_ENTRY(2, false, 2),
    PTXGEN_ENTRY(2, true, 0),  PTXGEN_ENTRY(2, true, 1),  PTXGEN_ENTRY(2, true, 2),
    PTXGEN_ENTRY(4, false, 0), PTXGEN_ENTRY(4, false, 1), PTXGEN_ENTRY(4, false, 2),
    PTXGEN_ENTRY(4, true, 0),  PTXGEN_ENTRY(4, true, 1),  PTXGEN_ENTRY(4, true, 2),
};
#undef PTXGEN_ENTRY

}  // namespace

// mode: 0 ldmatrix, 1 stmatrix, 2 round trip; ss: 0 generic, 1 .shared, 2 .shared::cta.
PTXGEN_GPU_EXPORT int matrix_run(int mode, int num, int trans, int ss, const void* in,
                                 const void* rows, const void* rows2, void* regs, void* out) {
  for (const Entry& e : kEntries) {
    if (e.num == num && e.trans == (trans != 0) && e.ss == ss) {
      e.fn(mode, static_cast<const std::uint16_t*>(in), static_cast<const int*>(rows),
           static_cast<const int*>(rows2), static_cast<std::uint32_t*>(regs),
           static_cast<std::uint16_t*>(out));
      return gpu_test::finish_launch();
    }
  }
  return -1;
}
