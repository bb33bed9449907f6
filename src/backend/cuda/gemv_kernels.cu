// Batch-1 GEMV kernels (gemv_kernels.h). A warp owns R weight rows and reuses every x chunk it
// loads for all of them; its lanes (and, with split-K, the warps sharing its rows) take fixed chunks
// of a row, so a row's reduction order depends only on k. Fewer rows per warp for short outputs, so
// that they still spread over the SMs. The int8 path of Q8_0 has two kernels with the same reduction
// order: the one-shot gemv_i8_kernel (one row group per warp; the default since round 12) and the
// persistent gemv_i8p_kernel (a warp walks row groups with the next one's loads in flight; a knob).
// Q4_K and Q6_K have their own kernel on their own device layout, gemv_kq_kernel (round 7).

#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/warp_reduce.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kq.cuh"
#include "backend/cuda/gemv_norm_out_staged.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/row_norm.cuh"
#include "backend/cuda/rows_mma.h"

namespace vellum::cuda {
namespace {

constexpr int kWarps = 4;  // warps per block


unsigned blocks_for(int64_t n, int64_t per) { return static_cast<unsigned>((n + per - 1) / per); }

// Split-K inside a block: `split` warps share one row group, warp part p taking chunk runs p, p +
// split, ... of 32 chunks, then part 0 adds the parts in order through shared memory. A function
// of the chunk count only, so a row's reduction order never depends on the launch (alone, grouped,
// SwiGLU pair). More warps per row group keep more loads in flight when a launch has few rows
// (4 096 rows of 4 rows a warp were 8 warps an SM).
int split_for(int64_t chunks) { return chunks >= 4 * 32 ? 4 : chunks >= 2 * 32 ? 2 : 1; }
// The int8 kernel splits only for decoders with one chunk per row in flight (round 5's Q6_K: on an
// H200 it made Q6_K 4096x14336 44% -> 51% of copy bandwidth and the 128256-row output layer 69% ->
// 83%, but Q4_K 14336x4096 42% -> 33%); Q8_0, the one type left on this kernel, keeps two in flight.
template <class D>
int i8_split(int64_t k) {
  return D::kInFlight == 1 ? split_for(k / D::kChunk) : 1;
}

// Decoders of 16-byte chunks of 16-bit weights (DecF16x8, DecBF16x8) unpack a raw uint4.
template <class D, class = void>
struct HasUnpack : std::false_type {};
template <class D>
struct HasUnpack<D, std::void_t<decltype(D::unpack(std::declval<const uint4&>(), static_cast<float*>(nullptr)))>>
    : std::true_type {};
template <class D>
__device__ __forceinline__ void unpack_raw(const uint4& v, float* y) {
  if constexpr (HasUnpack<D>::value) D::unpack(v, y);
}

template <int R, int W = kWarps>
__device__ __forceinline__ bool combine_parts(float* acc, int split, bool active) {
  __shared__ float parts[W][R];
  const int warp = threadIdx.x / 32;
  if (split == 1) return active;
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int r = 0; r < R; ++r) parts[warp][r] = acc[r];
  }
  __syncthreads();
  if (!active || warp % split != 0) return false;
  for (int p = 1; p < split; ++p) {
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] += parts[warp + p][r];
  }
  return true;
}

// More than B x rows (deterministic mode, round 9): the grid is weight row groups × groups of B x
// rows, the x group varying fastest, so the blocks that share weight rows run together and all but
// the first read them from L2. Moves x and out to this block's group; nb becomes its row count.
template <int B, class X>
__device__ __forceinline__ void to_group(int groups, const X*& x, size_t xstride, float*& out, int64_t ldo, int& nb) {
  const int g = int(blockIdx.x % unsigned(groups));
  x += size_t(g) * B * xstride;
  out += int64_t(g) * B * ldo;
  nb = min(B, nb - g * B);
}

// to_group for the int8 rows kernels, whose outputs are segments (store_rows): moves x to this block's
// group and returns the group's first token row; nb becomes its row count.
template <int B, class X>
__device__ __forceinline__ int to_x_group(int groups, const X*& x, size_t xstride, int& nb) {
  const int g = int(blockIdx.x % unsigned(groups));
  x += size_t(g) * B * xstride;
  nb = min(B, nb - g * B);
  return g * B;
}

// The persistent kernels' loop over their work items: two register buffers, item i in one while
// item i + 1's loads are issued into the other.
template <class Buf, class Load, class Use>
__device__ __forceinline__ void double_buffered(int64_t items, const Load& load, const Use& use) {
  Buf a, b;
  load(0, a);
  for (int64_t i = 0; i < items; i += 2) {
    if (i + 1 < items) load(i + 1, b);
    use(i, a);
    if (i + 1 >= items) break;
    if (i + 2 < items) load(i + 2, a);
    use(i + 1, b);
  }
}

// The int8 rows kernels' token-row strides, a segment each (round 52).
struct RowsLd {
  int64_t ldo[kMaxGemvSegs];
};

// Which weight rows a warp reads and where its results go. SwiGLU: a warp owns R/2 outputs and
// reads their gate rows (w[0]) then their up rows (w[1]).
template <int R, bool kSwiglu>
struct RowMap {
  static constexpr int kOut = kSwiglu ? R / 2 : R;  // output rows per warp
  __device__ static int64_t total(const GemvSegs& s) {
    return kSwiglu ? s.rows[0] : s.rows[0] + s.rows[1] + s.rows[2];
  }
  // Segment of output row o (selects, not a run-time index into the parameter arrays).
  __device__ static int seg(const GemvSegs& s, int64_t& o) {
    if (o < s.rows[0]) return 0;
    o -= s.rows[0];
    if (o < s.rows[1]) return 1;
    o -= s.rows[1];
    return 2;
  }
  __device__ static const uint8_t* row(const GemvSegs& s, size_t rb, int64_t o0, int r, int64_t n) {
    if (kSwiglu) {
      const int64_t o = min(o0 + r % kOut, n - 1);  // past the end: re-read, dropped
      return static_cast<const uint8_t*>(r < kOut ? s.w[0] : s.w[1]) + o * rb;
    }
    int64_t o = min(o0 + r, n - 1);
    const int g = seg(s, o);
    return static_cast<const uint8_t*>(g == 0 ? s.w[0] : g == 1 ? s.w[1] : s.w[2]) + o * rb;
  }
  // Lane r of the warp writes output r (acc already summed over the warp), each sum times `scale`
  // first (a RowNormIn's s; 1 elsewhere, which leaves every bit as it is). keep (round 43's
  // RowNormOut producers): output r also into keep[r].
  __device__ static void store(const GemvSegs& s, int64_t o0, int lane, const float* acc, int64_t n, float scale = 1.0f,
                               float* keep = nullptr) {
#pragma unroll
    for (int r = 0; r < kOut; ++r) {
      if (lane != r || o0 + r >= n) continue;
      if (kSwiglu) {
        const float g = mul(acc[r], scale);
        s.out[0][o0 + r] = mul(g / (1.0f + expf(-g)), mul(acc[r + kOut], scale));  // as swiglu_kernel
      } else {
        int64_t o = o0 + r;
        const int sg = seg(s, o);
        float* out = sg == 0 ? s.out[0] : sg == 1 ? s.out[1] : s.out[2];
        const float* b = sg == 0 ? s.bias[0] : sg == 1 ? s.bias[1] : s.bias[2];
        const float a = mul(acc[r], scale);
        const float v = b != nullptr ? a + b[o] : a;
        out[o] = v;
        if (keep != nullptr) keep[r] = v;
      }
    }
  }
};

// One chunk of f32 x (16-byte loads when a chunk is a multiple of 4 floats).
template <class D>
__device__ __forceinline__ void load_x_chunk(const float* xp, float (&xv)[D::kChunk]) {
  if constexpr (D::kChunk % 4 == 0) {
#pragma unroll
    for (int j = 0; j < D::kChunk; j += 4) {
      const float4 v = *reinterpret_cast<const float4*>(xp + j);
      xv[j] = v.x, xv[j + 1] = v.y, xv[j + 2] = v.z, xv[j + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < D::kChunk; ++j) xv[j] = xp[j];
  }
}

// f32 x: the exact dequantized weights (any decoder).
template <class D, int R, bool kSwiglu>
__global__ void __launch_bounds__(kWarps * 32) gemv1_kernel(GemvSegs s, size_t rb, int64_t k, const float* x, int split) {
  using Map = RowMap<R, kSwiglu>;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const int64_t n = Map::total(s);
  const int64_t o0 = (int64_t(blockIdx.x) * (kWarps / split) + warp / split) * Map::kOut;
  const bool active = o0 < n;
  const uint8_t* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = Map::row(s, rb, min(o0, n - 1), r, n);
  const int64_t chunks = active ? k / D::kChunk : 0;
  const int64_t first = (warp % split) * 32 + lane, stride = 32 * split;
  // Weights are read-only, so 16-bit rows load their first chunk before the wait (pdl.cuh): under a
  // programmatic launch those loads stream while the previous kernel finishes. (Raw 16 bytes a row:
  // decoded floats kept across the wait would cost registers.)
  constexpr bool kPre = HasUnpack<D>::value;
  uint4 pre[kPre ? R : 1];
  if (kPre && first < chunks) {
#pragma unroll
    for (int r = 0; r < R; ++r) pre[r] = reinterpret_cast<const uint4*>(rows[r])[first];
  }
  pdl_wait();
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  const auto body = [&](int64_t c, auto preloaded) {
    float xv[D::kChunk];
    load_x_chunk<D>(x + c * D::kChunk, xv);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float wv[D::kChunk];
      if constexpr (decltype(preloaded)::value) {
        unpack_raw<D>(pre[r], wv);
      } else {
        D::load(rows[r], c, wv);
      }
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < D::kChunk; ++j) sum += wv[j] * xv[j];
      acc[r] += sum;
    }
  };
  int64_t c = first;
  if constexpr (kPre) {
    if (c < chunks) body(c, std::true_type{});
    c += stride;
  }
  for (; c < chunks; c += stride) body(c, std::false_type{});
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
  if (combine_parts<R>(acc, split, active)) Map::store(s, o0, lane, acc, n);
}

