// The deterministic mode's F16/BF16 matmul on tensor cores (det_mma16.h, round 23).

#include "backend/cuda/det_mma16.h"

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/cuda_util.h"
#include "backend/cuda/gemv_kq.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/mma16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/wgmma.cuh"

namespace vellum::cuda {
namespace {

int g_gemm_min_rows = 17;
int g_gemv_variant = 0;

// The k16 half of a window: A = the token quad (tokens g, g + 8; rows of mma's A), B = b0, b1 (weight
// rows as mma's B columns); mma16.cuh's instruction for the weight's type.
template <bool kBf16>
__device__ __forceinline__ void mma_half(const uint4& a, uint32_t b0, uint32_t b1, float (&c)[4]) {
  const uint32_t q[4] = {a.x, a.y, a.z, a.w};
  if constexpr (kBf16) mma(c, q, b0, b1, __nv_bfloat16{});
  else mma(c, q, b0, b1, __half{});
}

// Two f32 values rounded to nearest into one 16-bit pair (low half first), as f32_to_16 rounds them.
template <bool kBf16>
__device__ __forceinline__ uint32_t pack_rn(float lo, float hi) {
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}
// An A quad from f32 pairs of tokens g and g + 8: elements (2t, 2t+1) (lo) and (2t+8, 2t+9) (hi) of a
// k16 half, in mma's register order.
template <bool kBf16>
__device__ __forceinline__ uint4 token_quad(const float2& g_lo, const float2& h_lo, const float2& g_hi, const float2& h_hi) {
  return make_uint4(pack_rn<kBf16>(g_lo.x, g_lo.y), pack_rn<kBf16>(h_lo.x, h_lo.y), pack_rn<kBf16>(g_hi.x, g_hi.y),
                    pack_rn<kBf16>(h_hi.x, h_hi.y));
}
// Lane (g, t) loaded words 4t..4t+3 of a weight row's window (v); afterwards it holds words t, t+4,
// t+8, t+12: the B registers (b0, b1) of the window's first k16 half, then of its second. A 4 x 4
// transpose among the four lanes of row g, by two exchanges (lanes t ^ 1, then t ^ 2).
__device__ __forceinline__ uint4 window_b(uint4 v, int t) {
  {
    const bool odd = t & 1;
    const uint32_t r0 = __shfl_xor_sync(0xffffffffu, odd ? v.x : v.y, 1), r1 = __shfl_xor_sync(0xffffffffu, odd ? v.z : v.w, 1);
    if (odd) v.x = r0, v.z = r1;
    else v.y = r0, v.w = r1;
  }
  {
    const bool hi = t & 2;
    const uint32_t r0 = __shfl_xor_sync(0xffffffffu, hi ? v.x : v.z, 2), r1 = __shfl_xor_sync(0xffffffffu, hi ? v.y : v.w, 2);
    if (hi) v.x = r0, v.y = r1;
    else v.z = r0, v.w = r1;
  }
  return v;
}

// Windows per K part, a function of the weight's shape (never of the token rows): at least 16
// (512 elements) for weights of up to 8 192 rows, 32 for taller ones (the few-row kernel's chains are
// shorter where its blocks are few: llama3-8b BF16 4 096 x 4 096 at one row 16.0 -> 14.9 us, 14 336 x
// 4 096 45.2 -> 47.9, so the taller keep 32; H100, round 23), and the fewest that keep at most 8
// parts: the few-row kernel's blocks are one warp a part, and blocks of more than 8 warps at its
// ~120-190 registers would not fit two to a multiprocessor. Even, so that the many-row kernel's
// 2-window stages end where parts do.
__host__ __device__ inline int windows_of(int64_t k) { return int((k + 31) / 32); }
inline int part_windows(int64_t n, int64_t k) {
  const int need = (windows_of(k) + 7) / 8;
  const int lo = n <= 8192 ? 16 : 32;
  return need <= lo ? lo : need + (need & 1);
}
inline int parts_of(int64_t n, int64_t k) { return (windows_of(k) + part_windows(n, k) - 1) / part_windows(n, k); }

// Lane (g, t)'s pieces (elements 8t..8t+7) of windows w0 .. w0 + U - 1 (those before `we`) of weight
// rows row0 + g (pa: n-tile 0) and row0 + 8 + g (pb: n-tile 1); zero past k or past the weight's rows.
template <int U>
__device__ __forceinline__ void load_weight_windows(uint4 (&d)[U][2], const uint8_t* pa, const uint8_t* pb, bool ra, bool rb,
                                                    int64_t k, int t, int w0, int we) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t kk = int64_t(w0 + u) * 32 + 8 * t;
    const bool in = w0 + u < we && kk < k;
    d[u][0] = in && ra ? ld_stream(pa + kk * 2) : make_uint4(0, 0, 0, 0);
    d[u][1] = in && rb ? ld_stream(pb + kk * 2) : make_uint4(0, 0, 0, 0);
  }
}
// Lane (g, t)'s f32 x of windows w0 .. w0 + XU - 1 for token g and, with kHi, token g + 8: pairs at
// elements 2t, 2t+8, 16+2t, 16+2t+8 of the window (zero past k, `we` or `rows`; without kHi token g + 8
// is zero and not loaded).
template <int XU, bool kHi>
__device__ __forceinline__ void load_x_windows(float2 (&d)[XU][2][4], const float* x, int64_t ldx, int rows, int64_t k, int g,
                                               int t, int w0, int we) {
#pragma unroll
  for (int u = 0; u < XU; ++u) {
    const int64_t kw = int64_t(w0 + u) * 32;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int b = g + 8 * h;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int64_t kk = kw + 2 * t + 8 * q;  // q = 0..3: 2t, 2t+8, 16+2t, 16+2t+8
        const bool in = (h == 0 || kHi) && w0 + u < we && kk < k && b < rows;
        d[u][h][q] = in ? *reinterpret_cast<const float2*>(x + int64_t(b) * ldx + kk) : make_float2(0, 0);
      }
    }
  }
}

