#pragma once
// The batch-1 dot products of Q4_K and Q6_K on their device group layouts (DecQ4_KR / DecQ6_KR,
// dequant.cuh), shared by gemv_kq_kernel (gemv_kernels.cu) and the layer kernel (layer_kernel.cu):
// a row gives the same bits in either, since both add a lane's groups in order with these dots,
// then sum the warp with warp_sum.

#include <cstdint>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {

// ---- Q4_K and Q6_K (round 7) ----------------------------------------------------------------------
// One warp per output (SwiGLU: its gate and up rows; or 2 outputs) on the group layouts of
// DecQ4_KR / DecQ6_KR: pass p of a row is group p (4 super-blocks, 1 024 elements) and lane l takes
// sub-block l of it, whose fields lie contiguous across the warp (Q4_K: 16 quant bytes of 512, and
// its super-block's 16-byte header, 4 addresses a warp; Q6_K: 16 + 8 bytes of 512 + 256, 2 scale
// bytes of 64, d). P passes of loads are issued before the first is used. A lane adds its passes
// in order, then the warp sums its lanes: a row's reduction order depends on k only, so a row gives
// the same bits alone, in a Q/K/V launch or a SwiGLU pair, and at any P or R.
// Round 6's Q4_K kernel (64 elements a lane, 4 rows a warp, the header re-loaded by 4 lanes) used
// 168 registers (12 warps an SM) and was latency-bound; these ask for 32 warps an SM.

