#pragma once
// How each quantized weight type becomes bf16 for the dequantizing tensor-core GEMMs (dq_mma.cu,
// dq_tma.cu): the 16-byte pieces of the device layouts (dequant.cuh) that hold a 64-element stage
// of a row, and the arithmetic that turns them into bf16 pairs: whole half-stages (dequant) or one
// lane's wgmma A fragments (frag).

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

#include "backend/cuda/dequant.cuh"

namespace vellum::cuda::dq {

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}
__device__ __forceinline__ uint32_t bf2_fma(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
__device__ __forceinline__ uint32_t bf2_dup(float v) {  // v rounded to bf16, in both halves
  const uint32_t h = __bfloat16_as_ushort(__float2bfloat16_rn(v));
  return h | (h << 16);
}
constexpr uint32_t kBf2One = 0x3F803F80u;      // (1, 1)
constexpr uint32_t kBf2NegZero = 0x80008000u;  // (-0, -0): a·b + (-0) = a·b exactly
constexpr uint32_t kBf2Neg128 = 0xC300C300u;   // (-128, -128)
constexpr uint32_t kBf2Neg160 = 0xC320C320u;   // (-160, -160)
// Bytes 0..3 of v (each < 128) as bf16 pairs 128 + b: lo = (b0, b1), hi = (b2, b3).
__device__ __forceinline__ void biased_pairs(uint32_t v, uint32_t& lo, uint32_t& hi) {
  lo = __byte_perm(v, 0x43434343u, 0x5140);
  hi = __byte_perm(v, 0x43434343u, 0x7362);
}
// Byte i of u (an int8 value b stored as b + 128) times d, exactly b·d in f32 (s8f(b)·d's bits but
// for the sign of a zero): one byte permute puts it into f = 2^15 + (b + 128), and one FMA takes
// f·d + nkd with nkd = -(2^15 + 128)·d (20 significant bits: exact), the product b·d having at most
// 19 significant bits.
__device__ __forceinline__ float biased_s8_times(uint32_t u, int i, float d, float nkd) {
  return __fmaf_rn(__uint_as_float(__byte_perm(u, 0x47000000u, 0x7504u | (uint32_t(i) << 4))), d, nkd);
}
// Bytes 2t, 2t+1, 2t+8, 2t+9 of a 16-byte piece in shared memory (a lane's part of an mma A row).
__device__ __forceinline__ uint32_t quad_bytes(const uint8_t* p, int t) {
  const uint32_t a = *reinterpret_cast<const uint16_t*>(p + 2 * t), b = *reinterpret_cast<const uint16_t*>(p + 2 * t + 8);
  return a | (b << 16);
}

// ---- weight types ------------------------------------------------------------------------------
// Stage s of a row is elements 64s..64s+63 (sub-blocks or blocks 2s and 2s + 1). kPieces 16-byte
// pieces of the row's device layout hold them; piece_off(s, i) is piece i's offset from the row
// start. dequant(raw, ps, s, h, p) gives elements 32h..32h+31 of the stage from the staged pieces
// (piece i at raw + i·ps: 16 where a row's pieces lie side by side) as 16 bf16 pairs in element
// order. Q4_K and Q6_K build 128 + q in bf16 by byte permutes, subtract the bias exactly and scale
// with one bf16x2 FMA (sub-block scales rounded to bf16, ~2^-9 relative: below x's own bf16
// rounding); ~2 instructions an element where the f32 decoder's arithmetic took ~7 and made the
// kernel issue-bound (round 11, first version). Q8_0 goes through f32 and equals the
// dequantization kernel's bf16 weights bit for bit.
struct WQ4_K {  // DecQ4_KR: per 1 024 elements, 4 headers (16 bytes) then 32 sub-blocks × 16
  static constexpr int kPieces = 3;
  static constexpr bool kRegFrags = true;  // the two sub-blocks' quants, the super-block's header
  static size_t row_bytes(int64_t k) { return DecQ4_KR::repacked_row_bytes(k); }
  __device__ static int64_t piece_off(int s, int i) {
    const int64_t g = int64_t(s / 16) * DecQ4_KR::kGroupBytes;
    return i < 2 ? g + DecQ4_KR::kQuantOff + 16 * ((2 * s) % 32 + i) : g + 16 * ((s / 4) % 4);
  }
  __device__ static void dequant(const uint8_t* raw, int ps, int s, int h, uint32_t* p) {
    const uint8_t* hd = raw + 2 * ps;
    int sc, m;
    scale_min_k4((2 * s + h) % 8, hd + 4, sc, m);
    const uint32_t d1 = bf2_dup(ld_f16(hd) * float(sc)), m1 = bf2_dup(-(ld_f16(hd + 2) * float(m)));
    const uint4 v = *reinterpret_cast<const uint4*>(raw + h * ps);
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // byte b: element b (low nibble), b + 16 (high)
      uint32_t lo, hi;
      biased_pairs(w[i] & 0x0F0F0F0Fu, lo, hi);
      p[2 * i] = bf2_fma(bf2_fma(lo, kBf2One, kBf2Neg128), d1, m1);
      p[2 * i + 1] = bf2_fma(bf2_fma(hi, kBf2One, kBf2Neg128), d1, m1);
      biased_pairs((w[i] >> 4) & 0x0F0F0F0Fu, lo, hi);
      p[8 + 2 * i] = bf2_fma(bf2_fma(lo, kBf2One, kBf2Neg128), d1, m1);
      p[8 + 2 * i + 1] = bf2_fma(bf2_fma(hi, kBf2One, kBf2Neg128), d1, m1);
    }
  }
  // One row's part of the register A fragments of stage s (dq_mma_rs_kernel, dq_tma_kernel), piece i
  // of the row at raw + i·ps (16 where a row's pieces lie side by side). lo[kk] = elements
  // 16kk + 2t, +1 and hi[kk] = 16kk + 2t + 8, +9 (t = lane % 4): bytes 2t, 2t+1, 2t+8, 2t+9 of each
  // sub-block hold them (low nibbles: kk even, high: kk odd). The same bf16 values as dequant().
  // Q >= 0: the caller knows s % 4 == Q (round 33), so the sub-blocks' scale bytes are at constant
  // offsets and scale_min_k4's two forms need no branch.
  template <int Q = -1>
  __device__ static void frag(const uint8_t* raw, int ps, int s, int t, uint32_t (&lo)[4], uint32_t (&hi)[4]) {
    const uint8_t* hd = raw + 2 * ps;
    const float d = ld_f16(hd), dmin = ld_f16(hd + 2);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int sc, m;
      scale_min_k4(Q >= 0 ? 2 * Q + h : (2 * s + h) % 8, hd + 4, sc, m);
      const uint32_t d1 = bf2_dup(d * float(sc)), m1 = bf2_dup(-(dmin * float(m)));
      const uint32_t v = quad_bytes(raw + h * ps, t);
      uint32_t a, b;
      biased_pairs(v & 0x0F0F0F0Fu, a, b);
      lo[2 * h] = bf2_fma(bf2_fma(a, kBf2One, kBf2Neg128), d1, m1);
      hi[2 * h] = bf2_fma(bf2_fma(b, kBf2One, kBf2Neg128), d1, m1);
      biased_pairs((v >> 4) & 0x0F0F0F0Fu, a, b);
      lo[2 * h + 1] = bf2_fma(bf2_fma(a, kBf2One, kBf2Neg128), d1, m1);
      hi[2 * h + 1] = bf2_fma(bf2_fma(b, kBf2One, kBf2Neg128), d1, m1);
    }
  }
};