// ---- few token rows: a warp per K part --------------------------------------------------------------

struct SegTiles {
  int begin[kMaxGemvSegs + 1];  // first 16-row tile of each segment; begin[count] = all tiles
};

// Block = one 16-row tile of one segment (two n8 tiles of weight rows); warp p computes K part p of
// those rows × 16 token rows (one m16 tile; tokens past `rows` are zero, and tokens 8-15 are not
// even loaded without kHi), the block folds the parts in order. Each warp streams its weight
// windows U at a time, one group in flight while the previous one is multiplied; the first group's
// weights are requested before the dependency wait (weights are no kernel's output). kXAhead: x's
// values of a group are requested with its weights; otherwise two windows' x at a time, just before
// their mma.
template <bool kBf16, bool kHi, int U, bool kXAhead>
__global__ void __launch_bounds__(256) det16_gemv_kernel(GemvSegs segs, SegTiles tiles, int64_t k, int wpp,
                                                         const float* __restrict__ x, int64_t ldx, int rows, int64_t ldo) {
  constexpr int XU = kXAhead ? U : 2;  // windows of x in registers at once
  static_assert(U % XU == 0);
  extern __shared__ float red[];  // [part][lane][8]
  // The tile's segment, selected with constant indices (a parameter array indexed at run time would
  // be copied to local memory).
  const int tile = int(blockIdx.x);
  const void* wseg = segs.w[0];
  float* out = segs.out[0];
  const float* bias = segs.bias[0];
  int64_t n = segs.rows[0];
  int first = 0;
#pragma unroll
  for (int i = 1; i < kMaxGemvSegs; ++i) {
    if (i < segs.count && tile >= tiles.begin[i]) wseg = segs.w[i], out = segs.out[i], bias = segs.bias[i], n = segs.rows[i], first = tiles.begin[i];
  }
  const int64_t row0 = int64_t(tile - first) * 16;
  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31), g = lane >> 2, t = lane & 3;
  const int nwin = windows_of(k);
  const int wb = warp * wpp, we = min(wb + wpp, nwin);
  const bool ra = row0 + g < n, rb = row0 + 8 + g < n;
  const uint8_t* wbase = static_cast<const uint8_t*>(wseg);
  const uint8_t* pa = wbase + (ra ? (row0 + g) * k * 2 : 0);
  const uint8_t* pb = wbase + (rb ? (row0 + 8 + g) * k * 2 : 0);

  uint4 wA[U][2], wB[U][2];
  float2 xA[XU][2][4], xB[XU][2][4];
  const auto load_w = [&](uint4(&d)[U][2], int w0) { load_weight_windows<U>(d, pa, pb, ra, rb, k, t, w0, we); };
  const auto load_x = [&](float2(&d)[XU][2][4], int w0) { load_x_windows<XU, kHi>(d, x, ldx, rows, k, g, t, w0, we); };
  float acc[2][4];  // n-tile j: weight rows row0 + 8j + 2t (+1) × tokens g (+8)
