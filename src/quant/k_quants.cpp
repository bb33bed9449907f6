#include "quant/k_quants.h"

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

using detail::nearest_int;

// ---- dequantization ------------------------------------------------------------------------------
// Each element is (d * scale) * q - (dmin * min) in float, the grouping ggml uses.

void dequantize_block(const BlockQ2_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int e = 0; e < QK_K; ++e) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    const uint8_t sc = b.scales[e / 16];
    const float dl = d * float(sc & 0xF);
    const float ml = dmin * float(sc >> 4);
    const int q = (b.qs[32 * h + l] >> (2 * k)) & 3;
    y[e] = dl * float(q) - ml;
  }
}

namespace {
// Signed 6-bit scale s (0..15) of a Q3_K block: low nibble from bytes 0..7, top two bits from 8..11.
int q3k_scale(const uint8_t* scales, int s) {
  const int lo = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
  const int hi = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}
}  // namespace

void dequantize_block(const BlockQ3_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int e = 0; e < QK_K; ++e) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    const float dl = d * float(q3k_scale(b.scales, e / 16));
    const int lo = (b.qs[32 * h + l] >> (2 * k)) & 3;
    const bool high = (b.hmask[l] >> (4 * h + k)) & 1;
    y[e] = dl * float(lo - (high ? 0 : 4));
  }
}

void dequantize_block(const BlockQ4_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int e = 0; e < QK_K; ++e) {
    const int c = e / 64, upper = (e % 64) / 32, l = e % 32;
    uint8_t sc, m;
    get_scale_min_k4(e / 32, b.scales, sc, m);
    const float d1 = d * float(sc);
    const float m1 = dmin * float(m);
    const int q = upper ? (b.qs[32 * c + l] >> 4) : (b.qs[32 * c + l] & 0xF);
    y[e] = d1 * float(q) - m1;
  }
}

void dequantize_block(const BlockQ5_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int e = 0; e < QK_K; ++e) {
    const int c = e / 64, upper = (e % 64) / 32, l = e % 32;
    uint8_t sc, m;
    get_scale_min_k4(e / 32, b.scales, sc, m);
    const float d1 = d * float(sc);
    const float m1 = dmin * float(m);
    const int lo = upper ? (b.qs[32 * c + l] >> 4) : (b.qs[32 * c + l] & 0xF);
    const int hi = (b.qh[l] >> (2 * c + upper)) & 1;
    y[e] = d1 * float(lo + 16 * hi) - m1;
  }
}

void dequantize_block(const BlockQ6_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int e = 0; e < QK_K; ++e) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    const uint8_t ql = b.ql[64 * h + 32 * (k & 1) + l];
    const int lo = k < 2 ? (ql & 0xF) : (ql >> 4);
    const int hi = (b.qh[32 * h + l] >> (2 * k)) & 3;
    y[e] = d * float(b.scales[e / 16]) * float((lo | (hi << 4)) - 32);
  }
}

// ---- quantization helpers (ggml-quants.c, reference path) ----------------------------------------

namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below this a group counts as zero

