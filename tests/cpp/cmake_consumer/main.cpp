// Consumer of ptxgen::ptxgen: a compile-time and a run-time use of the headers.
#include <cstdio>

#include "ptxgen/ptxgen.hpp"

using ptxgen::InstrDescF16;

constexpr auto kIdesc = InstrDescF16{}
                            .with_dtype(InstrDescF16::Dtype::F32)
                            .with_atype(InstrDescF16::Atype::BF16)
                            .with_btype(InstrDescF16::Btype::BF16)
                            .with_m(128)
                            .with_n(256);
static_assert(kIdesc.encode() == 0x08400490u, "kind::f16 bf16 x bf16 -> f32, 128 x 256");

int main(int argc, char**) {
  const auto smem = ptxgen::SmemDesc{}.with_start_address(0x400u * static_cast<unsigned>(argc));
  const auto checked = kIdesc.with_m(100u).encode_checked();
  std::printf("instr_desc=%#x smem_desc=%#llx error=%s field=%s\n", kIdesc.encode(),
              static_cast<unsigned long long>(smem.encode()), ptxgen::errc_name(checked.error),
              InstrDescF16::field_name(checked.field));
  return 0;
}