#pragma unroll
  for (int j = 0; j < 2; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
  const auto mma_x = [&](const uint4(&wv)[U][2], const float2(&xv)[XU][2][4], int w0, int h) {
#pragma unroll
    for (int u = 0; u < XU; ++u) {
      if (w0 + h + u >= we) break;
      const uint4 a0 = token_quad<kBf16>(xv[u][0][0], xv[u][1][0], xv[u][0][1], xv[u][1][1]);
      const uint4 a1 = token_quad<kBf16>(xv[u][0][2], xv[u][1][2], xv[u][0][3], xv[u][1][3]);
      const uint4 b0 = window_b(wv[h + u][0], t), b1 = window_b(wv[h + u][1], t);
      mma_half<kBf16>(a0, b0.x, b0.y, acc[0]);
      mma_half<kBf16>(a0, b1.x, b1.y, acc[1]);
      mma_half<kBf16>(a1, b0.z, b0.w, acc[0]);
      mma_half<kBf16>(a1, b1.z, b1.w, acc[1]);
    }
  };
  // The group at w0: its x from xv (kXAhead) or loaded now, XU windows at a time.
  const auto compute = [&](const uint4(&wv)[U][2], float2(&xv)[XU][2][4], int w0) {
    if constexpr (kXAhead) {
      mma_x(wv, xv, w0, 0);
    } else {
#pragma unroll
      for (int h = 0; h < U; h += XU) {
        load_x(xv, w0 + h);
        mma_x(wv, xv, w0, h);
      }
    }
  };

  load_w(wA, wb);
  pdl_wait();
  if constexpr (kXAhead) load_x(xA, wb);
  for (int w0 = wb; w0 < we; w0 += 2 * U) {
    load_w(wB, w0 + U);
    if constexpr (kXAhead) load_x(xB, w0 + U);
    compute(wA, xA, w0);
    load_w(wA, w0 + 2 * U);
    if constexpr (kXAhead) load_x(xA, w0 + 2 * U);
    compute(wB, xB, w0 + U);
  }

  float* mine = red + (size_t(warp) * 32 + lane) * 8;
#pragma unroll
  for (int j = 0; j < 2; ++j) {
#pragma unroll
    for (int c = 0; c < 4; ++c) mine[4 * j + c] = acc[j][c];
  }
  __syncthreads();
  // Value i of every lane, folded over the parts in order by warp i (mod the warps).
  const int parts = int(blockDim.x >> 5);
  for (int i = warp; i < 8; i += parts) {
    float total = 0.0f;
    for (int p = 0; p < parts; ++p) total += red[(size_t(p) * 32 + lane) * 8 + i];
    const int j = i >> 2, c = i & 3;
    const int64_t row = row0 + 8 * j + 2 * t + (c & 1);
    const int b = g + (c >= 2 ? 8 : 0);
    if (row < n && b < rows) out[int64_t(b) * ldo + row] = bias != nullptr ? total + bias[row] : total;
  }
}

// ---- many token rows: warpgroup MMA through a cp.async ring ----------------------------------------

constexpr int kStages = 4;
constexpr int kGroupWindowBytes = 1024;  // 16 tokens × one window in the paired layout

// A many-row tile: TW warpgroups over the token rows (64 each) × NW over the weight rows (N each),
// 256 threads. A stage: 2 windows of the block's weight rows (128 bytes each, 128-byte swizzled) and
// of its tokens' paired quads.
template <int TW, int N>
struct GemmTile {
  static constexpr int kNW = 2 / TW, kBT = 64 * TW, kBN = N * kNW;
  static constexpr int kWStageBytes = kBN * 128, kXStageBytes = (kBT / 16) * 2 * kGroupWindowBytes;
  static constexpr int kStageBytes = kWStageBytes + kXStageBytes;
  static constexpr int kSmem = kStages * kStageBytes + 1024;  // + alignment of the ring to 1 024 bytes
};


