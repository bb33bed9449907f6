// AVX-512 kernels (F, BW, VL, VNNI), chosen at run time (cpu_features.h). They compute exactly the
// lanes and float operations of matmul_kernels.h (the same bits as the scalar and AVX2 kernels), two
// blocks of 32 per 512-bit register: block b in the low half, b + 1 in the high half, which is the
// "accumulator by block parity" of the canonical order. Integer dots use vpdpbusd: weight levels
// made unsigned (v + 128, once per weight block) and the excess 128 * Σ4 a removed through the
// accumulator's initial value, precomputed per activation row (ActQ8View::neg128), so one
// instruction per row and pair of blocks gives Σ4 v * a exactly; the per-lane activation scales
// come precomputed too (dlanes), leaving four vector operations per row and 64 weights.

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() and warn when inlined into functions
// with a target attribute (GCC bug 105593, fixed in 13): silence that false positive here only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "backend/cpu/hsum_avx512.h"
#include "backend/cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/k_quants.h"

namespace vellum::backend::cpu {
#if defined(__x86_64__)
namespace avx512 {
namespace {

#define VELLUM_SIMD_TARGET "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni"
#include "backend/cpu/matmul_simd.inc"

#define VZ __attribute__((target(VELLUM_SIMD_TARGET)))

constexpr int kZTile = kRecordGroup;  // tiles start at multiples of 8: one record pointer per tile

VZ inline __m512i combine(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_zextsi256_si512(lo), hi, 1); }

VZ inline float hsum16(__m512 v) {  // lanes i + i+8, then hsum8
  return hsum8(_mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

// Two decoded blocks (b, b + 1; the second absent at an odd tail) as one 512-bit operand.
template <class T>
struct Pair {
  __m512i vu;     // levels + 128, as unsigned bytes
  __m512 f;       // per-lane float scales
  __m512 mv;      // per-lane min factors (kMins)
};

// Q4_0 / Q5_0, both blocks present: nibbles, fifth bits and scales of the pair in 512-bit operations.
template <class T>
VZ inline void decode_pair_q450(const uint8_t* w_row, int64_t b, Pair<T>& pr) {
  constexpr bool kFive = std::is_same_v<T, Q5_0T>;
  constexpr int kQs = kFive ? 6 : 2;
  const uint8_t* p0 = w_row + b * T::kBytes;
  const uint8_t* p1 = p0 + T::kBytes;
  const __m256i qs = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p1 + kQs)),
                                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(p0 + kQs)));
  const __m512i z = _mm512_inserti64x4(_mm512_zextsi256_si512(qs), qs, 1);  // qs0 qs1 qs0 qs1
  const __m512i zz = _mm512_shuffle_i64x2(z, z, 0xD8);                        // qs0 qs0 qs1 qs1
  const __m512i shift = _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0, 0x0004000400040004,
                                          0x0004000400040004);
  __m512i q = _mm512_and_si512(_mm512_srlv_epi16(zz, shift), _mm512_set1_epi8(15));  // low nibbles, then high
  if constexpr (kFive) {
    uint32_t h0, h1;
    std::memcpy(&h0, p0 + 2, 4);
    std::memcpy(&h1, p1 + 2, 4);
    const __mmask64 bits = static_cast<__mmask64>(h0) | (static_cast<__mmask64>(h1) << 32);
    q = _mm512_or_si512(q, _mm512_maskz_mov_epi8(bits, _mm512_set1_epi8(16)));
  }
  pr.vu = _mm512_add_epi8(q, _mm512_set1_epi8(static_cast<char>(128 - T::kOffset)));  // (q - offset) + 128
  const uint32_t dd = uint32_t(load_u16(p0)) | (uint32_t(load_u16(p1)) << 16);
  const __m128 d2 = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(dd)));
  pr.f = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), _mm512_zextps128_ps512(d2));
}