// Weights are read once: no L1 allocation (x, which every warp re-reads, keeps L1).
__device__ __forceinline__ uint4 ld_stream(const uint8_t* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
// Σ a_i·b_i over 4 bytes, a unsigned, b signed.
__device__ __forceinline__ int dp4a_us(uint32_t a, uint32_t b, int c) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
// float(v) for |v| < 2^22 without I2F: 1.5·2^23 + v has v in its low mantissa bits.
__device__ __forceinline__ float i2f_small(int v) { return __int_as_float(0x4B400000 + v) - 12582912.0f; }

struct GemvQ4K {
  static constexpr int kGroupBytes = DecQ4_KR::kGroupBytes;
  __host__ __device__ static size_t row_bytes(int64_t k) { return DecQ4_KR::repacked_row_bytes(k); }
  struct Raw {
    uint4 q, h;  // the sub-block's 16 quant bytes, its super-block's header
  };
  // scale_min_k4 of sub-block s = lane % 8 on header words 1..3 with lane constants: s < 4: sc = byte
  // s of h.y & 63, m = byte s of h.z & 63; s >= 4 (j = s - 4): sc = (byte j of h.w & 15) | (byte j of
  // h.y >> 6) << 4, m = (byte j of h.w >> 4) | (byte j of h.z >> 6) << 4.
  struct Lane {
    uint32_t shift, lo_mask, hi_shift, hi_mask;
    int sb;  // super-block of the group
    __device__ explicit Lane(int lane) {
      const int s = lane & 7;
      shift = 8 * (s & 3);
      lo_mask = s < 4 ? 0u : 15u;
      hi_shift = s < 4 ? 0u : 2u;
      hi_mask = s < 4 ? 63u : 48u;
      sb = lane / 8;
    }
  };
  __device__ static void load(const uint8_t* g, int lane, const Lane& L, Raw& r) {
    r.q = ld_stream(g + DecQ4_KR::kQuantOff + 16 * lane);
    r.h = *reinterpret_cast<const uint4*>(g + 16 * L.sb);
  }
  // The same fields from a copy of the group in shared memory (the layer kernel's ring).
  __device__ static void load_shared(const uint8_t* g, int lane, const Lane& L, Raw& r) {
    r.q = *reinterpret_cast<const uint4*>(g + DecQ4_KR::kQuantOff + 16 * lane);
    r.h = *reinterpret_cast<const uint4*>(g + 16 * L.sb);
  }
  // x elements 0..15 (x0) and 16..31 (x1) of the sub-block, its x scale pair xs = (d, d·Σq).
  __device__ static float dot(const Raw& r, const uint4& x0, const uint4& x1, const float2& xs, const Lane& L) {
    constexpr uint32_t kLo = 0x0F0F0F0Fu, kHi = 0xF0F0F0F0u;
    int lo = __dp4a(int(r.q.x & kLo), int(x0.x), 0);
    lo = __dp4a(int(r.q.y & kLo), int(x0.y), lo);
    lo = __dp4a(int(r.q.z & kLo), int(x0.z), lo);
    lo = __dp4a(int(r.q.w & kLo), int(x0.w), lo);
    int hi = dp4a_us(r.q.x & kHi, x1.x, 0);  // 16 x the high nibbles' sum: exact, shifted back below
    hi = dp4a_us(r.q.y & kHi, x1.y, hi);
    hi = dp4a_us(r.q.z & kHi, x1.z, hi);
    hi = dp4a_us(r.q.w & kHi, x1.w, hi);
    float dsc, dm;
    scales(r.h, L, dsc, dm);
    return combine(lo + (hi >> 4), xs, dsc, dm);
  }
  // The sub-block's scale d·sc and minimum dmin·m from its super-block's header.
  __device__ static void scales(const uint4& h, const Lane& L, float& dsc, float& dm) {
    const uint32_t t1 = h.y >> L.shift, t2 = h.z >> L.shift, t3 = h.w >> L.shift;
    const uint32_t sc = (t3 & L.lo_mask) | ((t1 >> L.hi_shift) & L.hi_mask);
    const uint32_t m = ((t3 >> 4) & L.lo_mask) | ((t2 >> L.hi_shift) & L.hi_mask);
    dsc = mul(f16_lo(h.x), u2f(sc));
    dm = mul(f16_hi(h.x), u2f(m));
  }
  // A sub-block's term from its exact integer sum Σ q·x (however it was summed: dp4a or mma).
  // Explicit roundings: the same operations in every kernel (bit-identical fused launches, and the
  // deterministic mode's tensor-core rows, rows_mma.cu).
  __device__ static float combine(int sum, const float2& xs, float dsc, float dm) {
    return combine(i2f_small(sum), xs, dsc, dm);
  }
  // The same from the sum as a float (exact: |sum| < 2^22), for a kernel short of issue slots
  // rather than of the conversion unit (rows_mma: one I2F instead of two instructions).
  __device__ static float combine(float sum, const float2& xs, float dsc, float dm) {
    return __fmaf_rn(__fmul_rn(xs.x, dsc), sum, -__fmul_rn(dm, xs.y));
  }
};

// One pass (the 1 024-element group p) of R rows whose copies lie in shared memory `stride` bytes
// apart from g: each lane's sub-block of every row added into acc, one load of x for all of them
// (the layer kernel's ring, round 19; the staged producer, round 48). Nothing for a lane whose
// super-block a short last group lacks.
template <class F, int R>
__device__ __forceinline__ void kq_pass_shared(const uint8_t* g, size_t stride, int p, int64_t nb, const int8_t* xq,
                                               const float2* xs, int lane, const typename F::Lane& L, float (&acc)[R]) {
  if (int64_t(p) * 4 + lane / 8 >= nb) return;
  const int64_t e = int64_t(p) * 1024 + 32 * lane;  // the sub-block's first element
  const uint4* xp = reinterpret_cast<const uint4*>(xq + e);
  const uint4 x0 = xp[0], x1 = xp[1];
  const float2 xsv = xs[e / 32];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    typename F::Raw w;
    F::load_shared(g + size_t(r) * stride, lane, L, w);
    acc[r] += F::dot(w, x0, x1, xsv, L);
  }
}

