// Int8 tensor-core matmul for quantized weights at two or more token rows (mmq.h).
//
// One thread block computes a BM (weight rows) × BN (token rows) tile of out^T. K is walked in
// steps of 256 elements (one K-quant super-block, one repacked Q8_0 group): each step's raw weight
// bytes and int8 x bytes go to shared memory by cp.async through a ring of STAGES buffers, so
// several steps' loads are in flight while the tensor cores work on an earlier one. Warps read
// weight fragments straight from the raw bytes (Q4_K nibbles masked, Q6_K's 4+2 bits joined and
// biased by −32), multiply them with x by mma.sync (A = weight rows, B = token rows) and scale each
// 32-element block's int32 sum into f32 accumulators:
//   acc += (d_w · d_x) · Σ q_w q_x − m_w · (d_x · Σ q_x)          (the second term: K-quant minimums)
// Q6_K's two 16-element scales are small integers: two m16n8k16 sums are combined in int32 first.

#include "backend/cuda/mmq.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/warp_reduce.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/mma_s8.cuh"
#include "backend/cuda/mma_tile_store.cuh"
#include "backend/cuda/pdl.cuh"

namespace vellum::cuda {
namespace {

constexpr int kStep = 256;                // K elements per pipeline step
constexpr int kXBytes = kStep + 8 * 8;    // x over one step: 256 int8, then 8 float2 (d, d·Σq)
constexpr int kXStride = kXBytes + 16;    // 84 words in shared memory: B fragment reads hit 32 banks
constexpr int kScaleStride = 9;           // float2 per staged weight row (8 used): conflict-free reads
constexpr int kMaxSmem = 227 * 1024;      // sm_90 opt-in shared memory per block

// ---- x: int8 per 32 elements, stored per (row, step) as the kernel stages it --------------------
// Same rounding as quantize_x_q8_kernel (cuda_kernels.cu): scale amax/127, round to nearest.
__global__ void mmq_quantize_x_kernel(const float* x, int64_t k, uint8_t* xq) {
  pdl_wait();
  const int64_t row = blockIdx.y, col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= k) return;  // k is a multiple of 256: whole warps leave together
  const float v = x[row * k + col];
  float amax = fabsf(v);
#pragma unroll
  for (int o = 16; o > 0; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(kFull, amax, o));
  const float d = amax / 127.0f;
  const int q = amax == 0.0f ? 0 : __float2int_rn(v / d);
  const int sum = __reduce_add_sync(kFull, q);
  uint8_t* blk = xq + (row * (k / kStep) + col / kStep) * kXBytes;
  blk[col % kStep] = static_cast<uint8_t>(static_cast<int8_t>(q));
  if ((threadIdx.x & 31) == 0) reinterpret_cast<float2*>(blk + kStep)[(col % kStep) / 32] = make_float2(d, d * float(sum));
}

// ---- weight types: one 256-element step of a row as staged, its int8 words and block scales -----
// word(r, s, wi): elements 4wi..4wi+3 of 32-element sub-block s as 4 int8 (little-endian).
// scale(r, s): (d, m) with value = d·q − m for Q8_0/Q4_K; Q6_K: (d, two int8 sub-scales packed).
__device__ __forceinline__ uint32_t ld32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

struct MmqQ8_0 {  // DecQ8_0R's group: 8 f16 scales, then 8 × 32 int8
  static constexpr int kRaw = 272, kStride = 272;  // 68 words ≡ 4 (mod 32): conflict-free
  static constexpr bool kMin = false, kHalves = false;
  static constexpr size_t row_bytes(int64_t k) { return size_t(k / kStep) * kRaw; }
  __device__ static uint32_t word(const uint8_t* r, int s, int wi) { return ld32(r + 16 + 32 * s + 4 * wi); }
  __device__ static float2 scale(const uint8_t* r, int s) { return make_float2(ld_f16(r + 2 * s), 0.0f); }
};
struct MmqQ4_K {  // a step staged as GGUF's block order: header (d, dmin, 12 bytes of 6-bit scales/mins),
                  // then DecQ4_KR's 128 quant bytes (sub-block s: bytes 16s.., elements j and j + 16)
  static constexpr int kRaw = 144, kStride = 144;  // 36 words ≡ 4 (mod 32)
  static constexpr bool kMin = true, kHalves = false;
  static constexpr size_t row_bytes(int64_t k) { return DecQ4_KR::repacked_row_bytes(k); }
  // Byte offset in the device row of the step's 16-byte piece c (0: header, 1..8: quants).
  __device__ static int64_t piece(int ks, int c) {
    const int64_t g = int64_t(ks / 4) * DecQ4_KR::kGroupBytes;
    return c == 0 ? g + 16 * (ks % 4) : g + DecQ4_KR::kQuantOff + 128 * (ks % 4) + 16 * (c - 1);
  }
  __device__ static uint32_t word(const uint8_t* r, int s, int wi) {
    return (ld32(r + 16 + 16 * s + 4 * (wi & 3)) >> (wi >= 4 ? 4 : 0)) & 0x0F0F0F0Fu;
  }
  __device__ static float2 scale(const uint8_t* r, int s) {
    int sc, m;
    scale_min_k4(s, r + 4, sc, m);
    return make_float2(mul(ld_f16(r), float(sc)), mul(ld_f16(r + 2), float(m)));
  }
};
struct MmqQ6_K {  // a step staged from DecQ6_KR's group: ql[128] (sub-block s at 16s), qh[64] (at 128 +
                  // 8s), int8 scales[16] (at 192), the group's 4 f16 d (at 208, this step's at 2(ks % 4))
  static constexpr int kRaw = 224, kStride = 240;  // 60 words ≡ 28 (mod 32): conflict-free
  static constexpr bool kMin = false, kHalves = true;
  static constexpr size_t row_bytes(int64_t k) { return DecQ6_KR::repacked_row_bytes(k); }
  __device__ static int64_t piece(int ks, int c) {
    const int64_t g = int64_t(ks / 4) * DecQ6_KR::kGroupBytes;
    const int b4 = ks % 4;
    if (c < 8) return g + 128 * b4 + 16 * c;
    if (c < 12) return g + DecQ6_KR::kQhOff + 64 * b4 + 16 * (c - 8);
    return c == 12 ? g + DecQ6_KR::kScOff + 16 * b4 : g + DecQ6_KR::kDOff;
  }
  __device__ static uint32_t word(const uint8_t* r, int s, int wi) {
    const int w = wi & 3;
    const uint32_t ql = ld32(r + 16 * s + 4 * w), qh = ld32(r + 128 + 8 * s + 4 * (wi >> 2));
    const uint32_t lo = (wi < 4 ? ql : ql >> 4) & 0x0F0F0F0Fu;
    return __vsub4(lo | DecQ6_KR::hi2(qh, w), 0x20202020u);  // 0..63 -> -32..31 per byte
  }
  __device__ static float2 scale(const uint8_t* r, int s, int ks) {
    const int lo = int(int8_t(r[192 + 2 * s])), hi = int(int8_t(r[192 + 2 * s + 1]));
    return make_float2(ld_f16(r + 208 + 2 * (ks % 4)), __uint_as_float((uint32_t(lo) & 0xFFFFu) | (uint32_t(hi) << 16)));
  }
};

struct MmqQ5_K {  // d, dmin, 12 bytes of 6-bit scales/mins, qh[32], qs[128]
  static constexpr int kRaw = 176, kStride = 176;  // 44 words ≡ 12 (mod 32): conflict-free
  static constexpr bool kMin = true, kHalves = false;
  static constexpr size_t row_bytes(int64_t k) { return size_t(k / kStep) * kRaw; }
  __device__ static uint32_t word(const uint8_t* r, int s, int wi) {
    const int cc = s / 2, up = s & 1;
    const uint32_t lo = (ld32(r + 48 + 32 * cc + 4 * wi) >> (4 * up)) & 0x0F0F0F0Fu;
    const uint32_t hi = ((ld32(r + 16 + 4 * wi) >> (2 * cc + up)) & 0x01010101u) << 4;
    return lo | hi;
  }
  __device__ static float2 scale(const uint8_t* r, int s) { return MmqQ4_K::scale(r, s); }
};
// Legacy 32-element blocks, 8 per step; blocks are 2-byte aligned, so words are read as halves.
__device__ __forceinline__ uint32_t ld32_halves(const uint8_t* p) {
  const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
  return uint32_t(h[0]) | (uint32_t(h[1]) << 16);
}
struct MmqQ4_0 {  // per block: f16 d, 16 bytes (element l: low nibble of byte l, l+16: high nibble)
  static constexpr int kRaw = 8 * 18, kStride = kRaw;  // 144
  static constexpr bool kMin = false, kHalves = false;
  static constexpr size_t row_bytes(int64_t k) { return size_t(k / kStep) * kRaw; }
  __device__ static uint32_t word(const uint8_t* r, int s, int wi) {
    const uint32_t q = (ld32_halves(r + 18 * s + 2 + 4 * (wi & 3)) >> (wi >= 4 ? 4 : 0)) & 0x0F0F0F0Fu;
    return __vsub4(q, 0x08080808u);  // q - 8
  }
  __device__ static float2 scale(const uint8_t* r, int s) { return make_float2(ld_f16(r + 18 * s), 0.0f); }
};
struct MmqQ5_0 {  // per block: f16 d, 32 high bits, 16 bytes of nibbles as Q4_0
  static constexpr int kRaw = 8 * 22, kStride = kRaw;  // 176
  static constexpr bool kMin = false, kHalves = false;
  static constexpr size_t row_bytes(int64_t k) { return size_t(k / kStep) * kRaw; }
  __device__ static uint32_t word(const uint8_t* r, int s, int wi) {
    const uint8_t* b = r + 22 * s;
    const uint32_t lo = (ld32_halves(b + 6 + 4 * (wi & 3)) >> (wi >= 4 ? 4 : 0)) & 0x0F0F0F0Fu;
    const uint32_t hb = (ld32_halves(b + 2) >> (4 * wi)) & 0xFu;  // high bits of elements 4wi..4wi+3
    const uint32_t hi = ((hb & 1u) << 4) | ((hb & 2u) << 11) | ((hb & 4u) << 18) | ((hb & 8u) << 25);
    return __vsub4(lo | hi, 0x10101010u);  // q - 16
  }
  __device__ static float2 scale(const uint8_t* r, int s) { return make_float2(ld_f16(r + 22 * s), 0.0f); }
};

// Byte offset in a device row of 16-byte piece c of step ks: contiguous steps, except Q4_K's groups.
template <class T>
__device__ __forceinline__ int64_t step_piece(int ks, int c) {
  if constexpr (std::is_same_v<T, MmqQ4_K> || std::is_same_v<T, MmqQ6_K>) {
    return T::piece(ks, c);
  } else {
    return int64_t(ks) * T::kRaw + 16 * c;
  }
}
// Scales of sub-block s of staged step ks (Q6_K's d sits in a piece shared by the group's 4 steps).
template <class T>
__device__ __forceinline__ float2 step_scale(const uint8_t* r, int s, int ks) {
  if constexpr (std::is_same_v<T, MmqQ6_K>) {
    return T::scale(r, s, ks);
  } else {
    return T::scale(r, s);
  }
}

// ---- PTX helpers --------------------------------------------------------------------------------
// float(c) for |c| < 2^22 without the quarter-rate I2F: 1.5·2^23 + c has c in its low mantissa bits.
__device__ __forceinline__ float small_i2f(int c) { return __int_as_float(0x4B400000 + c) - 12582912.0f; }

// Warps: WARPS_M × WARPS_N over the output tile, each MT × NT mma tiles (16 weight rows × 8
// tokens); WARPS_K warps share each output tile and split a step's 8 sub-blocks (their partial sums
// are added in a fixed order at the end). More warps per SM hide the latency of the
// load → mma → scale chain, which a single warp per scheduler cannot (measured, docs/cuda.md).
template <class T, int WARPS_M, int WARPS_N, int WARPS_K, int MT, int NT, int STAGES>
__global__ void __launch_bounds__(WARPS_M* WARPS_N* WARPS_K * 32)
    mmq_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int64_t n, int64_t k, const uint8_t* __restrict__ xq,
               int64_t m, float* __restrict__ out, int64_t ldo, const float* __restrict__ bias) {
  pdl_wait();
  constexpr int kThreads = WARPS_M * WARPS_N * WARPS_K * 32;
  constexpr int BM = WARPS_M * MT * 16, BN = WARPS_N * NT * 8;
  constexpr int kStageW = BM * T::kStride, kStageBytes = kStageW + BN * kXStride;
  extern __shared__ __align__(16) uint8_t smem[];
  float2* wsc = reinterpret_cast<float2*>(smem + STAGES * kStageBytes);  // [BM][kScaleStride]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;
  const int wm = warp % WARPS_M, wn = (warp / WARPS_M) % WARPS_N, wk = warp / (WARPS_M * WARPS_N);
  const int64_t m0 = int64_t(blockIdx.x) * BN, n0 = int64_t(blockIdx.y) * BM;
  const int steps = static_cast<int>(k / kStep);
  const int64_t x_row_bytes = int64_t(steps) * kXBytes;

  // Rows past n or m re-read the last valid row (their results are not stored).
  const auto load_stage = [&](int st, int ks) {
    uint8_t* sw = smem + st * kStageBytes;
    uint8_t* sx = sw + kStageW;
    constexpr int kWc = T::kRaw / 16, kXc = kXBytes / 16;
    for (int i = tid; i < BM * kWc + BN * kXc; i += kThreads) {
      if (i < BM * kWc) {
        const int r = i / kWc, c = i % kWc;
        const int64_t row = min(n0 + r, n - 1);
        cp_async16(sw + r * T::kStride + 16 * c, w + row * int64_t(row_bytes) + step_piece<T>(ks, c));
      } else {
        const int j = i - BM * kWc, r = j / kXc, c = j % kXc;
        const int64_t row = min(m0 + r, m - 1);
        cp_async16(sx + r * kXStride + 16 * c, xq + row * x_row_bytes + int64_t(ks) * kXBytes + 16 * c);
      }
    }
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
  for (int st = 0; st < STAGES - 1; ++st) {
    if (st < steps) load_stage(st, st);
    cp_async_commit();
  }
  for (int ks = 0; ks < steps; ++ks) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // step ks has landed for every thread; step ks-1's buffer and scales are free
    const int next = ks + STAGES - 1;
    if (next < steps) load_stage(next % STAGES, next);
    cp_async_commit();
    const uint8_t* sw = smem + (ks % STAGES) * kStageBytes;
    const uint8_t* sx = sw + kStageW;
    for (int e = tid; e < BM * 8; e += kThreads) wsc[(e / 8) * kScaleStride + e % 8] = step_scale<T>(sw + (e / 8) * T::kStride, e % 8, ks);
    __syncthreads();
#pragma unroll 2
    for (int it = 0; it < 8 / WARPS_K; ++it) {
      const int s = wk + it * WARPS_K;
      uint32_t b[NT][2];
      float2 xs[NT][2];
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const uint8_t* xr = sx + (wn * NT * 8 + j * 8 + g) * kXStride + 32 * s;
        b[j][0] = ld32(xr + 4 * t);
        b[j][1] = ld32(xr + 16 + 4 * t);
        const uint8_t* xsr = sx + (wn * NT * 8 + j * 8 + 2 * t) * kXStride + kStep + 8 * s;
        xs[j][0] = *reinterpret_cast<const float2*>(xsr);
        xs[j][1] = *reinterpret_cast<const float2*>(xsr + kXStride);
      }
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int r0 = wm * MT * 16 + i * 16 + g;
        const uint8_t* ra = sw + r0 * T::kStride;
        const uint8_t* rb = ra + 8 * T::kStride;
        const uint32_t a0 = T::word(ra, s, t), a1 = T::word(rb, s, t), a2 = T::word(ra, s, 4 + t), a3 = T::word(rb, s, 4 + t);
        const float2 w0 = wsc[r0 * kScaleStride + s], w1 = wsc[(r0 + 8) * kScaleStride + s];
        if constexpr (!T::kHalves) {
          int c[NT][4];  // all NT products first: independent mma in flight before any scaling
#pragma unroll
          for (int j = 0; j < NT; ++j) mma_k32(a0, a1, a2, a3, b[j][0], b[j][1], c[j]);
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            float* a = acc[i][j];
            a[0] = fmaf(w0.x * xs[j][0].x, small_i2f(c[j][0]), a[0]);
            a[1] = fmaf(w0.x * xs[j][1].x, small_i2f(c[j][1]), a[1]);
            a[2] = fmaf(w1.x * xs[j][0].x, small_i2f(c[j][2]), a[2]);
            a[3] = fmaf(w1.x * xs[j][1].x, small_i2f(c[j][3]), a[3]);
            if constexpr (T::kMin) {
              a[0] = fmaf(-w0.y, xs[j][0].y, a[0]);
              a[1] = fmaf(-w0.y, xs[j][1].y, a[1]);
              a[2] = fmaf(-w1.y, xs[j][0].y, a[2]);
              a[3] = fmaf(-w1.y, xs[j][1].y, a[3]);
            }
          }
        } else {
          int lo[NT][4], hi[NT][4];
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            mma_k16(a0, a1, b[j][0], lo[j]);  // elements 0..15 of the sub-block
            mma_k16(a2, a3, b[j][1], hi[j]);  // elements 16..31
          }
          const uint32_t p0 = __float_as_uint(w0.y), p1 = __float_as_uint(w1.y);
          const int s00 = int16_t(p0 & 0xFFFFu), s01 = int16_t(p0 >> 16), s10 = int16_t(p1 & 0xFFFFu), s11 = int16_t(p1 >> 16);
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            float* a = acc[i][j];
            a[0] = fmaf(w0.x * xs[j][0].x, __int2float_rn(lo[j][0] * s00 + hi[j][0] * s01), a[0]);
            a[1] = fmaf(w0.x * xs[j][1].x, __int2float_rn(lo[j][1] * s00 + hi[j][1] * s01), a[1]);
            a[2] = fmaf(w1.x * xs[j][0].x, __int2float_rn(lo[j][2] * s10 + hi[j][2] * s11), a[2]);
            a[3] = fmaf(w1.x * xs[j][1].x, __int2float_rn(lo[j][3] * s10 + hi[j][3] * s11), a[3]);
          }
        }
      }
    }
  }
  if constexpr (WARPS_K > 1) {  // warps wk > 0 hand their partial sums to warp wk = 0, added in wk order
    cp_async_wait<0>();
    __syncthreads();
    float* red = reinterpret_cast<float*>(smem);
    constexpr int kPer = MT * NT * 4;
    const int tile = wm + WARPS_M * wn;
    if (wk > 0) {
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            red[((wk - 1) * WARPS_M * WARPS_N + tile) * kPer * 32 + ((i * NT + j) * 4 + e) * 32 + lane] = acc[i][j][e];
    }
    __syncthreads();
    if (wk > 0) return;
#pragma unroll
    for (int q = 1; q < WARPS_K; ++q)
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            acc[i][j][e] += red[((q - 1) * WARPS_M * WARPS_N + tile) * kPer * 32 + ((i * NT + j) * 4 + e) * 32 + lane];
  }
  store_row_token_tiles(acc, n0 + wm * MT * 16, m0 + wn * NT * 8, g, t, n, m, out, ldo, bias);
}

unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

template <class T, int WARPS_M, int WARPS_N, int WARPS_K, int MT, int NT, int kMaxStages>
cudaError_t launch_tile(const void* w, int64_t n, int64_t k, const uint8_t* xq, int64_t m, float* out, int64_t ldo,
                        const float* bias, cudaStream_t stream) {
  constexpr int BM = WARPS_M * MT * 16, BN = WARPS_N * NT * 8;
  constexpr int kStageBytes = BM * T::kStride + BN * kXStride;
  constexpr int kScaleBytes = BM * kScaleStride * 8;
  constexpr int S = std::min(kMaxStages, (kMaxSmem - kScaleBytes) / kStageBytes);
  static_assert(S >= 2, "an mmq tile needs two stages of shared memory");
  static_assert(!(T::kMin && T::kHalves), "minimums with 16-element scales are not implemented");
  static_assert(8 % WARPS_K == 0, "the K warps split a step's 8 sub-blocks evenly");
  constexpr int kReduceBytes = (WARPS_K - 1) * WARPS_M * WARPS_N * MT * NT * 4 * 32 * 4;
  static_assert(kReduceBytes <= S * kStageBytes, "the K-warp reduction reuses the stage buffers");
  constexpr int kSmem = S * kStageBytes + kScaleBytes;
  const auto kernel = mmq_kernel<T, WARPS_M, WARPS_N, WARPS_K, MT, NT, S>;
  static bool raised = false;  // above the default 48 KiB, once per instantiation
  if (!raised) {
    const cudaError_t rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (rc != cudaSuccess) return rc;
    // Measured (H200, round 7): at 8 rows, llama3-8b Q8_0 / Q4_K_M decode steps in graphs lost
    // 10-20% with this kernel launched programmatically; it keeps a full dependency.
    keep_full_dependency(reinterpret_cast<const void*>(kernel));
    raised = true;
  }
  const dim3 grid(blocks_for(m, BN), blocks_for(n, BM));  // token tiles vary fastest: a weight tile's
  if (grid.y > 65535u) return cudaErrorInvalidValue;      // blocks run together and share it in L2
  launch_kernel(kernel, grid, WARPS_M * WARPS_N * WARPS_K * 32, kSmem, stream, static_cast<const uint8_t*>(w), T::row_bytes(k), n, k,
                                                                    xq, m, out, ldo, bias);
  return cudaGetLastError();
}

