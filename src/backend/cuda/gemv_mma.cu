// Up to 8 token rows of Q8_0 / Q4_K / Q6_K weights on int8 tensor cores (gemv_mma.h, round 41).
//
// A block owns 16 weight rows and splits K over its KW warps by 256-element super-blocks (warp w
// takes super-blocks w, w + KW, ...); the warps' partial sums are added in warp order at the end.
// Each warp copies its super-blocks' weight pieces into a ring of stages of its own (cp.async).
// Lane (g, t) then reads, for each of a super-block's 8 sub-blocks, word t of rows g and g + 8,
// which is exactly its A fragment in the device layouts (DecQ4_KR: byte j of a sub-block holds
// element j and j + 16; DecQ8_0R: element j at byte j; DecQ6_KR as Q4_K plus 2 high bits), and its
// B fragment (token g's x at the same elements) with one 16-byte load per two sub-blocks from the
// fragment-ordered x. Each sub-block's int32 sums become floats with the batch-1 GEMV's terms:
//   Q8_0: d_w·d_x·Σqq;  Q4_K: d·sc·d_x·Σqq − dmin·m·(d_x·Σq_x);  Q6_K: d·d_x·(sc0·Σlo + sc1·Σhi).

#include "backend/cuda/gemv_mma.h"

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
// the fragment order of gemv_mma.h (mma_x_frag_byte, mma_x_scale_index).
__global__ void quantize_mma_x_kernel(const float* x, int64_t ldx, int rows, int64_t k, uint8_t* xf) {
  pdl_wait();
  const int64_t j = blockIdx.x;
  const int token = int(blockIdx.y), e = int(threadIdx.x);
  const float v = token < rows ? x[token * ldx + j * kSuper + e] : 0.0f;
  float2* xs = reinterpret_cast<float2*>(xf + kMmaRowsMax * k);
  quantize_q8_warp(v, reinterpret_cast<int8_t*>(xf + mma_x_frag_byte(j, token, e)), xs + mma_x_scale_index(j, token, e / 32));
}

__device__ __forceinline__ uint32_t lds32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ uint4 lds128(const uint8_t* p) { return *reinterpret_cast<const uint4*>(p); }
// 2^23 + byte i of w as a float: d·(that) − d·2^23 in one FMA is d·byte exactly rounded.
__device__ __forceinline__ float magic_byte(uint32_t w, int i) { return __int_as_float(__byte_perm(w, 0x4B000000u, 0x7540 + i)); }
__device__ __forceinline__ float times_byte(float d, float nd23, uint32_t w, int i) { return fmaf(d, magic_byte(w, i), nd23); }
// float(c) for |c| < 2^22 without the quarter-rate I2F.
__device__ __forceinline__ float small_f(int c) { return __int_as_float(0x4B400000 + c) - 12582912.0f; }

// acc (row g × tokens 2t, 2t+1, then row g+8 × the same) += the sub-block's terms; w0 / w1: the
// rows' weight scale factors, m0 / m1 their minimums (K-quants) or zero.
__device__ __forceinline__ void add_terms(float (&acc)[4], const float (&c)[4], float w0, float w1, float m0, float m1,
                                          const float4& xs) {
  acc[0] = fmaf(w0 * xs.x, c[0], acc[0]);
  acc[1] = fmaf(w0 * xs.z, c[1], acc[1]);
  acc[2] = fmaf(w1 * xs.x, c[2], acc[2]);
  acc[3] = fmaf(w1 * xs.z, c[3], acc[3]);
  acc[0] = fmaf(-m0, xs.y, acc[0]);
  acc[1] = fmaf(-m0, xs.w, acc[1]);
  acc[2] = fmaf(-m1, xs.y, acc[2]);
  acc[3] = fmaf(-m1, xs.w, acc[3]);
}

// The x side of sub-block s of a super-block: lane (g, t)'s B fragment (b0, b1) and the scale pairs
// of tokens 2t, 2t + 1 (xb, xs: the super-block's, already offset by the lane).
struct XSide {
  const uint4* xb;
  const float4* xs;
  __device__ uint2 b(int s) const {
    const uint4 v = xb[(s / 2) * 32];
    return s % 2 ? make_uint2(v.z, v.w) : make_uint2(v.x, v.y);
  }
  __device__ float4 scales(int s) const { return xs[s * 4]; }
};

