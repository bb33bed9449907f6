// Up to 16 token rows of Q8_0 / Q4_K / Q6_K weights on int8 tensor cores (gemv_mma.h, round 41;
// 8 until round 51).
//
// A block owns 16 weight rows and splits K over its KW warps by 256-element super-blocks (warp w
// takes super-blocks w, w + KW, ...); the warps' partial sums are added in warp order at the end.
// Each warp copies its super-blocks' weight pieces into a ring of stages of its own (cp.async).
// Lane (g, t) then reads, for each of a super-block's 8 sub-blocks, word t of rows g and g + 8,
// which is exactly its A fragment in the device layouts (DecQ4_KR: byte j of a sub-block holds
// element j and j + 16; DecQ8_0R: element j at byte j; DecQ6_KR as Q4_K plus 2 high bits), and its
// B fragment (token g's x at the same elements) with one 16-byte load per two sub-blocks from the
// fragment-ordered x. Each sub-block's int32 sums become floats with the batch-1 GEMV's terms:
//   Q8_0: d_w·d_x·Σqq;  Q4_K: d·sc·d_x·Σqq − dmin·m·(d_x·Σq_x);  Q6_K: d·d_x·(sc0·Σlo + sc1·Σhi),
// grouped (round 42) so that a super-block's d is applied once (Q4_K: d·Σ_s d_x·(sc·Σqq) with sc·Σqq
// an integer; Q6_K: d·Σ_s d_x·(...)) and Q4_K's minimums' terms are one tf32 mma.sync of the
// 6-bit minimums by d_x·Σq_x (in two tf32 parts). Round 42 cut a super-block's instructions from
// ~600 to ~330 (Q4_K), but the kernel waits, mostly for x's global loads at the start of each
// super-block (ncu, docs/cuda.md round 42): that alone changed its time by 0-4%; the launch shapes
// by weight shape (launch_type) gave 5-20%. Round 44 stages each super-block's x side in the warp's
// ring beside its weights (XStageCopy); with it, one stage a warp is the faster shape (launch_type).
// Round 51: NT tiles of 8 token columns (mma_tiles). A lane unpacks each weight fragment and scale
// once and multiplies it by every tile's B fragment, so 9..16 rows read the weights once, as 8 do;
// each tile's sums are added in the one-tile kernel's order, so a token's output does not depend on
// NT at a given launch shape.
// Round 52: a launch may cover up to three weights of one type that read the same x (a layer's Q, K
// and V: blocks by weight, MmaOut), or a SwiGLU pair (kPair: each block's gate rows, then its up
// rows, silu(gate)·up stored), every row summed as in a launch of its weight alone.

#include "backend/cuda/gemv_mma.h"

#include <cstdlib>
#include <type_traits>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/mma_s8.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"

