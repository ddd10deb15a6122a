// External oracle (issue 5, point 5): CUTLASS's own descriptor bitfields.
//
// Fills CUTLASS's UMMA::InstrDescriptor, UMMA::InstrDescriptorBlockScaled,
// UMMA::SmemDescriptor, UMMA::MaskAndShiftB and GmmaDescriptor and ptxgen's descriptors from
// the same field sets and requires identical bits:
//   - instruction descriptors: every combination of every value each field allows for the
//     kind, M and N as one domain (the (M, N) shapes of the kind) (the domains come from
//     ptxgen's own validate(); their sizes are printed and checked by
//     tests/test_cpp_cutlass.py against the Python classes);
//   - shared memory / wgmma / zero-column mask descriptors: every value of each field with
//     the others random, plus a large random sample.
// CUTLASS's enums are matched to ptxgen's by name (static_assert). CUTLASS's bitfield unions
// cannot be read in constant expressions, so the comparison runs at run time.
// Built by tests/test_cpp_cutlass.py with nvcc against the headers of the nvidia-cutlass
// wheel; prints one "checked" line per descriptor and exits non-zero on any mismatch.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include <cute/arch/mma_sm100_desc.hpp>
#include <cute/arch/mma_sm90_desc.hpp>

#include "ptxgen/ptxgen.hpp"

namespace UMMA = cute::UMMA;
namespace GMMA = cute::SM90::GMMA;
using Values = std::vector<std::uint32_t>;

