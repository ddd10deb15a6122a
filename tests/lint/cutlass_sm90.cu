// A Hopper GEMM main loop written with CUTLASS's CuTe (the nvidia-cutlass wheel's
// headers): wgmma descriptors and shared-memory layouts are CUTLASS's own. Written here
// for ptxgen's lint tests; compiled to PTX only.
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

using namespace cute;
using TA = cute::bfloat16_t;

__global__ void cutlass_gmma_mainloop(TA const* A, TA const* B, float* C, int k_tiles) {
  extern __shared__ __align__(1024) char smem[];
  auto sA_layout = tile_to_shape(GMMA::Layout_K_SW128_Atom<TA>{}, make_shape(Int<64>{}, Int<64>{}));
  auto sB_layout = tile_to_shape(GMMA::Layout_K_SW128_Atom<TA>{}, make_shape(Int<128>{}, Int<64>{}));
  Tensor sA = make_tensor(make_smem_ptr(reinterpret_cast<TA*>(smem)), sA_layout);
  Tensor sB = make_tensor(make_smem_ptr(reinterpret_cast<TA*>(smem) + cosize(sA_layout)), sB_layout);
  auto mma = make_tiled_mma(SM90_64x128x16_F32BF16BF16_SS<GMMA::Major::K, GMMA::Major::K>{});
  auto thr = mma.get_slice(threadIdx.x);
  Tensor tCsA = thr.partition_A(sA);
  Tensor tCsB = thr.partition_B(sB);
  Tensor tCrA = thr.make_fragment_A(tCsA);
  Tensor tCrB = thr.make_fragment_B(tCsB);
  Tensor gC = make_tensor(make_gmem_ptr(C), make_shape(Int<64>{}, Int<128>{}), make_stride(Int<128>{}, Int<1>{}));
  Tensor tCgC = thr.partition_C(gC);
  Tensor acc = thr.make_fragment_C(tCgC);
  clear(acc);
  for (int kt = 0; kt < k_tiles; ++kt) {
    // (the loads of A and B into shared memory are left out: only the MMA is linted)
    warpgroup_fence_operand(acc);
    warpgroup_arrive();
    gemm(mma, tCrA, tCrB, acc);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc);
    __syncthreads();
  }
  copy(acc, tCgC);
  C[threadIdx.x] += float(A[threadIdx.x]) + float(B[threadIdx.x]);
}