// x in the paired layout the many-row kernel reads: per 16-token group and window, 1 KB =
// [half h][lane (g, t)] 16 bytes = lane (g, t)'s A quad of that k16 half (tokens g and g + 8,
// elements 16h + 2t, +1 and 16h + 2t + 8, +9), which one 16-byte shared load returns in mma's
// register order. Tokens past `rows` and elements past k are zero.
__global__ void det16_pair_x_kernel(const float* __restrict__ x, int64_t ldx, int rows, int64_t k, int nwin, int64_t pieces,
                                    uint4* __restrict__ out, bool bf16) {
  pdl_wait();
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pieces) return;
  const int lane = int(p & 31), h = int((p >> 5) & 1);
  const int64_t gw = p >> 6;  // group · nwin + window
  const int64_t group = gw / nwin, win = gw % nwin;
  const int g = lane >> 2, t = lane & 3;
  const int64_t k0 = win * 32 + 16 * h + 2 * t;
  float2 v[2][2];  // [token g, g + 8][elements 2t.., 2t+8..]
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    const int64_t b = group * 16 + g + 8 * s;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int64_t kk = k0 + 8 * q;
      v[s][q] = b < rows && kk < k ? *reinterpret_cast<const float2*>(x + b * ldx + kk) : make_float2(0, 0);
    }
  }
  out[p] = bf16 ? token_quad<true>(v[0][0], v[1][0], v[0][1], v[1][1]) : token_quad<false>(v[0][0], v[1][0], v[0][1], v[1][1]);
}

// d (64 tokens × 64 weight rows of a warpgroup, mma.sync's C layout per 8 columns) = A · Bᵀ (+ d if
// accumulate): A the warp's token quad in registers, B 64 weight rows × 16 in shared memory
// (descriptor). Round 23's probe (tools/cuda/wgmma_probe.cu) found a chain of these bit for bit equal
// to the same chain of mma.sync m16n8k16, which the few-row kernel runs, and a chain's first step
// without accumulating equal to mma.sync's from +0 (a zero's sign aside, which the fold's +0 erases).
// d (64 tokens × N weight rows of a warpgroup, mma.sync's C layout per 8 columns) = A · Bᵀ (+ d if
// accumulate): A the warp's token quad in registers, B N weight rows × 16 in shared memory
// (descriptor). Round 23's probe (tools/cuda/wgmma_probe.cu) found a chain of these bit for bit equal
// to the same chain of mma.sync m16n8k16, which the few-row kernel runs, and a chain's first step
// without accumulating equal to mma.sync's from +0 (a zero's sign aside, which the fold's +0 erases).
#define VELLUM_D4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
template <bool kBf16, int N>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 8][4], const uint4& a, uint64_t b, int accumulate) {
  static_assert(N == 64 || N == 128);
  if constexpr (N == 64 && kBf16) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
        : VELLUM_D4(0), VELLUM_D4(1), VELLUM_D4(2), VELLUM_D4(3), VELLUM_D4(4), VELLUM_D4(5), VELLUM_D4(6), VELLUM_D4(7)
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(b), "r"(accumulate));
  } else if constexpr (N == 64) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
        : VELLUM_D4(0), VELLUM_D4(1), VELLUM_D4(2), VELLUM_D4(3), VELLUM_D4(4), VELLUM_D4(5), VELLUM_D4(6), VELLUM_D4(7)
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(b), "r"(accumulate));
  } else if constexpr (kBf16) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
        : VELLUM_D4(0), VELLUM_D4(1), VELLUM_D4(2), VELLUM_D4(3), VELLUM_D4(4), VELLUM_D4(5), VELLUM_D4(6), VELLUM_D4(7), VELLUM_D4(8), VELLUM_D4(9), VELLUM_D4(10), VELLUM_D4(11), VELLUM_D4(12), VELLUM_D4(13), VELLUM_D4(14), VELLUM_D4(15)
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(b), "r"(accumulate));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
        : VELLUM_D4(0), VELLUM_D4(1), VELLUM_D4(2), VELLUM_D4(3), VELLUM_D4(4), VELLUM_D4(5), VELLUM_D4(6), VELLUM_D4(7), VELLUM_D4(8), VELLUM_D4(9), VELLUM_D4(10), VELLUM_D4(11), VELLUM_D4(12), VELLUM_D4(13), VELLUM_D4(14), VELLUM_D4(15)
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(b), "r"(accumulate));
  }
}
#undef VELLUM_D4

// Keeps the A registers' definitions before the next wgmma_fence (wgmma.cuh's, for uint4 quads).
__device__ __forceinline__ void fence_quads(uint4 (&a)[4]) {
#pragma unroll
  for (int s = 0; s < 4; ++s) asm volatile("" : "+r"(a[s].x), "+r"(a[s].y), "+r"(a[s].z), "+r"(a[s].w)::"memory");
}

