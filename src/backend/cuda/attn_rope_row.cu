// A layer's attention for a step of one token row, RoPE and the K/V store included (round 29):
// see attn_rope_row.h.

#include "backend/cuda/attn_rope_row.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "backend/cuda/arrive_last.cuh"
#include "backend/cuda/attn_merge.cuh"
#include "backend/cuda/block_slot.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/pack16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {
namespace {

constexpr int kThreads = 512, kWarps = kThreads / 32;
constexpr int kWarpPositions = kRopeRowSpan / kWarps;  // 8
constexpr int kHeads = 4;                              // query heads a block

__device__ __forceinline__ float2 to_f2(uint32_t u, __half) { return __half22float2(*reinterpret_cast<const __half2*>(&u)); }
__device__ __forceinline__ float2 to_f2(uint32_t u, __nv_bfloat16) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u));
}
// x rounded to the pool's type (as rope_store_kv_kernel stores it), back in f32.
__device__ __forceinline__ float rounded(float x, __half) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float rounded(float x, __nv_bfloat16) { return __bfloat162float(__float2bfloat16_rn(x)); }
__device__ __forceinline__ void put(__half* p, float x) { *p = __float2half_rn(x); }
__device__ __forceinline__ void put(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }
// 8 floats exactly representable in T as one 16-byte K or V piece.
template <typename T>
__device__ __forceinline__ uint4 pack8(const float* x) {
  return make_uint4(pack2(x[0], x[1], T{}), pack2(x[2], x[3], T{}), pack2(x[4], x[5], T{}), pack2(x[6], x[7], T{}));
}

// Block (slice, KV head × query group): positions [128·slice, 128·slice + 128) of row 0 against the
// group's ≤ 4 query heads. The layout of round 5's decode kernel (attention.cu) with 16 warps of 8
// positions: HD/8 lanes share a position, each holding 8 dims in one 16-byte K and one V load.
// Before the programmatic wait: the step's inputs, the K/V of every position older than the row's
// own, and each thread's RoPE angle (one double sincos, as rope_store_kv_kernel). After it: the raw
// q / k / v rows (L2) are rotated exactly as rope_store_kv_kernel rotates them, the newest k and v
// rounded to the pool's type and stored by the group-0 block of the slice that holds the position,
// and used from shared memory, not read back. A row of one slice writes out (and its int8 copy)
// directly; longer rows write span partials that the row's last block merges (merge_head).
template <typename T, int HD>
__global__ void __launch_bounds__(kThreads) attn_rope_row_kernel(AttnParams p, RopeRowInputs in) {
  constexpr int LG = HD / 8, PPI = 32 / LG, IT = kWarpPositions / PPI;
  static_assert(IT >= 1 && kWarpPositions % PPI == 0, "whole position groups a warp");
  static_assert(kThreads % HD == 0 && kThreads / HD >= 1, "one rotated element a thread");
  __shared__ __align__(16) float qs[kHeads][HD];
  __shared__ __align__(16) float kn[HD];
  __shared__ __align__(16) float vn[HD];
  __shared__ float red_m[kWarps][kHeads], red_l[kWarps][kHeads];
  __shared__ float red_acc[kWarps][kHeads][HD];
  const int slice = blockIdx.x, p0 = slice * kRopeRowSpan;
  const int G = p.heads / p.kv.kv_heads, groups = (G + kHeads - 1) / kHeads;
  const int kvh = blockIdx.y / groups, grp = blockIdx.y % groups, g0 = grp * kHeads, ng = min(kHeads, G - g0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, lp = lane / LG, part = lane % LG;
  const int64_t row_elems = int64_t(p.kv.kv_heads) * HD;
  const int ctx = p.row_ctx[0], newest = ctx - 1;
  const int32_t* table = p.tables + p.row_table[0];
  const int pos0 = p0 + warp * kWarpPositions + lp;  // lane group lp's first position
  const T* pool = static_cast<const T*>(p.kv.pool);
  uint4 kr[IT];
  uint4 vr[IT];
  {
    const int bs = p.kv.block_size;
    BlockSlot at(pos0, bs);
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if (it > 0) at.advance(PPI, bs);
      if (pos0 + it * PPI < newest && (in.dbg & 2) == 0) {
        const T* base = pool + int64_t(table[at.block]) * p.kv.block_elems + int64_t(at.slot) * row_elems + int64_t(kvh) * HD + part * 8;
        kr[it] = *reinterpret_cast<const uint4*>(base + p.kv.k_off);
        vr[it] = *reinterpret_cast<const uint4*>(base + p.kv.v_off);
      } else {
        kr[it] = make_uint4(0, 0, 0, 0), vr[it] = make_uint4(0, 0, 0, 0);
      }
    }
  }
  // This thread rotates dim td of head tj of the group (and, with tj = 0, of the newest k): pair
  // pi = (a, b), whose angle it computes now.
  const RopeParams& rp = in.rope;
  const int tj = threadIdx.x / HD, td = threadIdx.x % HD;
  const bool rotated = td < 2 * rp.half;
  const int pi = rp.interleaved ? td / 2 : (td < rp.half ? td : td - rp.half);
  const int a = rp.interleaved ? 2 * pi : pi, b = rp.interleaved ? 2 * pi + 1 : pi + rp.half;
  float cf = 0.0f, sf = 0.0f;
  if (rotated && tj < kHeads && (in.dbg & 4) == 0) {
    double s, c;
    sincos(double(*in.position) * rp.inv_freq[pi], &s, &c);
    cf = static_cast<float>(c * rp.magnitude);
    sf = static_cast<float>(s * rp.magnitude);
  }
  pdl_wait();
  if (p0 >= ctx || (in.dbg & 1) != 0) return;
  const auto rotate = [&](const float* h) {
    if ((in.dbg & 32) != 0) return cf;
    if (!rotated) return h[td];
    const float x0 = h[a], x1 = h[b];
    return td == a ? sub(mul(x0, cf), mul(x1, sf)) : add(mul(x0, sf), mul(x1, cf));
  };
  const bool holds_newest = newest < p0 + kRopeRowSpan;  // and newest >= p0, since p0 < ctx
  if (tj < ng) qs[tj][td] = rotate(p.q + int64_t(kvh * G + g0 + tj) * HD);
  if (holds_newest && tj == 0) {
    const float kx = rounded(rotate(in.k + int64_t(kvh) * HD), T{});
    const float vx = rounded((in.dbg & 32) != 0 ? sf : in.v[int64_t(kvh) * HD + td], T{});
    kn[td] = kx;
    vn[td] = vx;
    if (grp == 0) {  // one writer per KV head
      const int64_t slot = *in.slot;
      T* base = static_cast<T*>(p.kv.pool) + (slot / p.kv.block_size) * p.kv.block_elems +
                (slot % p.kv.block_size) * row_elems + int64_t(kvh) * HD + td;
      put(base + p.kv.k_off, kx);
      put(base + p.kv.v_off, vx);
    }
  }
  __syncthreads();
  if (holds_newest) {
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if (pos0 + it * PPI == newest) kr[it] = pack8<T>(kn + part * 8), vr[it] = pack8<T>(vn + part * 8);
    }
  }
  float q[kHeads][8];