// Deterministic mode (round 9): B f32 x rows against any decoder with gemv1_kernel's arithmetic
// (the same split-K parts, lane chunks, per-chunk sums, warp butterfly and part order), so a token
// row gives the same bits in a batch of any size as alone. A warp reads each chunk of its R weight
// rows once for all B x rows; more rows than B take more blocks (to_group, x rows k floats apart).
template <class D, int R, int B>
__global__ void __launch_bounds__(kWarps * 32) gemv1_rows_kernel(const uint8_t* w, size_t rb, int64_t n, int64_t k,
                                                                 const float* x, int nb, int groups, float* out,
                                                                 int64_t ldo, const float* bias, int split) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const int64_t o0 = (int64_t(blockIdx.x / unsigned(groups)) * (kWarps / split) + warp / split) * R;
  to_group<B>(groups, x, size_t(k), out, ldo, nb);
  const bool active = o0 < n;
  const uint8_t* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = w + min(o0 + r, n - 1) * rb;
  const int64_t chunks = active ? k / D::kChunk : 0;
  const int64_t first = (warp % split) * 32 + lane, stride = 32 * split;
  pdl_wait();
  float acc[R * B];
#pragma unroll
  for (int i = 0; i < R * B; ++i) acc[i] = 0.0f;
  for (int64_t c = first; c < chunks; c += stride) {
    float wv[R][D::kChunk];
#pragma unroll
    for (int r = 0; r < R; ++r) D::load(rows[r], c, wv[r]);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      if (b >= nb) break;
      float xv[D::kChunk];
      load_x_chunk<D>(x + b * k + c * D::kChunk, xv);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < D::kChunk; ++j) sum += wv[r][j] * xv[j];
        acc[r * B + b] += sum;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < R * B; ++i) acc[i] = warp_sum(acc[i]);
  if (!combine_parts<R * B>(acc, split, active)) return;
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const int64_t o = o0 + r;
      if (b < nb && lane == r * B + b && o < n) out[b * ldo + o] = bias != nullptr ? acc[r * B + b] + bias[o] : acc[r * B + b];
    }
  }
}

// Persistent f32-x GEMV for 16-bit weights (round 7), the same arithmetic as gemv1_kernel with
// split-K 4: the grid holds only the blocks resident at once; a block walks row groups (R rows a
// group) with its 4 warps as the 4 parts of the split (warp w takes chunk runs w, w + 4, ...), and
// each warp issues item i + 1's weight loads (U runs of its part) before it uses item i. A row is
// summed exactly as in gemv1_kernel (lane order, warp sums, parts 0..3 in order), so a launch
// through either kernel gives the same bits (alone, in Q/K/V, in a SwiGLU pair).
template <class D, int R, bool kSwiglu, int U>
__global__ void __launch_bounds__(kWarps * 32) gemv16p_kernel(GemvSegs s, size_t rb, int64_t k, const float* x) {
  static_assert(D::kChunk == 8, "16-byte chunks of 8 weights");
  using Map = RowMap<R, kSwiglu>;
  pdl_wait();
  struct Buf {
    uint4 raw[U][R];
  };
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const int64_t n = Map::total(s);
  const int64_t groups = (n + Map::kOut - 1) / Map::kOut, chunks = k / D::kChunk;
  // Passes of the warp with the most runs (warp 0), so that every warp meets the same barriers;
  // a run past the row's end is skipped (c >= chunks).
  const int64_t runs = ((chunks + 31) / 32 + kWarps - 1) / kWarps;
  const int passes = int((runs + U - 1) / U);
  if (int64_t(blockIdx.x) >= groups) return;  // whole blocks
  const int64_t items = ((groups - 1 - blockIdx.x) / gridDim.x + 1) * passes;
  const auto group_of = [&](int64_t i) { return (blockIdx.x + (i / passes) * int64_t(gridDim.x)) * Map::kOut; };
  const auto chunk = [&](int64_t i, int u) { return ((int64_t(i % passes) * U + u) * kWarps + warp) * 32 + lane; };
  const auto load = [&](int64_t i, Buf& b) {
    const int64_t o0 = group_of(i);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = min(chunk(i, u), chunks - 1);  // past the end: re-read, dropped
#pragma unroll
      for (int r = 0; r < R; ++r) b.raw[u][r] = reinterpret_cast<const uint4*>(Map::row(s, rb, o0, r, n))[c];
    }
  };
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  const auto use = [&](int64_t i, const Buf& b) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = chunk(i, u);
      if (c >= chunks) break;
      const float4 x0 = reinterpret_cast<const float4*>(x)[2 * c], x1 = reinterpret_cast<const float4*>(x)[2 * c + 1];
      const float xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float wv[8];
        D::unpack(b.raw[u][r], wv);
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) sum += wv[j] * xv[j];
        acc[r] += sum;
      }
    }
    if (i % passes == passes - 1) {  // block-uniform: every warp has the same passes
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
      if (combine_parts<R>(acc, kWarps, true)) Map::store(s, group_of(i), lane, acc, n);
      __syncthreads();  // the parts are read before the next group writes them
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = 0.0f;
    }
  };
  double_buffered<Buf>(items, load, use);
}


// int8 x: every row's kInFlight chunks are loaded before any is used. W warps a block; kNormOut
// (round 43, RowNormOut; split 1, W·R = 32): the block's 32 new rows of x, then z's copy and Σx².
template <class D, int R, bool kSwiglu, int W = kWarps, bool kNormOut = false>
__global__ void __launch_bounds__(W * 32) gemv_i8_kernel(GemvSegs s, size_t rb, int64_t k, const int8_t* xq,
                                                        const float2* xs, int split, RowNormIn nin, RowNormOut no) {
  using Map = RowMap<R, kSwiglu>;
  static_assert(!kNormOut || (W * R == 32 && !kSwiglu), "a producer block owns 32 rows");
  constexpr int U = D::kInFlight;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const int64_t n = Map::total(s);
  const int64_t o0 = (int64_t(blockIdx.x) * (W / split) + warp / split) * Map::kOut;
  const int64_t row0 = int64_t(blockIdx.x) * 32;
  __shared__ float xn[kNormOut ? 32 : 1];
  const float gain = kNormOut && warp == 0 ? no.gain[row0 + lane] : 0.0f;  // a weight: before the wait
  const bool active = o0 < n;
  const uint8_t* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = Map::row(s, rb, min(o0, n - 1), r, n);
  const int64_t chunks = active ? k / D::kChunk : 0;
  const int64_t step = 32 * split;  // chunks between a lane's consecutive chunks
  const int64_t first = (warp % split) * 32 + lane;
  // Weights are read-only: the first chunk of each row is loaded before the wait (gemv1_kernel).
  typename D::Raw pre[R];
  if (first < chunks) {
#pragma unroll
    for (int r = 0; r < R; ++r) D::load(rows[r], first, pre[r]);
  }
  pdl_wait();
  const float scale = row_norm_scale(nin, k);
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  const auto body = [&](int64_t c0, auto preloaded) {
    typename D::Raw raw[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = min(c0 + step * u, chunks - 1);  // past the end: re-read, dropped below
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (decltype(preloaded)::value && u == 0) {
          raw[0][r] = pre[r];
        } else {
          D::load(rows[r], c, raw[u][r]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = c0 + step * u;
      if (c >= chunks) break;
      I8X<D::kChunk> xv;
      xv.load(xq, xs, c);
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] += D::dot(raw[u][r], xv);
    }
  };
  if (first < chunks) body(first, std::true_type{});
  for (int64_t c0 = first + step * U; c0 < chunks; c0 += step * U) body(c0, std::false_type{});
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
  if (combine_parts<R, W>(acc, split, active)) Map::store(s, o0, lane, acc, n, scale, kNormOut ? xn + (o0 - row0) : nullptr);
  if constexpr (kNormOut) {
    __syncthreads();
    if (warp == 0) row_norm_group(xn, gain, row0, n, no);
  }
}

// Persistent int8 GEMV: the grid holds only as many warps as are resident at once, and each warp
// walks work items (row group g, pass p: lane l takes chunk 32p + l of the group's R rows). The
// weight loads of item i + 1 are issued before item i is used, so a warp keeps a
// round trip in flight while it computes and while it reduces a finished row group; the one-shot
// kernel above did one round trip per warp and had nothing in flight while reducing. A lane adds
// chunks l, l + 32, ... in order and the warp then sums its lanes, exactly as gemv_i8_kernel with
// split 1, so a row gives the same bits whatever R, grid or launch (alone, Q/K/V, SwiGLU pair).
// kSmemX (experiment): the block first copies the whole int8 x (k bytes, then k/32 scale pairs)
// into shared memory with coalesced 16-byte loads; chunks are then read from there instead of
// each lane loading its own 64 bytes of x from L1 at a 64-byte stride.
template <class D, int R, bool kSwiglu, bool kSmemX = false>
__global__ void __launch_bounds__(kWarps * 32) gemv_i8p_kernel(GemvSegs s, size_t rb, int64_t k, const int8_t* xq,
                                                              const float2* xs) {
  using Map = RowMap<R, kSwiglu>;
  pdl_wait();
  if constexpr (kSmemX) {
    extern __shared__ uint4 x_smem[];
    const int64_t words = (k + k / 4) / 16;  // k int8 + k/32 float2 (k % 64 == 0: whole 16-byte words)
    const uint4* src = reinterpret_cast<const uint4*>(xq);
    for (int64_t i = threadIdx.x; i < words; i += blockDim.x) x_smem[i] = src[i];
    __syncthreads();
    xq = reinterpret_cast<const int8_t*>(x_smem);
    xs = reinterpret_cast<const float2*>(reinterpret_cast<const uint8_t*>(x_smem) + k);
  }
  struct Buf {
    typename D::Raw raw[R];
  };
  const int lane = threadIdx.x & 31;
  const int64_t n = Map::total(s);
  const int64_t groups = (n + Map::kOut - 1) / Map::kOut, chunks = k / D::kChunk;
  const int passes = int((chunks + 31) / 32);
  const int64_t nw = int64_t(gridDim.x) * kWarps, w0 = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (w0 >= groups) return;  // whole warps
  const int64_t items = ((groups - 1 - w0) / nw + 1) * passes;
  const auto load = [&](int64_t i, Buf& b) {
    const int64_t o0 = (w0 + (i / passes) * nw) * Map::kOut;
    const int64_t c = min(int64_t(i % passes) * 32 + lane, chunks - 1);  // past the end: re-read, dropped
#pragma unroll
    for (int r = 0; r < R; ++r) D::load(Map::row(s, rb, o0, r, n), c, b.raw[r]);
  };
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  const auto use = [&](int64_t i, const Buf& b) {
    const int p = int(i % passes);
    const int64_t c = int64_t(p) * 32 + lane;
    if (c < chunks) {  // x: a few KB that every warp reads, an L1 hit after the first
      I8X<D::kChunk> x;
      x.load(xq, xs, c);
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] += D::dot(b.raw[r], x);
    }
    if (p == passes - 1) {  // warp-uniform
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
      Map::store(s, (w0 + (i / passes) * nw) * Map::kOut, lane, acc, n);
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = 0.0f;
    }
  };
  double_buffered<Buf>(items, load, use);
}