struct GemvQ6K {
  static constexpr int kGroupBytes = DecQ6_KR::kGroupBytes;
  __host__ __device__ static size_t row_bytes(int64_t k) { return DecQ6_KR::repacked_row_bytes(k); }
  struct Raw {
    uint4 ql;     // low 4 bits: element j low nibble, j + 16 high
    uint2 qh;     // high 2 bits of elements 0..15, 16..31
    uint32_t sd;  // the two int8 scales (low half), the super-block's f16 d (high half)
  };
  struct Lane {
    int sb;
    __device__ explicit Lane(int lane) : sb(lane / 8) {}
  };
  __device__ static void load(const uint8_t* g, int lane, const Lane& L, Raw& r) {
    r.ql = ld_stream(g + 16 * lane);
    r.qh = *reinterpret_cast<const uint2*>(g + DecQ6_KR::kQhOff + 8 * lane);
    const uint32_t sc = *reinterpret_cast<const uint16_t*>(g + DecQ6_KR::kScOff + 2 * lane);
    const uint32_t d = *reinterpret_cast<const uint16_t*>(g + DecQ6_KR::kDOff + 2 * L.sb);
    r.sd = sc | (d << 16);
  }
  __device__ static void load_shared(const uint8_t* g, int lane, const Lane& L, Raw& r) {
    r.ql = *reinterpret_cast<const uint4*>(g + 16 * lane);
    r.qh = *reinterpret_cast<const uint2*>(g + DecQ6_KR::kQhOff + 8 * lane);
    const uint32_t sc = *reinterpret_cast<const uint16_t*>(g + DecQ6_KR::kScOff + 2 * lane);
    const uint32_t d = *reinterpret_cast<const uint16_t*>(g + DecQ6_KR::kDOff + 2 * L.sb);
    r.sd = sc | (d << 16);
  }
  // Σ (q − 32)·x over 16 elements = Σ q·x − 32·Σ x, q = 0..63 (unsigned bytes).
  __device__ static int half(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t qh, int shift, const uint4& x) {
    const uint32_t w0 = ((a >> shift) & 0x0F0F0F0Fu) | DecQ6_KR::hi2(qh, 0);
    const uint32_t w1 = ((b >> shift) & 0x0F0F0F0Fu) | DecQ6_KR::hi2(qh, 1);
    const uint32_t w2 = ((c >> shift) & 0x0F0F0F0Fu) | DecQ6_KR::hi2(qh, 2);
    const uint32_t w3 = ((d >> shift) & 0x0F0F0F0Fu) | DecQ6_KR::hi2(qh, 3);
    int s = dp4a_us(w0, x.x, 0);
    s = dp4a_us(w1, x.y, s);
    s = dp4a_us(w2, x.z, s);
    s = dp4a_us(w3, x.w, s);
    int sx = __dp4a(0x01010101, int(x.x), 0);
    sx = __dp4a(0x01010101, int(x.y), sx);
    sx = __dp4a(0x01010101, int(x.z), sx);
    sx = __dp4a(0x01010101, int(x.w), sx);
    return s - 32 * sx;
  }
  __device__ static float dot(const Raw& r, const uint4& x0, const uint4& x1, const float2& xs, const Lane&) {
    const int s0 = half(r.ql.x, r.ql.y, r.ql.z, r.ql.w, r.qh.x, 0, x0);
    const int s1 = half(r.ql.x, r.ql.y, r.ql.z, r.ql.w, r.qh.y, 4, x1);
    const int sc0 = int(int8_t(r.sd & 0xFFu)), sc1 = int(int8_t((r.sd >> 8) & 0xFFu));
    return combine(sc0 * s0 + sc1 * s1, xs.x, f16_hi(r.sd));  // |sum| < 2·128·63·127·16: exact
  }
  // A sub-block's term from its exact integer sum sc0·Σ(q − 32)·x (first 16) + sc1·(last 16).
  __device__ static float combine(int sum, float xd, float d) { return __fmul_rn(__fmul_rn(xd, d), __int2float_rn(sum)); }
};

}  // namespace vellum::cuda