// Q8_0, both blocks present: the two blocks' levels in one 512-bit operand, both scales converted
// at once (the generic path builds the scale vector from scalars, ~6 more operations per pair).
VZ inline void decode_pair_q8_0(const uint8_t* w_row, int64_t b, Pair<Q8_0T>& pr) {
  const uint8_t* p0 = w_row + b * Q8_0T::kBytes;
  const uint8_t* p1 = p0 + Q8_0T::kBytes;
  pr.vu = _mm512_xor_si512(combine(loadu256(p0 + 2), loadu256(p1 + 2)), _mm512_set1_epi8(static_cast<char>(0x80)));
  const uint32_t dd = uint32_t(load_u16(p0)) | (uint32_t(load_u16(p1)) << 16);
  const __m128 d2 = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(dd)));
  pr.f = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), _mm512_zextps128_ps512(d2));
}

template <class T>
VZ inline void decode_pair(const uint8_t* w_row, int64_t b, bool two, Pair<T>& pr) {
  if constexpr (std::is_same_v<T, Q5_0T> || std::is_same_v<T, Q4_0T>) {
    if (two) return decode_pair_q450<T>(w_row, b, pr);
  }
  if constexpr (std::is_same_v<T, Q8_0T>) {
    if (two) return decode_pair_q8_0(w_row, b, pr);
  }
  Blk blk[2];
  const uint8_t* p0 = w_row + (b / T::kSub) * T::kBytes;
  T::block(p0, static_cast<int>(b % T::kSub), blk[0]);
  __m256i v1 = _mm256_setzero_si256();
  float f0[2], f1[2] = {0.0f, 0.0f};
  lane_scales<T>(blk[0], f0);
  if (two) {
    const uint8_t* p1 = w_row + ((b + 1) / T::kSub) * T::kBytes;
    T::block(p1, static_cast<int>((b + 1) % T::kSub), blk[1]);
    v1 = signed_levels<T>(blk[1]);
    lane_scales<T>(blk[1], f1);
  }
  pr.vu = _mm512_xor_si512(combine(signed_levels<T>(blk[0]), v1), _mm512_set1_epi8(static_cast<char>(0x80)));
  const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  pr.f = _mm512_permutexvar_ps(idx, _mm512_zextps128_ps512(_mm_setr_ps(f0[0], f0[1], f1[0], f1[1])));
  if constexpr (T::kMins) {
    const float m1lo = two ? blk[1].mw * float(blk[1].m_lo) : 0.0f, m1hi = two ? blk[1].mw * float(blk[1].m_hi) : 0.0f;
    pr.mv = _mm512_permutexvar_ps(idx, _mm512_zextps128_ps512(_mm_setr_ps(blk[0].mw * float(blk[0].m_lo),
                                                                          blk[0].mw * float(blk[0].m_hi), m1lo, m1hi)));
  }
}

// K-quants decoded a super-block at a time: scales and mins converted once (eight or sixteen in
// one vector operation, each exactly the product the canonical order names), then each pair of
// sub-blocks picks its lanes with one permute.
struct Super {
  const uint8_t* p;
  __m512 scales;  // Q4_K/Q5_K: d * sc_j in lanes j < 8; Q6_K: d * scales[i] in lane i
  __m512 mins;    // Q4_K/Q5_K: -dmin * m_j in lanes j < 8
};

template <class T>
struct SuperDecoder {
  static constexpr bool kHas = false;
  VZ static inline void super(const uint8_t*, Super&) {}
  VZ static inline void pair(const Super&, int, Pair<T>&) {}
};