// Groups p0 .. p0 + P - 1 of R rows into raw (past the row's last group: that group re-read, dropped).
template <class F, int P, int R>
__device__ __forceinline__ void load_groups(const uint8_t* const (&rows)[R], int p0, int passes, int lane,
                                            const typename F::Lane& L, typename F::Raw (&raw)[P][R]) {
#pragma unroll
  for (int u = 0; u < P; ++u) {
    const size_t g = size_t(min(p0 + u, passes - 1)) * F::kGroupBytes;
#pragma unroll
    for (int r = 0; r < R; ++r) F::load(rows[r] + g, lane, L, raw[u][r]);
  }
}

// One block of a Q4_K / Q6_K launch (block `block` of s): the first pass of its warps' weights loaded
// at construction (weights are read-only: before the programmatic wait, as gemv1_kernel), the rest
// and the sums in finish (after it). s is passed to both rather than kept: a kernel parameter
// reached through a stored reference changed the kernels' code.
template <class F, int R, bool kSwiglu, int P, int W = kWarps>
struct KqGemvBlock {
  using Map = RowMap<R, kSwiglu>;
  const int8_t* xq;
  const float2* xs;
  const int lane;
  const int64_t n, o0, nb;
  const bool active;  // whole warps; no block-level synchronisation below
  const int passes, sb;
  const typename F::Lane L;
  const uint8_t* rows[R];
  typename F::Raw raw[P][R];
  __device__ KqGemvBlock(const GemvSegs& segs, size_t rb, int64_t k, const int8_t* xq_, const float2* xs_, int64_t block)
      : xq(xq_), xs(xs_), lane(int(threadIdx.x & 31)), n(Map::total(segs)),
        o0((block * W + threadIdx.x / 32) * Map::kOut), nb(k / 256), active(o0 < n), passes(int((nb + 3) / 4)),
        sb(lane / 8), L(lane) {
#pragma unroll
    for (int r = 0; r < R; ++r) rows[r] = Map::row(segs, rb, min(o0, n - 1), r, n);  // past the end: re-read, dropped
    if (active) load(0);
  }
  __device__ void load(int p0) { load_groups<F>(rows, p0, passes, lane, L, raw); }
  __device__ void finish(const GemvSegs& s, float scale = 1.0f, float* keep = nullptr) {
    if (!active) return;
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.0f;
#pragma unroll 1
    for (int p0 = 0; p0 < passes;) {
#pragma unroll
      for (int u = 0; u < P; ++u) {
        const int p = p0 + u;
        if (p >= passes) break;                   // warp-uniform
        if (int64_t(p) * 4 + sb >= nb) continue;  // a short last group: this super-block does not exist
        const int64_t e = int64_t(p) * 1024 + 32 * lane;  // the sub-block's first element
        const uint4* xp = reinterpret_cast<const uint4*>(xq + e);
        const uint4 x0 = xp[0], x1 = xp[1];
        const float2 xsv = xs[e / 32];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += F::dot(raw[u][r], x0, x1, xsv, L);
      }
      p0 += P;
      if (p0 < passes) load(p0);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
    Map::store(s, o0, lane, acc, n, scale, keep);
  }
};

// 32 warps an SM where the registers allow it (2 rows of 2 passes storing 2 outputs would spill).
template <int R, bool kSwiglu, int P>
constexpr int kKqMinBlocks = P * R > 4 ? 4 : (R == 1 || kSwiglu || P == 1) ? 8 : 6;
template <class F, int R, bool kSwiglu, int P>
__global__ void __launch_bounds__(kWarps * 32, kKqMinBlocks<R, kSwiglu, P>)
    gemv_kq_kernel(GemvSegs s, size_t rb, int64_t k, const int8_t* xq, const float2* xs, RowNormIn nin) {
  KqGemvBlock<F, R, kSwiglu, P> b(s, rb, k, xq, xs, blockIdx.x);
  pdl_wait();
  b.finish(s, row_norm_scale(nin, k));
}

// Round 43's producer (RowNormOut): x += w·a (s.bias = s.out = x) in blocks of 32 rows, 32 / R warps
// of R rows, each row as gemv_kq_kernel computes it; then the block's z copy and Σx² (row_norm.cuh).
// The registers of the 4-warp kernel of the same R and P.
template <class F, int R, int P>
__global__ void __launch_bounds__(32 / R * 32, std::max(1, kKqMinBlocks<R, false, P> * kWarps * R / 32))
    gemv_kq_norm_out_kernel(GemvSegs s, size_t rb, int64_t k, const int8_t* xq, const float2* xs, RowNormOut no) {
  constexpr int W = 32 / R;
  __shared__ float xn[32];
  KqGemvBlock<F, R, false, P, W> b(s, rb, k, xq, xs, blockIdx.x);
  const int64_t row0 = int64_t(blockIdx.x) * 32;
  const float gain = threadIdx.x < 32 ? no.gain[row0 + threadIdx.x] : 0.0f;  // a weight: before the wait
  pdl_wait();
  b.finish(s, 1.0f, xn + (b.o0 - row0));
  __syncthreads();
  if (threadIdx.x < 32) row_norm_group(xn, gain, row0, b.n, no);
}

// Two launches of one x in one (round 29): blocks [0, blocks_a) are a launch of a (F1, R1 rows and
// P1 passes a warp), the others one of b (F2, one row and P2 passes), each block as in its own
// launch (the same bits). A Q4_K_M layer's Q and K (Q4_K) and V (Q6_K) were two launches, each a
// kernel on the batch-1 step's chain.
template <class F1, int R1, int P1, class F2, int P2>
__global__ void __launch_bounds__(kWarps * 32, 8)
    gemv_kq_pair_kernel(GemvSegs a, size_t rba, unsigned blocks_a, GemvSegs b, size_t rbb, int64_t k, const int8_t* xq,
                        const float2* xs, RowNormIn nin) {
  if (blockIdx.x < blocks_a) {
    KqGemvBlock<F1, R1, false, P1> g(a, rba, k, xq, xs, blockIdx.x);
    pdl_wait();
    g.finish(a, row_norm_scale(nin, k));
  } else {
    KqGemvBlock<F2, 1, false, P2> g(b, rbb, k, xq, xs, int64_t(blockIdx.x) - blocks_a);
    pdl_wait();
    g.finish(b, row_norm_scale(nin, k));
  }
}

// ---- 2..kMaxI8Rows x rows (round 8) ------------------------------------------------------------
// A warp owns R output rows and dots each pass of their weights with every x row, so the weights
// are read once for the whole batch and each x row once for R weight rows (the int8 mma kernel, mmq, reached 19-43% of copy bandwidth at
// these sizes). Row b's sum is built exactly as the batch-1 kernels build it (a lane adds its passes
// in order, then the warp's butterfly; x quantized per row as at batch 1), so a token row gives the
// same bits alone or in a batch of up to kMaxI8Rows. x rows are q8_bytes(k) apart.
// A rows kernel warp's outputs (round 52): kOut of one segment of s (launch_rows keeps every segment
// but the last a multiple of 4 rows, so a warp's rows never straddle two), or of a SwiGLU pair, whose
// warp reads kOut gate rows, then their up rows. Its segment is found once, so that only g, the
// segment's first row o0 and its rows n stay live across the K loop.
template <int R, bool kSwiglu>
struct WarpRows {
  static constexpr int kOut = kSwiglu ? R / 2 : R;
  int g = 0;
  int64_t o0, n;
  __device__ WarpRows(const GemvSegs& s, int64_t first) : o0(first), n(s.rows[0]) {
    if (kSwiglu || o0 < n) return;
    o0 -= n, n = s.rows[1], g = 1;
    if (o0 < n) return;
    o0 -= n, n = s.rows[2], g = 2;
  }
  __device__ const uint8_t* row(const GemvSegs& s, size_t rb, int r) const {
    const void* w = kSwiglu ? (r < kOut ? s.w[0] : s.w[1]) : g == 0 ? s.w[0] : g == 1 ? s.w[1] : s.w[2];
    return static_cast<const uint8_t*>(w) + min(o0 + r % kOut, n - 1) * rb;  // past the end: re-read, dropped
  }
};

// The rows kernels' epilogue: each sum over the warp, then lane r·B + b writes output r of the warp
// (wr) for token row b (tok0 + b of the launch; bias added as at batch 1, RowMap::store). SwiGLU:
// silu(gate)·up of weight rows r and r + kOut, as swiglu_kernel writes it.
template <int R, int B, bool kSwiglu>
__device__ __forceinline__ void store_rows(float (&acc)[R][B], const GemvSegs& s, const RowsLd& ld, const WarpRows<R, kSwiglu>& wr,
                                           int nb, int tok0) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int b = 0; b < B; ++b) acc[r][b] = warp_sum(acc[r][b]);
  }
  const int g = wr.g;
  float* out = g == 0 ? s.out[0] : g == 1 ? s.out[1] : s.out[2];
  const float* bias = g == 0 ? s.bias[0] : g == 1 ? s.bias[1] : s.bias[2];
  const int64_t ldo = g == 0 ? ld.ldo[0] : g == 1 ? ld.ldo[1] : ld.ldo[2];