namespace vellum::cuda {
namespace {

constexpr int kSuper = 256;  // K elements of a super-block (Q8_0: one repacked group of 8 blocks)
constexpr uint32_t kLo = 0x0F0F0F0Fu;

// Block (j, token): 256 threads quantize one super-block of one token row (zeros past `rows`) into
// the fragment order of gemv_mma.h (mma_x_vsb, mma_x_frag_byte, mma_x_scale_index) for nt tiles.
__global__ void quantize_mma_x_kernel(const float* x, int64_t ldx, int rows, int64_t k, int nt, uint8_t* xf) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * kSuper + threadIdx.x;
  const int token = int(blockIdx.y);
  quantize_mma_warp(token < rows ? x[token * ldx + i] : 0.0f, xf, token, i, k, nt);
}

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

// A lane's share of staging a super-block of the block's 16 rows: pieces i = lane + 32u (row i /
// kPieces, piece i % kPieces; past the stage's last piece, that piece again), rows past n the last
// row (re-read, dropped). Warp wk stages super-blocks wk + q·KW, with KW % 4 == 0: each piece's
// source then moves by q·(KW / 4)·kAdvance bytes, and its offsets are computed once.
template <class T, int KW>
struct StageCopy {
  static constexpr int kU = (16 * T::kPieces + 31) / 32, kLast = 16 * T::kPieces - 1;
  const uint8_t* base;  // the block's first row
  uint32_t off[kU];     // from base, for super-block wk
  uint32_t dst[kU];     // in a stage
  __device__ StageCopy(const uint8_t* w, size_t rb, int64_t n0, int64_t n, int wk, int lane) : base(w + n0 * rb) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = min(lane + 32 * u, kLast), r = i / T::kPieces, c = i % T::kPieces;
      off[u] = uint32_t((min(n0 + r, n - 1) - n0) * int64_t(rb) + T::piece(wk, c));
      dst[u] = uint32_t(r * T::kStride + 16 * c);
    }
  }
  // The q-th of the warp's super-blocks into the stage at shared address st.
  __device__ void fill(unsigned st, int q) const { fill_from(base, st, q); }
  // The same pieces of another weight of this shape whose block starts at `other` (kPair's up rows).
  __device__ void fill_from(const uint8_t* other, unsigned st, int q) const {
    const uint8_t* b = other + size_t(q) * (KW / 4) * T::kAdvance;
#pragma unroll
    for (int u = 0; u < kU; ++u) cp_async16_s(st + dst[u], b + off[u]);
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
template <class T, bool kX, int NT>
constexpr int stage_bytes() {
  return 16 * T::kStride + (kX ? NT * x_stage_bytes<T>() : 0);
}
template <class T, int NT>
struct XStageCopy {
  static constexpr int kU = NT * x_stage_bytes<T>() / 16 / 32;  // 16-byte pieces a lane
  static constexpr int kFragU = NT * kMmaTile * kSuper / 512;  // of them, the B fragments' (then NT of scales, NT of minimums)
  static_assert(x_stage_bytes<T>() % (16 * 32) == 0, "whole pieces a lane");
  const uint8_t *xb, *xs, *xm;  // this lane's piece of each part, super-block 0
  const unsigned lane16;
  // kv: the virtual k of NT tiles (k·NT)
  __device__ XStageCopy(const uint8_t* xf, int64_t kv, int lane)
      : xb(xf + 16 * lane), xs(xf + kMmaTile * kv + 16 * lane), xm(xf + mma_x_min_offset(kv) + 16 * lane), lane16(16u * lane) {}
  // Super-block j's x side (virtual super-blocks j·NT .. j·NT + NT − 1, consecutive in each part) into
  // the stage's x part at shared address st: piece lane + 32u each.
  __device__ void fill(unsigned st, int64_t j) const {
    const int64_t vj = j * NT;
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const uint8_t* src = u < kFragU       ? xb + vj * (kMmaTile * kSuper) + 512 * u
                           : u < kFragU + NT ? xs + vj * 512 + 512 * (u - kFragU)
                                             : xm + vj * 512 + 512 * (u - kFragU - NT);
      cp_async16_ca_s(st + lane16 + 512u * u, src);
    }
  }
};

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

template <int KW, int S, class T, bool kX, int NT, bool kPair>
constexpr int smem_bytes() {
  return KW * S * stage_bytes<T, kX, NT>() + (kPair ? 2 : 1) * KW * NT * 4 * 32 * int(sizeof(float));
}

// Each warp keeps up to S of its super-blocks in flight through a ring of S stages of its own (a
// warp barrier, no block barrier, between a stage's use and its refill). kPair: the block's gate
// rows, then its up rows, through the same ring (the up rows' first stages load during the gate's
// last), each summed as a launch of that weight alone sums it.
template <class T, int KW, int S, bool kX, int NT, bool kPair>
__global__ void __launch_bounds__(KW * 32) gemv_mma_kernel(const MmaOut o, size_t rb, int nsb, const uint8_t* __restrict__ xf,
                                                           int rows) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int lane = int(threadIdx.x & 31), wk = int(threadIdx.x / 32), g = lane / 4, t = lane % 4;
  // This block's weight (selects, not a run-time index into the parameter arrays).
  const int seg = kPair || blockIdx.x < o.first[1] ? 0 : blockIdx.x < o.first[2] ? 1 : 2;
  const uint8_t* w = seg == 0 ? o.w[0] : seg == 1 ? o.w[1] : o.w[2];
  const int64_t n = seg == 0 ? o.n[0] : seg == 1 ? o.n[1] : o.n[2];
  const int64_t n0 = int64_t(blockIdx.x - (seg == 0 ? o.first[0] : seg == 1 ? o.first[1] : o.first[2])) * 16;
  constexpr int kStage = stage_bytes<T, kX, NT>(), kW = 16 * T::kStride;  // a stage: weights, then x (kX)
  constexpr int kMats = kPair ? 2 : 1;
  uint8_t* ring = smem + wk * S * kStage;
  float* red = reinterpret_cast<float*>(smem + KW * S * kStage);
  const int mine = nsb > wk ? (nsb - wk + KW - 1) / KW : 0;  // super-blocks wk, wk + KW, ...
  const int total = kMats * mine;                              // stages: the gate's, then the up's (kPair)
  static_assert(KW % 4 == 0, "a warp's super-blocks keep their place in a group");
  const StageCopy<T, KW> copy(w, rb, n0, n, wk, lane);
  const uint8_t* up = kPair ? o.w[1] + n0 * int64_t(rb) : nullptr;
  const auto fill = [&](unsigned st, int qq) {  // stage qq of the warp's sequence
    if (kPair && qq >= mine) {
      copy.fill_from(up, st, qq - mine);
    } else {
      copy.fill(st, qq);
    }
  };
  const unsigned ring_s = static_cast<unsigned>(__cvta_generic_to_shared(ring));
