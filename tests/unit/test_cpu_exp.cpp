// exp, softmax and SwiGLU of the CPU backend (backend/cpu/cpu_exp.h): accuracy against libm's
// double-precision exp, identical bits at every ISA level the machine has, and the edge values.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/cpu_exp.h"

namespace vellum::backend::cpu {
namespace {

std::vector<IsaLevel> levels() {
  std::vector<IsaLevel> v;
  for (int l = 0; l <= static_cast<int>(detected_isa()); ++l) v.push_back(static_cast<IsaLevel>(l));
  return v;
}

// |a - b| in units of the float spacing at b.
double ulps(float a, double b) { return std::fabs(a - b) / (std::nextafter(float(b), INFINITY) - float(b)); }

TEST(CpuExp, WithinOneAndAHalfUlpOfLibmOverTheNormalRange) {
  double worst = 0.0;
  // Every 97th float from exp's underflow to its overflow threshold: ~ 20 M values.
  for (uint32_t bits = 0; bits < 0xFFFFFFFFu - 96; bits += 97) {
    const float x = std::bit_cast<float>(bits);
    if (!std::isfinite(x) || x < -87.0f || x > 88.7f) continue;  // results normal and finite
    worst = std::max(worst, ulps(exp_f32(x), std::exp(double(x))));
  }
  std::printf("exp_f32: worst error %.2f ulp\n", worst);
  EXPECT_LE(worst, 1.5);  // measured: 1.0
}

TEST(CpuExp, EdgeValues) {
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_EQ(exp_f32(-0.0f), 1.0f);
  EXPECT_EQ(exp_f32(-200.0f), 0.0f);
  EXPECT_EQ(exp_f32(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp_f32(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(exp_f32(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(exp_f32(std::numeric_limits<float>::quiet_NaN()), exp_f32(-104.0f));  // no UB, no crash
  EXPECT_GT(exp_f32(-100.0f), 0.0f);  // subnormal results are kept
  EXPECT_NEAR(exp_f32(-100.0f), std::exp(-100.0), 1e-45);
}

TEST(CpuExp, SoftmaxAndSwigluSameBitsAtEveryLevel) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 6.0f);
  for (int64_t n : {1, 2, 7, 15, 16, 17, 31, 33, 100, 509}) {
    std::vector<float> x(static_cast<size_t>(n)), up(static_cast<size_t>(n));
    for (auto& v : x) v = dist(rng);
    for (auto& v : up) v = dist(rng);
    // The double-precision references, from the float differences x - max (rounded as the kernels
    // round them: float softmax cannot do better than that rounding).
    float mx = -INFINITY;
    double sum = 0.0;
    for (float v : x) mx = std::max(mx, v);
    for (float v : x) sum += std::exp(double(v - mx));
    std::vector<float> first_sm, first_sw;
    for (IsaLevel l : levels()) {
      std::vector<float> sm = x, sw(static_cast<size_t>(n));
      softmax_for(l)(sm.data(), n);
      swiglu_for(l)(x.data(), up.data(), sw.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double p = std::exp(double(x[i] - mx)) / sum;
        EXPECT_NEAR(sm[i], p, 1e-6 * p + 1e-30) << "softmax n " << n << " i " << i << " " << isa_name(l);
        const double s = double(x[i]) / (1.0 + std::exp(-double(x[i]))) * up[i];
        EXPECT_NEAR(sw[i], s, 1e-6 * std::fabs(s) + 1e-30) << "swiglu n " << n << " i " << i << " " << isa_name(l);
      }
      if (first_sm.empty()) {
        first_sm = sm;
        first_sw = sw;
      } else {
        EXPECT_EQ(std::memcmp(first_sm.data(), sm.data(), sm.size() * 4), 0) << "softmax n " << n << " " << isa_name(l);
        EXPECT_EQ(std::memcmp(first_sw.data(), sw.data(), sw.size() * 4), 0) << "swiglu n " << n << " " << isa_name(l);
      }
    }
  }
}

TEST(CpuExp, SwigluInPlaceAndExtremes) {
  const std::vector<float> g = {-1000.0f, -90.0f, -0.0f, 0.0f, 1e-30f, 50.0f, 1000.0f, INFINITY};
  for (IsaLevel l : levels()) {
    std::vector<float> out = g;
    const std::vector<float> up(g.size(), 2.0f);
    swiglu_for(l)(out.data(), up.data(), out.data(), static_cast<int64_t>(out.size()));
    EXPECT_EQ(out[0], 0.0f) << isa_name(l);  // g / inf
    EXPECT_NEAR(out[1], 0.0f, 1e-30f) << isa_name(l);
    EXPECT_EQ(out[3], 0.0f) << isa_name(l);
    EXPECT_EQ(out[5], 100.0f) << isa_name(l);
    EXPECT_EQ(out[6], 2000.0f) << isa_name(l);
    EXPECT_EQ(out[7], INFINITY) << isa_name(l);
  }
}

}  // namespace
}  // namespace vellum::backend::cpu
