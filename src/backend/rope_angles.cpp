#include "backend/rope_angles.h"

#include <algorithm>
#include <cmath>

namespace vellum::backend {

// YaRN (and plain linear scaling, its special case): frequencies whose wavelength fits the original
// context keep extrapolating, long ones are interpolated by 1/factor, with a linear ramp between
// the two correction dimensions; cos/sin are scaled by 0.1·ln(factor) + 1 (as Hugging Face and
// ggml do).
RopeAngles rope_angles(const RopeConfig& rope) {
  const uint32_t half = rope.dims / 2;
  RopeAngles a;
  a.inv_freq.resize(half);
  const double base = rope.base;
  for (uint32_t i = 0; i < half; ++i) {
    double f = std::pow(base, -2.0 * i / rope.dims);
    if (!rope.freq_factors.empty()) f /= rope.freq_factors[i];
    a.inv_freq[i] = f;
  }
  if (rope.scaling == RopeScaling::Linear) {
    for (auto& f : a.inv_freq) f /= rope.factor;
  } else if (rope.scaling == RopeScaling::Yarn && rope.factor != 1.0f) {
    const double dims = rope.dims, orig = rope.original_context;
    auto corr_dim = [&](double rotations) {
      return dims * std::log(orig / (rotations * 2.0 * M_PI)) / (2.0 * std::log(base));
    };
    const double low = std::max(0.0, std::floor(corr_dim(rope.yarn_beta_fast)));
    const double high = std::min(dims - 1, std::ceil(corr_dim(rope.yarn_beta_slow)));
    for (uint32_t i = 0; i < half; ++i) {
      const double y = (i - low) / std::max(0.001, high - low);
      const double extrapolate = 1.0 - std::clamp(y, 0.0, 1.0);
      const double extrapolated = a.inv_freq[i];
      const double interpolated = extrapolated / rope.factor;
      a.inv_freq[i] = interpolated * (1.0 - extrapolate) + extrapolated * extrapolate;
    }
    a.magnitude = rope.yarn_attn_factor * (1.0 + 0.1 * std::log(rope.factor));
  }
  return a;
}

}  // namespace vellum::backend