struct WQ6_K {  // DecQ6_KR: per 1 024 elements, ql 32 × 16, qh 32 × 8, scales 64, d 4 × 2, pad 8
  static constexpr bool kRegFrags = true;
  static constexpr int kPieces = 5;  // ql of the two sub-blocks, their qh, the scales' and d's slots
  static size_t row_bytes(int64_t k) { return DecQ6_KR::repacked_row_bytes(k); }
  __device__ static int64_t piece_off(int s, int i) {
    const int64_t g = int64_t(s / 16) * DecQ6_KR::kGroupBytes;
    const int t0 = (2 * s) % 32;
    return i < 2 ? g + 16 * (t0 + i) : i == 2 ? g + DecQ6_KR::kQhOff + 8 * t0 : i == 3 ? g + DecQ6_KR::kScOff + 16 * (t0 / 8) : g + DecQ6_KR::kDOff;
  }
  __device__ static void dequant(const uint8_t* raw, int ps, int s, int h, uint32_t* p) {
    const int t = (2 * s) % 32 + h;
    const float d = ld_f16(raw + 4 * ps + 2 * (t / 8));
    const uint32_t d0 = bf2_dup(d * float(int8_t(raw[3 * ps + 2 * (t % 8)]))), d1 = bf2_dup(d * float(int8_t(raw[3 * ps + 2 * (t % 8) + 1])));
    const uint4 v = *reinterpret_cast<const uint4*>(raw + h * ps);
    const uint2 hq = *reinterpret_cast<const uint2*>(raw + 2 * ps + 8 * h);
    const uint32_t ql[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {  // 6-bit values of elements 4w.. (a) and 16 + 4w.. (b)
      const uint32_t a = (ql[w] & 0x0F0F0F0Fu) | DecQ6_KR::hi2(hq.x, w), b = ((ql[w] >> 4) & 0x0F0F0F0Fu) | DecQ6_KR::hi2(hq.y, w);
      uint32_t lo, hi;
      biased_pairs(a, lo, hi);
      p[2 * w] = bf2_fma(bf2_fma(lo, kBf2One, kBf2Neg160), d0, kBf2NegZero);  // (v - 32)·d·sc
      p[2 * w + 1] = bf2_fma(bf2_fma(hi, kBf2One, kBf2Neg160), d0, kBf2NegZero);
      biased_pairs(b, lo, hi);
      p[8 + 2 * w] = bf2_fma(bf2_fma(lo, kBf2One, kBf2Neg160), d1, kBf2NegZero);
      p[8 + 2 * w + 1] = bf2_fma(bf2_fma(hi, kBf2One, kBf2Neg160), d1, kBf2NegZero);
    }
  }
  // As WQ4_K::frag. Elements 2t, 2t+1 have their high 2 bits at bits 2(t/2).. of bytes 2(t%2),
  // +1 of a qh word, elements 2t+8, 2t+9 at bits 2(t/2)+4.. of the same bytes.
  template <int Q = -1>  // as WQ4_K::frag: Q >= 0, s % 4 == Q (the scale bytes' offsets)
  __device__ static void frag(const uint8_t* raw, int ps, int s, int t, uint32_t (&lo)[4], uint32_t (&hi)[4]) {
    const int i0 = 2 * (t % 2), sh = 2 * (t / 2);
    const uint32_t sel = uint32_t(i0 | (i0 + 1) << 4 | (i0 + 4) << 8 | (i0 + 5) << 12);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int tb = (2 * s) % 32 + h, tb8 = Q >= 0 ? 2 * Q + h : tb % 8;  // tb % 8 = (2 (s % 4) + h)
      const float d = ld_f16(raw + 4 * ps + 2 * (tb / 8));
      const uint32_t d0 = bf2_dup(d * float(int8_t(raw[3 * ps + 2 * tb8]))), d1 = bf2_dup(d * float(int8_t(raw[3 * ps + 2 * tb8 + 1])));
      const uint32_t v = quad_bytes(raw + h * ps, t);
      const uint2 q = *reinterpret_cast<const uint2*>(raw + 2 * ps + 8 * h);
      const uint32_t hx = (__byte_perm(q.x >> sh, q.x >> (sh + 4), sel) & 0x03030303u) << 4;
      const uint32_t hy = (__byte_perm(q.y >> sh, q.y >> (sh + 4), sel) & 0x03030303u) << 4;
      uint32_t a, b;
      biased_pairs((v & 0x0F0F0F0Fu) | hx, a, b);
      lo[2 * h] = bf2_fma(bf2_fma(a, kBf2One, kBf2Neg160), d0, kBf2NegZero);
      hi[2 * h] = bf2_fma(bf2_fma(b, kBf2One, kBf2Neg160), d0, kBf2NegZero);
      biased_pairs(((v >> 4) & 0x0F0F0F0Fu) | hy, a, b);
      lo[2 * h + 1] = bf2_fma(bf2_fma(a, kBf2One, kBf2Neg160), d1, kBf2NegZero);
      hi[2 * h + 1] = bf2_fma(bf2_fma(b, kBf2One, kBf2Neg160), d1, kBf2NegZero);
    }
  }
};

