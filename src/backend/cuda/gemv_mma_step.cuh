#pragma once
// The int8 tensor-core rows kernels' shared pieces (gemv_mma.h): each weight type's super-block step
// (a warp's 16 weight rows times NT tiles of 8 token columns, mma.sync on the device layouts), the
// x side's layout in a stage, and where a launch's sums go. gemv_mma.cu (2-16 rows, K split over a
// block's warps) and gemv_mma_wide.cu (17-32 rows, x shared by a block's warps) run the same steps.

#include <cstddef>
#include <cstdint>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/gemv_mma.h"
#include "backend/cuda/mma_s8.cuh"

namespace vellum::cuda::mma_rows {

constexpr int kSuper = 256;  // K elements of a super-block (Q8_0: one repacked group of 8 blocks)
constexpr uint32_t kLo = 0x0F0F0F0Fu;

__device__ __forceinline__ uint32_t lds32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ uint4 lds128(const uint8_t* p) { return *reinterpret_cast<const uint4*>(p); }
// Byte `sel` (0x7540 + byte) of w as an exact float: 2^23 + the byte, less 2^23.
__device__ __forceinline__ float byte_f(uint32_t w, uint32_t sel) { return __int_as_float(__byte_perm(w, 0x4B000000u, sel)) - 8388608.0f; }
// float(c) for |c| < 2^22 without the quarter-rate I2F.
__device__ __forceinline__ float small_f(int c) { return __int_as_float(0x4B400000 + c) - 12582912.0f; }

// D += A·B on tf32 (m16n8k8; a0 / a1 rows g / g+8 at column t, a2 / a3 at t + 4; b0 / b1 rows t /
// t + 4 of column g), f32 accumulation.
__device__ __forceinline__ void mma_tf32(const float (&a)[4], float b0, float b1, float (&d)[4]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])),
        "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

// acc (row g × tokens 2t, 2t+1, then row g+8 × the same) += the sub-block's terms; w0 / w1: the
// rows' weight scale factors.
__device__ __forceinline__ void add_terms(float (&acc)[4], const float (&c)[4], float w0, float w1, const float4& xs) {
  acc[0] = fmaf(w0 * xs.x, c[0], acc[0]);
  acc[1] = fmaf(w0 * xs.z, c[1], acc[1]);
  acc[2] = fmaf(w1 * xs.x, c[2], acc[2]);
  acc[3] = fmaf(w1 * xs.z, c[3], acc[3]);
}

// The x side of sub-block s of a super-block's tile tt: lane (g, t)'s B fragment (b0, b1), the scale
// pairs of tokens 2t, 2t + 1, and (K-quant minimums) the tf32 pairs of token g (xb, xs, xm: the
// super-block's first tile, already offset by the lane). A tile's part is 2 048, 512 and 512 bytes
// after the previous tile's, in global memory and in a stage alike.
struct XSide {
  const uint4* xb;
  const float4* xs;
  const float4* xm;
  __device__ uint2 b(int s, int tt) const {
    const uint4 v = xb[tt * 128 + (s / 2) * 32];
    return s % 2 ? make_uint2(v.z, v.w) : make_uint2(v.x, v.y);
  }
  __device__ float4 scales(int s, int tt) const { return xs[tt * 32 + s * 4]; }
  __device__ float4 mins(int tt) const { return xm[tt * 32]; }
};

