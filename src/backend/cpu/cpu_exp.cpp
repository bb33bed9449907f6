#include "backend/cpu/cpu_exp.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics warn falsely when inlined under a target attribute (bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace vellum::backend::cpu {
namespace {

// Cephes expf's constants: ln 2 in two parts (C1 exact in 9 bits, so n * C1 is exact) and the
// polynomial of exp(r) = 1 + r + r² P(r) on |r| <= ln2 / 2.
constexpr float kLo = -104.0f, kHi = 89.0f, kLog2e = 1.44269504088896341f;
constexpr float kC1 = 0.693359375f, kC2 = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f, kP3 = 4.1665795894e-2f,
                kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

float pow2(int e) {  // 2^e for -126 <= e <= 127
  const uint32_t bits = static_cast<uint32_t>(e + 127) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float reduce16(float (&acc)[16]) {
  for (int width = 8; width > 0; width /= 2) {
    for (int i = 0; i < width; ++i) acc[i] += acc[i + width];
  }
  return acc[0];
}

void softmax_scalar(float* x, int64_t n) {
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  float acc[16] = {};
  for (int64_t i = 0; i < n; ++i) {
    x[i] = exp_f32(x[i] - mx);
    acc[i % 16] += x[i];
  }
  const float inv = 1.0f / reduce16(acc);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void swiglu_scalar(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + exp_f32(0.0f - g)) * up[i];  // 0 - g: the SIMD paths' subtraction
  }
}

#if defined(__x86_64__)
#define VX2 __attribute__((target("avx2,fma")))
#define VX5 __attribute__((target("avx2,fma,avx512f")))

VX2 __m256 exp8(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(kLo));  // max_ps(x, lo) is lo for NaN, like the scalar test
  x = _mm256_min_ps(x, _mm256_set1_ps(kHi));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kC1), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kC2), r);
  const __m256 z = _mm256_mul_ps(r, r);
  __m256 y = _mm256_fmadd_ps(_mm256_set1_ps(kP0), r, _mm256_set1_ps(kP1));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP2));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP3));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP4));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP5));
  y = _mm256_fmadd_ps(y, z, r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  const __m256i ni = _mm256_cvtps_epi32(n), h = _mm256_srai_epi32(ni, 1), h2 = _mm256_sub_epi32(ni, h);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

VX5 __m512 exp16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(kLo));
  x = _mm512_min_ps(x, _mm512_set1_ps(kHi));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kC1), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kC2), r);
  const __m512 z = _mm512_mul_ps(r, r);
  __m512 y = _mm512_fmadd_ps(_mm512_set1_ps(kP0), r, _mm512_set1_ps(kP1));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP2));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP3));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP4));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP5));
  y = _mm512_fmadd_ps(y, z, r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  const __m512i ni = _mm512_cvtps_epi32(n), h = _mm512_srai_epi32(ni, 1), h2 = _mm512_sub_epi32(ni, h);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(h, bias), 23));
  const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(h2, bias), 23));
  return _mm512_mul_ps(_mm512_mul_ps(y, s1), s2);
}

VX2 float reduce8(__m256 v) {  // (i, i+4), (i, i+2), (i, i+1): reduce16's last three widths
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// Tails go through a zero-padded copy: the padding's exp lands in lanes that are never added.
VX2 void softmax_avx2(float* x, int64_t n) {
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  const __m256 m = _mm256_set1_ps(mx);
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 e0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m)), e1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), m));
    _mm256_storeu_ps(x + i, e0);
    _mm256_storeu_ps(x + i + 8, e1);
    lo = _mm256_add_ps(lo, e0);
    hi = _mm256_add_ps(hi, e1);
  }
  if (i < n) {
    alignas(32) float t[16] = {};
    for (int64_t j = i; j < n; ++j) t[j - i] = exp_f32(x[j] - mx);
    for (int64_t j = i; j < n; ++j) x[j] = t[j - i];
    lo = _mm256_add_ps(lo, _mm256_load_ps(t));  // padding lanes add +0: unchanged
    hi = _mm256_add_ps(hi, _mm256_load_ps(t + 8));
  }
  const __m256 inv = _mm256_set1_ps(1.0f / reduce8(_mm256_add_ps(lo, hi)));
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  for (; i < n; ++i) x[i] *= _mm256_cvtss_f32(inv);
}

VX5 void softmax_avx512(float* x, int64_t n) {
  __m512 mv = _mm512_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) mv = _mm512_max_ps(mv, _mm512_loadu_ps(x + i));
  float mx = _mm512_reduce_max_ps(mv);
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  const __m512 m = _mm512_set1_ps(mx);
  __m512 acc = _mm512_setzero_ps();
  for (i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m));
    _mm512_mask_storeu_ps(x + i, k, e);
    acc = _mm512_mask_add_ps(acc, k, acc, e);
  }
  const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(acc), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1)));
  const __m512 inv = _mm512_set1_ps(1.0f / reduce8(s8));
  for (i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), inv));
  }
}

VX2 void swiglu_avx2(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), _mm256_loadu_ps(up + i)));
  }
  swiglu_scalar(gate + i, up + i, out + i, n - i);
}

VX5 void swiglu_avx512(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(k, gate + i);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
    const __m512 y = _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), _mm512_maskz_loadu_ps(k, up + i));
    _mm512_mask_storeu_ps(out + i, k, y);
  }
}

#undef VX2
#undef VX5
#endif

}  // namespace

float exp_f32(float x) {
  x = x > kLo ? x : kLo;  // the operand order of max_ps / min_ps: NaN becomes kLo
  x = x < kHi ? x : kHi;
  const float n = std::nearbyint(x * kLog2e);
  float r = std::fma(n, -kC1, x);
  r = std::fma(n, -kC2, r);
  const float z = r * r;
  float y = std::fma(kP0, r, kP1);
  y = std::fma(y, r, kP2);
  y = std::fma(y, r, kP3);
  y = std::fma(y, r, kP4);
  y = std::fma(y, r, kP5);
  y = std::fma(y, z, r);
  y = y + 1.0f;
  const int ni = static_cast<int>(n), h = ni >> 1;  // n in [-150, 129]: both factors are normal
  return y * pow2(h) * pow2(ni - h);
}

SoftmaxFn softmax_for(IsaLevel level) {
#if defined(__x86_64__)
  if (level >= IsaLevel::Avx512) return softmax_avx512;
  if (level >= IsaLevel::Avx2) return softmax_avx2;
#endif
  (void)level;
  return softmax_scalar;
}

SwigluFn swiglu_for(IsaLevel level) {
#if defined(__x86_64__)
  if (level >= IsaLevel::Avx512) return swiglu_avx512;
  if (level >= IsaLevel::Avx2) return swiglu_avx2;
#endif
  (void)level;
  return swiglu_scalar;
}

}  // namespace vellum::backend::cpu
