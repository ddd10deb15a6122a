// elect.sync on the GPU through ptxgen::ptx::elect_sync_lane (the `d|p` form: the leader's
// lane id and the predicate) and ptxgen::ptx::elect_sync (the `_|p` form) only
// (tests/gpu/test_elect.py).
//
// Warp w of the launch takes masks[w]: its threads whose lane is in the mask execute both
// forms REPEATS times (the others skip them and write nothing), and write the lane id each
// call returned and whether the thread was elected. The host checks the answers against the
// PTX ISA's description of elect.sync.
#include <ptxgen/ptx/sync.hpp>

#include "common.cuh"

using namespace ptxgen::ptx;

namespace {

constexpr int kRepeats = 4;

// out: per warp, per repeat, per lane: {lane id of elect_sync_lane, its predicate,
// predicate of elect_sync}. Threads outside the mask leave their entries as the host set
// them.
__global__ void elect_kernel(const std::uint32_t* masks, std::uint32_t* out) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const std::uint32_t mask = masks[warp];
  if (((mask >> lane) & 1u) == 0) return;
  for (int r = 0; r < kRepeats; ++r) {
    const elect_sync_lane_result got = elect_sync_lane(mask);
    const bool elected = elect_sync(mask);
    std::uint32_t* o = out + ((static_cast<std::size_t>(warp) * kRepeats + r) * 32 + lane) * 3;
    o[0] = got.lane;
    o[1] = got.elected ? 1u : 0u;
    o[2] = elected ? 1u : 0u;
  }
}

}  // namespace

PTXGEN_GPU_EXPORT int elect_repeats() { return kRepeats; }

// warps: a multiple of 4 (blocks of 128 threads).
PTXGEN_GPU_EXPORT int elect_run(int warps, const void* masks, void* out) {
  if (warps <= 0 || warps % 4 != 0) return -1;
  elect_kernel<<<warps / 4, 128>>>(static_cast<const std::uint32_t*>(masks),
                                   static_cast<std::uint32_t*>(out));
  return gpu_test::finish_launch();
}