// Block = GemmTile's tokens × weight rows, warp w of a warpgroup taking token group w of the
// warpgroup's 64. Stages go through a 4-deep cp.async ring; per stage a warpgroup issues the 4 k16
// steps in order (window 0's halves, then window 1's) into the part in progress, keeps them in flight
// while the next stage lands, and at a part's end waits and folds the part into the total: every
// element's chain is the few-row kernel's. Split launches (ws != nullptr): block z computes part z
// only and stores that part's sums to ws[z][b][o] (n apart); det16_fold_kernel folds them in order.
template <bool kBf16, int TW, int N>
__global__ void __launch_bounds__(256) det16_gemm_kernel(const uint8_t* __restrict__ w, int64_t n, int64_t k,
                                                       const uint8_t* __restrict__ xp, int rows, float* out, int64_t ldo,
                                                       const float* bias, int wpp, float* ws) {
  using T = GemmTile<TW, N>;
  constexpr int kBT = T::kBT, kBN = T::kBN, kWStageBytes = T::kWStageBytes, kStageBytes = T::kStageBytes;
  constexpr int kWp = kBN / 32, kXp = T::kXStageBytes / 16 / 256;  // 16-byte copies a thread a stage
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  const int64_t r0 = int64_t(blockIdx.y) * kBN;
  const int b0 = int(blockIdx.x) * kBT;
  const int nwin = windows_of(k), groups = (rows + 15) / 16;
  const int tid = int(threadIdx.x), warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int tw = (tid >> 7) % TW, nw = (tid >> 7) / TW;  // the warpgroup's token and weight parts
  const int grp = tw * 4 + warp;                         // the warp's token group in the block
  const unsigned sbase = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  // The windows this block walks: all, or part blockIdx.z's.
  const int wfirst = ws != nullptr ? int(blockIdx.z) * wpp : 0;
  const int wend = ws != nullptr ? min(wfirst + wpp, nwin) : nwin;
  const int st0 = wfirst / 2, nst = (wend + 1) / 2;

  // Weights: each thread copies 16-byte chunk pc = tid % 8 of rows tid / 8 + 32i (i < kWp), to chunk
  // pc ^ (row % 8) (the swizzle); paired x: 16-byte pieces tid + 256j (j < kXp) of the stage's
  // (group, window, half, lane). Rows past n, groups past the last and windows past k are zero.
  const int pr = tid >> 3, pc = tid & 7;
  const uint8_t* wsrc = w + (r0 + pr) * k * 2 + pc * 16;
  const int64_t wstep = int64_t(32) * k * 2;
  const unsigned wdst = unsigned(pr * 128 + ((pc ^ (pr & 7)) * 16));  // rows pr + 32i keep pr % 8
  unsigned w_in = 0;
#pragma unroll
  for (int i = 0; i < kWp; ++i) w_in |= unsigned(r0 + pr + 32 * i < n) << i;
  const auto load = [&](int slot, int st) {
    const unsigned base = sbase + unsigned(slot * kStageBytes);
    const int64_t kk = int64_t(st) * 64;
    const bool col_in = kk + pc * 8 < k;
#pragma unroll
    for (int i = 0; i < kWp; ++i) {
      const bool in = col_in && (w_in >> i & 1);
      cp_async16_z(base + wdst + unsigned(i * 32 * 128), in ? wsrc + i * wstep + kk * 2 : w, in);
    }
#pragma unroll
    for (int j = 0; j < kXp; ++j) {
      const int q = tid + j * 256;                                 // piece of the stage's x
      const int xg = q >> 7, win = (q >> 6) & 1, rest = q & 63;  // 64 pieces a (group, window)
      const int gg = b0 / 16 + xg, wi = st * 2 + win;
      const bool in = gg < groups && wi < nwin;
      const uint8_t* src = xp + ((int64_t(gg) * nwin + wi) * kGroupWindowBytes + rest * 16);
      cp_async16_z(base + unsigned(kWStageBytes + q * 16), in ? src : xp, in);
    }
  };

  float total[N / 8][4];  // the folded parts: token rows g, g + 8 of the warp × weight rows 8j + 2t, +1
  float part[N / 8][4];   // the part in progress (each part's first wgmma overwrites it)
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
#pragma unroll
    for (int c = 0; c < 4; ++c) total[j][c] = part[j][c] = 0.0f;
  }

  // Stage st: its copies landed (each thread's, then the barrier); the slot of stage st - 2, whose
  // wgmma every warpgroup has waited for, is refilled; the warp's token quads are loaded into a
  // (two register sets alternate: a stage's wgmma read them until they complete); its 2-4 k16 steps
  // are issued and the previous stage's are waited for, or all of them at a part's end, which folds.
  pdl_wait();
  int left = wpp - wfirst % wpp;  // windows before the current part ends
  const auto stage_step = [&](int st, uint4(&a)[4]) {
    cp_async_wait<kStages - 3>();
    fence_proxy_async();
    __syncthreads();
    const int next = st + kStages - 2;
    if (next < nst) load((next - st0) % kStages, next);
    cp_async_commit();
    const uint8_t* stage = smem + ((st - st0) % kStages) * kStageBytes;
    const uint8_t* xs = stage + kWStageBytes + grp * 2 * kGroupWindowBytes + lane * 16;
    const bool four = wend - st * 2 >= 2;  // else a last odd window: 2 k16 steps
#pragma unroll
    for (int s = 0; s < 4; ++s) a[s] = *reinterpret_cast<const uint4*>(xs + (s >> 1) * kGroupWindowBytes + (s & 1) * 512);
    const uint8_t* wb = stage + nw * N * 128;
    fence_quads(a);
    wgmma_fence();
    // A part's first step overwrites the part (the previous one was folded): no register writes
    // between the wgmma of consecutive stages, which would make ptxas wait for them.
    wgmma_rs<kBf16, N>(part, a[0], smem_desc_sw128(wb), left == wpp ? 0 : 1);
    wgmma_rs<kBf16, N>(part, a[1], smem_desc_sw128(wb + 32), 1);
    if (four) {
      wgmma_rs<kBf16, N>(part, a[2], smem_desc_sw128(wb + 64), 1);
      wgmma_rs<kBf16, N>(part, a[3], smem_desc_sw128(wb + 96), 1);
    }
    wgmma_commit();
    left -= 2;
    if (left == 0 || st + 1 == nst) {
      wgmma_wait<0>();
      wgmma_fence_operands(part);
      left = wpp;
#pragma unroll
      for (int j = 0; j < N / 8; ++j) {
#pragma unroll
        for (int c = 0; c < 4; ++c) total[j][c] += part[j][c];
      }
    } else {
      wgmma_wait<1>();
    }
  };

