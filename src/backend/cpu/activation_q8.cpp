#include "backend/cpu/activation_q8.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

#if defined(__x86_64__)
// Same operations as the portable version, eight lanes at a time: max of |x| (a NaN is skipped, as
// std::max skips it), x * inv rounded to nearest even, a NaN or overshoot clamped to -127 / 127.
__attribute__((target("avx2,fma"))) void quantize_act_block_avx2(const float* x, int8_t* q, float* d, int16_t* sums) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 v[4], m = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    m = _mm256_max_ps(_mm256_andnot_ps(sign, v[i]), m);  // NaN in the first operand returns m
  }
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  const float amax = _mm_cvtss_f32(h);
  const float scale = amax / 127.0f;
  const __m256 inv = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
  __m256i qi[4];
  for (int i = 0; i < 4; ++i) {
    __m256 r = _mm256_round_ps(_mm256_mul_ps(v[i], inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_max_ps(r, _mm256_set1_ps(-127.0f));  // NaN -> -127, as fmax(-127, NaN) then fmin
    r = _mm256_min_ps(r, _mm256_set1_ps(127.0f));
    qi[i] = _mm256_cvttps_epi32(r);
  }
  // Narrow to bytes (packs interleave 128-bit lanes; the permute restores element order) and sum
  // each half: exact integer work.
  const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]), _mm256_packs_epi32(qi[2], qi[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  const __m256i h01 = _mm256_add_epi32(qi[0], qi[1]), h23 = _mm256_add_epi32(qi[2], qi[3]);
  alignas(32) int32_t t[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), _mm256_hadd_epi32(_mm256_hadd_epi32(h01, h23), _mm256_setzero_si256()));
  const int s0 = t[0] + t[4], s1 = t[1] + t[5];  // hadd pairs within 128-bit lanes
  *d = scale;
  sums[0] = static_cast<int16_t>(s0);
  sums[1] = static_cast<int16_t>(s1);
}
#else
void quantize_act_block_avx2(const float* x, int8_t* q, float* d, int16_t* sums) { quantize_act_block(x, q, d, sums); }
#endif

namespace {

// The records of one row (rec: its record of pair 0; pair p's is kRecordGroup records further),
// with the portable loop's values: exact integer sums, and float(Σ4 q) * d as there.
#if defined(__x86_64__)
__attribute__((target("avx2"))) void fill_records_avx2(const int8_t* q, const float* d, int64_t nb, int64_t pairs,
                                                       ActRecord* rec) {
  for (int64_t p = 0; p < pairs; ++p, rec += kRecordGroup) {
    for (int h = 0; h < 2; ++h) {
      const int64_t b = 2 * p + h;
      if (b >= nb) {
        std::memset(rec->neg128 + 8 * h, 0, 8 * sizeof(rec->neg128[0]));
        std::memset(rec->dlanes + 8 * h, 0, 8 * sizeof(rec->dlanes[0]));
        std::memset(rec->lsum + 8 * h, 0, 8 * sizeof(rec->lsum[0]));
        std::memset(rec->q + 32 * h, 0, 32);
        continue;
      }
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * b));
      const __m256i s4 = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), a), _mm256_set1_epi16(1));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(rec->neg128 + 8 * h), _mm256_mullo_epi32(s4, _mm256_set1_epi32(-128)));
      const __m256 dv = _mm256_set1_ps(d[b]);
      _mm256_storeu_ps(rec->dlanes + 8 * h, dv);
      _mm256_storeu_ps(rec->lsum + 8 * h, _mm256_mul_ps(_mm256_cvtepi32_ps(s4), dv));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(rec->q + 32 * h), a);
    }
  }
}
#else
void fill_records_avx2(const int8_t*, const float*, int64_t, int64_t, ActRecord*) {}
#endif

}  // namespace

void ActQ8Rows::resize(int64_t rows, int64_t k, bool records) {
  k_ = k;
  const size_t n = static_cast<size_t>(rows * k);
  if (q_.size() < n) q_.resize(n);
  if (d_.size() < n / kActBlock) d_.resize(n / kActBlock);
  if (sums_.size() < n / 16) sums_.resize(n / 16);
  records_on_ = records;
  pairs_ = (k / kActBlock + 1) / 2;
  if (records) {
    const size_t m = static_cast<size_t>((rows + kRecordGroup - 1) / kRecordGroup * kRecordGroup * pairs_);
    if (records_.size() < m) records_.resize(m);
  }
}

void ActQ8Rows::quantize_row(int64_t r, const float* x, IsaLevel level) {
  const int64_t nb = k_ / kActBlock;
  int8_t* q = q_.data() + r * k_;
  float* d = d_.data() + r * nb;
  int16_t* s = sums_.data() + r * nb * 2;
  auto* block = level >= IsaLevel::Avx2 ? quantize_act_block_avx2 : quantize_act_block;
  for (int64_t b = 0; b < nb; ++b) block(x + b * kActBlock, q + b * kActBlock, d + b, s + 2 * b);
  if (records_on_ && level >= IsaLevel::Avx2) {
    fill_records_avx2(q, d, nb, pairs_, &records_[static_cast<size_t>((r / kRecordGroup) * pairs_ * kRecordGroup + r % kRecordGroup)]);
  } else if (records_on_) {
    for (int64_t p = 0; p < pairs_; ++p) {
      ActRecord& rec = records_[static_cast<size_t>(((r / kRecordGroup) * pairs_ + p) * kRecordGroup + r % kRecordGroup)];
      for (int h = 0; h < 2; ++h) {
        const int64_t b = 2 * p + h;
        for (int j = 0; j < 8; ++j) {
          const int8_t* g = q + 32 * b + 4 * j;
          rec.neg128[8 * h + j] = b < nb ? -128 * (g[0] + g[1] + g[2] + g[3]) : 0;
          rec.dlanes[8 * h + j] = b < nb ? d[b] : 0.0f;
          rec.lsum[8 * h + j] = b < nb ? static_cast<float>(g[0] + g[1] + g[2] + g[3]) * d[b] : 0.0f;
        }
        if (b < nb) std::memcpy(rec.q + 32 * h, q + 32 * b, 32);
        else std::memset(rec.q + 32 * h, 0, 32);
      }
    }
  }
}

}  // namespace vellum::backend::cpu
