// A Blackwell GEMM main loop written with CUTLASS's CuTe (the nvidia-cutlass wheel's
// headers): UMMA (tcgen05.mma) descriptors, instruction descriptor and shared-memory
// layouts are CUTLASS's own. Written here for ptxgen's lint tests; compiled to PTX only.
#include <cute/tensor.hpp>
#include <cute/arch/tmem_allocator_sm100.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cutlass/arch/barrier.h>

using namespace cute;
using TA = cute::bfloat16_t;

__global__ void cutlass_umma_mainloop(TA const* A, TA const* B, float* C, int k_tiles) {
  extern __shared__ __align__(1024) char smem[];
  auto mma = make_tiled_mma(SM100_MMA_F16BF16_SS<TA, TA, float, 128, 256,
                                                 UMMA::Major::K, UMMA::Major::K>{});
  auto sA_layout = UMMA::tile_to_mma_shape(UMMA::Layout_K_SW128_Atom<TA>{},
                                           partition_shape_A(mma, make_shape(Int<128>{}, Int<64>{})));
  auto sB_layout = UMMA::tile_to_mma_shape(UMMA::Layout_K_SW128_Atom<TA>{},
                                           partition_shape_B(mma, make_shape(Int<256>{}, Int<64>{})));
  Tensor sA = make_tensor(make_smem_ptr(reinterpret_cast<TA*>(smem)), sA_layout);
  Tensor sB = make_tensor(make_smem_ptr(reinterpret_cast<TA*>(smem) + cosize(sA_layout)), sB_layout);
  Tensor tCrA = mma.make_fragment_A(sA);
  Tensor tCrB = mma.make_fragment_B(sB);
  auto acc_shape = partition_shape_C(mma, make_shape(Int<128>{}, Int<256>{}));
  Tensor tCtAcc = mma.make_fragment_C(acc_shape);
  __shared__ uint32_t tmem_base;
  cute::TMEM::Allocator1Sm alloc;
  if (threadIdx.x / 32 == 0) alloc.allocate(256, &tmem_base);
  __syncthreads();
  tCtAcc.data() = tmem_base;
  for (int kt = 0; kt < k_tiles; ++kt) {
    // (the loads of A and B into shared memory are left out: only the MMA is linted)
    mma.accumulate_ = kt == 0 ? UMMA::ScaleOut::Zero : UMMA::ScaleOut::One;
    if (threadIdx.x / 32 == 0) {
      CUTE_UNROLL
      for (int k = 0; k < size<2>(tCrA); ++k) {
        gemm(mma, tCrA(_, _, k), tCrB(_, _, k), tCtAcc);
        mma.accumulate_ = UMMA::ScaleOut::One;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x / 32 == 0) alloc.free(tmem_base, 256);
  C[threadIdx.x] = float(A[threadIdx.x]) + float(B[threadIdx.x]);
}