// Each type: a super-block of a row staged as kPieces 16-byte pieces (piece: where piece c of
// super-block j lies in the device row) at kStride bytes a row (strides ≡ 4·odd words mod 32: the
// lanes' word loads hit 32 banks); step adds the super-block's terms of rows g, g + 8 (st: the
// stage) to acc, each sub-block's fragments read where they are used.
struct MmaQ4K {  // header, then the 128 quant bytes (DecQ4_KR)
  static constexpr int kPieces = 9, kStride = 144;
  static size_t row_bytes(int64_t k) { return DecQ4_KR::repacked_row_bytes(k); }
  __device__ static int64_t piece(int64_t j, int c) {
    const int64_t g = (j / 4) * DecQ4_KR::kGroupBytes;
    return c == 0 ? g + 16 * (j % 4) : g + DecQ4_KR::kQuantOff + 128 * (j % 4) + 16 * (c - 1);
  }
  __device__ static void step(const uint8_t* st, int g, int64_t, int t, const XSide& x, float (&acc)[4]) {
    const uint8_t* row[2] = {st + g * kStride, st + (g + 8) * kStride};
    float d[2], nd[2], dm[2], ndm[2];
    uint32_t sc[2][2], mn[2][2];  // 6-bit scales / minimums of sub-blocks 0..3 and 4..7, a byte each
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const uint4 h = lds128(row[i]);  // d, dmin, 12 bytes of 6-bit scales and minimums
      d[i] = f16_lo(h.x), dm[i] = f16_hi(h.x);
      nd[i] = -d[i] * 8388608.0f, ndm[i] = -dm[i] * 8388608.0f;
      sc[i][0] = h.y & 0x3F3F3F3Fu;
      sc[i][1] = (h.w & kLo) | ((h.y >> 2) & 0x30303030u);
      mn[i][0] = h.z & 0x3F3F3F3Fu;
      mn[i][1] = ((h.w >> 4) & kLo) | ((h.z >> 2) & 0x30303030u);
    }
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const uint32_t q0 = lds32(row[0] + 16 + 16 * s + 4 * t), q1 = lds32(row[1] + 16 + 16 * s + 4 * t);
      const uint2 b = x.b(s);
      int c[4];
      mma_k32(q0 & kLo, q1 & kLo, (q0 >> 4) & kLo, (q1 >> 4) & kLo, b.x, b.y, c);
      const float cf[4] = {small_f(c[0]), small_f(c[1]), small_f(c[2]), small_f(c[3])};
      const int h = s / 4, y = s % 4;
      add_terms(acc, cf, times_byte(d[0], nd[0], sc[0][h], y), times_byte(d[1], nd[1], sc[1][h], y),
                times_byte(dm[0], ndm[0], mn[0][h], y), times_byte(dm[1], ndm[1], mn[1][h], y), x.scales(s));
    }
  }
};

struct MmaQ8_0 {  // the 8 f16 scales, then 8 × 32 int8 (DecQ8_0R)
  static constexpr int kPieces = 17, kStride = 272;
  static size_t row_bytes(int64_t k) { return DecQ8_0R::repacked_row_bytes(k); }
  __device__ static int64_t piece(int64_t j, int c) { return j * DecQ8_0R::kGroupBytes + 16 * c; }
  __device__ static void step(const uint8_t* st, int g, int64_t, int t, const XSide& x, float (&acc)[4]) {
    const uint8_t* row[2] = {st + g * kStride, st + (g + 8) * kStride};
    const uint4 d0 = lds128(row[0]), d1 = lds128(row[1]);
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const uint8_t* q0 = row[0] + 16 + 32 * s + 4 * t;
      const uint8_t* q1 = row[1] + 16 + 32 * s + 4 * t;
      const uint2 b = x.b(s);
      int c[4];
      mma_k32(lds32(q0), lds32(q1), lds32(q0 + 16), lds32(q1 + 16), b.x, b.y, c);
      const float cf[4] = {small_f(c[0]), small_f(c[1]), small_f(c[2]), small_f(c[3])};
      const uint32_t w0 = (&d0.x)[s / 2], w1 = (&d1.x)[s / 2];
      add_terms(acc, cf, s % 2 ? f16_hi(w0) : f16_lo(w0), s % 2 ? f16_hi(w1) : f16_lo(w1), 0.0f, 0.0f, x.scales(s));
    }
  }
};