#pragma unroll
  for (int r = 0; r < WarpRows<R, kSwiglu>::kOut; ++r) {
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const int64_t o = wr.o0 + r, t = tok0 + b;
      if (b >= nb || lane != r * B + b || o >= wr.n) continue;
      if constexpr (kSwiglu) {
        const float gv = acc[r][b];
        out[t * ldo + o] = mul(gv / (1.0f + expf(-gv)), acc[r + WarpRows<R, kSwiglu>::kOut][b]);
      } else {
        out[t * ldo + o] = bias != nullptr ? acc[r][b] + bias[o] : acc[r][b];
      }
    }
  }
}

// A warp owns WarpRows<R, kSwiglu>'s outputs (since round 52 of one of s's segments, or a SwiGLU pair).
template <class F, int R, int B, int P, bool kSwiglu>
__global__ void __launch_bounds__(kWarps * 32) gemv_kq_rows_kernel(const GemvSegs s, const RowsLd ld, size_t rb, int64_t k,
                                                                   const int8_t* xq, size_t xstride, int nb, int groups) {
  const int lane = threadIdx.x & 31;
  const WarpRows<R, kSwiglu> wr(s, (int64_t(blockIdx.x / unsigned(groups)) * kWarps + threadIdx.x / 32) * WarpRows<R, kSwiglu>::kOut);
  const int tok0 = to_x_group<B>(groups, xq, xstride, nb);
  const bool active = wr.o0 < wr.n;  // whole warps; no block-level synchronisation below
  const uint8_t* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = wr.row(s, rb, r);
  const typename F::Lane L(lane);
  const int64_t nb256 = k / 256;
  const int passes = int((nb256 + 3) / 4), sb = lane / 8;
  typename F::Raw raw[P][R];
  const auto load = [&](int p0) { load_groups<F>(rows, p0, passes, lane, L, raw); };
  if (active) load(0);  // weights are read-only: before the wait (gemv1_kernel)
  pdl_wait();
  if (!active) return;
  const size_t xs_off = size_t((k + 15) / 16 * 16);
  float acc[R][B] = {};
#pragma unroll 1
  for (int p0 = 0; p0 < passes;) {
#pragma unroll
    for (int u = 0; u < P; ++u) {
      const int p = p0 + u;
      if (p >= passes) break;                      // warp-uniform
      if (int64_t(p) * 4 + sb >= nb256) continue;  // a short last group: this super-block does not exist
      const int64_t e = int64_t(p) * 1024 + 32 * lane;
      // Every row's scale pair first, issued with the quants. ptxas had placed the load after the first
      // row's dot products (round 52: a 2-sequence step with the fusion off 615-623 -> 636-637 tok/s).
      float2 xsv[B];
#pragma unroll
      for (int b = 0; b < B; ++b) {
        if (b < nb) xsv[b] = reinterpret_cast<const float2*>(xq + b * xstride + xs_off)[e / 32];
      }
#pragma unroll
      for (int b = 0; b < B; ++b) {
        if (b >= nb) break;
        const uint4* xp = reinterpret_cast<const uint4*>(xq + b * xstride + e);
        const uint4 x0 = xp[0], x1 = xp[1];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r][b] += F::dot(raw[u][r], x0, x1, xsv[b], L);
      }
    }
    p0 += P;
    if (p0 < passes) load(p0);
  }
  store_rows<R, B, kSwiglu>(acc, s, ld, wr, nb, tok0);
}

// Q8_0 (DecQ8_0R's layout) for 2..kMaxI8Rows x rows, R weight rows a warp: lane l takes chunks l,
// l + 32, ... of 64 elements in order, two in flight, as gemv_i8_kernel / gemv_i8p_kernel do at batch 1.
template <int R, int B, bool kSwiglu>
__global__ void __launch_bounds__(kWarps * 32) gemv_q8_rows_kernel(const GemvSegs s, const RowsLd ld, size_t rb, int64_t k,
                                                                   const int8_t* xq, size_t xstride, int nb, int groups) {
  using D = I8Q8_0;
  constexpr int U = D::kInFlight;
  const int lane = threadIdx.x & 31;
  const WarpRows<R, kSwiglu> wr(s, (int64_t(blockIdx.x / unsigned(groups)) * kWarps + threadIdx.x / 32) * WarpRows<R, kSwiglu>::kOut);
  const int tok0 = to_x_group<B>(groups, xq, xstride, nb);
  const bool active = wr.o0 < wr.n;
  const uint8_t* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = wr.row(s, rb, r);
  const int64_t chunks = k / D::kChunk;
  typename D::Raw raw[U][R];
  const auto load = [&](int64_t c0) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int r = 0; r < R; ++r) D::load(rows[r], min(c0 + 32 * u, chunks - 1), raw[u][r]);  // past the end: dropped
    }
  };
  if (active && lane < chunks) load(lane);  // weights are read-only: before the wait (gemv1_kernel)
  pdl_wait();
  if (!active) return;
  const size_t xs_off = size_t((k + 15) / 16 * 16);
  float acc[R][B] = {};
#pragma unroll 1
  for (int64_t c0 = lane; c0 < chunks;) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = c0 + 32 * u;
      if (c >= chunks) break;
#pragma unroll
      for (int b = 0; b < B; ++b) {
        if (b >= nb) break;
        const int8_t* xb = xq + b * xstride;
        I8X<D::kChunk> xv;
        xv.load(xb, reinterpret_cast<const float2*>(xb + xs_off), c);
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r][b] += D::dot(raw[u][r], xv);
      }
    }
    c0 += 32 * U;
    if (c0 < chunks) load(c0);
  }
  store_rows<R, B, kSwiglu>(acc, s, ld, wr, nb, tok0);
}

// x quantized per 32 elements: row y = blockIdx.y of x (ldx apart) into q8 row y (stride bytes
// apart): k int8, then at xs_off the k / 32 pairs (d, d·Σq) (the K-quant minimums).
__global__ void quantize_q8_rows_kernel(const float* x, int64_t ldx, int64_t k, int8_t* q8, size_t stride, size_t xs_off) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= k) return;  // k % 32 == 0: whole warps leave together
  int8_t* xq = q8 + blockIdx.y * stride;
  quantize_q8_warp(x[blockIdx.y * ldx + i], xq + i, reinterpret_cast<float2*>(xq + xs_off) + i / 32);
}

