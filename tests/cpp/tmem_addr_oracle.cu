// External oracle (issue 16): CUTLASS 4.2's Tensor Memory addressing against ptxgen's
// TmemAddr (spec/descriptors/tmem_addr.yaml, PTX ISA 9.7.16.1.1).
//
// CuTe addresses Tensor Memory with cute::tmem_ptr<uint32_t> (cute/pointer.hpp): adding i
// to it moves i columns, and cute::TMEM::DP<uint32_t> (cute/arch/tmem_allocator_sm100.hpp)
// is the distance of one lane (data path). For every lane (0..127) and column (0..511) of
// the 128 x 512 Tensor Memory, and for lanes and columns up to the 16-bit limits of the
// word, the word CuTe computes from lane * DP + column must be ptxgen's encode(), and
// ptxgen's decode() must give the lane and column back. The check CuTe's tcgen05.ld copy
// traits make of a warp's address (cute/atom/copy_traits_sm100.hpp: the lane is
// tmem_addr >> 16) is compared with TmemAddr::decode(...).lane as well.
// Built and run by tests/test_tmem_addr.py with nvcc against the nvidia-cutlass wheel's
// headers; prints "checked N mismatches M".
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <utility>

#include <cute/arch/tmem_allocator_sm100.hpp>
#include <cute/pointer.hpp>

#include "ptxgen/tmem_addr.hpp"

namespace {

// compile time as well: the constexpr encoder against CuTe's constant
static_assert(ptxgen::TmemAddr{}.with_lane(1).encode() ==
                  static_cast<std::uint32_t>(cute::TMEM::DP<std::uint32_t>::value),
              "one lane is CuTe's TMEM::DP<uint32_t>");
static_assert(ptxgen::TmemAddr{}.with_lane(32).with_column(64).encode() == 0x00200040u,
              "lane 32, column 64");

struct Count {
  unsigned long long checked = 0, bad = 0, words = 0;  // words: sum of CuTe's words
  std::uint32_t first_lane = 0, first_column = 0;
};

constexpr std::uint32_t cute_word(std::uint32_t lane, std::uint32_t column) {
  const cute::tmem_ptr<std::uint32_t> base(0u);
  const std::uint32_t offset =
      lane * static_cast<std::uint32_t>(cute::TMEM::DP<std::uint32_t>::value) + column;
  return (base + offset).get();
}

constexpr bool agrees(std::uint32_t lane, std::uint32_t column) {
  const std::uint32_t theirs = cute_word(lane, column);
  ptxgen::TmemAddr a{};
  a.lane = lane;
  a.column = column;
  const auto r = a.encode_checked();
  const auto back = ptxgen::TmemAddr::decode_checked(r.value);
  return r.ok() && r.value == theirs && back.ok() && back.value == a &&
         back.value.lane == (theirs >> 16) && back.value.column == (theirs & 0xFFFFu);
}

constexpr void check(Count& c, std::uint32_t lane, std::uint32_t column) {
  ++c.checked;
  c.words += cute_word(lane, column);
  if (!agrees(lane, column) && c.bad++ == 0) {
    c.first_lane = lane;
    c.first_column = column;
  }
}

// Evaluated by the compiler (CuTe's tmem_ptr arithmetic is constexpr; its host code is not
// meant to be run): every cell of the 128 x 512 Tensor Memory, a lane at a time (one
// constant per lane keeps each evaluation within the compiler's constexpr budget), then the
// 16-bit limits of both fields.
// PTXGEN_TMEM_COLUMN_STEP: every column (1), or every k-th of each lane (CI: 7, which
// divides 511, so that the first and the last column are both checked).
#ifndef PTXGEN_TMEM_COLUMN_STEP
#define PTXGEN_TMEM_COLUMN_STEP 1
#endif
template <std::uint32_t Lane>
constexpr Count count_lane() {
  Count c;
  for (std::uint32_t column = 0; column < 512; column += PTXGEN_TMEM_COLUMN_STEP) {
    check(c, Lane, column);
  }
  return c;
}

template <std::uint32_t Lane>
struct LaneCount {
  static constexpr Count value = count_lane<Lane>();
};

template <std::uint32_t... Lanes>
Count sum_lanes(std::integer_sequence<std::uint32_t, Lanes...>) {
  Count total;
  for (const Count& c : {LaneCount<Lanes>::value...}) {
    total.checked += c.checked;
    total.words += c.words;
    if (c.bad && !total.bad) {
      total.first_lane = c.first_lane;
      total.first_column = c.first_column;
    }
    total.bad += c.bad;
  }
  return total;
}

template <std::uint32_t Step>
constexpr Count count_limits() {
  Count c;
  for (std::uint32_t k = Step * 8; k < (Step + 1) * 8; ++k) {  // v = 0, 257, ..., 65535
    const std::uint32_t v = k * 257u;
    check(c, v, 65535u - v);
    check(c, 65535u, v);
    check(c, v, 65535u);
  }
  return c;
}

template <std::uint32_t Step>
struct LimitCount {
  static constexpr Count value = count_limits<Step>();
};

template <std::uint32_t... Steps>
Count sum_limits(std::integer_sequence<std::uint32_t, Steps...>) {
  Count total;
  for (const Count& c : {LimitCount<Steps>::value...}) {
    total.checked += c.checked;
    total.words += c.words;
    total.bad += c.bad;
  }
  return total;
}

}  // namespace

int main() {
  const Count all[] = {sum_lanes(std::make_integer_sequence<std::uint32_t, 128>{}),
                       sum_limits(std::make_integer_sequence<std::uint32_t, 32>{})};
  unsigned long long checked = 0, bad = 0;
  for (const Count& c : all) {
    checked += c.checked;
    bad += c.bad;
    std::printf("words %llu\n", c.words);
    if (c.bad) std::printf("MISMATCH lane %u column %u\n", c.first_lane, c.first_column);
  }
  std::printf("checked %llu mismatches %llu\n", checked, bad);
  return bad == 0 ? 0 : 1;
}