// Each type: a super-block of a row staged as kPieces 16-byte pieces (piece: where piece c of
// super-block j lies in the device row; kAdvance: how far piece c of super-block j + 4 lies after
// it) at kStride bytes a row (strides ≡ 4·odd words mod 32: the lanes' word loads hit 32 banks);
// step adds the super-block's terms of rows g, g + 8 (st: the stage) to acc, each sub-block's
// fragments read where they are used; kWide / kLong: round 42's launch shapes (KW·10 + S) of many
// short rows and of long ones (launch_type, VELLUM_CUDA_MMA_SHAPE=-1).
struct MmaQ4K {  // header, then the 128 quant bytes (DecQ4_KR)
  static constexpr int kPieces = 9, kStride = 144, kAdvance = DecQ4_KR::kGroupBytes, kWide = 42, kLong = 161;
  static constexpr bool kMins = true;  // reads XSide::mins
  static size_t row_bytes(int64_t k) { return DecQ4_KR::repacked_row_bytes(k); }
  __device__ static int64_t piece(int64_t j, int c) {
    const int64_t g = (j / 4) * DecQ4_KR::kGroupBytes;
    return c == 0 ? g + 16 * (j % 4) : g + DecQ4_KR::kQuantOff + 128 * (j % 4) + 16 * (c - 1);
  }
  // Round 42: each sub-block's int32 sums times the rows' 6-bit scales as integers (|·| < 2^22), then
  // times x's scale into `inner`, which takes d once a super-block; the minimums' terms, Σ_s m·(d_x·Σq_x),
  // as a tf32 mma.sync of the 6-bit minimums by d_x·Σq_x split in two tf32 parts (exact to ~2^-20).
  template <int NT>
  __device__ static void step(const uint8_t* st, int g, int64_t, int t, const XSide& x, float (&acc)[NT][4]) {
    const uint8_t* row[2] = {st + g * kStride, st + (g + 8) * kStride};
    float d[2], dm[2];
    uint32_t sc[2][2], mn[2][2];  // 6-bit scales / minimums of sub-blocks 0..3 and 4..7, a byte each
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const uint4 h = lds128(row[i]);  // d, dmin, 12 bytes of 6-bit scales and minimums
      d[i] = f16_lo(h.x), dm[i] = f16_hi(h.x);
      sc[i][0] = h.y & 0x3F3F3F3Fu;
      sc[i][1] = (h.w & kLo) | ((h.y >> 2) & 0x30303030u);
      mn[i][0] = h.z & 0x3F3F3F3Fu;
      mn[i][1] = ((h.w >> 4) & kLo) | ((h.z >> 2) & 0x30303030u);
    }
    float inner[NT][4] = {};
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const uint32_t q0 = lds32(row[0] + 16 + 16 * s + 4 * t), q1 = lds32(row[1] + 16 + 16 * s + 4 * t);
      const uint32_t a0 = q0 & kLo, a1 = q1 & kLo, a2 = (q0 >> 4) & kLo, a3 = (q1 >> 4) & kLo;
      const int s0 = int(__byte_perm(sc[0][s / 4], 0, 0x4440 + s % 4)), s1 = int(__byte_perm(sc[1][s / 4], 0, 0x4440 + s % 4));
#pragma unroll
      for (int tt = 0; tt < NT; ++tt) {
        const uint2 b = x.b(s, tt);
        int c[4];
        mma_k32(a0, a1, a2, a3, b.x, b.y, c);
        const float4 xs = x.scales(s, tt);
        inner[tt][0] = fmaf(xs.x, small_f(c[0] * s0), inner[tt][0]);
        inner[tt][1] = fmaf(xs.z, small_f(c[1] * s0), inner[tt][1]);
        inner[tt][2] = fmaf(xs.x, small_f(c[2] * s1), inner[tt][2]);
        inner[tt][3] = fmaf(xs.z, small_f(c[3] * s1), inner[tt][3]);
      }
    }
    const uint32_t sel = 0x7540 + t;  // the minimums of sub-blocks t and t + 4 of rows g, g + 8
    const float a[4] = {byte_f(mn[0][0], sel), byte_f(mn[1][0], sel), byte_f(mn[0][1], sel), byte_f(mn[1][1], sel)};
#pragma unroll
    for (int tt = 0; tt < NT; ++tt) {
      const float4 xm = x.mins(tt);
      float m[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      mma_tf32(a, xm.x, xm.y, m);
      mma_tf32(a, xm.z, xm.w, m);
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[tt][e] = fmaf(-dm[e / 2], m[e], fmaf(d[e / 2], inner[tt][e], acc[tt][e]));
    }
  }
};