// Q4_K / Q6_K launch: R weight rows and P passes in flight a warp. The bench knob: -1 / 2 / 4 / 8 = 1
// row, P = 1 / 2 / 4 / 8; 21 / 22 / 24 = 2 rows, P = 1 / 2 / 4 (SwiGLU: P = knob % 10, at most 4).
// Default (kernel alone on an H200, round 7, docs/cuda.md): >= 6 144 weight rows with k < 8 192
// (14 336 x 4 096, Q/K/V): 2 rows, 1 pass (Q4_K 68% / 52% of copy bandwidth, Q6_K 75% / 60%);
// otherwise Q4_K 1 row, 2 passes (4 096 x 14 336 72%, 4 096 x 4 096 48%), Q6_K 1 row, 1 pass (75%,
// 53%) or 4 at <= 2 048 rows; SwiGLU Q4_K 2 passes (86%), Q6_K 1 (92%). Same bits for every choice.
// Since round 46 the Q4_K SwiGLU takes 1 pass too: in the decode chain (graphs + PDL, llama3-8b
// Q4_K_M batch 1 on an H200) +0.6%, ahead in 6 of 6 alternating rounds; VELLUM_CUDA_KQ_SWIGLU_P=2 or
// 4 (measurements) picks other passes.
template <class F>
int default_variant(int64_t weight_rows, int64_t k, bool swiglu) {
  constexpr bool kQ4 = std::is_same_v<F, GemvQ4K>;
  static const int swiglu_p = [] {
    const char* e = std::getenv("VELLUM_CUDA_KQ_SWIGLU_P");
    return e != nullptr ? std::atoi(e) : 0;
  }();
  if (swiglu && kQ4 && (swiglu_p == 2 || swiglu_p == 4)) return swiglu_p;
  if (swiglu) return -1;
  if (weight_rows >= 6144 && k < 8192) return 21;
  return kQ4 ? 2 : weight_rows <= 2048 ? 4 : -1;
}
template <class F, bool kSwiglu>
cudaError_t launch_kq(const GemvSegs& s, int64_t outs, int64_t k, const void* q8, int knob, cudaStream_t stream,
                      const RowNormIn& nin) {
  const size_t rb = F::row_bytes(k);
  const int8_t* xq = static_cast<const int8_t*>(q8);
  const float2* xsc = reinterpret_cast<const float2*>(static_cast<const uint8_t*>(q8) + (k + 15) / 16 * 16);
  if (knob == 0) knob = default_variant<F>(kSwiglu ? 2 * outs : outs, k, kSwiglu);
  const int pk = knob < 0 ? 1 : knob % 10;
  const bool known = knob < 0 || pk == 1 || pk == 2 || pk == 4 || pk == 8;
  const int p = !known ? (kSwiglu ? 2 : 4) : kSwiglu ? std::min(pk, 4) : (knob > 10 ? std::min(pk, 4) : pk);
  const bool two = !kSwiglu && knob > 20 && known;
  const auto go = [&](auto rr, auto pp) {
    constexpr int R = decltype(rr)::value, P = decltype(pp)::value;
    constexpr int kOut = RowMap<R, kSwiglu>::kOut;
    launch_kernel(gemv_kq_kernel<F, R, kSwiglu, P>, blocks_for(outs, kWarps * kOut), kWarps * 32, 0, stream, s, rb, k, xq, xsc, nin);
    return cudaGetLastError();
  };
  using I1 = std::integral_constant<int, 1>;
  using I2 = std::integral_constant<int, 2>;
  using I4 = std::integral_constant<int, 4>;
  using I8 = std::integral_constant<int, 8>;
  if constexpr (kSwiglu) {
    return p == 1 ? go(I2{}, I1{}) : p == 2 ? go(I2{}, I2{}) : go(I2{}, I4{});
  } else {
    if (two) return p == 1 ? go(I2{}, I1{}) : p == 2 ? go(I2{}, I2{}) : go(I2{}, I4{});
    return p == 1 ? go(I1{}, I1{}) : p == 2 ? go(I1{}, I2{}) : p == 4 ? go(I1{}, I4{}) : go(I1{}, I8{});
  }
}

// Blocks of a persistent kernel resident on the device at once (queried once per kernel; with
// shared memory, the experiment's, at every launch). Keyed by the kernel's address: instantiations
// with the same signature share the function's type, and their register counts differ. A kernel
// whose grid is sized this way keeps a full dependency in decode graphs (pdl.cuh).
template <class Kernel>
unsigned resident_blocks_now(Kernel kernel, size_t smem) {
  int dev = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kWarps * 32, smem);
  return unsigned(std::max(1, sms) * std::max(1, per_sm));
}
template <class Kernel>
unsigned resident_blocks(Kernel kernel, size_t smem = 0) {
  static std::mutex mu;
  static std::unordered_map<const void*, unsigned> blocks;
  const void* key = reinterpret_cast<const void*>(kernel);
  const std::lock_guard<std::mutex> lock(mu);
  auto it = blocks.find(key);
  if (it == blocks.end()) {
    keep_full_dependency(key);
    it = blocks.emplace(key, resident_blocks_now(kernel, 0)).first;
  }
  return smem != 0 ? resident_blocks_now(kernel, smem) : it->second;
}

// set_gemv_i8_variant; the first launch takes VELLUM_CUDA_GEMV_I8_VARIANT (experiments) if set.
int g_i8_variant = [] {
  const char* e = std::getenv("VELLUM_CUDA_GEMV_I8_VARIANT");
  return e != nullptr ? std::atoi(e) : 0;
}();

// Weight rows per warp by the number of weight rows in the launch (R even for SwiGLU).
template <bool kSwiglu, class Launch>
cudaError_t by_rows(int64_t weight_rows, Launch&& launch) {
  using S = std::integral_constant<bool, kSwiglu>;
  if (weight_rows >= 4096) {
    launch(std::integral_constant<int, 4>{}, S{});
  } else if constexpr (kSwiglu) {
    launch(std::integral_constant<int, 2>{}, S{});
  } else if (weight_rows >= 2048) {
    launch(std::integral_constant<int, 2>{}, S{});
  } else {
    launch(std::integral_constant<int, 1>{}, S{});
  }
  return cudaGetLastError();
}

int64_t total_rows(const GemvSegs& s) { return s.rows[0] + s.rows[1] + s.rows[2]; }

bool segs_ok(const GemvSegs& s) {
  if (s.count < 1 || s.count > kMaxGemvSegs) return false;
  for (int i = 0; i < kMaxGemvSegs; ++i) {
    if ((i < s.count) != (s.rows[i] > 0)) return false;
  }
  return true;
}


template <class F>
cudaError_t dispatch_i8(TensorType type, F&& f) {
  switch (type) {
    case TensorType::Q8_0: return f(I8Q8_0{});
    default: return cudaErrorInvalidValue;
  }
}

// Weight rows a warp of the many-row int8 GEMV (launch_gemv_i8_rows): 0 = the measured default
// (Q4_K / Q6_K 2, Q8_0 4), else 1 / 2 / 4 for every type. VELLUM_CUDA_I8_ROWS_R (experiments).
int g_i8_rows_r = [] {
  const char* e = std::getenv("VELLUM_CUDA_I8_ROWS_R");
  return e != nullptr ? std::atoi(e) : 0;
}();

// set_rows_mma_min_rows; VELLUM_CUDA_ROWS_MMA sets the initial value (0: never, -1: by type).
int g_rows_mma_min = [] {
  const char* e = std::getenv("VELLUM_CUDA_ROWS_MMA");
  return e != nullptr ? std::atoi(e) : -1;
}();
// By type, where rows_mma (split over lane positions when a launch has few blocks) won against the
// rows GEMV on every llama3-8b shape (H100, round 22, kernel alone): Q8_0 from 16 rows (1.2x; 2.0-2.5x
// from 32), Q4_K from 16 (1.1-1.8x; 1.6-2.1x at 32), Q6_K from 32 (1.0-1.1x; 1.2x from 256).
int rows_mma_min(TensorType type) {
  if (g_rows_mma_min >= 0) return g_rows_mma_min;
  return type == TensorType::Q6_K ? 32 : 16;
}

// set_gemv16_variant; VELLUM_CUDA_GEMV16 sets the initial value (experiments).
int g_gemv16_variant = [] {
  const char* e = std::getenv("VELLUM_CUDA_GEMV16");
  return e != nullptr ? std::atoi(e) : 0;
}();

template <class D>
constexpr bool kSixteenBit = std::is_same_v<D, DecBF16x8> || std::is_same_v<D, DecF16x8>;

// gemv16p_kernel: R = 4 / 2 / 1 rows a group by the launch's weight rows (as by_rows), U = 2 runs a
// warp per item (variant 4: U = 4), as many blocks as are resident at once; rows of k >= 1 024 only
// (gemv1_kernel's split-K 4). By default only the SwiGLU pair takes it: on an H200 (docs/cuda.md
// round 7) a first version without split-K lifted 2 x 14336x4096 from 85% to 91% of copy bandwidth
// and lost elsewhere (4096x14336 87% -> 52%: 1 024 row groups are too few warps without split-K).
template <class D, bool kSwiglu>
cudaError_t launch_16p(const GemvSegs& s, int64_t weight_rows, int64_t k, const float* x, cudaStream_t stream) {
  const size_t rb = row_stride<D>(k);
  if (split_for(k / D::kChunk) != kWarps) return cudaErrorNotSupported;  // gemv1_kernel's split must be 4
  const int64_t outs = kSwiglu ? weight_rows / 2 : weight_rows;
  return by_rows<kSwiglu>(weight_rows, [&](auto r, auto sw) {
    constexpr int R = decltype(r)::value;
    constexpr bool S = decltype(sw)::value;
    const auto go = [&](auto u) {
      auto* kernel = gemv16p_kernel<D, R, S, decltype(u)::value>;
      const int64_t groups = (outs + RowMap<R, S>::kOut - 1) / RowMap<R, S>::kOut;
      const unsigned blocks = unsigned(std::min<int64_t>(groups, resident_blocks(kernel)));  // a block per group at a time
      launch_kernel(kernel, blocks, kWarps * 32, 0, stream, s, rb, k, x);
    };
    if (g_gemv16_variant == 4) go(std::integral_constant<int, 4>{});
    else go(std::integral_constant<int, 2>{});
  });
}

}  // namespace

