// Portable kernels: the reference for the lane and rounding order every SIMD level reproduces
// (matmul_kernels.h). Slow but exact to the bit against matmul_avx2.cpp and matmul_avx512.cpp.

#include <cmath>
#include <cstring>

#include "backend/cpu/matmul_kernels.h"
#include "core/half.h"
#include "quant/blocks.h"
#include "quant/k_quants.h"

namespace vellum::backend::cpu {
namespace {

using namespace vellum::quant;

constexpr int kMaxTile = 4;

uint16_t u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// ---- float weights ----------------------------------------------------------------------------

void f32_tile(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out, int64_t os) {
  for (int r = 0; r < rows; ++r) {
    const float* x = act.x + (r0 + r) * act.x_stride;
    float acc[16] = {};
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
      for (int l = 0; l < 16; ++l) {
        float w;
        std::memcpy(&w, w_row + 4 * (i + l), 4);
        acc[l] += x[i + l] * w;
      }
    }
    for (int l = 0; i < k; ++i, ++l) {
      float w;
      std::memcpy(&w, w_row + 4 * i, 4);
      acc[l] += x[i] * w;
    }
    for (int width = 8; width > 0; width /= 2) {
      for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
    }
    out[r * os] = acc[0];
  }
}

template <bool kBf16>
void half_tile(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out, int64_t os) {
  for (int r = 0; r < rows; ++r) {
    const float* x = act.x + (r0 + r) * act.x_stride;
    float acc[16] = {};
    for (int64_t i = 0; i < k; ++i) {
      const uint16_t h = u16(w_row + 2 * i);
      const float w = kBf16 ? bf16_to_f32(h) : f16_to_f32(h);
      float& a = acc[i % 16];
      a = std::fma(w, x[i], a);
    }
    for (int width = 8; width > 0; width /= 2) {
      for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
    }
    out[r * os] = acc[0];
  }
}

// ---- quantized weights ------------------------------------------------------------------------

// One block of 32 weights in the form every kernel uses: integer levels q (unsigned, or signed for
// Q8_0), an integer offset o subtracted from every q, integer scales per half of 16, a float scale
// dw, and optionally a min term mw * (m_lo * Σa_lo + m_hi * Σa_hi).
struct Block32 {
  int q[32];
  int o = 0;
  int sc_lo = 1, sc_hi = 1;
  float dw = 0.0f;
  float mw = 0.0f;
  int m_lo = 0, m_hi = 0;
};

void decode_q4_0(const uint8_t* row, int64_t b, Block32& o) {
  const uint8_t* p = row + b * sizeof(BlockQ4_0);
  o.dw = f16_to_f32(u16(p));
  for (int l = 0; l < 16; ++l) {
    o.q[l] = p[2 + l] & 15;
    o.q[l + 16] = p[2 + l] >> 4;
  }
  o.o = 8;
}

void decode_q4_1(const uint8_t* row, int64_t b, Block32& o) {
  const uint8_t* p = row + b * sizeof(BlockQ4_1);
  o.dw = f16_to_f32(u16(p));
  o.mw = f16_to_f32(u16(p + 2));
  o.m_lo = o.m_hi = 1;
  for (int l = 0; l < 16; ++l) {
    o.q[l] = p[4 + l] & 15;
    o.q[l + 16] = p[4 + l] >> 4;
  }
}

void decode_q5_0(const uint8_t* row, int64_t b, Block32& o) {
  const uint8_t* p = row + b * sizeof(BlockQ5_0);
  o.dw = f16_to_f32(u16(p));
  uint32_t qh;
  std::memcpy(&qh, p + 2, 4);
  for (int l = 0; l < 16; ++l) {
    o.q[l] = (p[6 + l] & 15) | int((qh >> l) & 1) << 4;
    o.q[l + 16] = (p[6 + l] >> 4) | int((qh >> (l + 16)) & 1) << 4;
  }
  o.o = 16;
}

void decode_q5_1(const uint8_t* row, int64_t b, Block32& o) {
  const uint8_t* p = row + b * sizeof(BlockQ5_1);
  o.dw = f16_to_f32(u16(p));
  o.mw = f16_to_f32(u16(p + 2));
  o.m_lo = o.m_hi = 1;
  uint32_t qh;
  std::memcpy(&qh, p + 4, 4);
  for (int l = 0; l < 16; ++l) {
    o.q[l] = (p[8 + l] & 15) | int((qh >> l) & 1) << 4;
    o.q[l + 16] = (p[8 + l] >> 4) | int((qh >> (l + 16)) & 1) << 4;
  }
}

void decode_q8_0(const uint8_t* row, int64_t b, Block32& o) {
  const uint8_t* p = row + b * sizeof(BlockQ8_0);
  o.dw = f16_to_f32(u16(p));
  for (int l = 0; l < 32; ++l) o.q[l] = static_cast<int8_t>(p[2 + l]);
}

void decode_q2_k(const uint8_t* row, int64_t b, Block32& o) {
  const auto* p = row + (b / 8) * sizeof(BlockQ2_K);
  const int j = static_cast<int>(b % 8), h = j / 4, k = j % 4;
  const uint8_t* scales = p + offsetof(BlockQ2_K, scales);
  const uint8_t* qs = p + offsetof(BlockQ2_K, qs);
  o.dw = f16_to_f32(u16(p + offsetof(BlockQ2_K, d)));
  o.mw = -f16_to_f32(u16(p + offsetof(BlockQ2_K, dmin)));
  o.sc_lo = scales[2 * j] & 15;
  o.sc_hi = scales[2 * j + 1] & 15;
  o.m_lo = scales[2 * j] >> 4;
  o.m_hi = scales[2 * j + 1] >> 4;
  for (int l = 0; l < 32; ++l) o.q[l] = (qs[32 * h + l] >> (2 * k)) & 3;
}

int q3k_scale(const uint8_t* scales, int s) {
  const int lo = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
  const int hi = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}

void decode_q3_k(const uint8_t* row, int64_t b, Block32& o) {
  const auto* p = row + (b / 8) * sizeof(BlockQ3_K);
  const int j = static_cast<int>(b % 8), h = j / 4, k = j % 4;
  const uint8_t* hmask = p + offsetof(BlockQ3_K, hmask);
  const uint8_t* qs = p + offsetof(BlockQ3_K, qs);
  const uint8_t* scales = p + offsetof(BlockQ3_K, scales);
  o.dw = f16_to_f32(u16(p + offsetof(BlockQ3_K, d)));
  o.sc_lo = q3k_scale(scales, 2 * j);
  o.sc_hi = q3k_scale(scales, 2 * j + 1);
  o.o = 4;
  for (int l = 0; l < 32; ++l) o.q[l] = ((qs[32 * h + l] >> (2 * k)) & 3) | (((hmask[l] >> (4 * h + k)) & 1) << 2);
}

template <bool kFive>
void decode_q45_k(const uint8_t* row, int64_t b, Block32& o) {
  using B = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  const auto* p = row + (b / 8) * sizeof(B);
  const int j = static_cast<int>(b % 8), c = j / 2, upper = j % 2;
  uint8_t sc, m;
  get_scale_min_k4(j, p + offsetof(B, scales), sc, m);
  o.dw = f16_to_f32(u16(p + offsetof(B, d))) * float(sc);
  o.mw = -f16_to_f32(u16(p + offsetof(B, dmin)));
  o.m_lo = o.m_hi = m;
  const uint8_t* qs = p + offsetof(B, qs);
  for (int l = 0; l < 32; ++l) {
    o.q[l] = upper ? qs[32 * c + l] >> 4 : qs[32 * c + l] & 15;
    if constexpr (kFive) o.q[l] |= ((p[offsetof(B, qh) + l] >> j) & 1) << 4;
  }
}

void decode_q6_k(const uint8_t* row, int64_t b, Block32& o) {
  const auto* p = row + (b / 8) * sizeof(BlockQ6_K);
  const int j = static_cast<int>(b % 8), h = j / 4, k = j % 4;
  const uint8_t* ql = p + offsetof(BlockQ6_K, ql) + 64 * h + 32 * (k & 1);
  const uint8_t* qh = p + offsetof(BlockQ6_K, qh) + 32 * h;
  const auto* scales = reinterpret_cast<const int8_t*>(p + offsetof(BlockQ6_K, scales));
  o.dw = f16_to_f32(u16(p + offsetof(BlockQ6_K, d)));
  o.sc_lo = scales[2 * j];
  o.sc_hi = scales[2 * j + 1];
  o.o = 32;
  for (int l = 0; l < 32; ++l) o.q[l] = ((k >> 1 ? ql[l] >> 4 : ql[l] & 15)) | (((qh[l] >> (2 * k)) & 3) << 4);
}

template <void (*Decode)(const uint8_t*, int64_t, Block32&), bool kMins>
void quant_tile(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out, int64_t os) {
  const int64_t nb = k / 32;
  float acc[kMaxTile][2][8] = {};  // [row][block parity][lane]
  float macc[kMaxTile][2][8] = {};  // the mins, by block parity and lane
  Block32 blk;
  int v[32];
  float f[8];
  for (int64_t b = 0; b < nb; ++b) {
    blk = Block32{};
    Decode(w_row, b, blk);
    for (int i = 0; i < 32; ++i) v[i] = blk.q[i] - blk.o;  // signed levels, |v| <= 128
    for (int j = 0; j < 8; ++j) f[j] = blk.dw * float(j < 4 ? blk.sc_lo : blk.sc_hi);  // dw * 1 == dw
    for (int r = 0; r < rows; ++r) {
      const int64_t row = r0 + r;
      const int8_t* a = act.q8.q + row * k + 32 * b;
      const float da = act.q8.d[row * nb + b];
      float* lane_acc = acc[r][b & 1];
      for (int j = 0; j < 8; ++j) {
        int lane = 0;
        for (int i = 4 * j; i < 4 * j + 4; ++i) lane += v[i] * a[i];
        lane_acc[j] = std::fma(static_cast<float>(lane), f[j] * da, lane_acc[j]);
      }
      if constexpr (kMins) {
        for (int j = 0; j < 8; ++j) {
          const float ls = static_cast<float>(a[4 * j] + a[4 * j + 1] + a[4 * j + 2] + a[4 * j + 3]) * da;
          const float mv = blk.mw * float(j < 4 ? blk.m_lo : blk.m_hi);
          macc[r][b & 1][j] = std::fma(ls, mv, macc[r][b & 1][j]);
        }
      }
    }
  }
  auto reduce = [](const float (&lanes)[2][8]) {
    float v8[8];
    for (int j = 0; j < 8; ++j) v8[j] = lanes[0][j] + lanes[1][j];
    for (int width = 4; width > 0; width /= 2) {
      for (int l = 0; l < width; ++l) v8[l] += v8[l + width];
    }
    return v8[0];
  };
  for (int r = 0; r < rows; ++r) out[r * os] = kMins ? reduce(acc[r]) + reduce(macc[r]) : reduce(acc[r]);
}

}  // namespace

