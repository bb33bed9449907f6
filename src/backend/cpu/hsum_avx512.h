#pragma once
// Horizontal sums of AVX-512 registers in the canonical pairwise order (lanes i + i+8, then i + i+4,
// i + i+2, i + i+1: dot_f32's reduction), for four registers at once. Included by the AVX-512 kernels.

#if defined(__x86_64__)
#include <immintrin.h>

namespace vellum::backend::cpu {

// The four sums of a, b, c, d in lanes 0-3: widths 8 and 4 combine registers with 256- and 128-bit
// shuffles, widths 2 and 1 run within 128-bit lanes — the same additions, lane for lane, as
// reducing each register alone.
__attribute__((target("avx2,avx512f"))) inline __m128 hsum16x4(__m512 a, __m512 b, __m512 c, __m512 d) {
  const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));  // a8 | b8
  const __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));  // c8 | d8
  const __m512 w4 = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));  // a4 b4 c4 d4
  const __m512 w2 = _mm512_add_ps(w4, _mm512_shuffle_ps(w4, w4, 0xEE));  // lanes 0, 1: x0 + x2, x1 + x3
  const __m512 w1 = _mm512_add_ps(w2, _mm512_shuffle_ps(w2, w2, 0x55));  // lane 0: (x0 + x2) + (x1 + x3)
  return _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), w1));
}

}  // namespace vellum::backend::cpu
#endif
