#include "backend/cpu/cpu_kernels.h"

#include <cmath>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics warn falsely when inlined under a target attribute (bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "backend/cpu/hsum_avx512.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace vellum::backend::cpu {
namespace {

constexpr int kLanes = 16;

float reduce(float (&acc)[kLanes]) {
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int i = 0; i < width; ++i) acc[i] += acc[i + width];
  }
  return acc[0];
}

}  // namespace

float dot_f32(const float* a, const float* b, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) acc[l] += a[i] * b[i];
  return reduce(acc);
}

float sum_squares_f32(const float* a, int64_t n) { return dot_f32(a, a, n); }

void axpy_f32(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

namespace {
#if defined(__x86_64__)

__attribute__((target("avx2"))) float reduce8(__m256 v) {  // lanes (i, i+4), (i, i+2), (i, i+1)
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

__attribute__((target("avx2"))) float dot_f32_avx2(const float* a, const float* b, int64_t n) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
  }
  if (i < n) {  // missing lanes add 0 * 0: a lane never holds -0, so they stay unchanged
    alignas(32) float ta[16] = {}, tb[16] = {};
    for (int64_t j = i; j < n; ++j) ta[j - i] = a[j], tb[j - i] = b[j];
    lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_load_ps(ta), _mm256_load_ps(tb)));
    hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_load_ps(ta + 8), _mm256_load_ps(tb + 8)));
  }
  return reduce8(_mm256_add_ps(lo, hi));
}

__attribute__((target("avx2"))) void axpy_f32_avx2(float a, const float* x, float* y, int64_t n) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(av, _mm256_loadu_ps(x + i))));
  for (; i < n; ++i) y[i] += a * x[i];
}

__attribute__((target("avx2,avx512f"))) float dot_f32_avx512(const float* a, const float* b, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
  }
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(acc), 0));  // GCC 12: no cast (bug 105593)
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(acc), 1));
  return reduce8(_mm256_add_ps(lo, hi));
}

__attribute__((target("avx2,avx512f"))) void axpy_f32_avx512(float a, const float* x, float* y, int64_t n) {
  const __m512 av = _mm512_set1_ps(a);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i), _mm512_mul_ps(av, _mm512_maskz_loadu_ps(m, x + i))));
  }
}

#endif
}  // namespace

DotF32Fn dot_f32_for(IsaLevel level) {
#if defined(__x86_64__)
  if (level >= IsaLevel::Avx512) return dot_f32_avx512;
  if (level >= IsaLevel::Avx2) return dot_f32_avx2;
#endif
  (void)level;
  return dot_f32;
}

AxpyF32Fn axpy_f32_for(IsaLevel level) {
#if defined(__x86_64__)
  if (level >= IsaLevel::Avx512) return axpy_f32_avx512;
  if (level >= IsaLevel::Avx2) return axpy_f32_avx2;
#endif
  (void)level;
  return axpy_f32;
}

namespace {

// Generic versions: the single-head functions of the level, called per head and key.
template <DotF32Fn kDot>
void scores_generic(const float* q, int64_t q_stride, int heads, const float* const* k, int64_t keys, int64_t n,
                    float scale, float* scores, int64_t s_stride) {
  for (int g = 0; g < heads; ++g) {
    for (int64_t p = 0; p < keys; ++p) scores[g * s_stride + p] = kDot(q + g * q_stride, k[p], n) * scale;
  }
}

template <AxpyF32Fn kAxpy>
void values_generic(const float* w, int64_t w_stride, int heads, const float* const* v, int64_t keys, int64_t n,
                    float* out, int64_t o_stride) {
  for (int g = 0; g < heads; ++g) {
    float* o = out + g * o_stride;
    for (int64_t i = 0; i < n; ++i) o[i] = 0.0f;
    for (int64_t p = 0; p < keys; ++p) kAxpy(w[g * w_stride + p], v[p], o, n);
  }
}

#if defined(__x86_64__)
#define VZ __attribute__((target("avx2,avx512f")))

// dot_f32_avx512 for up to 4 heads at once (each head its own accumulator, same operations).
template <int G>
VZ void scores_z(const float* q, int64_t q_stride, const float* const* k, int64_t keys, int64_t n, float scale,
                 float* scores, int64_t s_stride) {
  for (int64_t p = 0; p < keys; ++p) {
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    const float* kp = k[p];
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
      const __m512 kv = _mm512_maskz_loadu_ps(m, kp + i);
      for (int g = 0; g < G; ++g) acc[g] = _mm512_add_ps(acc[g], _mm512_mul_ps(_mm512_maskz_loadu_ps(m, q + g * q_stride + i), kv));
    }
    for (int g = 0; g < G; ++g) {
      const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(acc[g]), 0));
      const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(acc[g]), 1));
      scores[g * s_stride + p] = reduce8(_mm256_add_ps(lo, hi)) * scale;
    }
  }
}