void set_gemv16_variant(int v) { g_gemv16_variant = v; }
void set_rows_mma_min_rows(int rows) { g_rows_mma_min = rows; }

cudaError_t launch_gemv1(TensorType type, const GemvSegs& segs, int64_t k, const float* x, cudaStream_t stream) {
  if (!segs_ok(segs)) return cudaErrorInvalidValue;
  bool vec = true;
  for (int i = 0; i < segs.count; ++i) vec = vec && vec_ok(segs.w[i], k);
  const int64_t n = total_rows(segs);
  return dispatch(type, vec, [&](auto dec) {
    using D = decltype(dec);
    const size_t rb = row_stride<D>(k);
    if constexpr (kSixteenBit<D>) {
      if (g_gemv16_variant >= 1 && split_for(k / D::kChunk) == kWarps) return launch_16p<D, false>(segs, n, k, x, stream);
    }
    return by_rows<false>(n, [&](auto r, auto sw) {
      constexpr int R = decltype(r)::value;
      constexpr bool S = decltype(sw)::value;
      const int sp = split_for(k / D::kChunk);
      launch_kernel(gemv1_kernel<D, R, S>, blocks_for(n, R * (kWarps / sp)), kWarps * 32, 0, stream, segs, rb, k, x, sp);
    });
  });
}

cudaError_t launch_gemv1_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const float* x,
                                float* out, cudaStream_t stream) {
  if (n <= 0) return cudaErrorInvalidValue;
  GemvSegs s;
  s.add(gate, n, out, nullptr);
  s.add(up, n, nullptr, nullptr);
  s.rows[1] = 0;  // SwiGLU: total() is rows[0]
  return dispatch(type, vec_ok(gate, k) && vec_ok(up, k), [&](auto dec) {
    using D = decltype(dec);
    const size_t rb = row_stride<D>(k);
    if constexpr (kSixteenBit<D>) {
      if (g_gemv16_variant >= 0 && split_for(k / D::kChunk) == kWarps) return launch_16p<D, true>(s, 2 * n, k, x, stream);
    }
    return by_rows<true>(2 * n, [&](auto r, auto sw) {
      constexpr int R = decltype(r)::value;
      constexpr bool S = decltype(sw)::value;
      const int sp = split_for(k / D::kChunk);
      launch_kernel(gemv1_kernel<D, R, S>, blocks_for(n, (S ? R / 2 : R) * (kWarps / sp)), kWarps * 32, 0, stream, s, rb, k, x, sp);
    });
  });
}

cudaError_t launch_gemv1_rows(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int rows, float* out,
                              int64_t ldo, const float* bias, cudaStream_t stream) {
  if (n <= 0 || rows < 1 || reinterpret_cast<uintptr_t>(x) % 16 != 0) return cudaErrorInvalidValue;
  const auto* wb = static_cast<const uint8_t*>(w);
  return dispatch(type, vec_ok(w, k), [&](auto dec) {
    using D = decltype(dec);
    if (k % D::kChunk != 0) return cudaErrorInvalidValue;
    const size_t rb = row_stride<D>(k);
    const int sp = split_for(k / D::kChunk);
    constexpr int R = D::kChunk >= 32 ? 1 : 4;  // registers: R x kChunk weights; x is read once for R rows
    const auto go = [&](auto kernel, int b) {
      const int groups = (rows + b - 1) / b;
      launch_kernel(kernel, blocks_for(n, int64_t(R) * (kWarps / sp)) * unsigned(groups), kWarps * 32, 0, stream,
          wb, rb, n, k, x, rows, groups, out, ldo, bias, sp);
      return cudaGetLastError();
    };
    return rows <= 2 ? go(gemv1_rows_kernel<D, R, 2>, 2) : rows <= 4 ? go(gemv1_rows_kernel<D, R, 4>, 4)
                                                           : go(gemv1_rows_kernel<D, R, 8>, 8);
  });
}

bool int8_gemv_supports(TensorType type, int64_t k) {
  switch (type) {
    case TensorType::Q8_0: return k % I8Q8_0::kChunk == 0;
    case TensorType::Q4_K: return k % 256 == 0;
    case TensorType::Q6_K: return k % 256 == 0;
    default: return false;
  }
}
size_t q8_bytes(int64_t k) { return size_t((k + 15) / 16 * 16) + size_t(k / 32) * sizeof(float2); }
const float2* q8_scales(const void* q8, int64_t k) {
  return reinterpret_cast<const float2*>(static_cast<const uint8_t*>(q8) + (k + 15) / 16 * 16);
}

cudaError_t launch_quantize_q8(const float* x, int64_t k, void* q8, cudaStream_t stream) {
  return launch_quantize_q8_rows(x, k, 1, k, q8, stream);
}

cudaError_t launch_quantize_q8_rows(const float* x, int64_t ldx, int rows, int64_t k, void* q8, cudaStream_t stream) {
  if (k % 32 != 0 || rows < 1 || rows > 65535) return cudaErrorInvalidValue;
  launch_kernel(quantize_q8_rows_kernel, dim3(blocks_for(k, 256), unsigned(rows)), 256, 0, stream,
      x, ldx, k, static_cast<int8_t*>(q8), q8_bytes(k), size_t((k + 15) / 16 * 16));
  return cudaGetLastError();
}

namespace {
bool takes_rows_mma(TensorType type, int64_t k, int rows) {
  const int mma_min = rows_mma_min(type);
  return rows > kMaxI8Rows && mma_min > 0 && rows >= mma_min && rows_mma_supports(type, k);
}
}  // namespace

size_t gemv_i8_rows_ws_floats(TensorType type, int64_t n, int64_t k, int rows, int sms) {
  return takes_rows_mma(type, k, rows) ? rows_mma_ws_floats(rows_mma_splits(type, n, rows, sms), n, rows) : 0;
}

namespace {
// The int8 rows GEMV of s's segments (or a SwiGLU pair) at `rows` token rows, ld their strides.
template <bool kSwiglu>
cudaError_t launch_rows(TensorType type, const GemvSegs& s, const RowsLd& ld, int64_t k, const void* q8, int rows,
                        cudaStream_t stream) {
  const auto* xq = static_cast<const int8_t*>(q8);
  const size_t xstride = q8_bytes(k);
  // Weight rows a warp: x is read from L1 once for R of them. Measured on an H200 (round 8, llama3-8b
  // decode of 2 / 4 / 8 sequences): Q4_K_M R = 1 508 / 735 / 975 tok/s, R = 2 532 / 775 / 1 162,
  // R = 4 522 / 809 / 1 109; Q8_0 R = 1 316 / 425 / 543, R = 2 417 / 636 / 852, R = 4 429 / 699 / 984.
  // A SwiGLU warp holds R / 2 outputs' gate and up rows: the default R (the knob's 1 and 4 are not
  // built for it).
  const int R = kSwiglu ? (type == TensorType::Q8_0 ? 4 : 2) : g_i8_rows_r != 0 ? g_i8_rows_r : type == TensorType::Q8_0 ? 4 : 2;
  // More than 8 rows (deterministic mode): groups of 8 (to_x_group).
  const int groups = (rows + kMaxI8Rows - 1) / kMaxI8Rows;
  const int64_t n = kSwiglu ? s.rows[0] : s.rows[0] + s.rows[1] + s.rows[2];
  const auto go = [&](auto kernel, size_t rb, int r) {
    const int outs = kSwiglu ? r / 2 : r;
    launch_kernel(kernel, blocks_for(n, int64_t(kWarps) * outs) * unsigned(groups), kWarps * 32, 0, stream, s, ld, rb, k, xq,
                  xstride, rows, groups);
    return cudaGetLastError();
  };
  // B, the kernel's row capacity: 2, 4 or 8 (rows <= B; the rest of the accumulators idle).
  const auto kq = [&](auto f) {
    using F = decltype(f);
    const size_t rb = F::row_bytes(k);
    if constexpr (!kSwiglu) {
      if (R >= 4) {
        return rows <= 2 ? go(gemv_kq_rows_kernel<F, 4, 2, 1, false>, rb, 4)
               : rows <= 4 ? go(gemv_kq_rows_kernel<F, 4, 4, 1, false>, rb, 4) : go(gemv_kq_rows_kernel<F, 4, 8, 1, false>, rb, 4);
      }
      if (R == 1) {
        return rows <= 2 ? go(gemv_kq_rows_kernel<F, 1, 2, 2, false>, rb, 1)
               : rows <= 4 ? go(gemv_kq_rows_kernel<F, 1, 4, 2, false>, rb, 1) : go(gemv_kq_rows_kernel<F, 1, 8, 1, false>, rb, 1);
      }
    }
    return rows <= 2 ? go(gemv_kq_rows_kernel<F, 2, 2, 1, kSwiglu>, rb, 2)
           : rows <= 4 ? go(gemv_kq_rows_kernel<F, 2, 4, 1, kSwiglu>, rb, 2) : go(gemv_kq_rows_kernel<F, 2, 8, 1, kSwiglu>, rb, 2);
  };
  switch (type) {
    case TensorType::Q4_K: return kq(GemvQ4K{});
    case TensorType::Q6_K: return kq(GemvQ6K{});
    case TensorType::Q8_0: {
      const size_t rb = row_stride<DecQ8_0R>(k);
      if constexpr (!kSwiglu) {
        if (R == 2) {
          return rows <= 2 ? go(gemv_q8_rows_kernel<2, 2, false>, rb, 2) : rows <= 4 ? go(gemv_q8_rows_kernel<2, 4, false>, rb, 2) : go(gemv_q8_rows_kernel<2, 8, false>, rb, 2);
        }
        if (R == 1) {
          return rows <= 2 ? go(gemv_q8_rows_kernel<1, 2, false>, rb, 1) : rows <= 4 ? go(gemv_q8_rows_kernel<1, 4, false>, rb, 1) : go(gemv_q8_rows_kernel<1, 8, false>, rb, 1);
        }
      }
      return rows <= 2 ? go(gemv_q8_rows_kernel<4, 2, kSwiglu>, rb, 4) : rows <= 4 ? go(gemv_q8_rows_kernel<4, 4, kSwiglu>, rb, 4) : go(gemv_q8_rows_kernel<4, 8, kSwiglu>, rb, 4);
    }
    default: return cudaErrorInvalidValue;
  }
}
}  // namespace