#pragma unroll
  for (int s = 0; s < kStages - 2; ++s) {
    if (st0 + s < nst) load(s, st0 + s);
    cp_async_commit();
  }
  uint4 qa[4], qb[4];
  for (int st = st0; st < nst; st += 2) {
    stage_step(st, qa);
    if (st + 1 < nst) stage_step(st + 1, qb);
  }
  cp_async_wait<0>();

  float* dest = ws != nullptr ? ws + int64_t(blockIdx.z) * rows * n : out;
  const int64_t ld = ws != nullptr ? n : ldo;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int b = b0 + grp * 16 + g + (c >= 2 ? 8 : 0);
      const int64_t row = r0 + nw * N + 8 * j + 2 * t + (c & 1);
      if (row >= n || b >= rows) continue;
      const float v = total[j][c];
      dest[int64_t(b) * ld + row] = ws == nullptr && bias != nullptr ? v + bias[row] : v;
    }
  }
}

// out[b·ldo + o] = ((0 + part_0) + part_1) + ... (+ bias[o]): the split launch's parts, in order.
__global__ void det16_fold_kernel(const float* __restrict__ ws, int parts, int64_t n, int rows, float* out, int64_t ldo,
                                  const float* bias) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, plane = int64_t(rows) * n;
  if (i >= plane) return;
  float total = 0.0f;
  for (int p = 0; p < parts; ++p) total += ws[p * plane + i];
  const int64_t b = i / n, o = i % n;
  out[b * ldo + o] = bias != nullptr ? total + bias[o] : total;
}