struct WQ8_0 {  // DecQ8_0R: per 256 elements, 8 f16 scales (16 bytes) then 8 blocks × 32 int8
  static constexpr int kPieces = 5;  // the two blocks' 64 quant bytes, the group's scales
  static constexpr bool kRegFrags = false;  // its int8 values need more than the bf16 byte trick
  static size_t row_bytes(int64_t k) { return DecQ8_0R::repacked_row_bytes(k); }
  __device__ static int64_t piece_off(int s, int i) {
    const int64_t g = int64_t(s / 4) * DecQ8_0R::kGroupBytes;
    return i < 4 ? g + 16 + 64 * (s % 4) + 16 * i : g;
  }
  __device__ static void dequant(const uint8_t* raw, int ps, int s, int h, uint32_t* p) {
    const float d = ld_f16(raw + 4 * ps + 2 * (2 * (s % 4) + h));
    const uint4 a = *reinterpret_cast<const uint4*>(raw + 2 * h * ps), b = *reinterpret_cast<const uint4*>(raw + (2 * h + 1) * ps);
    const uint32_t q[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int l = 0; l < 16; ++l) p[l] = pack_bf16(mul(s8f(byte_of(q, 2 * l)), d), mul(s8f(byte_of(q, 2 * l + 1)), d));
  }
  // As WQ4_K::frag (dq_tma_rs_kernel only; kRegFrags stays false for dq_mma): piece kk holds
  // elements 16kk..16kk+15, one byte each; the same bf16 values as dequant() (a zero may differ in sign).
  // Round 37: the four bytes as one word biased by 128 (one XOR), then each value by one byte permute
  // and one FMA (biased_s8_times): ~3 instructions an element where s8f and a multiply after
  // extracting each byte took ~6 and made the 128-token tiles issue-bound.
  template <int Q = -1>  // as WQ4_K::frag: Q >= 0, s % 4 == Q (the scales' offsets)
  __device__ static void frag(const uint8_t* raw, int ps, int s, int t, uint32_t (&lo)[4], uint32_t (&hi)[4]) {
    const int s4 = Q >= 0 ? Q : s % 4;
    const float d0 = ld_f16(raw + 4 * ps + 2 * (2 * s4)), d1 = ld_f16(raw + 4 * ps + 2 * (2 * s4 + 1));
    const float n0 = mul(-32896.0f, d0), n1 = mul(-32896.0f, d1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const float d = kk < 2 ? d0 : d1, nd = kk < 2 ? n0 : n1;
      const uint32_t u = quad_bytes(raw + kk * ps, t) ^ 0x80808080u;  // bytes 2t, 2t+1, 2t+8, 2t+9, each b + 128
      lo[kk] = pack_bf16(biased_s8_times(u, 0, d, nd), biased_s8_times(u, 1, d, nd));
      hi[kk] = pack_bf16(biased_s8_times(u, 2, d, nd), biased_s8_times(u, 3, d, nd));
    }
  }
};

}  // namespace vellum::cuda::dq