cudaError_t launch_gemv_i8_rows(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, int rows, float* out,
                                int64_t ldo, const float* bias, float* ws, int sms, cudaStream_t stream) {
  if (n <= 0 || rows < 2 || rows > 65535 || !int8_gemv_supports(type, k)) return cudaErrorInvalidValue;
  // More than kMaxI8Rows rows (deterministic mode): the same bits on int8 tensor cores (round 22),
  // split over lane positions where the workspace allows it.
  if (takes_rows_mma(type, k, rows)) {
    const int splits = ws != nullptr ? rows_mma_splits(type, n, rows, sms) : 1;
    const cudaError_t rc = launch_rows_mma(type, w, n, k, q8, rows, out, ldo, bias, splits, ws, stream);
    if (rc != cudaErrorNotSupported) return rc;  // else k too wide for its stages: the GEMV below
  }
  GemvSegs s;
  s.add(w, n, out, bias);
  return launch_rows<false>(type, s, RowsLd{{ldo, 0, 0}}, k, q8, rows, stream);
}

bool gemv_i8_rows_fused_supports(TensorType type, int64_t k, int rows) {
  return rows >= 2 && rows <= 65535 && int8_gemv_supports(type, k) && !takes_rows_mma(type, k, rows);
}

bool gemv_i8_rows_segs_supports(TensorType type, const GemvSegs& s, int64_t k, int rows) {
  if (!gemv_i8_rows_fused_supports(type, k, rows) || s.count < 1 || s.count > kMaxGemvSegs) return false;
  for (int g = 0; g < s.count; ++g) {
    if (s.rows[g] <= 0 || (g + 1 < s.count && s.rows[g] % 4 != 0)) return false;  // a warp's rows in one segment (WarpRows)
  }
  return true;
}

cudaError_t launch_gemv_i8_rows_segs(TensorType type, const GemvSegs& s, int64_t k, const void* q8, int rows, cudaStream_t stream) {
  if (!gemv_i8_rows_segs_supports(type, s, k, rows)) return cudaErrorInvalidValue;
  return launch_rows<false>(type, s, RowsLd{{s.rows[0], s.rows[1], s.rows[2]}}, k, q8, rows, stream);  // absent segments: 0 rows
}

cudaError_t launch_gemv_i8_rows_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* q8,
                                       int rows, float* out, cudaStream_t stream) {
  if (n <= 0 || !gemv_i8_rows_fused_supports(type, k, rows)) return cudaErrorInvalidValue;
  GemvSegs s;
  s.add(gate, n, out, nullptr);
  s.add(up, n, out, nullptr);
  return launch_rows<true>(type, s, RowsLd{{n, n, 0}}, k, q8, rows, stream);
}

namespace {

// Default kernel choice. Round 6 (H200, before decode graphs used programmatic launch) measured the
// persistent kernel ahead for Q8_0 launches of >= 8 192 weight rows or k >= 8 192; since round 8
// the one-shot kernel loads its first weights before the programmatic wait, which a persistent
// kernel (full dependency, pdl.cuh) cannot, and round 12 measured the one-shot kernel ahead at every
// shape (llama3-8b Q8_0 batch 1, graphs + PDL: 316-327 -> 333-334 tok/s; eager 286-289 -> 291-294).
// So the persistent kernel is only a knob variant (1/2/4, 11-14). Same bits either way (same
// reduction order).
// One int8 launch: the one-shot kernel (the default, or variant -1 of the bench knob), or the
// persistent kernel with R rows a warp (SwiGLU: R/2 outputs; variants 1 / 2 / 4, 11 / 12 / 14).
template <class D, bool kSwiglu>
cudaError_t launch_i8(const GemvSegs& s, int64_t weight_rows, int64_t k, const void* q8, cudaStream_t stream,
                      const RowNormIn& nin) {
  const size_t rb = row_stride<typename D::Dec>(k);
  const int8_t* xq = static_cast<const int8_t*>(q8);
  const float2* xs = q8_scales(q8, k);
  const int64_t outs = kSwiglu ? weight_rows / 2 : weight_rows;
  // Q6_K's 128-element chunks: two buffers of 2 rows already spill, so the knob can pick the
  // persistent kernel for it at 1 row a warp only, and its SwiGLU pair always takes the one-shot.
  constexpr bool kOneShotOnly = D::kInFlight == 1 && kSwiglu;
  if (g_i8_variant <= 0 || kOneShotOnly ||
      (g_i8_variant > 10 && D::kInFlight == 1)) {
    return by_rows<kSwiglu>(weight_rows, [&](auto r, auto sw) {
      constexpr int R = decltype(r)::value;
      constexpr bool S = decltype(sw)::value;
      const int sp = i8_split<D>(k);
      launch_kernel(gemv_i8_kernel<D, R, S>, blocks_for(outs, (S ? R / 2 : R) * (kWarps / sp)), kWarps * 32, 0, stream, s, rb, k, xq, xs, sp,
                    nin, RowNormOut{});
    });
  }
  if (nin.partial != nullptr) return cudaErrorInvalidValue;  // the persistent variants take no norm (gemv_norm_in_supports)
  // Variants 11 / 12 / 14: x staged in shared memory (experiment), R = 1 / 2 / 4.
  const size_t smem = size_t(k + k / 4);
  const bool smem_x = g_i8_variant > 10 && D::kInFlight > 1 && k % 64 == 0 && smem <= 48 * 1024;
  const auto go = [&](auto r) {
    constexpr int R = decltype(r)::value;
    const int64_t groups = (outs + RowMap<R, kSwiglu>::kOut - 1) / RowMap<R, kSwiglu>::kOut;
    if constexpr (D::kInFlight > 1) {
      if (smem_x) {
        auto* kernel = gemv_i8p_kernel<D, R, kSwiglu, true>;
        const unsigned blocks = std::min<unsigned>(blocks_for(groups, kWarps), resident_blocks(kernel, smem));
        launch_kernel(kernel, blocks, kWarps * 32, smem, stream, s, rb, k, xq, xs);
        return cudaGetLastError();
      }
    }
    auto* kernel = gemv_i8p_kernel<D, R, kSwiglu>;
    const unsigned blocks = std::min<unsigned>(blocks_for(groups, kWarps), resident_blocks(kernel));
    launch_kernel(kernel, blocks, kWarps * 32, 0, stream, s, rb, k, xq, xs);
    return cudaGetLastError();
  };
  if constexpr (D::kInFlight == 1) {
    if constexpr (kOneShotOnly) return cudaErrorInvalidValue;  // not reached
    else return go(std::integral_constant<int, 1>{});
  } else {
    const int v = g_i8_variant > 10 ? g_i8_variant - 10 : g_i8_variant > 0 ? g_i8_variant : 4;
    if (v >= 4) return go(std::integral_constant<int, 4>{});
    if (v >= 2 || kSwiglu) return go(std::integral_constant<int, 2>{});
    if constexpr (!kSwiglu) return go(std::integral_constant<int, 1>{});
    return cudaErrorInvalidValue;  // not reached
  }
}

}  // namespace

void set_gemv_i8_variant(int v) { g_i8_variant = v; }

cudaError_t launch_gemv_i8(TensorType type, const GemvSegs& segs, int64_t k, const void* q8, cudaStream_t stream,
                           const RowNormIn& nin) {
  if (!segs_ok(segs) || !int8_gemv_supports(type, k)) return cudaErrorInvalidValue;
  if (nin.partial != nullptr && !gemv_norm_in_supports(type, k)) return cudaErrorInvalidValue;
  if (type == TensorType::Q4_K) return launch_kq<GemvQ4K, false>(segs, total_rows(segs), k, q8, g_i8_variant, stream, nin);
  if (type == TensorType::Q6_K) return launch_kq<GemvQ6K, false>(segs, total_rows(segs), k, q8, g_i8_variant, stream, nin);
  return dispatch_i8(type, [&](auto dec) { return launch_i8<decltype(dec), false>(segs, total_rows(segs), k, q8, stream, nin); });
}

bool gemv_norm_in_supports(TensorType type, int64_t k) {
  if (!int8_gemv_supports(type, k) || k % 32 != 0) return false;
  return type == TensorType::Q4_K || type == TensorType::Q6_K || (type == TensorType::Q8_0 && g_i8_variant <= 0);
}