// Tile by row count. Up to 32 rows (decode batches; weight-bandwidth bound): 32 weight rows ×
// 8/16/32 tokens per block, 8 warps (2 over the rows × 4 splitting K), 4 stages: small blocks, so
// 3–4 blocks and 24–32 warps per SM keep loads and mma in flight. More rows: 64 × 64 tiles
// (2 × 2 warps of 32 × 32, K split in 2), or 128 × 128 (2 × 4 warps of 64 × 32) when that still
// gives two blocks per SM (prefill).
constexpr int64_t kWantBlocks = 2 * 132;

template <class T>
cudaError_t launch_type(const void* w, int64_t n, int64_t k, const uint8_t* xq, int64_t m, float* out, int64_t ldo,
                        const float* bias, cudaStream_t stream) {
  if (m <= 8) return launch_tile<T, 2, 1, 4, 1, 1, 4>(w, n, k, xq, m, out, ldo, bias, stream);
  if (m <= 16) return launch_tile<T, 2, 1, 4, 1, 2, 4>(w, n, k, xq, m, out, ldo, bias, stream);
  if (m <= 32) return launch_tile<T, 2, 1, 4, 1, 4, 4>(w, n, k, xq, m, out, ldo, bias, stream);
  const int64_t big_blocks = ((m + 127) / 128) * ((n + 127) / 128);
  if (m <= 64 || big_blocks < kWantBlocks) return launch_tile<T, 2, 2, 2, 2, 4, 3>(w, n, k, xq, m, out, ldo, bias, stream);
  return launch_tile<T, 2, 4, 1, 4, 4, 3>(w, n, k, xq, m, out, ldo, bias, stream);
}

}  // namespace

