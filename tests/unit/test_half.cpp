// f16 / bf16 conversions (core/half.h) against numpy's astype and gguf-py's BF16 (ggml's rounding):
// every vector in tests/data/quant/half.json must match bit for bit, NaN payloads included.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "core/half.h"
#include "quant_test_data.h"

namespace vellum {
namespace {

using test::load_quant_vectors;
using test::parse_u32;

// Runs `convert` over one section of half.json and expects every output bit pattern.
template <typename Convert>
void check_section(const char* section, Convert convert, size_t min_cases) {
  const auto doc = load_quant_vectors("half.json");
  ASSERT_TRUE(doc.contains(section)) << section;
  const auto& in = doc[section]["input"];
  const auto& want = doc[section]["expected"];
  ASSERT_EQ(in.size(), want.size());
  ASSERT_GE(in.size(), min_cases);  // an emptied vector file must not pass
  int failures = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t x = parse_u32(in[i].get<std::string>());
    const uint32_t expected = parse_u32(want[i].get<std::string>());
    const uint32_t got = convert(x);
    if (got != expected && ++failures <= 20) {
      ADD_FAILURE() << section << " input 0x" << std::hex << x << ": expected 0x" << expected << ", got 0x" << got;
    }
  }
  EXPECT_EQ(failures, 0) << section;
}

TEST(Half, F32ToF16MatchesNumpy) {
  check_section("f32_to_f16", [](uint32_t x) { return uint32_t(f32_to_f16(std::bit_cast<float>(x))); }, 1000);
}

TEST(Half, F16ToF32MatchesNumpy) {
  check_section("f16_to_f32", [](uint32_t x) { return std::bit_cast<uint32_t>(f16_to_f32(uint16_t(x))); }, 500);
}

TEST(Half, F32ToBF16MatchesGgml) {
  check_section("f32_to_bf16", [](uint32_t x) { return uint32_t(f32_to_bf16(std::bit_cast<float>(x))); }, 1000);
}

TEST(Half, BF16ToF32MatchesGgml) {
  check_section("bf16_to_f32", [](uint32_t x) { return std::bit_cast<uint32_t>(bf16_to_f32(uint16_t(x))); }, 500);
}

// A few cases spelled out, so a regenerated vector file cannot silently drop them.
TEST(Half, KnownValues) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);                            // rounds up to inf
  EXPECT_EQ(f32_to_f16(std::bit_cast<float>(0x477fefffu)), 0x7bff);    // just below: stays finite
  EXPECT_EQ(f32_to_f16(std::bit_cast<float>(0x33000000u)), 0x0000);    // 2^-25: tie to even (zero)
  EXPECT_EQ(f32_to_f16(std::bit_cast<float>(0x33000001u)), 0x0001);    // just above the tie
  EXPECT_EQ(f32_to_f16(std::bit_cast<float>(0x33c00000u)), 0x0002);    // 1.5 * 2^-24: tie to even
  EXPECT_EQ(f32_to_f16(std::bit_cast<float>(0x3f801000u)), 0x3c00);    // 1 + 2^-11: tie to even
  EXPECT_EQ(f32_to_f16(std::bit_cast<float>(0x3f803000u)), 0x3c02);    // 1 + 3 * 2^-11: tie up
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(std::bit_cast<float>(0x7f800001u)), 0x7c01);    // NaN stays NaN
  EXPECT_EQ(f16_to_f32(0x0001), std::bit_cast<float>(0x33800000u));    // smallest subnormal
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);   // tie to even
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);   // tie up
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f800001u)), 0x7fc0);   // NaN made quiet
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80);   // FLT_MAX rounds to inf
}

}  // namespace
}  // namespace vellum