template <bool kFive>
struct SuperDecoder<Q45_KT<kFive>> {
  using B = typename Q45_KT<kFive>::B;
  static constexpr bool kHas = true;
  VZ static inline void super(const uint8_t* p, Super& s) {
    s.p = p;
    alignas(32) int32_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
      uint8_t a, b;
      get_scale_min_k4(j, p + offsetof(B, scales), a, b);
      sc[j] = a;
      m[j] = b;
    }
    const __m256 d = _mm256_set1_ps(f16_scalar(p + offsetof(B, d)));
    const __m256 mw = _mm256_set1_ps(-f16_scalar(p + offsetof(B, dmin)));
    s.scales = _mm512_zextps256_ps512(_mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc)))));
    s.mins = _mm512_zextps256_ps512(_mm256_mul_ps(mw, _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(m)))));
  }
  VZ static inline void pair(const Super& s, int c, Pair<Q45_KT<kFive>>& pr) {  // sub-blocks 2c, 2c + 1
    const __m256i v = loadu256(s.p + offsetof(B, qs) + 32 * c);
    const __m256i m15 = _mm256_set1_epi8(15);
    __m256i lo = _mm256_and_si256(v, m15), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m15);
    if constexpr (kFive) {
      const __m256i qh = loadu256(s.p + offsetof(B, qh));
      const __m256i one = _mm256_set1_epi8(1);
      lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(srl16(qh, 2 * c), one), 4));
      hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(srl16(qh, 2 * c + 1), one), 4));
    }
    pr.vu = _mm512_or_si512(combine(lo, hi), _mm512_set1_epi8(static_cast<char>(0x80)));  // levels < 128: +128
    const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(2 * c),
                                         _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
    pr.f = _mm512_permutexvar_ps(idx, s.scales);
    pr.mv = _mm512_permutexvar_ps(idx, s.mins);
  }
};

template <>
struct SuperDecoder<Q6_KT> {
  static constexpr bool kHas = true;
  VZ static inline void super(const uint8_t* p, Super& s) {
    s.p = p;
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + offsetof(BlockQ6_K, scales)));
    s.scales = _mm512_mul_ps(_mm512_set1_ps(f16_scalar(p + offsetof(BlockQ6_K, d))), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)));
  }
  VZ static inline void pair(const Super& s, int c, Pair<Q6_KT>& pr) {  // sub-blocks 2c, 2c + 1: h = c / 2, k = 2 (c % 2) + {0, 1}
    const int h = c / 2, k0 = 2 * (c % 2);
    const uint8_t* ql = s.p + offsetof(BlockQ6_K, ql) + 64 * h;
    const __m256i m15 = _mm256_set1_epi8(15), three = _mm256_set1_epi8(3);
    __m256i a = loadu256(ql), b = loadu256(ql + 32);
    if (c % 2) {
      a = _mm256_srli_epi16(a, 4);
      b = _mm256_srli_epi16(b, 4);
    }
    const __m256i qh = loadu256(s.p + offsetof(BlockQ6_K, qh) + 32 * h);
    const __m256i lo = _mm256_or_si256(_mm256_and_si256(a, m15), _mm256_slli_epi16(_mm256_and_si256(srl16(qh, 2 * k0), three), 4));
    const __m256i hi = _mm256_or_si256(_mm256_and_si256(b, m15), _mm256_slli_epi16(_mm256_and_si256(srl16(qh, 2 * k0 + 2), three), 4));
    pr.vu = _mm512_add_epi8(combine(lo, hi), _mm512_set1_epi8(96));  // (q - 32) + 128
    const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(4 * c),
                                         _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
    pr.f = _mm512_permutexvar_ps(idx, s.scales);
  }
};

// NC weight rows (1 or 2, w_stride apart) × NR token rows; output (r, c) at out[r * os + c]. Each
// (row, weight row) pair runs the same operations whatever NR and NC are.
// The pair of blocks b, b + 1 of one weight row (K-quants: the super-block decoded at its first pair).
template <class T>
VZ inline void decode_at(const uint8_t* w_row, int64_t b, int64_t nb, Super& sup, Pair<T>& pr) {
  if constexpr (SuperDecoder<T>::kHas) {
    const int c2 = static_cast<int>(b % T::kSub) / 2;
    if (c2 == 0) SuperDecoder<T>::super(w_row + (b / T::kSub) * T::kBytes, sup);
    SuperDecoder<T>::pair(sup, c2, pr);
  } else {
    decode_pair<T>(w_row, b, b + 1 < nb, pr);
  }
}