bool mmq_supports(TensorType type, int64_t k) {
  switch (type) {
    case TensorType::Q8_0:
    case TensorType::Q4_0:
    case TensorType::Q5_0:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K: return k > 0 && k % kStep == 0;
    default: return false;
  }
}

size_t mmq_scratch_bytes(int64_t m, int64_t k) { return size_t(m) * size_t(k / kStep) * kXBytes; }

cudaError_t launch_mmq(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int64_t m, void* scratch,
                       float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  if (!mmq_supports(type, k) || m <= 0 || n <= 0 || m > 65535) return cudaErrorInvalidValue;
  auto* xq = static_cast<uint8_t*>(scratch);
  launch_kernel(mmq_quantize_x_kernel, dim3(blocks_for(k, 256), static_cast<unsigned>(m)), 256, 0, stream, x, k, xq);
  if (const cudaError_t rc = cudaGetLastError(); rc != cudaSuccess) return rc;
  switch (type) {
    case TensorType::Q8_0: return launch_type<MmqQ8_0>(w, n, k, xq, m, out, ldo, bias, stream);
    case TensorType::Q4_0: return launch_type<MmqQ4_0>(w, n, k, xq, m, out, ldo, bias, stream);
    case TensorType::Q5_0: return launch_type<MmqQ5_0>(w, n, k, xq, m, out, ldo, bias, stream);
    case TensorType::Q4_K: return launch_type<MmqQ4_K>(w, n, k, xq, m, out, ldo, bias, stream);
    case TensorType::Q5_K: return launch_type<MmqQ5_K>(w, n, k, xq, m, out, ldo, bias, stream);
    default: return launch_type<MmqQ6_K>(w, n, k, xq, m, out, ldo, bias, stream);
  }
}

}  // namespace vellum::cuda
