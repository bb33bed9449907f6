#include "backend/cpu/activation_q8.h"

#include <algorithm>
#include <cmath>

namespace vellum::backend::cpu {

void quantize_act_block(const float* x, int8_t* q, float* d, int16_t* sums) {
  float amax = 0.0f;
  for (int i = 0; i < kActBlock; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float scale = amax / 127.0f;
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  int s0 = 0, s1 = 0;
  for (int i = 0; i < kActBlock; ++i) {
    // |x * inv| <= 127 up to rounding; clamp so a rounding overshoot cannot wrap.
    float v = std::nearbyint(x[i] * inv);
    v = std::fmin(127.0f, std::fmax(-127.0f, v));
    const int qi = std::isnan(v) ? 0 : static_cast<int>(v);
    q[i] = static_cast<int8_t>(qi);
    (i < 16 ? s0 : s1) += qi;
  }
  *d = scale;
  sums[0] = static_cast<int16_t>(s0);
  sums[1] = static_cast<int16_t>(s1);
}

void ActQ8Rows::resize(int64_t rows, int64_t k) {
  k_ = k;
  const size_t n = static_cast<size_t>(rows * k);
  if (q_.size() < n) q_.resize(n);
  if (d_.size() < n / kActBlock) d_.resize(n / kActBlock);
  if (sums_.size() < n / 16) sums_.resize(n / 16);
}

void ActQ8Rows::quantize_row(int64_t r, const float* x) {
  const int64_t nb = k_ / kActBlock;
  int8_t* q = q_.data() + r * k_;
  float* d = d_.data() + r * nb;
  int16_t* s = sums_.data() + r * nb * 2;
  for (int64_t b = 0; b < nb; ++b) quantize_act_block(x + b * kActBlock, q + b * kActBlock, d + b, s + 2 * b);
}

}  // namespace vellum::backend::cpu
