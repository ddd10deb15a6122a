// ld / st with their memory orders and scopes, atom / red, and special registers on the GPU
// through the generated wrappers of ptxgen/ptx/{ld_st,atom_red,special_registers}.hpp only
// (tests/gpu/test_memory.py). Plain CUDA here only launches, indexes and synchronises
// (__syncthreads); every load, store, atomic and special register under test is a wrapper.
#include <ptxgen/ptx/atom_red.hpp>
#include <ptxgen/ptx/ld_st.hpp>
#include <ptxgen/ptx/special_registers.hpp>

#include "common.cuh"

using namespace ptxgen::ptx;
namespace px = ptxgen::ptx;  // px::clock64: CUDA declares a ::clock64 too

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

// ---- special registers: clusters of 2 CTAs; per thread kSpecial words ----------------------
constexpr int kSpecial = 12;

__global__ void __cluster_dims__(2, 1, 1) special_kernel(u64* out, int spin) {
  const u64 c0 = px::clock64();
  u64* o = out + (static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x) * kSpecial;
  o[0] = laneid();
  o[1] = warpid();
  o[2] = tid_x();
  o[3] = ctaid_x();
  o[4] = ntid_x();
  o[5] = nctaid_x();
  o[6] = smid();
  o[7] = nsmid();
  o[8] = cluster_ctarank();
  o[9] = cluster_nctarank();
  u64 c1 = px::clock64();
  for (int i = 0; i < spin; ++i) c1 = px::clock64() > c1 ? px::clock64() : c1;  // time passes
  o[10] = c1 - c0;  // elapsed cycles: >= 0 read as unsigned (monotonic)
  o[11] = px::clock64() >= c1 ? 1 : 0;
}