#pragma unroll
  for (int q = 0; q < S; ++q) {  // weights are read-only: staged before the programmatic wait
    if (q < total) fill(ring_s + q * kStage, q);
    if (!kX) cp_async_commit();
  }
  pdl_wait();
  const int64_t kv = int64_t(nsb) * kSuper * NT;  // x's virtual k (gemv_mma.h, mma_x_vsb)
  const XStageCopy<T, NT> xcopy(xf, kv, lane);
  if constexpr (kX) {  // group q: stage q's x (group 0 also every stage's weights)
#pragma unroll
    for (int q = 0; q < S; ++q) {
      if (q < total) xcopy.fill(ring_s + q * kStage + kW, wk + int64_t(q % max(mine, 1)) * KW);
      cp_async_commit();
    }
  }
  const uint4* xb = reinterpret_cast<const uint4*>(xf) + lane;
  const float4* xsp = reinterpret_cast<const float4*>(xf + kMmaTile * kv) + t;
  const float4* xmp = reinterpret_cast<const float4*>(xf + mma_x_min_offset(kv)) + lane;
  float acc[kMats][NT][4] = {};
#pragma unroll
  for (int m = 0; m < kMats; ++m) {
    for (int q = 0; q < mine; ++q) {
      const int qq = m * mine + q;
      const int64_t j = wk + int64_t(q) * KW;
      cp_async_wait<S - 1>();
      __syncwarp();  // every lane's pieces of stage qq % S have landed
      const uint8_t* st = ring + (qq % S) * kStage;
      if constexpr (kX) {
        const uint8_t* xst = st + kW;
        constexpr int kFrag = NT * kMmaTile * kSuper;
        T::template step<NT>(st, g, j, t,
                             XSide{reinterpret_cast<const uint4*>(xst) + lane, reinterpret_cast<const float4*>(xst + kFrag) + t,
                                   reinterpret_cast<const float4*>(xst + kFrag + NT * 512) + lane},
                             acc[m]);
      } else {
        T::template step<NT>(st, g, j, t, XSide{xb + j * NT * 128, xsp + j * NT * 32, xmp + j * NT * 32}, acc[m]);
      }
      __syncwarp();  // and every lane has read them: the stage takes the warp's stage qq + S
      const int nq = qq + S;
      if (nq < total) {
        fill(ring_s + (qq % S) * kStage, nq);
        if constexpr (kX) xcopy.fill(ring_s + (qq % S) * kStage + kW, wk + int64_t(nq % mine) * KW);
      }
      cp_async_commit();
    }
  }
#pragma unroll
  for (int m = 0; m < kMats; ++m) {
#pragma unroll
    for (int tt = 0; tt < NT; ++tt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) red[((((m * KW) + wk) * NT + tt) * 4 + e) * 32 + lane] = acc[m][tt][e];
    }
  }
  __syncthreads();
  static_assert(KW >= NT, "a warp adds up each tile");
  if (wk >= NT) return;
  const int tt = wk;
  float* out = seg == 0 ? o.out[0] : seg == 1 ? o.out[1] : o.out[2];
  const float* bias = seg == 0 ? o.bias[0] : seg == 1 ? o.bias[1] : o.bias[2];
  const int64_t ldo = seg == 0 ? o.ldo[0] : seg == 1 ? o.ldo[1] : o.ldo[2];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    float v[kMats];