// Prefill: `rows` weight rows decoded once into `pre` (kPrePairBytes per pair), which every tile of
// token rows then loads instead of decoding again (the same Pair values, so the same bits).
constexpr int kPrePairBytes = 192;
template <class T>
VZ void predecode_rows(const uint8_t* w_row, size_t w_stride, int rows, int64_t k, uint8_t* pre) {
  static_assert(sizeof(Pair<T>) == kPrePairBytes);
  const int64_t nb = k / 32, pairs = (nb + 1) / 2;
  for (int r = 0; r < rows; ++r) {
    auto* dst = reinterpret_cast<Pair<T>*>(pre + r * pairs * kPrePairBytes);
    Super sup;
    for (int64_t b = 0; b < nb; b += 2) {
      Pair<T> pr;
      pr.mv = _mm512_setzero_ps();
      decode_at<T>(w_row + r * w_stride, b, nb, sup, pr);
      dst[b / 2] = pr;
    }
  }
}

template <class T, int NR, int NC, bool kPre = false>
VZ void quant_tile_z(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int64_t k, float* out,
                     int64_t os) {
  static_assert(NR <= kRecordGroup);
  const int64_t nb = k / 32, pairs = act.q8.pairs;
  // r0 is a multiple of 8 (tiles of kZTile rows): one pointer reaches the tile's records.
  const auto* rec = reinterpret_cast<const uint8_t*>(act.q8.records + (r0 / kRecordGroup) * pairs * kRecordGroup);
  __m512 acc[NR][NC], macc[NR][NC];
  for (int r = 0; r < NR; ++r) {
    for (int c = 0; c < NC; ++c) acc[r][c] = macc[r][c] = _mm512_setzero_ps();
  }
  Pair<T> pr[NC];
  Super sup[NC];
  for (int64_t b = 0; b < nb; b += 2) {
    if constexpr (kPre) {  // w_row: pairs decoded by predecode_rows
      for (int c = 0; c < NC; ++c) pr[c] = reinterpret_cast<const Pair<T>*>(w_row + c * w_stride)[b / 2];
    } else {
      for (int c = 0; c < NC; ++c) {  // decode is bound by memory latency: ask for weights ~1 KB ahead
        _mm_prefetch(reinterpret_cast<const char*>(w_row + c * w_stride + (b * T::kBytes) / T::kSub + 1024), _MM_HINT_T0);
      }
      for (int c = 0; c < NC; ++c) decode_at<T>(w_row + c * w_stride, b, nb, sup[c], pr[c]);
    }
    const uint8_t* base = rec + (b / 2) * kRecordGroup * kRecordBytes;
    for (int r = 0; r < NR; ++r) {
      const uint8_t* p = base + r * kRecordBytes;
      const __m512i neg = _mm512_loadu_si512(p + offsetof(ActRecord, neg128));
      const __m512 dl = _mm512_loadu_ps(reinterpret_cast<const float*>(p + offsetof(ActRecord, dlanes)));
      const __m512i a = _mm512_loadu_si512(p + offsetof(ActRecord, q));
      for (int c = 0; c < NC; ++c) {
        const __m512i lanes = _mm512_dpbusd_epi32(neg, pr[c].vu, a);
        acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lanes), _mm512_mul_ps(pr[c].f, dl), acc[r][c]);
      }
      if constexpr (T::kMins) {
        const __m512 ls = _mm512_loadu_ps(reinterpret_cast<const float*>(p + offsetof(ActRecord, lsum)));
        for (int c = 0; c < NC; ++c) macc[r][c] = _mm512_fmadd_ps(ls, pr[c].mv, macc[r][c]);
      }
    }
  }
  for (int r = 0; r < NR; ++r) {
    for (int c = 0; c < NC; ++c) {
      const float v = hsum16(acc[r][c]);
      out[r * os + c] = T::kMins ? v + hsum16(macc[r][c]) : v;
    }
  }
}

template <class T, int NC, bool kPre = false>
VZ void quant_rows(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int rows, int64_t k, float* out,
                   int64_t os) {
  switch (rows) {
    case 1: return quant_tile_z<T, 1, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
    case 2: return quant_tile_z<T, 2, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
    case 3: return quant_tile_z<T, 3, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
    case 4: return quant_tile_z<T, 4, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
    case 5: return quant_tile_z<T, 5, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
    case 6: return quant_tile_z<T, 6, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
    case 7: return quant_tile_z<T, 7, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
    default: return quant_tile_z<T, 8, NC, kPre>(w_row, w_stride, act, r0, k, out, os);
  }
}