// Round 43's producer shapes: R weight rows a warp, 32 / R warps a block. Q4_K 1 row of 2 passes
// and Q6_K 1 row of 1 pass (the batch-1 launches' defaults at these shapes; 2 rows, 1 pass: llama3-8b
// Q4_K_M batch 1 522 tok/s against 581), Q8_0 2 rows (4 rows: 410 tok/s against 418; H200, round
// 43 call 1). set_gemv_norm_out_rows / VELLUM_CUDA_ROW_NORM_R pick another R (Q4_K/Q6_K 1 or 2,
// Q8_0 1, 2 or 4).
static int g_norm_out_rows = [] {
  const char* e = std::getenv("VELLUM_CUDA_ROW_NORM_R");
  return e != nullptr ? std::atoi(e) : 0;
}();
void set_gemv_norm_out_rows(int r) { g_norm_out_rows = r; }
// Round 48's staged producer (gemv_norm_out_staged.h) where it takes the shape: its rows a warp
// (1, 2, 4 or 8) for every type, 0 = the register producers, -1 (unset) = the measured default: Q4_K /
// Q6_K as 8 warps of 4 rows (llama3-8b Q4_K_M batch 1 +0.2–1.2%), Q8_0 on the register producer
// (−0.5 to −1.6% staged). VELLUM_CUDA_NORM_OUT_STAGED / set_gemv_norm_out_staged.
static int norm_out_staged_env() {
  const char* e = std::getenv("VELLUM_CUDA_NORM_OUT_STAGED");
  return e != nullptr ? std::atoi(e) : -1;
}
static int norm_out_staged_rows(TensorType type, int knob) {
  if (knob >= 0) return knob;
  return type == TensorType::Q4_K || type == TensorType::Q6_K ? 4 : 0;
}
static int g_norm_out_staged = norm_out_staged_env();
void set_gemv_norm_out_staged(int rows) { g_norm_out_staged = rows < 0 ? norm_out_staged_env() : rows; }

bool gemv_norm_out_supports(TensorType type, int64_t n, int64_t k) {
  if (n <= 0 || n % 32 != 0 || !int8_gemv_supports(type, k)) return false;
  static_assert(I8Q8_0::kInFlight > 1, "Q8_0's int8 launches never split K (i8_split): its producer passes split 1");
  return type == TensorType::Q8_0 || type == TensorType::Q4_K || type == TensorType::Q6_K;
}

cudaError_t launch_gemv_i8_norm_out(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, float* x,
                                    const RowNormOut& no, cudaStream_t stream) {
  if (!gemv_norm_out_supports(type, n, k) || no.gain == nullptr || no.z_q8 == nullptr || no.partial == nullptr || x == nullptr) {
    return cudaErrorInvalidValue;
  }
  const int staged = norm_out_staged_rows(type, g_norm_out_staged);
  if ((staged == 1 || staged == 2 || staged == 4 || staged == 8) && gemv_norm_out_staged_takes(type, n, k)) {
    return launch_gemv_norm_out_staged(type, w, n, k, q8, x, no, staged, stream);
  }
  GemvSegs s;
  s.add(w, n, x, x);  // x += w·a: the bias is the output, read before it is written (the same thread)
  const auto* xq = static_cast<const int8_t*>(q8);
  const float2* xs = q8_scales(q8, k);
  const unsigned blocks = unsigned(n / 32);
  const int r = g_norm_out_rows;
  const auto kq = [&](auto f, auto rr, auto pp) {
    using F = decltype(f);
    constexpr int R = decltype(rr)::value, P = decltype(pp)::value;
    launch_kernel(gemv_kq_norm_out_kernel<F, R, P>, blocks, 32 / R * 32, 0, stream, s, F::row_bytes(k), k, xq, xs, no);
    return cudaGetLastError();
  };
  using I1 = std::integral_constant<int, 1>;
  using I2 = std::integral_constant<int, 2>;
  if (type == TensorType::Q4_K) return r == 2 ? kq(GemvQ4K{}, I2{}, I1{}) : kq(GemvQ4K{}, I1{}, I2{});
  if (type == TensorType::Q6_K) return r == 2 ? kq(GemvQ6K{}, I2{}, I1{}) : kq(GemvQ6K{}, I1{}, I1{});
  const size_t rb = row_stride<typename I8Q8_0::Dec>(k);
  if (r == 4) {
    launch_kernel(gemv_i8_kernel<I8Q8_0, 4, false, 8, true>, blocks, 8 * 32, 0, stream, s, rb, k, xq, xs, 1, RowNormIn{}, no);
  } else if (r == 1) {  // round 47: 32 warps of one row, the Q4_K / Q6_K producers' shape (410.0 tok/s against 413.3)
    launch_kernel(gemv_i8_kernel<I8Q8_0, 1, false, 32, true>, blocks, 32 * 32, 0, stream, s, rb, k, xq, xs, 1, RowNormIn{}, no);
  } else {
    launch_kernel(gemv_i8_kernel<I8Q8_0, 2, false, 16, true>, blocks, 16 * 32, 0, stream, s, rb, k, xq, xs, 1, RowNormIn{}, no);
  }
  return cudaGetLastError();
}

// The pair launch (round 29) for one Q4_K and one Q6_K launch whose defaults are one row a warp,
// Q4_K with 2 passes, Q6_K with 1 or 4 (Q4_K_M's Q/K and V): their passes (0: not a pair).
static int pair_q6_passes(const GemvSegs& q4, const GemvSegs& q6, int64_t k) {
  if (g_i8_variant != 0 || default_variant<GemvQ4K>(total_rows(q4), k, false) != 2) return 0;
  const int v = default_variant<GemvQ6K>(total_rows(q6), k, false);
  return v == 4 ? 4 : v == -1 ? 1 : 0;
}

bool gemv_i8_pair_supports(TensorType ta, const GemvSegs& a, TensorType tb, const GemvSegs& b, int64_t k) {
  if (!segs_ok(a) || !segs_ok(b) || !int8_gemv_supports(ta, k) || !int8_gemv_supports(tb, k)) return false;
  if (ta == TensorType::Q4_K && tb == TensorType::Q6_K) return pair_q6_passes(a, b, k) != 0;
  if (ta == TensorType::Q6_K && tb == TensorType::Q4_K) return pair_q6_passes(b, a, k) != 0;
  return false;
}

cudaError_t launch_gemv_i8_pair(TensorType ta, const GemvSegs& a, TensorType tb, const GemvSegs& b, int64_t k, const void* q8,
                                cudaStream_t stream, const RowNormIn& nin) {
  if (!gemv_i8_pair_supports(ta, a, tb, b, k)) return cudaErrorInvalidValue;
  const GemvSegs& q4 = ta == TensorType::Q4_K ? a : b;
  const GemvSegs& q6 = ta == TensorType::Q4_K ? b : a;
  const auto* xq = static_cast<const int8_t*>(q8);
  const float2* xs = q8_scales(q8, k);
  // The Q4_K part: 2 rows of 1 pass a warp, the all-Q4_K Q/K/V launch's shape (round 46: 896 blocks
  // instead of 1 536, +1.3% llama3-8b Q4_K_M batch 1 on an H200); VELLUM_CUDA_PAIR_Q4_R=1 (measurements):
  // round 29's 1 row of 2 passes.
  static const int q4_rows = [] {
    const char* e = std::getenv("VELLUM_CUDA_PAIR_Q4_R");
    return e != nullptr && std::atoi(e) == 1 ? 1 : 2;
  }();
  const unsigned blocks_q4 = blocks_for(total_rows(q4), kWarps * q4_rows), blocks = blocks_q4 + blocks_for(total_rows(q6), kWarps);
  const size_t rb4 = GemvQ4K::row_bytes(k), rb6 = GemvQ6K::row_bytes(k);
  const bool p4 = pair_q6_passes(q4, q6, k) == 4;
  if (q4_rows == 2) {
    launch_kernel(p4 ? gemv_kq_pair_kernel<GemvQ4K, 2, 1, GemvQ6K, 4> : gemv_kq_pair_kernel<GemvQ4K, 2, 1, GemvQ6K, 1>, blocks,
                  kWarps * 32, 0, stream, q4, rb4, blocks_q4, q6, rb6, k, xq, xs, nin);
  } else {
    launch_kernel(p4 ? gemv_kq_pair_kernel<GemvQ4K, 1, 2, GemvQ6K, 4> : gemv_kq_pair_kernel<GemvQ4K, 1, 2, GemvQ6K, 1>, blocks,
                  kWarps * 32, 0, stream, q4, rb4, blocks_q4, q6, rb6, k, xq, xs, nin);
  }
  return cudaGetLastError();
}

cudaError_t launch_gemv_i8_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k,
                                  const void* q8, float* out, cudaStream_t stream, const RowNormIn& nin) {
  if (n <= 0 || !int8_gemv_supports(type, k)) return cudaErrorInvalidValue;
  if (nin.partial != nullptr && !gemv_norm_in_supports(type, k)) return cudaErrorInvalidValue;
  GemvSegs s;
  s.add(gate, n, out, nullptr);
  s.add(up, n, nullptr, nullptr);
  s.rows[1] = 0;
  if (type == TensorType::Q4_K) return launch_kq<GemvQ4K, true>(s, n, k, q8, g_i8_variant, stream, nin);
  if (type == TensorType::Q6_K) return launch_kq<GemvQ6K, true>(s, n, k, q8, g_i8_variant, stream, nin);
  return dispatch_i8(type, [&](auto dec) { return launch_i8<decltype(dec), true>(s, 2 * n, k, q8, stream, nin); });
}

}  // namespace vellum::cuda