namespace {

unsigned long long g_failures = 0;
unsigned long long g_printed = 0;

template <class W>
bool same(const char* what, unsigned long long combo, W ours, W theirs) {
  if (ours == theirs) return true;
  if (g_printed++ < 20) {
    std::printf("MISMATCH %s #%llu: ptxgen %#llx CUTLASS %#llx\n", what, combo,
                static_cast<unsigned long long>(ours), static_cast<unsigned long long>(theirs));
  }
  return false;
}

// ---- enum codes, matched by name ------------------------------------------------------

template <class A, class B>
constexpr bool code(A a, B b) { return static_cast<unsigned>(a) == static_cast<unsigned>(b); }

using F16 = ptxgen::InstrDescF16;
using F8 = ptxgen::InstrDescF8f6f4;
using I8 = ptxgen::InstrDescI8;
using Tf32 = ptxgen::InstrDescTf32;
using Mx8 = ptxgen::InstrDescMxf8f6f4;
using Mx4 = ptxgen::InstrDescMxf4;
using Nv4 = ptxgen::InstrDescMxf4nvf4;

static_assert(code(F16::Dtype::F16, UMMA::CFormat::F16) && code(F16::Dtype::F32, UMMA::CFormat::F32) &&
              code(I8::Dtype::S32, UMMA::CFormat::S32) && code(Tf32::Dtype::F32, UMMA::CFormat::F32) &&
              code(F8::Dtype::F16, UMMA::CFormat::F16) && code(F8::Dtype::F32, UMMA::CFormat::F32),
              "dtype = CFormat");
static_assert(code(F16::Atype::F16, UMMA::F16F32Format::F16) && code(F16::Atype::BF16, UMMA::F16F32Format::BF16) &&
              code(Tf32::Atype::TF32, UMMA::F16F32Format::TF32) && code(F16::Btype::BF16, UMMA::F16F32Format::BF16),
              "f16 / tf32 types = F16F32Format");
static_assert(code(I8::Atype::U8, UMMA::S8Format::UINT8) && code(I8::Atype::S8, UMMA::S8Format::INT8),
              "i8 types = S8Format");
static_assert(code(F8::Atype::E4M3, UMMA::MXF8F6F4Format::E4M3) && code(F8::Atype::E5M2, UMMA::MXF8F6F4Format::E5M2) &&
              code(F8::Atype::E2M3, UMMA::MXF8F6F4Format::E2M3) && code(F8::Atype::E3M2, UMMA::MXF8F6F4Format::E3M2) &&
              code(F8::Atype::E2M1, UMMA::MXF8F6F4Format::E2M1) && code(Mx8::Btype::E2M1, UMMA::MXF8F6F4Format::E2M1),
              "f8f6f4 / mxf8f6f4 types = MXF8F6F4Format");
static_assert(code(Mx4::Atype::E2M1, UMMA::MXF4Format::E2M1) && code(Nv4::Btype::E2M1, UMMA::MXF4Format::E2M1),
              "mxf4 types = MXF4Format");
static_assert(code(Mx8::ScaleType::UE8M0, UMMA::ScaleFormat::UE8M0) && code(Nv4::ScaleType::UE4M3, UMMA::ScaleFormat::UE4M3) &&
              code(Nv4::ScaleType::UE8M0, UMMA::ScaleFormat::UE8M0), "scale_type = ScaleFormat");
static_assert(code(F16::Sparsity::DENSE, 0) && code(F16::Sparsity::SPARSE, 1), "sparse_flag_");
static_assert(code(UMMA::Major::K, 0) && code(UMMA::Major::MN, 1) && code(UMMA::ScaleIn::One, 0) &&
              code(UMMA::ScaleIn::Neg, 1) && code(UMMA::Saturate::True, 1) && code(UMMA::MaxShift::MaxShift32, 3),
              "transpose = Major (0 = K-major), negate = ScaleIn, saturate, max_shift");
using Smem = ptxgen::SmemDesc;
static_assert(code(Smem::Swizzle::SWIZZLE_NONE, UMMA::LayoutType::SWIZZLE_NONE) &&
              code(Smem::Swizzle::SWIZZLE_128B_BASE32B, UMMA::LayoutType::SWIZZLE_128B_BASE32B) &&
              code(Smem::Swizzle::SWIZZLE_128B, UMMA::LayoutType::SWIZZLE_128B) &&
              code(Smem::Swizzle::SWIZZLE_64B, UMMA::LayoutType::SWIZZLE_64B) &&
              code(Smem::Swizzle::SWIZZLE_32B, UMMA::LayoutType::SWIZZLE_32B), "swizzle = UMMA::LayoutType");
using Wg = ptxgen::WgmmaDesc;
static_assert(code(Wg::Swizzle::SWIZZLE_NONE, GMMA::LayoutType::INTERLEAVE) &&
              code(Wg::Swizzle::SWIZZLE_128B, GMMA::LayoutType::B128) &&
              code(Wg::Swizzle::SWIZZLE_64B, GMMA::LayoutType::B64) &&
              code(Wg::Swizzle::SWIZZLE_32B, GMMA::LayoutType::B32), "swizzle = GMMA::LayoutType");

// ---- every combination of the instruction descriptors -------------------------------------

// T{} with a shape that every instruction descriptor kind has (M = 128, N = 64): T{} leaves
// M and N at 0, which no tcgen05.mma shape has.
template <class T, class = void>
struct has_shape : std::false_type {};
template <class T>
struct has_shape<T, std::void_t<decltype(&T::m), decltype(&T::n)>> : std::true_type {};

template <class T>
T base() {
  T d{};
  if constexpr (has_shape<T>::value) {
    d.m = 128u;
    d.n = 64u;
  }
  return d;
}

// The values ptxgen allows for one field: candidates 0..limit-1 that validate() accepts.
template <class T, class Set>
Values domain(Set set, std::uint32_t limit) {
  Values out;
  for (std::uint32_t v = 0; v < limit; ++v) {
    T d = base<T>();
    set(d, v);
    if (d.validate().ok()) out.push_back(v);
  }
  return out;
}

// The (M, N) pairs ptxgen allows (the tcgen05.mma shapes of the kind), M and N from
// 0..limit-1, packed as M << 16 | N: M and N are checked together, one domain.
template <class T>
Values shapes(std::uint32_t limit) {
  Values out;
  for (std::uint32_t m = 0; m < limit; ++m) {
    for (std::uint32_t n = 0; n < limit; ++n) {
      T d = base<T>();
      d.m = m;
      d.n = n;
      if (d.validate().ok()) out.push_back(m << 16 | n);
    }
  }
  return out;
}

// Calls visit(values) for every combination of the domains (an odometer).
template <class Visit>
unsigned long long each_combination(const std::vector<Values>& domains, Visit visit) {
  std::vector<std::size_t> at(domains.size(), 0);
  std::vector<std::uint32_t> v(domains.size());
  for (const Values& d : domains) {
    if (d.empty()) return 0;
  }
  unsigned long long count = 0;
  for (;;) {
    for (std::size_t i = 0; i < domains.size(); ++i) v[i] = domains[i][at[i]];
    visit(v.data(), count++);
    std::size_t i = 0;
    while (i < domains.size() && ++at[i] == domains[i].size()) at[i++] = 0;
    if (i == domains.size()) return count;
  }
}

void print_domains(const char* name, const std::vector<Values>& domains, unsigned long long n,
                   unsigned long long bad) {
  g_failures += bad;
  std::printf("checked %s combinations=%llu mismatches=%llu domains=", name, n, bad);
  for (const Values& d : domains) std::printf("%zu,", d.size());
  std::printf("\n");
}

#define PTXGEN_SET(T, field) [](T& d, std::uint32_t v) { d.field = decltype(d.field)(v); }

// Table 42 kinds (tf32, f16, f8f6f4, i8) against UMMA::InstrDescriptor.
template <class T>
void table42(const char* name) {
  const std::vector<Values> domains = {
      domain<T>(PTXGEN_SET(T, sparsity_selector), 8), domain<T>(PTXGEN_SET(T, sparsity), 4),
      domain<T>(PTXGEN_SET(T, saturate), 4),          domain<T>(PTXGEN_SET(T, dtype), 8),
      domain<T>(PTXGEN_SET(T, atype), 16),            domain<T>(PTXGEN_SET(T, btype), 16),
      domain<T>(PTXGEN_SET(T, negate_a), 4),          domain<T>(PTXGEN_SET(T, negate_b), 4),
      domain<T>(PTXGEN_SET(T, transpose_a), 4),       domain<T>(PTXGEN_SET(T, transpose_b), 4),
      shapes<T>(1024),                                domain<T>(PTXGEN_SET(T, max_shift), 8)};
  unsigned long long bad = 0;
  const unsigned long long n = each_combination(domains, [&](const std::uint32_t* v, unsigned long long i) {
    T d{};
    d.sparsity_selector = v[0];
    d.sparsity = typename T::Sparsity(v[1]);
    d.saturate = v[2];
    d.dtype = typename T::Dtype(v[3]);
    d.atype = typename T::Atype(v[4]);
    d.btype = typename T::Btype(v[5]);
    d.negate_a = v[6];
    d.negate_b = v[7];
    d.transpose_a = v[8];
    d.transpose_b = v[9];
    d.n = v[10] & 0xFFFFu;
    d.m = v[10] >> 16;
    d.max_shift = v[11];
    UMMA::InstrDescriptor c;
    c.desc_ = 0;
    c.sparse_id2_ = v[0];
    c.sparse_flag_ = v[1];
    c.saturate_ = v[2];
    c.c_format_ = v[3];
    c.a_format_ = v[4];
    c.b_format_ = v[5];
    c.a_negate_ = v[6];
    c.b_negate_ = v[7];
    c.a_major_ = v[8];
    c.b_major_ = v[9];
    c.n_dim_ = d.n >> 3;
    c.m_dim_ = d.m >> 4;
    c.max_shift_ = v[11];
    const auto r = d.encode_checked();
    bad += !r.ok() + !same(name, i, r.value, static_cast<std::uint32_t>(c)) +
           !(T::decode_checked(r.value).value == d);
  });
  print_domains(name, domains, n, bad);
}

// Tables 43 and 44 (mxf8f6f4, mxf4, mxf4nvf4) against UMMA::InstrDescriptorBlockScaled.
// Table 43 has no k_dim (bit 31 reserved): CUTLASS's k_size_ stays 0 there.
template <class T, bool HasK>
void block_scaled(const char* name) {
  std::vector<Values> domains = {
      domain<T>(PTXGEN_SET(T, sparsity), 4),    domain<T>(PTXGEN_SET(T, scale_b_id), 8),
      domain<T>(PTXGEN_SET(T, atype), 16),      domain<T>(PTXGEN_SET(T, btype), 16),
      domain<T>(PTXGEN_SET(T, negate_a), 4),    domain<T>(PTXGEN_SET(T, negate_b), 4),
      domain<T>(PTXGEN_SET(T, transpose_a), 4), domain<T>(PTXGEN_SET(T, transpose_b), 4),
      shapes<T>(1024),                          domain<T>(PTXGEN_SET(T, scale_type), 4),
      domain<T>(PTXGEN_SET(T, scale_a_id), 8),  Values{0u}};
  if constexpr (HasK) domains[11] = domain<T>(PTXGEN_SET(T, k_dim), 4);
  unsigned long long bad = 0;
  const unsigned long long n = each_combination(domains, [&](const std::uint32_t* v, unsigned long long i) {
    T d{};
    d.sparsity = typename T::Sparsity(v[0]);
    d.scale_b_id = v[1];
    d.atype = typename T::Atype(v[2]);
    d.btype = typename T::Btype(v[3]);
    d.negate_a = v[4];
    d.negate_b = v[5];
    d.transpose_a = v[6];
    d.transpose_b = v[7];
    d.n = v[8] & 0xFFFFu;
    d.scale_type = typename T::ScaleType(v[9]);
    d.m = v[8] >> 16;
    d.scale_a_id = v[10];
    if constexpr (HasK) d.k_dim = v[11];
    UMMA::InstrDescriptorBlockScaled c;
    c.desc_ = 0;
    c.sparse_flag_ = v[0];
    c.b_sf_id_ = v[1];
    c.a_format_ = v[2];
    c.b_format_ = v[3];
    c.a_negate_ = v[4];
    c.b_negate_ = v[5];
    c.a_major_ = v[6];
    c.b_major_ = v[7];
    c.n_dim_ = d.n >> 3;
    c.scale_format_ = v[9];
    c.m_dim_ = d.m >> 4;  // CUTLASS: M >> 4 in bits 24-28; PTX: M >> 7 in bits 27-28
    c.a_sf_id_ = v[10];
    c.k_size_ = v[11];
    const auto r = d.encode_checked();
    bad += !r.ok() + !same(name, i, r.value, static_cast<std::uint32_t>(c)) +
           !(T::decode_checked(r.value).value == d);
  });
  print_domains(name, domains, n, bad);
}

// CUTLASS's own typed builders, for a few shapes.
void typed_builders() {
  unsigned long long bad = 0;
  const auto f16 = F16{}.with_dtype(F16::Dtype::F32).with_atype(F16::Atype::BF16).with_btype(F16::Btype::BF16);
  bad += !same("make_instr_desc bf16", 0,
               f16.with_m(128).with_n(256).encode(),
               static_cast<std::uint32_t>(UMMA::make_instr_desc<cutlass::bfloat16_t, cutlass::bfloat16_t, float, 128, 256,
                                                                UMMA::Major::K, UMMA::Major::K>()));
  bad += !same("make_instr_desc f16 MN", 1,
               F16{}.with_m(64).with_n(8).with_transpose_a(1).with_transpose_b(1).encode(),
               static_cast<std::uint32_t>(UMMA::make_instr_desc<cutlass::half_t, cutlass::half_t, cutlass::half_t, 64, 8,
                                                                UMMA::Major::MN, UMMA::Major::MN>()));
  bad += !same("make_instr_desc i8", 2,
               I8{}.with_atype(I8::Atype::S8).with_btype(I8::Btype::U8).with_m(128).with_n(64).with_saturate(1).encode(),
               static_cast<std::uint32_t>(UMMA::make_instr_desc<std::int8_t, std::uint8_t, std::int32_t, 128, 64,
                                                                UMMA::Major::K, UMMA::Major::K, UMMA::ScaleIn::One,
                                                                UMMA::ScaleIn::One, UMMA::Saturate::True>()));
  bad += !same("make_instr_desc f8f6f4 negate", 3,
               F8{}.with_atype(F8::Atype::E4M3).with_btype(F8::Btype::E5M2).with_m(256).with_n(128)
                   .with_negate_a(1).with_sparsity(F8::Sparsity::SPARSE).with_max_shift(2).encode(),
               static_cast<std::uint32_t>(UMMA::make_instr_desc<cutlass::float_e4m3_t, cutlass::float_e5m2_t, cutlass::half_t,
                                                                256, 128, UMMA::Major::K, UMMA::Major::K,
                                                                UMMA::ScaleIn::Neg, UMMA::ScaleIn::One,
                                                                UMMA::Saturate::False, true, UMMA::MaxShift::MaxShift16>()));
  bad += !same("make_instr_desc_block_scaled mxf4nvf4", 4,
               Nv4{}.with_m(128).with_n(256).with_scale_type(Nv4::ScaleType::UE4M3).encode(),
               static_cast<std::uint32_t>(UMMA::make_instr_desc_block_scaled<
                   cutlass::float_e2m1_t, cutlass::float_e2m1_t, float, cutlass::float_ue4m3_t, 128, 256,
                   UMMA::Major::K, UMMA::Major::K>()));
  bad += !same("make_instr_desc_block_scaled mxf8f6f4", 5,
               Mx8{}.with_m(256).with_n(128).encode(),
               static_cast<std::uint32_t>(UMMA::make_instr_desc_block_scaled<
                   cutlass::float_e4m3_t, cutlass::float_e4m3_t, float, cutlass::float_ue8m0_t, 256, 128,
                   UMMA::Major::K, UMMA::Major::K>()));
  g_failures += bad;
  std::printf("checked make_instr_desc combinations=6 mismatches=%llu\n", bad);
}

// ---- address-carrying descriptors: every value of each field and a random sample -----------

std::uint64_t g_state = 0x9e3779b97f4a7c15ull;
std::uint64_t next() {  // splitmix64
  std::uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
template <class V>
std::uint32_t pick(const V& values) { return values[next() % values.size()]; }

// Random valid field sets, each field also swept through its whole domain.
template <class T, std::size_t K, class Visit>
unsigned long long sample(const std::vector<Values>& domains, unsigned long long random_count, Visit visit) {
  unsigned long long count = 0;
  std::uint32_t v[K];
  for (std::size_t sweep = 0; sweep < K; ++sweep) {
    for (std::uint32_t x : domains[sweep]) {
      for (std::size_t i = 0; i < K; ++i) v[i] = i == sweep ? x : pick(domains[i]);
      visit(v, count++);
    }
  }
  for (unsigned long long r = 0; r < random_count; ++r) {
    for (std::size_t i = 0; i < K; ++i) v[i] = pick(domains[i]);
    visit(v, count++);
  }
  return count;
}

void smem_desc(unsigned long long random_count) {
  using T = ptxgen::SmemDesc;
  const std::vector<Values> domains = {
      domain<T>(PTXGEN_SET(T, start_address), 1u << 18), domain<T>(PTXGEN_SET(T, leading_byte_offset), 1u << 18),
      domain<T>(PTXGEN_SET(T, stride_byte_offset), 1u << 18), domain<T>(PTXGEN_SET(T, base_offset), 16),
      domain<T>(PTXGEN_SET(T, lbo_mode), 4), domain<T>(PTXGEN_SET(T, swizzle), 16)};
  unsigned long long bad = 0;
  const auto n = sample<T, 6>(domains, random_count, [&](const std::uint32_t* v, unsigned long long i) {
    T d{};
    d.start_address = v[0];
    d.leading_byte_offset = v[1];
    d.stride_byte_offset = v[2];
    d.base_offset = v[3];
    d.lbo_mode = v[4];
    d.swizzle = T::Swizzle(v[5]);
    UMMA::SmemDescriptor c;
    c.desc_ = 0;
    c.start_address_ = v[0] >> 4;
    c.leading_byte_offset_ = v[1] >> 4;
    c.stride_byte_offset_ = v[2] >> 4;
    c.version_ = 1;  // "Set the version for blackwell" (make_umma_desc): PTX's fixed 0b001 at 46-48
    c.base_offset_ = v[3];
    c.lbo_mode_ = v[4];
    c.layout_type_ = v[5];
    const auto r = d.encode_checked();
    bad += !r.ok() + !same("smem_desc", i, r.value, static_cast<std::uint64_t>(c)) +
           !(T::decode_checked(r.value).value == d);
  });
  print_domains("smem_desc", domains, n, bad);
}

void wgmma_desc(unsigned long long random_count) {
  using T = ptxgen::WgmmaDesc;
  const std::vector<Values> domains = {
      domain<T>(PTXGEN_SET(T, start_address), 1u << 18), domain<T>(PTXGEN_SET(T, leading_byte_offset), 1u << 18),
      domain<T>(PTXGEN_SET(T, stride_byte_offset), 1u << 18), domain<T>(PTXGEN_SET(T, base_offset), 16),
      domain<T>(PTXGEN_SET(T, swizzle), 8)};
  unsigned long long bad = 0;
  const auto n = sample<T, 5>(domains, random_count, [&](const std::uint32_t* v, unsigned long long i) {
    T d{};
    d.start_address = v[0];
    d.leading_byte_offset = v[1];
    d.stride_byte_offset = v[2];
    d.base_offset = v[3];
    d.swizzle = T::Swizzle(v[4]);
    cute::GmmaDescriptor c;
    c.desc_ = 0;
    c.bitfield.start_address_ = v[0] >> 4;
    c.bitfield.leading_byte_offset_ = v[1] >> 4;
    c.bitfield.stride_byte_offset_ = v[2] >> 4;
    c.bitfield.base_offset_ = v[3];
    c.bitfield.layout_type_ = v[4];
    const auto r = d.encode_checked();
    bad += !r.ok() + !same("wgmma_desc", i, r.value, static_cast<std::uint64_t>(c)) +
           !(T::decode_checked(r.value).value == d);
  });
  print_domains("wgmma_desc", domains, n, bad);
}

void zero_column_mask_desc(unsigned long long random_count) {
  using T = ptxgen::ZeroColumnMaskDesc;
  const std::vector<Values> domains = {
      domain<T>(PTXGEN_SET(T, start_count_0), 512), domain<T>(PTXGEN_SET(T, start_count_1), 512),
      domain<T>(PTXGEN_SET(T, start_count_2), 512), domain<T>(PTXGEN_SET(T, start_count_3), 512),
      domain<T>(PTXGEN_SET(T, first_span_0), 4),    domain<T>(PTXGEN_SET(T, first_span_1), 4),
      domain<T>(PTXGEN_SET(T, first_span_2), 4),    domain<T>(PTXGEN_SET(T, first_span_3), 4),
      domain<T>(PTXGEN_SET(T, non_zero_mask), 4),   domain<T>(PTXGEN_SET(T, skip_span), 512),
      domain<T>(PTXGEN_SET(T, use_span), 512),      domain<T>(PTXGEN_SET(T, column_shift), 128)};
  unsigned long long bad = 0;
  const auto n = sample<T, 12>(domains, random_count, [&](const std::uint32_t* v, unsigned long long i) {
    T d{};
    d.start_count_0 = v[0];
    d.start_count_1 = v[1];
    d.start_count_2 = v[2];
    d.start_count_3 = v[3];
    d.first_span_0 = v[4];
    d.first_span_1 = v[5];
    d.first_span_2 = v[6];
    d.first_span_3 = v[7];
    d.non_zero_mask = v[8];
    d.skip_span = v[9];
    d.use_span = v[10];
    d.column_shift = v[11];
    UMMA::MaskAndShiftB c;
    c.uri[0] = 0;
    c.uri[1] = 0;
    for (int k = 0; k < 4; ++k) c.start_count_[k] = static_cast<std::uint8_t>(v[k]);
    c.first_span_ = v[4] | v[5] << 1 | v[6] << 2 | v[7] << 3;  // bit i: sub-mask i
    c.nzm_ = v[8];
    c.skip_span_ = v[9];
    c.use_span_ = v[10];
    c.shift_ = v[11];
    const std::uint64_t theirs = static_cast<std::uint64_t>(c.uri[1]) << 32 | c.uri[0];
    const auto r = d.encode_checked();
    bad += !r.ok() + !same("zero_column_mask_desc", i, r.value, theirs) +
           !(T::decode_checked(r.value).value == d);
  });
  print_domains("zero_column_mask_desc", domains, n, bad);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned long long random_count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000ull;
  table42<ptxgen::InstrDescTf32>("instr_desc:tf32");
  table42<ptxgen::InstrDescF16>("instr_desc:f16");
  table42<ptxgen::InstrDescF8f6f4>("instr_desc:f8f6f4");
  table42<ptxgen::InstrDescI8>("instr_desc:i8");
  block_scaled<ptxgen::InstrDescMxf8f6f4, false>("instr_desc:mxf8f6f4");
  block_scaled<ptxgen::InstrDescMxf4, true>("instr_desc:mxf4");
  block_scaled<ptxgen::InstrDescMxf4nvf4, true>("instr_desc:mxf4nvf4");
  typed_builders();
  smem_desc(random_count);
  wgmma_desc(random_count);
  zero_column_mask_desc(random_count);
  std::printf("failures=%llu\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