struct MmaQ6K {  // 128 low-bit bytes, 64 high-bit bytes, 16 int8 sub-scales, the group's 4 f16 d (DecQ6_KR)
  static constexpr int kPieces = 14, kStride = 240;
  static size_t row_bytes(int64_t k) { return DecQ6_KR::repacked_row_bytes(k); }
  __device__ static int64_t piece(int64_t j, int c) {
    const int64_t g = (j / 4) * DecQ6_KR::kGroupBytes;
    const int b = int(j % 4);
    if (c < 8) return g + 128 * b + 16 * c;
    if (c < 12) return g + DecQ6_KR::kQhOff + 64 * b + 16 * (c - 8);
    return c == 12 ? g + DecQ6_KR::kScOff + 16 * b : g + DecQ6_KR::kDOff;
  }
  __device__ static void step(const uint8_t* st, int g, int64_t j, int t, const XSide& x, float (&acc)[4]) {
    const uint8_t* row[2] = {st + g * kStride, st + (g + 8) * kStride};
    const float d0 = ld_f16(row[0] + 208 + 2 * (j % 4)), d1 = ld_f16(row[1] + 208 + 2 * (j % 4));
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
      const uint2 b = x.b(s);
      int cl[4], ch[4];
      mma_k16(lo[0], lo[1], b.x, cl);
      mma_k16(hi[0], hi[1], b.y, ch);
      // |sum| < 2·128·16·32·127: past small_f's range, so the conversion instruction
      const float cf[4] = {__int2float_rn(cl[0] * sa[0] + ch[0] * sb[0]), __int2float_rn(cl[1] * sa[0] + ch[1] * sb[0]),
                           __int2float_rn(cl[2] * sa[1] + ch[2] * sb[1]), __int2float_rn(cl[3] * sa[1] + ch[3] * sb[1])};
      add_terms(acc, cf, d0, d1, 0.0f, 0.0f, x.scales(s));
    }
  }
};

// Warp `lane`'s share of staging super-block j of the block's 16 rows (rows past n: the last, dropped).
template <class T>
__device__ __forceinline__ void stage_rows(uint8_t* st, const uint8_t* w, size_t rb, int64_t n0, int64_t n, int64_t j, int lane) {
  for (int i = lane; i < 16 * T::kPieces; i += 32) {
    const int r = i / T::kPieces, c = i % T::kPieces;
    cp_async16(st + r * T::kStride + 16 * c, w + min(n0 + r, n - 1) * rb + T::piece(j, c));
  }
}

template <int KW, int S, class T>
constexpr int smem_bytes() {
  return KW * S * 16 * T::kStride + KW * 4 * 32 * int(sizeof(float));
}

// Each warp keeps S - 1 of its super-blocks in flight through a ring of S stages of its own (a
// warp barrier, no block barrier, between a stage's use and its refill).
template <class T, int KW, int S>
__global__ void __launch_bounds__(KW * 32) gemv_mma_kernel(const uint8_t* __restrict__ w, size_t rb, int64_t n, int nsb,
                                                           const uint8_t* __restrict__ xf, int64_t xs_off, int rows,
                                                           float* __restrict__ out, int64_t ldo, const float* __restrict__ bias) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int lane = int(threadIdx.x & 31), wk = int(threadIdx.x / 32), g = lane / 4, t = lane % 4;
  const int64_t n0 = int64_t(blockIdx.x) * 16;
  constexpr int kStage = 16 * T::kStride;
  uint8_t* ring = smem + wk * S * kStage;
  float* red = reinterpret_cast<float*>(smem + KW * S * kStage);
  const int mine = nsb > wk ? (nsb - wk + KW - 1) / KW : 0;  // super-blocks wk, wk + KW, ...
#pragma unroll
  for (int q = 0; q < S - 1; ++q) {  // weights are read-only: staged before the programmatic wait
    if (q < mine) stage_rows<T>(ring + q * kStage, w, rb, n0, n, wk + int64_t(q) * KW, lane);
    cp_async_commit();
  }
  pdl_wait();
  const uint4* xb = reinterpret_cast<const uint4*>(xf) + lane;
  const float4* xsp = reinterpret_cast<const float4*>(xf + xs_off) + t;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int q = 0; q < mine; ++q) {
    const int64_t j = wk + int64_t(q) * KW;
    cp_async_wait<S - 2>();
    __syncwarp();  // every lane's pieces of stage q have landed; the stage refilled below (read in the
                   // last iteration) is free for every lane
    if (q + S - 1 < mine) stage_rows<T>(ring + ((q + S - 1) % S) * kStage, w, rb, n0, n, j + int64_t(S - 1) * KW, lane);
    cp_async_commit();
    T::step(ring + (q % S) * kStage, g, j, t, XSide{xb + j * 128, xsp + j * 32}, acc);
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) red[(wk * 4 + e) * 32 + lane] = acc[e];
  __syncthreads();
  if (wk != 0) return;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    float v = red[e * 32 + lane];
