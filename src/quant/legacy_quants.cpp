#include "quant/legacy_quants.h"

#include <cmath>
#include <cstring>

#include "core/half.h"
#include "quant/rounding.h"

// Bit-exactness: no FMA contraction in this file (see rounding.h).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace vellum::quant {

using detail::round_to_int8;
using detail::trunc_clamp;

// ---- dequantization: `q * d` (+ m) in float, exactly ggml's expressions -------------------------

void dequantize_block(const BlockQ4_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < QK4_0 / 2; ++j) {
    y[j] = float((b.qs[j] & 0x0F) - 8) * d;
    y[j + QK4_0 / 2] = float((b.qs[j] >> 4) - 8) * d;
  }
}

void dequantize_block(const BlockQ4_1& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float m = f16_to_f32(b.m);
  for (int j = 0; j < QK4_1 / 2; ++j) {
    y[j] = float(b.qs[j] & 0x0F) * d + m;
    y[j + QK4_1 / 2] = float(b.qs[j] >> 4) * d + m;
  }
}

namespace {
uint32_t load_qh(const uint8_t (&qh)[4]) {
  uint32_t v;
  std::memcpy(&v, qh, 4);
  return v;
}
void store_qh(uint8_t (&qh)[4], uint32_t v) { std::memcpy(qh, &v, 4); }
}  // namespace

void dequantize_block(const BlockQ5_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  const uint32_t qh = load_qh(b.qh);
  for (int j = 0; j < QK5_0 / 2; ++j) {
    const int h0 = int((qh >> j) & 1u) << 4;
    const int h1 = int((qh >> (j + QK5_0 / 2)) & 1u) << 4;
    y[j] = float(((b.qs[j] & 0x0F) | h0) - 16) * d;
    y[j + QK5_0 / 2] = float(((b.qs[j] >> 4) | h1) - 16) * d;
  }
}

void dequantize_block(const BlockQ5_1& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float m = f16_to_f32(b.m);
  const uint32_t qh = load_qh(b.qh);
  for (int j = 0; j < QK5_1 / 2; ++j) {
    const int h0 = int((qh >> j) & 1u) << 4;
    const int h1 = int((qh >> (j + QK5_1 / 2)) & 1u) << 4;
    y[j] = float((b.qs[j] & 0x0F) | h0) * d + m;
    y[j + QK5_1 / 2] = float((b.qs[j] >> 4) | h1) * d + m;
  }
}

void dequantize_block(const BlockQ8_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < QK8_0; ++j) y[j] = float(b.qs[j]) * d;
}

// ---- quantization: ggml's quantize_row_*_ref ----------------------------------------------------

namespace {

// The element of largest magnitude, sign kept (first one on ties): the symmetric types map it to
// the most negative level, so its sign decides which end of the range gets the extra level.
float signed_absmax(const float* x, int n) {
  float amax = 0.f;
  float max = 0.f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, int n, float& min, float& max) {
  min = 3.402823466e+38f;  // FLT_MAX, as ggml starts
  max = -3.402823466e+38f;
  for (int j = 0; j < n; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
}

}  // namespace

void quantize_block(const float* x, BlockQ4_0& b) {
  const float max = signed_absmax(x, QK4_0);
  const float d = max / -8;
  const float id = d != 0.f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  for (int j = 0; j < QK4_0 / 2; ++j) {
    const int q0 = trunc_clamp(x[j] * id + 8.5f, 15);
    const int q1 = trunc_clamp(x[j + QK4_0 / 2] * id + 8.5f, 15);
    b.qs[j] = uint8_t(q0 | (q1 << 4));
  }
}

void quantize_block(const float* x, BlockQ4_1& b) {
  float min, max;
  min_max(x, QK4_1, min, max);
  const float d = (max - min) / 15;
  const float id = d != 0.f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  b.m = f32_to_f16(min);
  for (int j = 0; j < QK4_1 / 2; ++j) {
    const int q0 = trunc_clamp((x[j] - min) * id + 0.5f, 15);
    const int q1 = trunc_clamp((x[j + QK4_1 / 2] - min) * id + 0.5f, 15);
    b.qs[j] = uint8_t(q0 | (q1 << 4));
  }
}

void quantize_block(const float* x, BlockQ5_0& b) {
  const float max = signed_absmax(x, QK5_0);
  const float d = max / -16;
  const float id = d != 0.f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  uint32_t qh = 0;
  for (int j = 0; j < QK5_0 / 2; ++j) {
    const int q0 = trunc_clamp(x[j] * id + 16.5f, 31);
    const int q1 = trunc_clamp(x[j + QK5_0 / 2] * id + 16.5f, 31);
    b.qs[j] = uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    qh |= uint32_t(q0 >> 4) << j;
    qh |= uint32_t(q1 >> 4) << (j + QK5_0 / 2);
  }
  store_qh(b.qh, qh);
}

void quantize_block(const float* x, BlockQ5_1& b) {
  float min, max;
  min_max(x, QK5_1, min, max);
  const float d = (max - min) / 31;
  const float id = d != 0.f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  b.m = f32_to_f16(min);
  uint32_t qh = 0;
  for (int j = 0; j < QK5_1 / 2; ++j) {
    const int q0 = trunc_clamp((x[j] - min) * id + 0.5f, 31);
    const int q1 = trunc_clamp((x[j + QK5_1 / 2] - min) * id + 0.5f, 31);
    b.qs[j] = uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    qh |= uint32_t(q0 >> 4) << j;
    qh |= uint32_t(q1 >> 4) << (j + QK5_1 / 2);
  }
  store_qh(b.qh, qh);
}

void quantize_block(const float* x, BlockQ8_0& b) {
  float amax = 0.f;
  for (int j = 0; j < QK8_0; ++j) {
    const float a = std::fabs(x[j]);
    amax = amax > a ? amax : a;  // ggml's MAX(amax, a), NaN handling included
  }
  const float d = amax / 127;
  const float id = d != 0.f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  for (int j = 0; j < QK8_0; ++j) b.qs[j] = round_to_int8(x[j] * id);
}

}  // namespace vellum::quant