// scores_z for 4 keys at a time: G × 4 accumulators, each head's 4 sums reduced together
// (hsum16x4: the same additions as reduce8 of each), then the keys' 4 tail keys one by one.
template <int G>
VZ void scores_z4(const float* q, int64_t q_stride, const float* const* k, int64_t keys, int64_t n, float scale,
                  float* scores, int64_t s_stride) {
  int64_t p = 0;
  for (; p + 4 <= keys; p += 4) {
    __m512 acc[G][4];
    #pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      #pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[g][j] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
      __m512 kv[4];
      #pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) kv[j] = _mm512_maskz_loadu_ps(m, k[p + j] + i);
      #pragma GCC unroll 4
      for (int g = 0; g < G; ++g) {
        const __m512 qv = _mm512_maskz_loadu_ps(m, q + g * q_stride + i);
        #pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) acc[g][j] = _mm512_add_ps(acc[g][j], _mm512_mul_ps(qv, kv[j]));
      }
    }
    #pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const __m128 s = hsum16x4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
      _mm_storeu_ps(scores + g * s_stride + p, _mm_mul_ps(s, _mm_set1_ps(scale)));
    }
  }
  if (p < keys) scores_z<G>(q, q_stride, k + p, keys - p, n, scale, scores + p, s_stride);
}

VZ void scores_avx512(const float* q, int64_t q_stride, int heads, const float* const* k, int64_t keys, int64_t n,
                      float scale, float* scores, int64_t s_stride) {
  int g = 0;
  for (; g + 4 <= heads; g += 4) scores_z4<4>(q + g * q_stride, q_stride, k, keys, n, scale, scores + g * s_stride, s_stride);
  switch (heads - g) {
    case 3: return scores_z4<3>(q + g * q_stride, q_stride, k, keys, n, scale, scores + g * s_stride, s_stride);
    case 2: return scores_z4<2>(q + g * q_stride, q_stride, k, keys, n, scale, scores + g * s_stride, s_stride);
    case 1: return scores_z4<1>(q + g * q_stride, q_stride, k, keys, n, scale, scores + g * s_stride, s_stride);
    default: return;
  }
}

// axpy_f32_avx512 over all keys with the output of up to 4 heads × 128 dims kept in registers.
template <int G, int C>
VZ void values_z(const float* w, int64_t w_stride, const float* const* v, int64_t keys, int64_t n, float* out,
                 int64_t o_stride) {
  __m512 acc[G][C];
  __mmask16 m[C];
  for (int c = 0; c < C; ++c) {
    const int64_t left = n - 16 * c;
    m[c] = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    for (int g = 0; g < G; ++g) acc[g][c] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < keys; ++p) {
    for (int c = 0; c < C; ++c) {
      const __m512 x = _mm512_maskz_loadu_ps(m[c], v[p] + 16 * c);
      for (int g = 0; g < G; ++g) acc[g][c] = _mm512_add_ps(acc[g][c], _mm512_mul_ps(_mm512_set1_ps(w[g * w_stride + p]), x));
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(out + g * o_stride + 16 * c, m[c], acc[g][c]);
  }
}

template <int C>
VZ void values_heads(const float* w, int64_t w_stride, int heads, const float* const* v, int64_t keys, int64_t n,
                     float* out, int64_t o_stride) {
  constexpr int G = C <= 4 ? 4 : 2;  // at most 16 accumulators
  int g = 0;
  for (; g + G <= heads; g += G) values_z<G, C>(w + g * w_stride, w_stride, v, keys, n, out + g * o_stride, o_stride);
  switch (heads - g) {  // the rest together too (7 heads per KV head: 4 + 3), each V row read once more
    case 3:
      if constexpr (C <= 4) return values_z<3, C>(w + g * w_stride, w_stride, v, keys, n, out + g * o_stride, o_stride);
      break;
    case 2: return values_z<2, C>(w + g * w_stride, w_stride, v, keys, n, out + g * o_stride, o_stride);
    default: break;
  }
  for (; g < heads; ++g) values_z<1, C>(w + g * w_stride, w_stride, v, keys, n, out + g * o_stride, o_stride);
}

VZ void values_avx512(const float* w, int64_t w_stride, int heads, const float* const* v, int64_t keys, int64_t n,
                      float* out, int64_t o_stride) {
  switch ((n + 15) / 16) {
    case 1: return values_heads<1>(w, w_stride, heads, v, keys, n, out, o_stride);
    case 2: return values_heads<2>(w, w_stride, heads, v, keys, n, out, o_stride);
    case 3: return values_heads<3>(w, w_stride, heads, v, keys, n, out, o_stride);
    case 4: return values_heads<4>(w, w_stride, heads, v, keys, n, out, o_stride);
    case 5: return values_heads<5>(w, w_stride, heads, v, keys, n, out, o_stride);
    case 6: return values_heads<6>(w, w_stride, heads, v, keys, n, out, o_stride);
    case 7: return values_heads<7>(w, w_stride, heads, v, keys, n, out, o_stride);
    case 8: return values_heads<8>(w, w_stride, heads, v, keys, n, out, o_stride);
    default: return values_generic<axpy_f32_avx512>(w, w_stride, heads, v, keys, n, out, o_stride);
  }
}

#undef VZ
#endif

}  // namespace

AttentionKernels attention_kernels_for(IsaLevel level) {
#if defined(__x86_64__)
  if (level >= IsaLevel::Avx512) return {scores_avx512, values_avx512};
  if (level >= IsaLevel::Avx2) return {scores_generic<dot_f32_avx2>, values_generic<axpy_f32_avx2>};
#endif
  (void)level;
  return {scores_generic<dot_f32>, values_generic<axpy_f32>};
}

void swiglu_f32(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

}  // namespace vellum::backend::cpu