template <class T>
VZ void quant_tile_zmm(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out, int64_t os) {
  quant_rows<T, 1>(w_row, 0, act, r0, rows, k, out, os);
}

template <class T>
VZ void quant_tile_pre(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out, int64_t os) {
  quant_rows<T, 1, true>(w_row, 0, act, r0, rows, k, out, os);
}

template <class T>
VZ void quant_tile_pre2(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int rows, int64_t k,
                        float* out, int64_t os) {
  quant_rows<T, 2, true>(w_row, w_stride, act, r0, rows, k, out, os);
}

template <class T>
VZ void quant_tile_zmm2(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int rows, int64_t k,
                        float* out, int64_t os) {
  quant_rows<T, 2>(w_row, w_stride, act, r0, rows, k, out, os);
}

// ---- float weights: 16 lanes, one register per output ----------------------------------------

inline __mmask16 tail_mask(int64_t left) {  // the first min(16, max(0, left)) lanes
  return left >= 16 ? __mmask16(0xFFFF) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
}

template <int NR>
VZ void f32_tile_z(const uint8_t* w_row, const ActRows& act, int64_t r0, int64_t k, float* out, int64_t os) {
  const float* w = reinterpret_cast<const float*>(w_row);
  const float* x[NR];
  __m512 acc[NR];
  for (int r = 0; r < NR; ++r) {
    x[r] = act.x + (r0 + r) * act.x_stride;
    acc[r] = _mm512_setzero_ps();
  }
  for (int64_t i = 0; i < k; i += 16) {
    const __mmask16 m = tail_mask(k - i);
    const __m512 wv = _mm512_maskz_loadu_ps(m, w + i);
    for (int r = 0; r < NR; ++r) acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x[r] + i), wv));
  }
  for (int r = 0; r < NR; ++r) out[r * os] = hsum16(acc[r]);
}

template <bool kBf16>
VZ inline __m512 load16_half(const uint8_t* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  if constexpr (kBf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

// NC weight rows (w_stride apart) × NR token rows, output (r, c) at out[r * os + c]: the canonical
// 16 lanes are one register per output, so a 6 × 4 tile (24 accumulators) does 24 FMAs per 4
// weight conversions and 6 activation loads.
template <bool kBf16, int NR, int NC>
VZ void half_tile_z(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int64_t k, float* out,
                    int64_t os) {
  const float* x[NR];
  __m512 acc[NR][NC];
  #pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
    x[r] = act.x + (r0 + r) * act.x_stride;
    #pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  // One step of 16 weights per row; `m` masks the tail (the missing lanes add fma(0, 0, lane) = lane).
  auto step = [&](int64_t i, __mmask16 m) VZ {
    __m512 w[NC];
    #pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) w[c] = load16_half<kBf16>(w_row + c * w_stride + 2 * i, m);
    #pragma GCC unroll 8
    for (int r = 0; r < NR; ++r) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x[r] + i);
      #pragma GCC unroll 8
      for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_fmadd_ps(w[c], xv, acc[r][c]);
    }
  };
  int64_t i = 0;
  for (; i + 32 <= k; i += 32) {
    #pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) _mm_prefetch(reinterpret_cast<const char*>(w_row + c * w_stride + 2 * i + 1024), _MM_HINT_T0);
    step(i, 0xFFFF);
    step(i + 16, 0xFFFF);
  }
  for (; i < k; i += 16) step(i, tail_mask(k - i));
  #pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
    if constexpr (NC == 4) {
      _mm_storeu_ps(out + r * os, hsum16x4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
    } else {
      #pragma GCC unroll 8
      for (int c = 0; c < NC; ++c) out[r * os + c] = hsum16(acc[r][c]);
    }
  }
}

