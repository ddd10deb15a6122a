// Device results equal host results: runs the run-time API of the generated headers on the
// GPU for many random words and field values and compares every output with the same call
// made on the host (whose results tests/test_cpp_crosscheck.py and test_cpp_cutlass.py
// check against Python and CUTLASS). Needs a GPU: tests/test_cpp_gpu.py (marker "gpu").
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ptxgen/ptxgen.hpp"

using ptxgen::uint32_t;
using ptxgen::uint64_t;

namespace {

constexpr int kOutputs = 16;

__host__ __device__ uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Everything one sample computes; the same code runs on the host and the device.
__host__ __device__ void sample(uint64_t seed, uint64_t* out) {
  const uint64_t r0 = mix(seed), r1 = mix(r0), r2 = mix(r1), r3 = mix(r2);
  // Instruction descriptors: decode_checked of random (often invalid) words and re-encode.
  const auto f16 = ptxgen::InstrDescF16::decode_checked(static_cast<uint32_t>(r0));
  out[0] = static_cast<uint64_t>(f16.error) << 32 | static_cast<uint32_t>(f16.field);
  out[1] = f16.value.encode_unchecked();
  const auto nv = ptxgen::InstrDescMxf4nvf4::decode_checked(static_cast<uint32_t>(r1 & 0xf8ffffffu));
  out[2] = static_cast<uint64_t>(nv.error) << 32 | static_cast<uint32_t>(nv.field);
  out[3] = nv.ok() ? nv.value.encode() : nv.value.encode_unchecked();
  // Field values from random numbers, then encode_checked.
  ptxgen::InstrDescI8 i8{};
  i8.m = static_cast<uint32_t>(r2 % 512u);
  i8.n = static_cast<uint32_t>((r2 >> 16) % 512u);
  i8.saturate = static_cast<uint32_t>((r2 >> 32) & 3u);
  i8.atype = static_cast<ptxgen::InstrDescI8::Atype>((r2 >> 40) & 3u);
  const auto i8w = i8.encode_checked();
  out[4] = i8w.value | static_cast<uint64_t>(i8w.error) << 40 | static_cast<uint64_t>(i8w.field) << 48;
  // Shared memory and wgmma descriptors, Table 41.
  const auto smem = ptxgen::SmemDesc::decode_checked(r3);
  out[5] = static_cast<uint64_t>(smem.error) << 32 | static_cast<uint32_t>(smem.field);
  out[6] = smem.value.encode_unchecked();
  const auto swz = static_cast<ptxgen::SmemDesc::Swizzle>(r3 & 7u);
  const auto base = ptxgen::SmemDesc::base_offset_for_checked((r3 >> 3) & 0xfffffu, swz);
  out[7] = base.value | static_cast<uint64_t>(base.error) << 32;
  const auto wg = ptxgen::WgmmaDesc::decode_checked(r2 & 0xc00e3fff3fff3fffull);
  out[8] = wg.ok() ? wg.value.encode() : ~0ull;
  // Table 45: masks for a random descriptor and shape.
  const auto zcm = ptxgen::ZeroColumnMaskDesc::decode_unchecked(r1 & 0x3fffff8fffffffffull);
  const uint32_t ms[4] = {128u, 64u, 32u, 96u};
  const uint32_t m = ms[r0 & 3u];
  const uint32_t n = static_cast<uint32_t>((r0 >> 8) % 600u);
  const auto masks = zcm.masks_checked(m, n);
  out[9] = static_cast<uint64_t>(masks.error) << 32 | static_cast<uint32_t>(masks.field);
  out[10] = masks.value.count | static_cast<uint64_t>(masks.value.size) << 32;
  for (uint32_t k = 0; k < 4u; ++k) out[11 + k] = masks.value.word(k < masks.value.count ? k : 0u, 0u);
  out[15] = masks.value.word(0u, 3u);
}

__global__ void run(uint64_t first, int count, uint64_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) sample(first + static_cast<uint64_t>(i), out + static_cast<size_t>(i) * kOutputs);
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 1 << 20;
  std::vector<uint64_t> host(static_cast<size_t>(count) * kOutputs), device(host.size());
  uint64_t* d = nullptr;
  if (cudaMalloc(&d, device.size() * sizeof(uint64_t)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 2;
  }
  run<<<(count + 255) / 256, 256>>>(12345u, count, d);
  if (cudaMemcpy(device.data(), d, device.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    std::printf("kernel or copy failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  cudaFree(d);
  for (int i = 0; i < count; ++i) sample(12345u + static_cast<uint64_t>(i), &host[static_cast<size_t>(i) * kOutputs]);
  long long mismatches = 0, errors = 0;
  for (size_t k = 0; k < host.size(); ++k) {
    if (host[k] != device[k] && mismatches++ < 10) {
      std::printf("MISMATCH sample %zu output %zu: host %#llx device %#llx\n", k / kOutputs, k % kOutputs,
                  static_cast<unsigned long long>(host[k]), static_cast<unsigned long long>(device[k]));
    }
    if (k % kOutputs == 0 && (host[k] >> 32) != 0) ++errors;
  }
  std::printf("samples=%d outputs=%zu mismatches=%lld f16_errors=%lld\n", count, host.size(), mismatches, errors);
  return mismatches == 0 ? 0 : 1;
}