#pragma unroll
    for (int q = 1; q < KW; ++q) v += red[(q * 4 + e) * 32 + lane];
    const int64_t row = n0 + g + 8 * (e / 2);
    const int token = 2 * t + e % 2;
    if (row < n && token < rows) out[token * ldo + row] = bias != nullptr ? v + bias[row] : v;
  }
}

template <class T, int KW, int S>
cudaError_t launch_shape(const void* w, int64_t n, int64_t k, const void* xf, int rows, float* out, int64_t ldo,
                         const float* bias, cudaStream_t stream) {
  const auto kernel = gemv_mma_kernel<T, KW, S>;
  constexpr int kSmem = smem_bytes<KW, S, T>();
  static const cudaError_t raised = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (raised != cudaSuccess) return raised;
  launch_kernel(kernel, unsigned((n + 15) / 16), KW * 32, kSmem, stream, static_cast<const uint8_t*>(w), T::row_bytes(k), n,
                int(k / kSuper), static_cast<const uint8_t*>(xf), kMmaRowsMax * k, rows, out, ldo, bias);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_type(const void* w, int64_t n, int64_t k, const void* xf, int rows, float* out, int64_t ldo,
                        const float* bias, int sms, cudaStream_t stream) {
  // 8 warps a block where that gives 2 blocks an SM, else 16 (fewer weight rows: more warps share
  // a row's K). Measured (H200, round 41, kernel alone; call 4 forced them through a knob since
  // removed): 2 or 4 warps a block, which keep every block resident at once, were slower (Q4_K
  // 14 336 x 4 096: 21.4 / 19.6 against 17.8 us).
  const int64_t blocks = (n + 15) / 16;
  if (blocks >= 2 * int64_t(sms)) return launch_shape<T, 8, 3>(w, n, k, xf, rows, out, ldo, bias, stream);
  return launch_shape<T, 16, 2>(w, n, k, xf, rows, out, ldo, bias, stream);
}

}  // namespace

bool gemv_mma_supports(TensorType type, int64_t k) {
  return (type == TensorType::Q8_0 || type == TensorType::Q4_K || type == TensorType::Q6_K) && k > 0 && k % kSuper == 0;
}

// kMmaRowsMax token columns of int8 x, then a scale pair for each column and 32-element block.
size_t mma_x_bytes(int64_t k) { return size_t(k) * kMmaRowsMax + size_t(k / 32) * kMmaRowsMax * sizeof(float2); }

cudaError_t launch_quantize_mma_x(const float* x, int64_t ldx, int rows, int64_t k, void* xf, cudaStream_t stream) {
  if (rows < 1 || rows > kMmaRowsMax || k <= 0 || k % kSuper != 0) return cudaErrorInvalidValue;
  launch_kernel(quantize_mma_x_kernel, dim3(unsigned(k / kSuper), unsigned(kMmaRowsMax)), kSuper, 0, stream, x, ldx, rows, k,
                static_cast<uint8_t*>(xf));
  return cudaGetLastError();
}

cudaError_t launch_gemv_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* xf, int rows, float* out,
                            int64_t ldo, const float* bias, int sms, cudaStream_t stream) {
  if (!gemv_mma_supports(type, k) || n <= 0 || rows < 1 || rows > kMmaRowsMax) return cudaErrorInvalidValue;
  if (type == TensorType::Q4_K) return launch_type<MmaQ4K>(w, n, k, xf, rows, out, ldo, bias, sms, stream);
  if (type == TensorType::Q6_K) return launch_type<MmaQ6K>(w, n, k, xf, rows, out, ldo, bias, sms, stream);
  return launch_type<MmaQ8_0>(w, n, k, xf, rows, out, ldo, bias, sms, stream);
}

}  // namespace vellum::cuda