template <typename T>
T clamp(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// ggml's make_qx_quants with rmse_type 1: symmetric levels -nmax..nmax-1 (stored + nmax in L), the
// scale fitted by weighted least squares (weights qw, or x^2 when null), then 18 nudged inverse scales
// tried and the best fit kept. Returns the scale.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* qw) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  float iscale = float(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = int8_t(l + nmax);
    const float w = qw ? qw[i] : x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(float(nmax) + 0.1f * float(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = qw ? qw[i] : x[i] * x[i];
      sumlx += w * x[i] * float(l);
      suml2 += w * float(l) * float(l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = int8_t(nmax + clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// ggml's make_q3_quants with do_rmse: symmetric levels, then up to 5 passes of coordinate descent
// on the x^2-weighted least-squares fit. L receives levels + nmax; returns the scale.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const float iscale = float(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      if (slx > 0) {
        float sl2 = suml2 - w * float(L[i]) * float(L[i]);
        const int new_l = clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (new_l != L[i]) {
          slx += w * x[i] * float(new_l);
          sl2 += w * float(new_l) * float(new_l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = int8_t(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// ggml's make_qkx2_quants: asymmetric levels 0..nmax with x ~ scale * l - the_min. Starts from the
// min/max grid, then tries nstep + 1 inverse scales, fitting scale and min by weighted least squares
// for each, and keeps the one with the smallest weighted error (|diff| if use_mad, else diff^2).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  float iscale = float(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = uint8_t(clamp(l, 0, nmax));
    float diff = scale * float(L[i]) + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * float(l);
      sum_l2 += w * float(l) * float(l);
      sum_xl += w * float(l) * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * float(Laux[i]) + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Packs 2-bit levels the Q2_K / Q3_K way: element 128h + 32k + l into bits 2k of qs[32h + l].
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < QK_K; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
  }
}

// Q4_K / Q5_K share everything but the level count and the search grid: 8 sub-blocks of 32 fitted
// by make_qkx2_quants, their scales and mins quantized to 6 bits against the largest of each, then
// every element re-quantized against the final (f16-rounded, 6-bit) scale and min.
template <typename Block>
void quantize_q45_k(const float* x, Block& b, uint8_t* L, int nmax, float rmin, int nstep) {
  uint8_t Laux[32];
  float weights[32];
  float mins[QK_K / 32];
  float scales[QK_K / 32];
  float max_scale = 0;  // as we deduct the min, scales are never negative
  float max_min = 0;
  for (int j = 0; j < QK_K / 32; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < QK_K / 32; ++j) {
    // ggml narrows to uint8_t before clamping; keep that order.
    uint8_t ls = uint8_t(nearest_int(inv_scale * scales[j]));
    uint8_t lm = uint8_t(nearest_int(inv_min * mins[j]));
    ls = ls < 63 ? ls : 63;
    lm = lm < 63 ? lm : 63;
    if (j < 4) {
      b.scales[j] = ls;
      b.scales[j + 4] = lm;
    } else {
      b.scales[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
      b.scales[j - 4] = uint8_t(b.scales[j - 4] | ((ls >> 4) << 6));
      b.scales[j] = uint8_t(b.scales[j] | ((lm >> 4) << 6));
    }
  }
  b.d = f32_to_f16(max_scale / 63.f);
  b.dmin = f32_to_f16(max_min / 63.f);

  for (int j = 0; j < QK_K / 32; ++j) {
    uint8_t sc, m;
    get_scale_min_k4(j, b.scales, sc, m);
    const float d = f16_to_f32(b.d) * float(sc);
    if (d == 0) continue;  // keep the search's levels, as ggml does
    const float dm = f16_to_f32(b.dmin) * float(m);
    for (int ii = 0; ii < 32; ++ii) {
      L[32 * j + ii] = uint8_t(clamp(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax));
    }
  }
}

}  // namespace

// ---- quantization --------------------------------------------------------------------------------

void quantize_block(const float* x, BlockQ2_K& b) {
  uint8_t L[QK_K];
  uint8_t Laux[16];
  float weights[16];
  float mins[QK_K / 16];
  float scales[QK_K / 16];
  const float q4scale = 15.f;

  float max_scale = 0, max_min = 0;
  for (int j = 0; j < QK_K / 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  if (max_scale > 0) {
    const float iscale = q4scale / max_scale;
    for (int j = 0; j < QK_K / 16; ++j) b.scales[j] = uint8_t(nearest_int(iscale * scales[j]));
    b.d = f32_to_f16(max_scale / q4scale);
  } else {
    for (int j = 0; j < QK_K / 16; ++j) b.scales[j] = 0;
    b.d = f32_to_f16(0.f);
  }
  if (max_min > 0) {
    const float iscale = q4scale / max_min;
    for (int j = 0; j < QK_K / 16; ++j) {
      b.scales[j] = uint8_t(b.scales[j] | (unsigned(nearest_int(iscale * mins[j])) << 4));
    }
    b.dmin = f32_to_f16(max_min / q4scale);
  } else {
    b.dmin = f32_to_f16(0.f);
  }

  for (int j = 0; j < QK_K / 16; ++j) {
    const float d = f16_to_f32(b.d) * float(b.scales[j] & 0xF);
    if (d == 0) continue;
    const float dm = f16_to_f32(b.dmin) * float(b.scales[j] >> 4);
    for (int ii = 0; ii < 16; ++ii) {
      L[16 * j + ii] = uint8_t(clamp(nearest_int((x[16 * j + ii] + dm) / d), 0, 3));
    }
  }
  pack_2bit(L, b.qs);
}

void quantize_block(const float* x, BlockQ3_K& b) {
  int8_t L[QK_K];
  float scales[QK_K / 16];

  float max_scale = 0, amax = 0;
  for (int j = 0; j < QK_K / 16; ++j) {
    scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
    const float scale = std::fabs(scales[j]);
    if (scale > amax) {
      amax = scale;
      max_scale = scales[j];
    }
  }

  std::memset(b.scales, 0, sizeof(b.scales));
  if (max_scale != 0) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < QK_K / 16; ++j) {
      int8_t l8 = int8_t(nearest_int(iscale * scales[j]));  // ggml narrows before clamping
      const int l = clamp(int(l8), -32, 31) + 32;
      if (j < 8) {
        b.scales[j] = uint8_t(l & 0xF);
      } else {
        b.scales[j - 8] = uint8_t(b.scales[j - 8] | ((l & 0xF) << 4));
      }
      b.scales[j % 4 + 8] = uint8_t(b.scales[j % 4 + 8] | ((l >> 4) << (2 * (j / 4))));
    }
    b.d = f32_to_f16(1 / iscale);
  } else {
    b.d = f32_to_f16(0.f);
  }

  for (int j = 0; j < QK_K / 16; ++j) {
    const float d = f16_to_f32(b.d) * float(q3k_scale(b.scales, j));
    if (d == 0) continue;
    for (int ii = 0; ii < 16; ++ii) {
      L[16 * j + ii] = int8_t(clamp(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
    }
  }

  // The third bit goes to hmask: the first 32 elements into bit 0 of hmask[0..31], the next 32 into bit 1...
  uint8_t Lu[QK_K];
  std::memset(b.hmask, 0, sizeof(b.hmask));
  for (int j = 0; j < QK_K; ++j) {
    int l = L[j];
    if (l > 3) {
      b.hmask[j % 32] = uint8_t(b.hmask[j % 32] | (1u << (j / 32)));
      l -= 4;
    }
    Lu[j] = uint8_t(l);
  }
  pack_2bit(Lu, b.qs);
}

void quantize_block(const float* x, BlockQ4_K& b) {
  uint8_t L[QK_K];
  quantize_q45_k(x, b, L, 15, -1.f, 20);
  for (int c = 0; c < QK_K / 64; ++c) {
    for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = uint8_t(L[64 * c + l] | (L[64 * c + l + 32] << 4));
  }
}

void quantize_block(const float* x, BlockQ5_K& b) {
  uint8_t L[QK_K];
  quantize_q45_k(x, b, L, 31, -0.5f, 15);
  std::memset(b.qh, 0, sizeof(b.qh));
  for (int c = 0; c < QK_K / 64; ++c) {
    for (int l = 0; l < 32; ++l) {
      int l1 = L[64 * c + l];
      int l2 = L[64 * c + l + 32];
      if (l1 > 15) {
        l1 -= 16;
        b.qh[l] = uint8_t(b.qh[l] | (1u << (2 * c)));
      }
      if (l2 > 15) {
        l2 -= 16;
        b.qh[l] = uint8_t(b.qh[l] | (2u << (2 * c)));
      }
      b.qs[32 * c + l] = uint8_t(l1 | (l2 << 4));
    }
  }
}

void quantize_block(const float* x, BlockQ6_K& b) {
  int8_t L[QK_K];
  float scales[QK_K / 16];

  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < QK_K / 16; ++ib) {
    const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, nullptr);
    scales[ib] = scale;
    const float abs_scale = std::fabs(scale);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scale;
    }
  }

  if (max_abs_scale < kGroupMaxEps) {  // all (near) zero: an all-zero block
    std::memset(&b, 0, sizeof(b));
    b.d = f32_to_f16(0.f);
    return;
  }

  const float iscale = -128.f / max_scale;
  b.d = f32_to_f16(1 / iscale);
  for (int ib = 0; ib < QK_K / 16; ++ib) {
    const int l = nearest_int(iscale * scales[ib]);
    b.scales[ib] = int8_t(l < 127 ? l : 127);
  }

  for (int j = 0; j < QK_K / 16; ++j) {
    const float d = f16_to_f32(b.d) * float(b.scales[j]);
    if (d == 0) continue;
    for (int ii = 0; ii < 16; ++ii) {
      L[16 * j + ii] = int8_t(clamp(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
    }
  }

  for (int h = 0; h < 2; ++h) {
    const int8_t* Lh = L + 128 * h;
    uint8_t* ql = b.ql + 64 * h;
    uint8_t* qh = b.qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      const int q1 = Lh[l], q2 = Lh[l + 32], q3 = Lh[l + 64], q4 = Lh[l + 96];
      ql[l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
      ql[l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
      qh[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
}

}  // namespace vellum::quant