// The many-row tile: 128 tokens × 128 weight rows (N = 128 a warpgroup) from 65 rows, which reads
// each stage's weights for twice the tokens; 64 × 128 (N = 64) below. A launch splits its parts over
// blocks when its tiles would not fill half the multiprocessors (17-256 token rows on 4 096-row
// weights).
bool gemm_wide(int rows) { return rows > 64; }
int64_t gemm_tiles(int64_t n, int rows) {
  const int bt = gemm_wide(rows) ? GemmTile<2, 128>::kBT : GemmTile<1, 64>::kBT;
  const int bn = gemm_wide(rows) ? GemmTile<2, 128>::kBN : GemmTile<1, 64>::kBN;
  return ((n + bn - 1) / bn) * ((rows + bt - 1) / bt);
}
bool gemm_split(int64_t n, int64_t k, int rows) { return parts_of(n, k) > 1 && 2 * gemm_tiles(n, rows) < device_sms(); }
size_t pair_bytes(int64_t k, int rows) { return size_t((rows + 15) / 16) * size_t(windows_of(k)) * kGroupWindowBytes; }

template <bool kBf16, bool kHi, int U, bool kXAhead>
cudaError_t gemv_as(const GemvSegs& segs, const SegTiles& tiles, int64_t k, int wpp, const float* x, int64_t ldx, int rows,
                    int64_t ldo, cudaStream_t stream) {
  const auto kernel = det16_gemv_kernel<kBf16, kHi, U, kXAhead>;
  // Full edges into it in a decode graph: with programmatic ones batch 1 lost 9-11% (calls 9 and 17),
  // and with programmatic ones but after attention kernels (2.4% faster, call 26) the deterministic
  // proof and the invariance check failed (call 27), a cause not found yet (docs/cuda.md, round 23).
  static const bool full = [&] {
    keep_full_dependency(reinterpret_cast<const void*>(kernel));
    return true;
  }();
  (void)full;
  const int parts = (windows_of(k) + wpp - 1) / wpp;
  const size_t smem = size_t(parts) * 32 * 8 * sizeof(float);
  launch_kernel(kernel, unsigned(tiles.begin[segs.count]), unsigned(parts * 32), smem, stream,
      segs, tiles, k, wpp, x, ldx, rows, ldo);
  return cudaGetLastError();
}

// The schedules of the few-row kernel (the same arithmetic): 1 U = 2 with x requested with the
// weights (~110 registers), 2 U = 4 likewise (~190), 3 U = 4 (9-16 rows: 2) with x loaded two
// windows at a time just before use (~125-160); 0 by shape: up to 8 rows 2 on launches of few tiles and blocks of <= 4 warps (two blocks still fit
// a multiprocessor), else 1; 9-16 rows 3 for more than 4 parts, else 1 (measured on an H100,
// docs/cuda.md round 23).
template <bool kBf16>
cudaError_t gemv_by_rows(const GemvSegs& segs, const SegTiles& tiles, int64_t k, int wpp, const float* x, int64_t ldx,
                         int rows, int64_t ldo, cudaStream_t stream) {
  const int parts = (windows_of(k) + wpp - 1) / wpp;
  if (rows > 8) {  // tokens 8-15 too: x of two tokens a lane
    const int v = g_gemv_variant != 0 ? g_gemv_variant : parts > 4 ? 3 : 1;
    if (v == 3) return gemv_as<kBf16, true, 2, false>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream);
    if (v == 2) return gemv_as<kBf16, true, 4, false>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream);
    return gemv_as<kBf16, true, 2, true>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream);
  }
  const int v = g_gemv_variant != 0 ? g_gemv_variant : tiles.begin[segs.count] <= 512 && parts <= 4 ? 2 : 1;
  switch (v) {
    case 1: return gemv_as<kBf16, false, 2, true>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream);
    case 3: return gemv_as<kBf16, false, 4, false>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream);
    default: return gemv_as<kBf16, false, 4, true>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream);
  }
}