#pragma unroll
  for (int j = 0; j < kHeads; ++j) {
    const float* qp = qs[min(j, ng - 1)] + part * 8;
    const float4 x0 = *reinterpret_cast<const float4*>(qp), x1 = *reinterpret_cast<const float4*>(qp + 4);
    q[j][0] = x0.x, q[j][1] = x0.y, q[j][2] = x0.z, q[j][3] = x0.w, q[j][4] = x1.x, q[j][5] = x1.y, q[j][6] = x1.z, q[j][7] = x1.w;
  }
  float s[IT][kHeads], mx[kHeads];
#pragma unroll
  for (int j = 0; j < kHeads; ++j) mx[j] = -INFINITY;
#pragma unroll
  for (int it = 0; it < IT * ((in.dbg & 16) == 0); ++it) {
    float k[8];
    const uint32_t w[4] = {kr[it].x, kr[it].y, kr[it].z, kr[it].w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = to_f2(w[e], T{});
      k[2 * e] = f.x, k[2 * e + 1] = f.y;
    }
    const bool valid = pos0 + it * PPI < ctx;
#pragma unroll
    for (int j = 0; j < kHeads; ++j) {
      float dot = 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) dot += q[j][e] * k[e];
#pragma unroll
      for (int o = LG / 2; o > 0; o /= 2) dot += __shfl_xor_sync(kFull, dot, o);
      s[it][j] = valid ? dot * p.scale : -INFINITY;
      mx[j] = fmaxf(mx[j], s[it][j]);
    }
  }
#pragma unroll
  for (int j = 0; j < kHeads; ++j) {
#pragma unroll
    for (int o = 16; o >= LG; o /= 2) mx[j] = fmaxf(mx[j], __shfl_xor_sync(kFull, mx[j], o));
    if (lane == 0) red_m[warp][j] = mx[j];
  }
  __syncthreads();
  float acc[kHeads][8], l[kHeads];
#pragma unroll
  for (int j = 0; j < kHeads; ++j) {
    mx[j] = red_m[0][j];  // the slice's max (finite: position p0 < ctx is warp 0's)
#pragma unroll
    for (int w = 1; w < kWarps; ++w) mx[j] = fmaxf(mx[j], red_m[w][j]);
    l[j] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[j][e] = 0.0f;
  }
#pragma unroll
  for (int it = 0; it < IT * ((in.dbg & 16) == 0); ++it) {
    float v[8];
    const uint32_t w[4] = {vr[it].x, vr[it].y, vr[it].z, vr[it].w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = to_f2(w[e], T{});
      v[2 * e] = f.x, v[2 * e + 1] = f.y;
    }
#pragma unroll
    for (int j = 0; j < kHeads; ++j) {
      const float pe = expf(s[it][j] - mx[j]);  // 0 for masked positions (-inf)
      l[j] += pe;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[j][e] += pe * v[e];
    }
  }