#pragma unroll
    for (int m = 0; m < kMats; ++m) {
      v[m] = red[((m * KW * NT + tt) * 4 + e) * 32 + lane];
#pragma unroll
      for (int q = 1; q < KW; ++q) v[m] += red[((((m * KW) + q) * NT + tt) * 4 + e) * 32 + lane];
    }
    const int64_t row = n0 + g + 8 * (e / 2);
    const int token = kMmaTile * tt + 2 * t + e % 2;
    if (row >= n || token >= rows) continue;
    if constexpr (kPair) {
      out[token * ldo + row] = mul(v[0] / (1.0f + expf(-v[0])), v[kMats - 1]);  // as swiglu_kernel
    } else {
      out[token * ldo + row] = bias != nullptr ? v[0] + bias[row] : v[0];
    }
  }
}

// set_gemv_mma_stage_x: -1 the default (staged; under round 42's shapes, where it won there:
// stage_x_r42), 0 never, 1 always; VELLUM_CUDA_MMA_STAGE_X sets the initial value.
int g_stage_x = [] {
  const char* e = std::getenv("VELLUM_CUDA_MMA_STAGE_X");
  return e != nullptr ? std::atoi(e) : -1;
}();
// Under round 42's shapes, where staging x won (H200, round 44 call 4, the kernel alone, µs): Q4_K
// every shape (14 336 x 4 096 15.2 -> 13.3, 4 096 x 14 336 16.0 -> 15.0); Q8_0 long rows (23.5 ->
// 20.9) and the wide shape (24.2 -> 23.0), not its 8 warps x 2 stages (4 096 x 4 096 8.4 -> 8.7); never
// Q6_K (14 336 x 4 096 28.9 -> 32.1): larger stages, fewer blocks an SM.
template <class T>
bool stage_x_r42(bool long_rows, bool wide) {
  if constexpr (std::is_same_v<T, MmaQ4K>) return true;
  if constexpr (std::is_same_v<T, MmaQ8_0>) return long_rows || wide;
  return false;
}

template <class T, int KW, int S, bool kX, int NT, bool kPair>
cudaError_t launch_shape_x(const MmaOut& o, int64_t k, const void* xf, int rows, cudaStream_t stream) {
  constexpr int kSmem = smem_bytes<KW, S, T, kX, NT, kPair>();
  static_assert(kSmem <= 227 * 1024, "a block's shared memory on sm_90");
  const auto kernel = gemv_mma_kernel<T, KW, S, kX, NT, kPair>;
  static const cudaError_t raised = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (raised != cudaSuccess) return raised;
  launch_kernel(kernel, o.first[kMaxGemvSegs], KW * 32, kSmem, stream, o, T::row_bytes(k), int(k / kSuper),
                static_cast<const uint8_t*>(xf), rows);
  return cudaGetLastError();
}
template <class T, int KW, int S, int NT, bool kPair>
cudaError_t launch_shape(const MmaOut& o, int64_t k, const void* xf, int rows, cudaStream_t stream, bool stage_x) {
  return stage_x ? launch_shape_x<T, KW, S, true, NT, kPair>(o, k, xf, rows, stream)
                 : launch_shape_x<T, KW, S, false, NT, kPair>(o, k, xf, rows, stream);
}

