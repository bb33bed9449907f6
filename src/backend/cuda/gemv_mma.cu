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
#include "backend/cuda/gemv_mma_step.cuh"
#include "backend/cuda/gemv_mma_wide.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/mma_s8.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"

namespace vellum::cuda {
namespace {
using namespace mma_rows;


// Block (j, token): 256 threads quantize one super-block of one token row (zeros past `rows`) into
// the fragment order of gemv_mma.h (mma_x_vsb, mma_x_frag_byte, mma_x_scale_index) for nt tiles.
__global__ void quantize_mma_x_kernel(const float* x, int64_t ldx, int rows, int64_t k, int nt, uint8_t* xf) {
  pdl_wait();
  const int64_t j = blockIdx.x, kv = k * nt;
  const int token = int(blockIdx.y), e = int(threadIdx.x), s = e / 32, col = token % kMmaTile;
  const int64_t vj = mma_x_vsb(j, token, nt);
  const float v = token < rows ? x[token * ldx + j * kSuper + e] : 0.0f;
  float2* xs = reinterpret_cast<float2*>(xf + kMmaTile * kv) + mma_x_scale_index(vj, col, s);
  quantize_q8_warp(v, reinterpret_cast<int8_t*>(xf + mma_x_frag_byte(vj, col, e)), xs);
  __syncwarp();
  if (e % 32 == 0) {  // the minimums' tf32 pair of d·Σq (the lane wrote *xs)
    const float m = xs->y, hi = __uint_as_float(__float_as_uint(m) & 0xFFFFE000u);
    float* xm = reinterpret_cast<float*>(xf + mma_x_min_offset(kv));
    xm[mma_x_min_index(vj, col, s, false)] = hi;
    xm[mma_x_min_index(vj, col, s, true)] = m - hi;
  }
}

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
  if (mma_tiles(rows) > 2) return launch_gemv_mma_wide(type, s, &ldo, false, k, xf, rows, sms, stream);
  return launch_out<false>(type, mma_out(s, &ldo, 16), k, xf, rows, (n + 15) / 16, sms, stream);
}

bool gemv_mma_segs_supports(TensorType type, const GemvSegs& s, int64_t k, int rows, int sms) {
  if (!gemv_mma_supports(type, k) || s.count < 1 || s.count > kMaxGemvSegs) return false;
  for (int g = 0; g < s.count; ++g) {
    if (s.rows[g] <= 0) return false;
  }
  if (mma_tiles(rows) > 2) return true;  // the wide kernel: a row's bits depend on k alone
  int64_t blocks = 0;
  for (int g = 0; g < s.count; ++g) blocks += (s.rows[g] + 15) / 16;
  const int shape = shape_of(type, blocks, k / kSuper, sms);
  for (int g = 0; g < s.count; ++g) {
    if (shape_of(type, (s.rows[g] + 15) / 16, k / kSuper, sms) != shape) return false;
  }
  return true;
}

cudaError_t launch_gemv_mma_segs(TensorType type, const GemvSegs& s, int64_t k, const void* xf, int rows, int sms,
                                 cudaStream_t stream) {
  if (rows < 1 || rows > kMmaRowsMax || !gemv_mma_segs_supports(type, s, k, rows, sms)) return cudaErrorInvalidValue;
  if (mma_tiles(rows) > 2) return launch_gemv_mma_wide(type, s, nullptr, false, k, xf, rows, sms, stream);
  const MmaOut o = mma_out(s, nullptr, 16);
  return launch_out<false>(type, o, k, xf, rows, o.first[kMaxGemvSegs], sms, stream);
}

cudaError_t launch_gemv_mma_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* xf,
                                   int rows, float* out, int sms, cudaStream_t stream) {
  if (!gemv_mma_supports(type, k) || n <= 0 || rows < 1 || rows > kMmaRowsMax) return cudaErrorInvalidValue;
  GemvSegs s;
  s.add(gate, n, out, nullptr);
  s.add(up, n, out, nullptr);
  if (mma_tiles(rows) > 2) return launch_gemv_mma_wide(type, s, nullptr, true, k, xf, rows, sms, stream);
  MmaOut o = mma_out(s, nullptr, 16);
  o.first[1] = o.first[2] = o.first[kMaxGemvSegs] = unsigned((n + 15) / 16);  // every block: gate and up rows
  return launch_out<true>(type, o, k, xf, rows, (n + 15) / 16, sms, stream);
}

}  // namespace vellum::cuda