struct MmaQ8_0 {  // the 8 f16 scales, then 8 × 32 int8 (DecQ8_0R)
  static constexpr int kPieces = 17, kStride = 272, kAdvance = 4 * DecQ8_0R::kGroupBytes, kWide = 43, kLong = 82;
  static constexpr bool kMins = false;
  static size_t row_bytes(int64_t k) { return DecQ8_0R::repacked_row_bytes(k); }
  __device__ static int64_t piece(int64_t j, int c) { return j * DecQ8_0R::kGroupBytes + 16 * c; }
  template <int NT>
  __device__ static void step(const uint8_t* st, int g, int64_t, int t, const XSide& x, float (&acc)[NT][4]) {
    const uint8_t* row[2] = {st + g * kStride, st + (g + 8) * kStride};
    const uint4 d0 = lds128(row[0]), d1 = lds128(row[1]);
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const uint8_t* q0 = row[0] + 16 + 32 * s + 4 * t;
      const uint8_t* q1 = row[1] + 16 + 32 * s + 4 * t;
      const uint32_t a0 = lds32(q0), a1 = lds32(q1), a2 = lds32(q0 + 16), a3 = lds32(q1 + 16);
      const uint32_t w0 = (&d0.x)[s / 2], w1 = (&d1.x)[s / 2];
      const float f0 = s % 2 ? f16_hi(w0) : f16_lo(w0), f1 = s % 2 ? f16_hi(w1) : f16_lo(w1);
#pragma unroll
      for (int tt = 0; tt < NT; ++tt) {
        const uint2 b = x.b(s, tt);
        int c[4];
        mma_k32(a0, a1, a2, a3, b.x, b.y, c);
        const float cf[4] = {small_f(c[0]), small_f(c[1]), small_f(c[2]), small_f(c[3])};
        add_terms(acc[tt], cf, f0, f1, x.scales(s, tt));
      }
    }
  }
};

struct MmaQ6K {  // 128 low-bit bytes, 64 high-bit bytes, 16 int8 sub-scales, the group's 4 f16 d (DecQ6_KR)
  static constexpr int kPieces = 14, kStride = 240, kAdvance = DecQ6_KR::kGroupBytes, kWide = 82, kLong = 161;
  static constexpr bool kMins = false;
  static size_t row_bytes(int64_t k) { return DecQ6_KR::repacked_row_bytes(k); }
  __device__ static int64_t piece(int64_t j, int c) {
    const int64_t g = (j / 4) * DecQ6_KR::kGroupBytes;
    const int b = int(j % 4);
    if (c < 8) return g + 128 * b + 16 * c;
    if (c < 12) return g + DecQ6_KR::kQhOff + 64 * b + 16 * (c - 8);
    return c == 12 ? g + DecQ6_KR::kScOff + 16 * b : g + DecQ6_KR::kDOff;
  }
  template <int NT>
  __device__ static void step(const uint8_t* st, int g, int64_t j, int t, const XSide& x, float (&acc)[NT][4]) {
    const uint8_t* row[2] = {st + g * kStride, st + (g + 8) * kStride};
    const float d0 = ld_f16(row[0] + 208 + 2 * (j % 4)), d1 = ld_f16(row[1] + 208 + 2 * (j % 4));
    float inner[NT][4] = {};  // d is the super-block's: taken once (round 42)
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      uint32_t lo[2], hi[2];
      int sa[2], sb[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {  // 6-bit q − 32 per byte, and the halves' int8 scales
        const uint32_t ql = lds32(row[i] + 16 * s + 4 * t);
        const uint2 qh = *reinterpret_cast<const uint2*>(row[i] + 128 + 8 * s);
        lo[i] = __vsub4((ql & kLo) | DecQ6_KR::hi2(qh.x, t), 0x20202020u);
        hi[i] = __vsub4(((ql >> 4) & kLo) | DecQ6_KR::hi2(qh.y, t), 0x20202020u);
        const uint32_t p = *reinterpret_cast<const uint16_t*>(row[i] + 192 + 2 * s);
        sa[i] = int(int8_t(p & 0xFFu)), sb[i] = int(int8_t(p >> 8));
      }
#pragma unroll
      for (int tt = 0; tt < NT; ++tt) {
        const uint2 b = x.b(s, tt);
        int cl[4], ch[4];
        mma_k16(lo[0], lo[1], b.x, cl);
        mma_k16(hi[0], hi[1], b.y, ch);
        // |sum| < 2·128·16·32·127: past small_f's range, so the conversion instruction
        const float cf[4] = {__int2float_rn(cl[0] * sa[0] + ch[0] * sb[0]), __int2float_rn(cl[1] * sa[0] + ch[1] * sb[0]),
                             __int2float_rn(cl[2] * sa[1] + ch[2] * sb[1]), __int2float_rn(cl[3] * sa[1] + ch[3] * sb[1])};
        const float4 xs = x.scales(s, tt);
        inner[tt][0] = fmaf(xs.x, cf[0], inner[tt][0]);
        inner[tt][1] = fmaf(xs.z, cf[1], inner[tt][1]);
        inner[tt][2] = fmaf(xs.x, cf[2], inner[tt][2]);
        inner[tt][3] = fmaf(xs.z, cf[3], inner[tt][3]);
      }
    }
#pragma unroll
    for (int tt = 0; tt < NT; ++tt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[tt][e] = fmaf(e < 2 ? d0 : d1, inner[tt][e], acc[tt][e]);
    }
  }
};