// Warps a block (KW) and super-blocks in flight a warp (S), with x staged (round 44, H200, call 6:
// the kernel alone at 8 rows at every shape, µs; KW·10 + S in brackets; tools/cuda/results/r44.txt):
//  - many short rows (at least 4 blocks of 16 rows an SM, at most 16 super-blocks): Q4_K and Q6_K
//    [41] (14 336 x 4 096: Q4_K 13.3, Q6_K 21.8 against round 42's 15.4 [42] and 28.4 [82], x loaded),
//    Q8_0 [81] (19.8 against 24.4 [43]);
//  - everything else [81]: 4 096 x 14 336 Q4_K 13.6, Q6_K 22.1, Q8_0 19.5 (round 42: 15.9 [161], 23.2
//    [161], 23.7 [82]); 4 096 x 4 096 5.8, 8.7, 7.4 (6.6, 10.5, 8.3 [82]); 1 024 x 4 096 even.
// A shape is a K split over the block's warps, whose partial sums are added in warp order: other
// shapes, other bits (each deterministic). VELLUM_CUDA_MMA_SHAPE=KW·10+S (41, 42, 43, 81, 82, 161):
// every launch at that shape; -1: round 42's rule (with stage_x_r42); both measurement knobs, read
// once.
int g_shape = [] {
  const char* e = std::getenv("VELLUM_CUDA_MMA_SHAPE");
  return e != nullptr ? std::atoi(e) : 0;
}();
// The launch shape (KW·10 + S) and x staging of a launch of `blocks` blocks of 16 rows, each
// nsb super-blocks long. The shape sets a row's bits; staging and S do not.
template <class T>
int shape_for(int64_t blocks, int64_t nsb, int sms, bool& x) {
  const bool long_rows = nsb > 16, wide = !long_rows && blocks >= 4 * int64_t(sms);
  const bool r42 = g_shape == -1;
  x = g_stage_x < 0 ? (!r42 || stage_x_r42<T>(long_rows, wide)) : g_stage_x > 0;
  switch (g_shape) {
    case 41: case 42: case 43: case 81: case 82: case 161: return g_shape;
    default: break;
  }
  if (r42) {  // round 42's rule: kLong / kWide by type, then 8 warps x 2 stages, then 16 x 1
    if (long_rows) return T::kLong;
    if (wide) return T::kWide;
    return blocks >= sms ? 82 : 161;
  }
  return wide && !std::is_same_v<T, MmaQ8_0> ? 41 : 81;
}
int shape_of(TensorType type, int64_t blocks, int64_t nsb, int sms) {
  bool x = false;
  if (type == TensorType::Q4_K) return shape_for<MmaQ4K>(blocks, nsb, sms, x);
  if (type == TensorType::Q6_K) return shape_for<MmaQ6K>(blocks, nsb, sms, x);
  return shape_for<MmaQ8_0>(blocks, nsb, sms, x);
}
template <class T, int NT, bool kPair>
cudaError_t launch_type(const MmaOut& o, int64_t k, const void* xf, int rows, int64_t blocks, int sms, cudaStream_t stream) {
  bool x = false;
  switch (shape_for<T>(blocks, k / kSuper, sms, x)) {
    case 41: return launch_shape<T, 4, 1, NT, kPair>(o, k, xf, rows, stream, x);
    case 42: return launch_shape<T, 4, 2, NT, kPair>(o, k, xf, rows, stream, x);
    case 43: return launch_shape<T, 4, 3, NT, kPair>(o, k, xf, rows, stream, x);
    case 82: return launch_shape<T, 8, 2, NT, kPair>(o, k, xf, rows, stream, x);
    case 161: return launch_shape<T, 16, 1, NT, kPair>(o, k, xf, rows, stream, x);
    default: return launch_shape<T, 8, 1, NT, kPair>(o, k, xf, rows, stream, x);
  }
}

// The launch of mma_tiles(rows) tiles; `blocks` (the shape's) of one weight for kPair, else all.
template <class T, bool kPair>
cudaError_t launch_tiles(const MmaOut& o, int64_t k, const void* xf, int rows, int64_t blocks, int sms, cudaStream_t stream) {
  if (mma_tiles(rows) == 1) return launch_type<T, 1, kPair>(o, k, xf, rows, blocks, sms, stream);
  return launch_type<T, 2, kPair>(o, k, xf, rows, blocks, sms, stream);
}
template <bool kPair>
cudaError_t launch_out(TensorType type, const MmaOut& o, int64_t k, const void* xf, int rows, int64_t blocks, int sms,
                       cudaStream_t stream) {
  if (type == TensorType::Q4_K) return launch_tiles<MmaQ4K, kPair>(o, k, xf, rows, blocks, sms, stream);
  if (type == TensorType::Q6_K) return launch_tiles<MmaQ6K, kPair>(o, k, xf, rows, blocks, sms, stream);
  return launch_tiles<MmaQ8_0, kPair>(o, k, xf, rows, blocks, sms, stream);
}