VZ void f32_tile_zmm(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out, int64_t os) {
  switch (rows) {
    case 1: return f32_tile_z<1>(w_row, act, r0, k, out, os);
    case 2: return f32_tile_z<2>(w_row, act, r0, k, out, os);
    case 3: return f32_tile_z<3>(w_row, act, r0, k, out, os);
    default: return f32_tile_z<4>(w_row, act, r0, k, out, os);
  }
}

template <bool kBf16, int NC>
VZ void half_rows(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int rows, int64_t k, float* out,
                  int64_t os) {
  switch (rows) {
    case 1: return half_tile_z<kBf16, 1, NC>(w_row, w_stride, act, r0, k, out, os);
    case 2: return half_tile_z<kBf16, 2, NC>(w_row, w_stride, act, r0, k, out, os);
    case 3: return half_tile_z<kBf16, 3, NC>(w_row, w_stride, act, r0, k, out, os);
    case 4: return half_tile_z<kBf16, 4, NC>(w_row, w_stride, act, r0, k, out, os);
    case 5: return half_tile_z<kBf16, 5, NC>(w_row, w_stride, act, r0, k, out, os);
    default: return half_tile_z<kBf16, 6, NC>(w_row, w_stride, act, r0, k, out, os);
  }
}

template <bool kBf16>
VZ void half_tile_zmm(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out, int64_t os) {
  half_rows<kBf16, 1>(w_row, 0, act, r0, rows, k, out, os);
}

constexpr int kHalfWide = 4;  // weight rows per F16/BF16 call

template <bool kBf16>
VZ void half_tile_zmm2(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int rows, int64_t k,
                       float* out, int64_t os) {
  half_rows<kBf16, kHalfWide>(w_row, w_stride, act, r0, rows, k, out, os);
}

// kTwo: two weight rows per call when decoding per tile (decode); prefill's predecoded path always
// takes two (it halves the activation-record loads per multiply-add).
template <class T, bool kTwo = true>
MatmulKernel quant_kernel(int64_t k_multiple) {
  MatmulKernel m{quant_tile_zmm<T>, kZTile, true, k_multiple, true, kTwo ? quant_tile_zmm2<T> : nullptr};
  m.predecode = predecode_rows<T>;
  m.pre_pair_bytes = kPrePairBytes;
  m.fn_pre = quant_tile_pre<T>;
  m.fn2_pre = quant_tile_pre2<T>;
  return m;
}

MatmulKernel zmm_kernel(TensorType type) {
  switch (type) {
    case TensorType::F32: return {f32_tile_zmm, 4, false, 1};
    case TensorType::F16: return {half_tile_zmm<false>, 6, false, 1, false, half_tile_zmm2<false>, kHalfWide};
    case TensorType::BF16: return {half_tile_zmm<true>, 6, false, 1, false, half_tile_zmm2<true>, kHalfWide};
    case TensorType::Q4_0: return quant_kernel<Q4_0T>(32);
    case TensorType::Q4_1: return quant_kernel<Q4_1T>(32);
    case TensorType::Q5_0: return quant_kernel<Q5_0T>(32);
    case TensorType::Q5_1: return quant_kernel<Q5_1T>(32);
    case TensorType::Q8_0: return quant_kernel<Q8_0T>(32);
    case TensorType::Q2_K: return quant_kernel<Q2_KT>(256);
    case TensorType::Q3_K: return quant_kernel<Q3_KT>(256);
    case TensorType::Q4_K: return quant_kernel<Q45_KT<false>, false>(256);  // decode: 455 vs 677 us with two
    case TensorType::Q5_K: return quant_kernel<Q45_KT<true>>(256);
    case TensorType::Q6_K: return quant_kernel<Q6_KT>(256);
    default: return {};
  }
}

#undef VZ
#undef VELLUM_SIMD_TARGET

}  // namespace
}  // namespace avx512
#endif

MatmulKernel avx512_kernel(TensorType type) {
#if defined(__x86_64__)
  return avx512::zmm_kernel(type);
#else
  (void)type;
  return {};
#endif
}

}  // namespace vellum::backend::cpu