// Round 44 (kX, set_gemv_mma_stage_x): a super-block's x side staged beside its weights, as the
// global layout holds it: each tile's B fragments (kMmaTile·256 bytes), then each tile's scale pairs
// (512 bytes) and, for the K-quant minimums, each tile's tf32 pairs (512 bytes). x is written by the
// previous kernel, so the first stages' x is copied after the programmatic wait; through L1 (.ca),
// since the SM's other warps read the same super-blocks.
template <class T>
constexpr int x_stage_bytes() {  // one tile's
  return kMmaTile * kSuper + 512 + (T::kMins ? 512 : 0);
}

// Where a launch's sums go (round 52): up to kMaxGemvSegs weights of one type that read the same x
// (a layer's Q, K and V), blocks [first[g], first[g + 1]) on weight g (16 rows each, the last one
// ragged); or, with kPair, a SwiGLU's gate (w[0]) and up (w[1]) rows in each block, silu(gate)·up
// into out[0]. Token row r of weight g's output o at out[g][r · ldo[g] + o].
struct MmaOut {
  const uint8_t* w[kMaxGemvSegs];
  float* out[kMaxGemvSegs];
  const float* bias[kMaxGemvSegs];
  int64_t n[kMaxGemvSegs];
  int64_t ldo[kMaxGemvSegs];
  unsigned first[kMaxGemvSegs + 1];  // past the last weight: the grid's blocks
};

// Blocks of block_rows rows for weight g's n rows, after the others'; the unused weights' starts at
// the end. ldo: each weight's output stride (null: its rows).
inline MmaOut mma_out(const GemvSegs& s, const int64_t* ldo, int block_rows) {
  MmaOut o{};
  unsigned blocks = 0;
  for (int g = 0; g < kMaxGemvSegs; ++g) {
    o.first[g] = blocks;
    if (g >= s.count) continue;
    o.w[g] = static_cast<const uint8_t*>(s.w[g]), o.out[g] = s.out[g], o.bias[g] = s.bias[g], o.n[g] = s.rows[g];
    o.ldo[g] = ldo != nullptr ? ldo[g] : s.rows[g];
    blocks += unsigned((s.rows[g] + block_rows - 1) / block_rows);
  }
  o.first[kMaxGemvSegs] = blocks;
  return o;
}

}  // namespace vellum::cuda::mma_rows