// Blocks of 16 rows for weight g's n rows, after the others'; the unused weights' starts at the end.
MmaOut mma_out(const GemvSegs& s, const int64_t* ldo) {
  MmaOut o{};
  unsigned blocks = 0;
  for (int g = 0; g < kMaxGemvSegs; ++g) {
    o.first[g] = blocks;
    if (g >= s.count) continue;
    o.w[g] = static_cast<const uint8_t*>(s.w[g]), o.out[g] = s.out[g], o.bias[g] = s.bias[g], o.n[g] = s.rows[g];
    o.ldo[g] = ldo != nullptr ? ldo[g] : s.rows[g];
    blocks += unsigned((s.rows[g] + 15) / 16);
  }
  o.first[kMaxGemvSegs] = blocks;
  return o;
}

}  // namespace

void set_gemv_mma_stage_x(int mode) { g_stage_x = mode; }
int gemv_mma_stage_x() { return g_stage_x; }

bool gemv_mma_supports(TensorType type, int64_t k) {
  return (type == TensorType::Q8_0 || type == TensorType::Q4_K || type == TensorType::Q6_K) && k > 0 && k % kSuper == 0;
}

// Per tile: kMmaTile token columns of int8 x, a scale pair for each column and 32-element block,
// then the minimums' pairs (two floats each).
size_t mma_x_bytes(int64_t k, int rows) {
  const int64_t kv = k * mma_tiles(rows);
  return size_t(mma_x_min_offset(kv)) + size_t(kv / 32) * kMmaTile * 2 * sizeof(float);
}

cudaError_t launch_quantize_mma_x(const float* x, int64_t ldx, int rows, int64_t k, void* xf, cudaStream_t stream) {
  if (rows < 1 || rows > kMmaRowsMax || k <= 0 || k % kSuper != 0) return cudaErrorInvalidValue;
  const int nt = mma_tiles(rows);
  launch_kernel(quantize_mma_x_kernel, dim3(unsigned(k / kSuper), unsigned(kMmaTile * nt)), kSuper, 0, stream, x, ldx, rows, k,
                nt, static_cast<uint8_t*>(xf));
  return cudaGetLastError();
}

cudaError_t launch_gemv_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* xf, int rows, float* out,
                            int64_t ldo, const float* bias, int sms, cudaStream_t stream) {
  if (!gemv_mma_supports(type, k) || n <= 0 || rows < 1 || rows > kMmaRowsMax) return cudaErrorInvalidValue;
  GemvSegs s;
  s.add(w, n, out, bias);
  return launch_out<false>(type, mma_out(s, &ldo), k, xf, rows, (n + 15) / 16, sms, stream);
}

bool gemv_mma_segs_supports(TensorType type, const GemvSegs& s, int64_t k, int sms) {
  if (!gemv_mma_supports(type, k) || s.count < 1 || s.count > kMaxGemvSegs) return false;
  int64_t blocks = 0;
  for (int g = 0; g < s.count; ++g) blocks += (s.rows[g] + 15) / 16;
  const int shape = shape_of(type, blocks, k / kSuper, sms);
  for (int g = 0; g < s.count; ++g) {
    if (s.rows[g] <= 0 || shape_of(type, (s.rows[g] + 15) / 16, k / kSuper, sms) != shape) return false;
  }
  return true;
}

cudaError_t launch_gemv_mma_segs(TensorType type, const GemvSegs& s, int64_t k, const void* xf, int rows, int sms,
                                 cudaStream_t stream) {
  if (!gemv_mma_segs_supports(type, s, k, sms) || rows < 1 || rows > kMmaRowsMax) return cudaErrorInvalidValue;
  const MmaOut o = mma_out(s, nullptr);
  return launch_out<false>(type, o, k, xf, rows, o.first[kMaxGemvSegs], sms, stream);
}

cudaError_t launch_gemv_mma_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* xf,
                                   int rows, float* out, int sms, cudaStream_t stream) {
  if (!gemv_mma_supports(type, k) || n <= 0 || rows < 1 || rows > kMmaRowsMax) return cudaErrorInvalidValue;
  GemvSegs s;
  s.add(gate, n, out, nullptr);
  s.add(up, n, out, nullptr);
  MmaOut o = mma_out(s, nullptr);
  o.first[1] = o.first[2] = o.first[kMaxGemvSegs] = unsigned((n + 15) / 16);  // every block: gate and up rows
  return launch_out<true>(type, o, k, xf, rows, (n + 15) / 16, sms, stream);
}

}  // namespace vellum::cuda