MatmulKernel scalar_kernel(TensorType type) {
  switch (type) {
    case TensorType::F32: return {f32_tile, kMaxTile, false, 1};
    case TensorType::F16: return {half_tile<false>, kMaxTile, false, 1};
    case TensorType::BF16: return {half_tile<true>, kMaxTile, false, 1};
    case TensorType::Q4_0: return {quant_tile<decode_q4_0, false>, kMaxTile, true, 32};
    case TensorType::Q4_1: return {quant_tile<decode_q4_1, true>, kMaxTile, true, 32};
    case TensorType::Q5_0: return {quant_tile<decode_q5_0, false>, kMaxTile, true, 32};
    case TensorType::Q5_1: return {quant_tile<decode_q5_1, true>, kMaxTile, true, 32};
    case TensorType::Q8_0: return {quant_tile<decode_q8_0, false>, kMaxTile, true, 32};
    case TensorType::Q2_K: return {quant_tile<decode_q2_k, true>, kMaxTile, true, 256};
    case TensorType::Q3_K: return {quant_tile<decode_q3_k, false>, kMaxTile, true, 256};
    case TensorType::Q4_K: return {quant_tile<decode_q45_k<false>, true>, kMaxTile, true, 256};
    case TensorType::Q5_K: return {quant_tile<decode_q45_k<true>, true>, kMaxTile, true, 256};
    case TensorType::Q6_K: return {quant_tile<decode_q6_k, false>, kMaxTile, true, 256};
    default: return {};
  }
}

MatmulKernel kernel_for(TensorType type, IsaLevel level) {
  if (level >= IsaLevel::Avx512) {
    if (auto k = avx512_kernel(type); k.fn != nullptr) return k;
  }
  if (level >= IsaLevel::Avx2) {
    if (auto k = avx2_kernel(type); k.fn != nullptr) return k;
  }
  return scalar_kernel(type);
}

}  // namespace vellum::backend::cpu