// ---- release / acquire handoff between two CTAs ----------------------------------------------
// CTA 2p writes data[p][*] (plain st), bar.sync, then its thread 0 st.release flags[p] = 1;
// CTA 2p+1's thread 0 spins on ld.acquire flags[p], bar.sync, then every thread reads the data
// (ld.relaxed at the same scope) into out[p][*]. Variant 0: scope gpu; 1: sys; 2: the flag by
// atom.exch.release / atom.or.acquire at gpu scope. A wait that never ends gives up after
// 2^26 tries and writes 0xFFFFFFFF to out.
template <int V>
__global__ void handoff_kernel(u32* data, u32* flags, u32* out, int words) {
  const int p = blockIdx.x / 2;
  u32* d = data + static_cast<u64>(p) * words;
  u32* flag = flags + p;
  __shared__ int ok;
  if (blockIdx.x % 2 == 0) {
    for (int i = threadIdx.x; i < words; i += blockDim.x)
      st<store_type::u32, store_space::space_global>(d + i, 0x9E3779B9u * (p * words + i + 1));
    __syncthreads();
    if (threadIdx.x == 0) {
      if constexpr (V == 0)
        st_release<store_type::u32, store_scope::gpu, store_space::space_global>(flag, 1u);
      else if constexpr (V == 1)
        st_release<store_type::u32, store_scope::sys, store_space::space_global>(flag, 1u);
      else
        atom_exch<atom_scalar_type::b32, atom_scalar_sem::release, atom_scalar_scope::gpu,
                  atom_scalar_space::space_global>(flag, 1u);
    }
  } else {
    if (threadIdx.x == 0) {
      ok = 0;
      for (int tries = 0; tries < (1 << 26); ++tries) {
        u32 f;
        if constexpr (V == 0)
          f = ld_acquire<load_type::u32, load_scope::gpu, load_space::space_global>(flag);
        else if constexpr (V == 1)
          f = ld_acquire<load_type::u32, load_scope::sys, load_space::space_global>(flag);
        else
          f = atom<atom_scalar_op::op_or, atom_scalar_type::b32, atom_scalar_sem::acquire,
                   atom_scalar_scope::gpu, atom_scalar_space::space_global>(flag, 0u);
        if (f == 1u) {
          ok = 1;
          break;
        }
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < words; i += blockDim.x) {
      u32 v = 0xFFFFFFFFu;
      if (ok) {
        if constexpr (V == 1)
          v = ld_relaxed<load_type::u32, load_scope::sys, load_space::space_global>(d + i);
        else
          v = ld_relaxed<load_type::u32, load_scope::gpu, load_space::space_global>(d + i);
      }
      out[static_cast<u64>(p) * words + i] = v;
    }
  }
}

// ---- atomics: every thread of the grid on the same words --------------------------------------
// mem (kMem words of 64 bits) starts as the host set it; olds: kOlds arrays of one value per
// thread (what each atom returned); block_sums: per CTA, a shared-memory atom.add result.
constexpr int kMem = 12;
constexpr int kOlds = 6;
constexpr int kCasThreads = 2048;

__global__ void atomics_kernel(u64* mem, const u32* vals, u64* olds, u32* block_sums, int n) {
  using O = atom_scalar_op;
  using T = atom_scalar_type;
  using S = atom_scalar_sem;
  using C = atom_scalar_scope;
  using G = atom_scalar_space;
  using RO = red_scalar_op;
  using RT = red_scalar_type;
  using RS = red_scalar_sem;
  using RC = red_scalar_scope;
  using RG = red_scalar_space;
  __shared__ u32 sum;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) sum = 0;
  __syncthreads();
  const u32 v = vals[t];
  u32* w = reinterpret_cast<u32*>(mem);  // 32-bit words: w[2k] is the low half of mem[k]
  olds[0 * n + t] = atom<O::add, T::u32, S::relaxed, C::gpu, G::space_global>(w + 0, v);
  olds[1 * n + t] = atom<O::add, T::u64, S::acq_rel, C::gpu, G::space_global>(mem + 1, static_cast<u64>(v) << 16);
  olds[2 * n + t] = atom<O::inc, T::u32, S::none, C::none, G::space_global>(w + 4, 0xFFFFFFFFu);
  olds[3 * n + t] = atom_exch<T::b32, S::relaxed, C::sys, G::space_global>(w + 6, static_cast<u32>(t) + 1u);
  if (t < kCasThreads) {
    u32 cur = 0;
    for (;;) {
      const u32 seen = atom_cas<T::b32, S::acq_rel, C::gpu, G::space_global>(w + 8, cur, cur + 1u);
      if (seen == cur) break;
      cur = seen;
    }
    olds[4 * n + t] = cur;
  }
  red<RO::add, RT::u32, RS::release, RC::gpu, RG::space_global>(w + 10, v);
  red<RO::add, RT::f32, RS::relaxed, RC::gpu, RG::space_global>(reinterpret_cast<float*>(w + 12),
                                                                static_cast<float>(v & 0xFF));
  atom<O::min, T::s32, S::relaxed, C::gpu, G::space_global>(reinterpret_cast<std::int32_t*>(w + 14),
                                                            static_cast<std::int32_t>(v));
  atom<O::max, T::s32, S::relaxed, C::gpu, G::space_global>(reinterpret_cast<std::int32_t*>(w + 16),
                                                            static_cast<std::int32_t>(v));
  red<RO::op_and, RT::b32, RS::none, RC::none, RG::space_global>(w + 18, v | (v >> 3) | 0x10000u);
  red<RO::op_or, RT::b32, RS::relaxed, RC::sys, RG::space_global>(w + 20, v & (v >> 5));
  red<RO::op_xor, RT::b32, RS::relaxed, RC::cta, RG::space_global>(w + 22, v);  // cta scope, one address: still atomic
  olds[5 * n + t] = atom<O::add, T::u32, S::relaxed, C::cta, G::shared>(
      static_cast<u32>(__cvta_generic_to_shared(&sum)), v);
  __syncthreads();
  if (threadIdx.x == 0)
    block_sums[blockIdx.x] = ld<load_type::u32, load_space::shared>(
        static_cast<u32>(__cvta_generic_to_shared(&sum)));
}

}  // namespace

PTXGEN_GPU_EXPORT int special_words() { return kSpecial; }

PTXGEN_GPU_EXPORT int special_run(int blocks, int threads, void* out, int spin) {
  special_kernel<<<blocks, threads>>>(static_cast<u64*>(out), spin);
  return gpu_test::finish_launch();
}

PTXGEN_GPU_EXPORT int handoff_run(int variant, int pairs, int words, void* data, void* flags,
                                  void* out) {
  auto* d = static_cast<u32*>(data);
  auto* f = static_cast<u32*>(flags);
  auto* o = static_cast<u32*>(out);
  switch (variant) {
    case 0: handoff_kernel<0><<<2 * pairs, 128>>>(d, f, o, words); break;
    case 1: handoff_kernel<1><<<2 * pairs, 128>>>(d, f, o, words); break;
    case 2: handoff_kernel<2><<<2 * pairs, 128>>>(d, f, o, words); break;
    default: return -1;
  }
  return gpu_test::finish_launch();
}

PTXGEN_GPU_EXPORT int atomics_layout(int what) {
  return what == 0 ? kMem : what == 1 ? kOlds : kCasThreads;
}

// n = blocks * 256 threads.
PTXGEN_GPU_EXPORT int atomics_run(int blocks, void* mem, const void* vals, void* olds,
                                  void* block_sums) {
  atomics_kernel<<<blocks, 256>>>(static_cast<u64*>(mem), static_cast<const u32*>(vals),
                                  static_cast<u64*>(olds), static_cast<u32*>(block_sums),
                                  blocks * 256);
  return gpu_test::finish_launch();
}
