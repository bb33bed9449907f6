// RoPE on the CPU backend: pair order, linear scaling and YaRN against closed-form expectations.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"

namespace vellum::backend {
namespace {

// Applies RoPE to one head of `dims` ones at `position`, returning the rotated vector.
std::vector<float> rotate(const RopeConfig& rope, int32_t position) {
  CpuBackend be(1);
  const uint32_t dims = rope.dims;
  std::vector<float> data(dims, 1.0f);
  const std::vector<int32_t> tokens{0}, positions{position};
  const std::vector<int64_t> slots{0};
  be.begin_step({tokens, positions, slots, {}, {}});
  be.rope(Tensor{data.data(), 1, dims}, dims, rope);
  return data;
}

// The angle by which pair i was rotated (input (1, 1)).
double angle(const std::vector<float>& v, uint32_t a, uint32_t b) {
  // (cos - sin, sin + cos) * m  →  atan2(y, x) = theta + pi/4
  return std::atan2(v[b], v[a]) - M_PI / 4;
}

TEST(CpuRope, InterleavedAndHalvesRotateTheSamePairsDifferently) {
  RopeConfig r;
  r.dims = 8;
  r.order = RopeOrder::Interleaved;
  const auto inter = rotate(r, 3);
  r.order = RopeOrder::Halves;
  const auto halves = rotate(r, 3);
  for (uint32_t i = 0; i < 4; ++i) {
    const double theta = 3.0 * std::pow(10000.0, -2.0 * i / 8);
    EXPECT_NEAR(std::remainder(angle(inter, 2 * i, 2 * i + 1) - theta, 2 * M_PI), 0.0, 1e-5) << i;
    EXPECT_NEAR(std::remainder(angle(halves, i, i + 4) - theta, 2 * M_PI), 0.0, 1e-5) << i;
  }
}

TEST(CpuRope, LinearScalingDividesThePosition) {
  RopeConfig r;
  r.dims = 16;
  r.scaling = RopeScaling::Linear;
  r.factor = 4.0f;
  const auto scaled = rotate(r, 40);
  RopeConfig plain;
  plain.dims = 16;
  const auto reference = rotate(plain, 10);
  for (size_t i = 0; i < scaled.size(); ++i) EXPECT_NEAR(scaled[i], reference[i], 1e-6) << i;
}

TEST(CpuRope, YarnKeepsHighFrequenciesAndInterpolatesLowOnes) {
  RopeConfig y;
  y.dims = 64;
  y.base = 10000.0f;
  y.scaling = RopeScaling::Yarn;
  y.factor = 4.0f;
  y.original_context = 4096;
  const auto out = rotate(y, 1000);
  const double magnitude = 1.0 + 0.1 * std::log(4.0);
  for (uint32_t i = 0; i < 32; ++i) {
    const double m = std::hypot(out[2 * i], out[2 * i + 1]) / std::sqrt(2.0);
    EXPECT_NEAR(m, magnitude, 1e-5);
  }
  // corr dims for beta_fast 32 / beta_slow 1: 64·ln(4096/(2π·β))/(2·ln 10000) = 10.47, 22.51 → [10, 23]
  const double low = std::floor(64 * std::log(4096 / (32 * 2 * M_PI)) / (2 * std::log(10000.0)));
  const double high = std::ceil(64 * std::log(4096 / (1 * 2 * M_PI)) / (2 * std::log(10000.0)));
  ASSERT_EQ(low, 10);
  ASSERT_EQ(high, 23);
  for (uint32_t i : {0u, 5u, 10u}) {  // below the ramp: pure extrapolation (unscaled frequency)
    const double theta = 1000.0 * std::pow(10000.0, -2.0 * i / 64);
    EXPECT_NEAR(std::remainder(angle(out, 2 * i, 2 * i + 1) - theta, 2 * M_PI), 0.0, 1e-4) << i;
  }
  for (uint32_t i : {23u, 31u}) {  // above: pure interpolation (frequency / factor)
    const double theta = 1000.0 * std::pow(10000.0, -2.0 * i / 64) / 4.0;
    EXPECT_NEAR(std::remainder(angle(out, 2 * i, 2 * i + 1) - theta, 2 * M_PI), 0.0, 1e-4) << i;
  }
}

TEST(CpuRope, FreqFactorsDivideFrequencies) {
  RopeConfig r;
  r.dims = 8;
  r.freq_factors = {1.0f, 2.0f, 4.0f, 8.0f};
  const auto out = rotate(r, 7);
  for (uint32_t i = 0; i < 4; ++i) {
    const double theta = 7.0 * std::pow(10000.0, -2.0 * i / 8) / r.freq_factors[i];
    EXPECT_NEAR(std::remainder(angle(out, 2 * i, 2 * i + 1) - theta, 2 * M_PI), 0.0, 1e-5) << i;
  }
}

}  // namespace
}  // namespace vellum::backend