#pragma unroll
  for (int j = 0; j < kHeads; ++j) {
#pragma unroll
    for (int o = 16; o >= LG; o /= 2) {
      l[j] += __shfl_xor_sync(kFull, l[j], o);
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[j][e] += __shfl_xor_sync(kFull, acc[j][e], o);
    }
    if (lane < LG) {
#pragma unroll
      for (int e = 0; e < 8; ++e) red_acc[warp][j][part * 8 + e] = acc[j][e];
      if (lane == 0) red_l[warp][j] = l[j];
    }
  }
  __syncthreads();
  // Thread (tj, td) sums its head's dim over the warps in order (whole warps: HD % 32 == 0).
  const int spans = (in.dbg & 8) != 0 ? 1 : (ctx + kRopeRowSpan - 1) / kRopeRowSpan;
  if (tj < ng) {
    float o = 0.0f, lt = 0.0f, mt = red_m[0][tj];
#pragma unroll
    for (int w = 0; w < kWarps; ++w) o += red_acc[w][tj][td], lt += red_l[w][tj], mt = fmaxf(mt, red_m[w][tj]);
    const int64_t head = int64_t(kvh) * G + g0 + tj;
    if (spans == 1) {  // as merge_head over one span: o / l
      const float y = o / lt;
      p.out[head * HD + td] = y;
      if (p.out_q8 != nullptr) {
        const int64_t i = head * HD + td;
        quantize_q8_warp(y, p.out_q8 + i, reinterpret_cast<float2*>(p.out_q8 + p.q8_xs_off) + i / 32);
      }
    } else {
      const int64_t idx = head * p.max_splits + slice;
      p.part_acc[idx * HD + td] = o;
      if (td == 0) p.part_ml[2 * idx] = mt, p.part_ml[2 * idx + 1] = lt;
    }
  }
  if (spans == 1) return;
  if (!arrive_last(p.counters + int64_t(kvh) * groups + grp, 1, spans)) return;
  if (warp < ng) merge_head<HD>(p, 0, 0, kvh * G + g0 + warp, spans, lane);
}

template <typename T, int HD>
cudaError_t launch(const AttnParams& p, const RopeRowInputs& in, cudaStream_t stream) {
  const int G = p.heads / p.kv.kv_heads, groups = (G + kHeads - 1) / kHeads;
  const int slices = (p.max_splits * kAttnSplit + kRopeRowSpan - 1) / kRopeRowSpan;
  attn_rope_row_kernel<T, HD><<<dim3(unsigned(slices), unsigned(p.kv.kv_heads * groups)), kThreads, 0, stream>>>(p, in);
  return cudaGetLastError();
}

int g_on = -1;  // -1: not read from the environment yet

}  // namespace

void set_attn_rope_row(bool on) { g_on = on ? 1 : 0; }

bool attn_rope_row_takes(const AttnParams& p, const RopeParams& rope) {
  if (g_on < 0) {
    const char* e = std::getenv("VELLUM_CUDA_ROPE_ATTN");
    g_on = e != nullptr && std::string(e) == "0" ? 0 : 1;
  }
  const int hd = p.kv.head_dim;
  const int64_t positions = int64_t(p.max_splits) * kAttnSplit;
  const bool long_row = attn_long_variant() > 0 && positions >= attn_long_min();  // round 17's kernel
  return g_on == 1 && p.deterministic == 0 && (p.kv.type == TensorType::F16 || p.kv.type == TensorType::BF16) &&
         (hd == 64 || hd == 128) && rows_aligned8(p.kv) && p.kv.kv_heads > 0 && p.heads % p.kv.kv_heads == 0 &&
         p.heads / p.kv.kv_heads <= kMaxAttnGroup && positions >= 1 && positions <= kRopeRowMaxPositions && !long_row &&
         p.split_rows == nullptr && p.counters != nullptr && p.part_acc != nullptr && p.part_ml != nullptr &&
         rope.half >= 0 && 2 * rope.half <= hd && rope.half <= kMaxRopePairs;
}

cudaError_t launch_attention_rope_row(const AttnParams& p, const RopeRowInputs& in, cudaStream_t stream) {
  static const int dbg = [] {
    const char* e = std::getenv("VELLUM_CUDA_ROPE_ATTN_DBG");
    return e != nullptr ? std::atoi(e) : 0;
  }();
  if (dbg != 0 && in.dbg == 0) {
    RopeRowInputs d = in;
    d.dbg = dbg;
    return launch_attention_rope_row(p, d, stream);
  }
  if (!attn_rope_row_takes(p, in.rope) || in.k == nullptr || in.v == nullptr || in.position == nullptr || in.slot == nullptr) {
    return cudaErrorInvalidValue;
  }
  const bool hd128 = p.kv.head_dim == 128;
  if (p.kv.type == TensorType::F16) return hd128 ? launch<__half, 128>(p, in, stream) : launch<__half, 64>(p, in, stream);
  return hd128 ? launch<__nv_bfloat16, 128>(p, in, stream) : launch<__nv_bfloat16, 64>(p, in, stream);
}

}  // namespace vellum::cuda
