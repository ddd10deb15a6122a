// CUDA translation unit of the CMake consumer: the headers in device code.
#include "ptxgen/ptxgen.hpp"

__global__ void consumer_kernel(ptxgen::uint64_t* out, unsigned start) {
  out[0] = ptxgen::SmemDesc{}.with_start_address(start).encode();
  out[1] = ptxgen::InstrDescF16{}.with_m(128).with_n(256).encode();
}