template <bool kBf16, int TW, int N>
cudaError_t gemm_as(const void* w, int64_t n, int64_t k, const float* x, int64_t ldx, int rows, float* out, int64_t ldo,
                    const float* bias, void* xpair, float* ws, cudaStream_t stream) {
  using T = GemmTile<TW, N>;
  const auto kernel = det16_gemm_kernel<kBf16, TW, N>;
  static const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmem);
  if (attr != cudaSuccess) return attr;
  const int64_t pieces = int64_t(pair_bytes(k, rows) / 16);
  launch_kernel(det16_pair_x_kernel, unsigned((pieces + 255) / 256), 256, 0, stream, x, ldx, rows, k, windows_of(k), pieces,
                                                                         static_cast<uint4*>(xpair), kBf16);
  const int parts = ws != nullptr ? parts_of(n, k) : 1;
  const dim3 grid(unsigned((rows + T::kBT - 1) / T::kBT), unsigned((n + T::kBN - 1) / T::kBN), unsigned(parts));
  launch_kernel(kernel, grid, 256, T::kSmem, stream, static_cast<const uint8_t*>(w), n, k, static_cast<const uint8_t*>(xpair), rows, out,
                                          ldo, bias, part_windows(n, k), ws);
  if (ws == nullptr) return cudaGetLastError();
  const int64_t plane = int64_t(rows) * n;
  launch_kernel(det16_fold_kernel, unsigned((plane + 255) / 256), 256, 0, stream, ws, parts, n, rows, out, ldo, bias);
  return cudaGetLastError();
}
template <bool kBf16>
cudaError_t gemm_by_rows(const void* w, int64_t n, int64_t k, const float* x, int64_t ldx, int rows, float* out, int64_t ldo,
                         const float* bias, void* xpair, float* ws, cudaStream_t stream) {
  return gemm_wide(rows) ? gemm_as<kBf16, 2, 128>(w, n, k, x, ldx, rows, out, ldo, bias, xpair, ws, stream)
                         : gemm_as<kBf16, 1, 64>(w, n, k, x, ldx, rows, out, ldo, bias, xpair, ws, stream);
}

}  // namespace

bool det16_supports(TensorType type, int64_t k) {
  return (type == TensorType::F16 || type == TensorType::BF16) && k > 0 && k % 8 == 0;
}

int det16_gemm_min_rows() { return g_gemm_min_rows; }
void set_det16_gemm_min_rows(int rows) { g_gemm_min_rows = std::clamp(rows, 2, 17); }
void set_det16_gemv_variant(int v) { g_gemv_variant = v; }

cudaError_t launch_det16_gemv(TensorType type, const GemvSegs& segs, int64_t k, const float* x, int64_t ldx, int rows,
                              int64_t ldo, cudaStream_t stream) {
  if (!det16_supports(type, k) || rows < 1 || rows > 16 || segs.count < 1 || ldx % 4 != 0 ||
      reinterpret_cast<uintptr_t>(x) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  // One launch takes segments of one part length (Q, K and V share theirs); others go one by one.
  const int wpp = part_windows(segs.rows[0], k);
  for (int i = 1; i < segs.count; ++i) {
    if (part_windows(segs.rows[i], k) == wpp) continue;
    for (int j = 0; j < segs.count; ++j) {
      GemvSegs one;
      one.add(segs.w[j], segs.rows[j], segs.out[j], segs.bias[j]);
      if (const cudaError_t rc = launch_det16_gemv(type, one, k, x, ldx, rows, ldo, stream); rc != cudaSuccess) return rc;
    }
    return cudaSuccess;
  }
  SegTiles tiles{};
  for (int s = 0; s < segs.count; ++s) tiles.begin[s + 1] = tiles.begin[s] + int((segs.rows[s] + 15) / 16);
  return type == TensorType::BF16 ? gemv_by_rows<true>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream)
                                  : gemv_by_rows<false>(segs, tiles, k, wpp, x, ldx, rows, ldo, stream);
}

size_t det16_gemm_ws_floats(int64_t n, int64_t k, int rows) {
  return gemm_split(n, k, rows) ? size_t(parts_of(n, k)) * size_t(rows) * size_t(n) : 0;
}
size_t det16_gemm_x_bytes(int64_t k, int rows) { return pair_bytes(k, rows); }

cudaError_t launch_det16_gemm(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int64_t ldx, int rows,
                              float* out, int64_t ldo, const float* bias, void* xpair, float* ws, cudaStream_t stream) {
  if (!det16_supports(type, k) || rows < 1 || n < 1 || xpair == nullptr || ldx % 4 != 0 ||
      reinterpret_cast<uintptr_t>(x) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  float* split = nullptr;
  if (gemm_split(n, k, rows)) {
    if (ws == nullptr) return cudaErrorInvalidValue;
    split = ws;
  }
  return type == TensorType::BF16 ? gemm_by_rows<true>(w, n, k, x, ldx, rows, out, ldo, bias, xpair, split, stream)
                                  : gemm_by_rows<false>(w, n, k, x, ldx, rows, out, ldo, bias, xpair, split, stream);
}

}  // namespace vellum::cuda
