// Paged attention kernels: the split path (decode, short chunks) and the tensor-core path
// (prefill / verify chunks). See attention.h for what each computes.

#include "backend/cuda/attention.h"
#include "backend/cuda/arrive_last.cuh"
#include "backend/cuda/attn_wgmma.h"
#include "backend/cuda/block_slot.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/online_softmax.cuh"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/mma16.cuh"
#include "backend/cuda/cuda_util.h"
#include "backend/cuda/pack16.cuh"
#include "backend/cuda/warp_reduce.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

namespace vellum::cuda {
namespace {



__device__ __forceinline__ float kv_get(const float* p) { return *p; }
__device__ __forceinline__ float kv_get(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ float kv_get(const __nv_bfloat16* p) { return __bfloat162float(*p); }
// Four consecutive elements (16-byte f32 or 8-byte 16-bit loads; the caller guarantees alignment).
__device__ __forceinline__ float4 kv_get4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ float2 pair_to_f2(uint32_t u, __half) {
  return __half22float2(*reinterpret_cast<const __half2*>(&u));
}
__device__ __forceinline__ float2 pair_to_f2(uint32_t u, __nv_bfloat16) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u));
}
template <typename T>
__device__ __forceinline__ float4 kv_get4(const T* p) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const float2 a = pair_to_f2(u.x, T{}), b = pair_to_f2(u.y, T{});
  return make_float4(a.x, a.y, b.x, b.y);
}

// The split row handled by block z of a launch starting at split row row0.
__device__ __forceinline__ int64_t split_row(const AttnParams& p, int64_t row0, int64_t rl) {
  return p.split_rows != nullptr ? p.split_rows[row0 + rl] : row0 + rl;
}

// ---- split path, generic (F32 pools, other head sizes) -------------------------------------------

constexpr int kAttnThreads = 128, kAttnWarps = kAttnThreads / 32, kAttnTile = 32;
constexpr int kHeadsPerWarp = kMaxAttnGroup / kAttnWarps;
constexpr int kDimsPerLane = kMaxAttnHeadDim / 32;

// One thread block per (context span, KV head, query row). Warp w owns the group's heads w, w + 4...;
// lane p scores tile position p, then every lane accumulates its head dims d = lane + 32i.
template <typename T>
__global__ void __launch_bounds__(kAttnThreads) attn_split_kernel(AttnParams p, int64_t row0) {
  pdl_wait();
  extern __shared__ float smem[];
  const int64_t rl = blockIdx.z, r = split_row(p, row0, rl);
  const int kvh = blockIdx.y, sp = blockIdx.x;
  const int ctx = p.row_ctx[r];
  const int p0 = sp * kAttnSplit;
  if (p0 >= ctx) return;
  const int p1 = min(ctx, p0 + kAttnSplit);
  const int hd = p.kv.head_dim, G = p.heads / p.kv.kv_heads, ld = hd + 1, bs = p.kv.block_size;
  float* qs = smem;
  float* ks = qs + G * hd;
  float* vs = ks + kAttnTile * ld;
  for (int i = threadIdx.x; i < G * hd; i += kAttnThreads) qs[i] = p.q[r * p.ldq + int64_t(kvh) * G * hd + i];
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  float m[kHeadsPerWarp], l[kHeadsPerWarp], acc[kHeadsPerWarp][kDimsPerLane];
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j) {
    m[j] = -INFINITY, l[j] = 0.0f;
#pragma unroll
    for (int dd = 0; dd < kDimsPerLane; ++dd) acc[j][dd] = 0.0f;
  }
  const int32_t* table = p.tables + p.row_table[r];
  const int64_t row_floats = int64_t(p.kv.kv_heads) * hd;
  const T* pool = static_cast<const T*>(p.kv.pool);
  for (int t0 = p0; t0 < p1; t0 += kAttnTile) {
    const int n = min(kAttnTile, p1 - t0);
    __syncthreads();
    if (hd % 4 == 0) {  // vector loads (every offset in the pool is then a multiple of 4 elements)
      const int hd4 = hd / 4;
      for (int i = threadIdx.x; i < n * hd4; i += kAttnThreads) {
        const int pp = i / hd4, d = (i % hd4) * 4, pos = t0 + pp;
        const T* base = pool + int64_t(table[pos / bs]) * p.kv.block_elems + int64_t(pos % bs) * row_floats +
                        int64_t(kvh) * hd + d;
        const float4 kq = kv_get4(base + p.kv.k_off);
        const float4 vq = kv_get4(base + p.kv.v_off);
        float* kd = ks + pp * ld + d;
        float* vd = vs + pp * ld + d;
        kd[0] = kq.x, kd[1] = kq.y, kd[2] = kq.z, kd[3] = kq.w;
        vd[0] = vq.x, vd[1] = vq.y, vd[2] = vq.z, vd[3] = vq.w;
      }
    } else {
      for (int i = threadIdx.x; i < n * hd; i += kAttnThreads) {
        const int pp = i / hd, d = i % hd, pos = t0 + pp;
        const T* base = pool + int64_t(table[pos / bs]) * p.kv.block_elems + int64_t(pos % bs) * row_floats +
                        int64_t(kvh) * hd + d;
        ks[pp * ld + d] = kv_get(base + p.kv.k_off);
        vs[pp * ld + d] = kv_get(base + p.kv.v_off);
      }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kHeadsPerWarp; ++j) {
      const int g = warp + kAttnWarps * j;
      if (g >= G) break;  // warp-uniform
      float s = -INFINITY;
      if (lane < n) {
        float dot = 0.0f;
        for (int d = 0; d < hd; ++d) dot += qs[g * hd + d] * ks[lane * ld + d];
        s = dot * p.scale;
      }
      const float m_new = fmaxf(m[j], warp_max(s));
      const float alpha = expf(m[j] - m_new);
      const float e = lane < n ? expf(s - m_new) : 0.0f;
      l[j] = l[j] * alpha + warp_sum(e);
#pragma unroll
      for (int dd = 0; dd < kDimsPerLane; ++dd) acc[j][dd] *= alpha;
      for (int pp = 0; pp < n; ++pp) {
        const float w = __shfl_sync(kFull, e, pp);
#pragma unroll
        for (int dd = 0; dd < kDimsPerLane; ++dd) {
          const int d = lane + 32 * dd;
          if (d < hd) acc[j][dd] += w * vs[pp * ld + d];
        }
      }
      m[j] = m_new;
    }
  }
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j) {
    const int g = warp + kAttnWarps * j;
    if (g >= G) break;
    const int64_t idx = (rl * p.heads + int64_t(kvh) * G + g) * p.max_splits + sp;
    if (lane == 0) p.part_ml[2 * idx] = m[j], p.part_ml[2 * idx + 1] = l[j];
#pragma unroll
    for (int dd = 0; dd < kDimsPerLane; ++dd) {
      const int d = lane + 32 * dd;
      if (d < hd) p.part_acc[idx * hd + d] = acc[j][dd];
    }
  }
}

// ---- fused merge of a row's spans (both 16-bit decode kernels) ----------------------------------

// Row r's output v at dim i into the launch's int8 copy: one row's (out_q8), or the rows' (q8_rows,
// round 53). A full warp calls it with 32 consecutive dims (one quantization block).
__device__ __forceinline__ void store_q8(const AttnParams& p, int64_t r, int64_t i, float v) {
  if (p.out_q8 != nullptr) {
    quantize_q8_warp(v, p.out_q8 + i, reinterpret_cast<float2*>(p.out_q8 + p.q8_xs_off) + i / 32);
  } else if (p.q8_rows != nullptr) {
    const int64_t k = int64_t(p.heads) * p.kv.head_dim;
    uint8_t* base = static_cast<uint8_t*>(p.q8_rows);
    if (p.q8_rows_stride != 0) {
      quantize_q8_row_warp(v, base, p.q8_rows_stride, int(r), i, k);
    } else {
      quantize_mma_warp(v, base, int(r), i, k, p.q8_rows_nt);
    }
  }
}

// After a block has written its spans' partials it counts them in on the (row, KV head group)'s
// arrival counter (arrive_last.cuh); the block that completes the row merges it.

// Warp merges head `head` of row (rl, r) over its `spans` (≤ kAttnFuseSpans) partials: the max
// and the weight sum by butterflies over lanes (lane s takes span s), the V sums in span order, each
// lane's dims lane + 32e; every order depends on the span count only. Round 14: the partials'
// loads are independent (8 spans' in flight a lane) instead of one span a step (a serial chain of
// L2 round trips, ~5 µs at 32 spans). With p.out_q8 (one row) or p.q8_rows it also writes the int8
// copy (store_q8): dims 32e..32e+31 are one quantization block.
// SPLIT > 1 (round 17): this warp takes only the part-th of SPLIT slices of the head's dims (lane +
// 32e for e in [part·DPL/SPLIT, (part+1)·DPL/SPLIT)), so that SPLIT warps share a head; the
// same sums in the same order per dim.
static_assert(kAttnFuseSpans <= 32, "merge_head gives each lane one span");
// The merge's arithmetic, shared by merge_head (partials in global memory) and cluster_merge (in
// a cluster's shared memory), so that both give the same bits: lane s holds span s's (max, weight
// sum) in `mine` ((-inf, 0) past the spans); v_at(s, e) is span s's V sum at this lane's e-th dim.
// Writes row r's dims i0 + 32e, and their int8 copy (store_q8).
template <int DPL, class VAt>
__device__ __forceinline__ void merge_spans(const AttnParams& p, float2 mine, int spans, const VAt& v_at, int64_t r, int64_t i0) {
  const float m = warp_max(mine.x);
  const float w = expf(mine.x - m);  // 0 past the spans
  const float sum = warp_sum(mine.y * w);
  float o[DPL];
#pragma unroll
  for (int e = 0; e < DPL; ++e) o[e] = 0.0f;
#pragma unroll 8
  for (int s2 = 0; s2 < spans; ++s2) {
    const float ws = __shfl_sync(kFull, w, s2);
#pragma unroll
    for (int e = 0; e < DPL; ++e) o[e] += v_at(s2, e) * ws;
  }
  float* out = p.out + r * p.ldo + i0;
#pragma unroll
  for (int e = 0; e < DPL; ++e) {
    const float v = o[e] / sum;
    out[32 * e] = v;
    store_q8(p, r, i0 + 32 * e, v);
  }
}
template <int HD, int SPLIT = 1>
__device__ __forceinline__ void merge_head(const AttnParams& p, int64_t rl, int64_t r, int head, int spans, int lane, int part = 0) {
  static_assert(HD / 32 % SPLIT == 0, "whole 32-dim slices a warp");
  constexpr int DPL = HD / 32 / SPLIT;
  const int64_t base = (rl * p.heads + head) * p.max_splits;
  const float2* ml = reinterpret_cast<const float2*>(p.part_ml) + base;
  const float2 mine = lane < spans ? __ldcg(&ml[lane]) : make_float2(-INFINITY, 0.0f);
  const float* acc = p.part_acc + base * HD + lane + 32 * DPL * part;
  merge_spans<DPL>(p, mine, spans, [&](int s2, int e) { return __ldcg(acc + int64_t(s2) * HD + 32 * e); }, r,
                   int64_t(head) * HD + lane + 32 * DPL * part);
}

// ---- split path, 16-bit pools with 64 or 128 dims ------------------------------------------------

// One thread block per (span, KV head, group of ≤4 query heads, row); no shared-memory staging.
// Each warp owns 16 fixed positions of the span; HD/8 lanes share a position, each lane holding 8
// dims (one 16-byte K load and one V load per position, all issued before any math), so the
// dot product is 8 FMAs per head plus a log2(HD/8)-step shuffle. The span's max is taken over the
// block before exponentiating, then each warp's weighted V sum is added in warp order: the
// reduction order depends on positions only. Math in f32 on the exact widened 16-bit values.
constexpr int kDecHeads = 4;  // query heads per block
template <typename T, int HD>
__global__ void __launch_bounds__(128) attn_decode_kernel(AttnParams p, int64_t row0) {
  constexpr int LG = HD / 8, PPI = 32 / LG, PW = kAttnSplit / 4, IT = PW / PPI;
  __shared__ float red_m[4][kDecHeads], red_l[4][kDecHeads];
  __shared__ float red_acc[4][kDecHeads][HD];
  const int64_t rl = blockIdx.z;
  const int sp = blockIdx.x, p0 = sp * kAttnSplit;
  const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
  const int kvh = blockIdx.y / groups, g0 = (blockIdx.y % groups) * kDecHeads, ng = min(kDecHeads, G - g0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, sub = lane / LG, part = lane % LG;
  const int64_t row_elems = int64_t(p.kv.kv_heads) * HD;
  const T* pool = static_cast<const T*>(p.kv.pool);
  uint4 kr[IT];
  uint4 vr[IT];
  // This thread's K/V of positions [lo, hi) of the span; lo = 0 also zeroes the others.
  const auto load_kv = [&](const int32_t* table, int lo, int hi) {
    const int bs = p.kv.block_size, pos0 = p0 + warp * PW + sub;
    BlockSlot at(pos0, bs);
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if (it > 0) at.advance(PPI, bs);
      const int pos = pos0 + it * PPI;
      if (pos >= lo && pos < hi) {
        const T* base = pool + int64_t(table[at.block]) * p.kv.block_elems + int64_t(at.slot) * row_elems + int64_t(kvh) * HD + part * 8;
        kr[it] = *reinterpret_cast<const uint4*>(base + p.kv.k_off);
        vr[it] = *reinterpret_cast<const uint4*>(base + p.kv.v_off);
      } else if (lo == 0) {
        kr[it] = make_uint4(0, 0, 0, 0), vr[it] = make_uint4(0, 0, 0, 0);
      }
    }
  };
  // The step's inputs (row, context, block table) were uploaded before the step's first kernel, so
  // they are read before the wait. kv_before_wait (round 12): one row whose only position written
  // this step is ctx - 1, so every older position is loaded before the wait too.
  const int64_t r = split_row(p, row0, rl);
  const int ctx = p.row_ctx[r];
  const int32_t* table = p.tables + p.row_table[r];
  const int early = p.kv_before_wait ? ctx - 1 : 0;  // positions [0, early) before the wait
  load_kv(table, 0, early);
  pdl_wait();
  load_kv(table, early, ctx);
  if (p0 >= ctx) return;
  float q[kDecHeads][8];
#pragma unroll
  for (int j = 0; j < kDecHeads; ++j) {
    const float* qp = p.q + r * p.ldq + int64_t(kvh * G + g0 + min(j, ng - 1)) * HD + part * 8;
    const float4 a = *reinterpret_cast<const float4*>(qp), b = *reinterpret_cast<const float4*>(qp + 4);
    q[j][0] = a.x, q[j][1] = a.y, q[j][2] = a.z, q[j][3] = a.w, q[j][4] = b.x, q[j][5] = b.y, q[j][6] = b.z, q[j][7] = b.w;
  }
  float s[IT][kDecHeads], mx[kDecHeads];
#pragma unroll
  for (int j = 0; j < kDecHeads; ++j) mx[j] = -INFINITY;
#pragma unroll
  for (int it = 0; it < IT; ++it) {
    float k[8];
    const uint32_t w[4] = {kr[it].x, kr[it].y, kr[it].z, kr[it].w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = pair_to_f2(w[e], T{});
      k[2 * e] = f.x, k[2 * e + 1] = f.y;
    }
    const bool valid = p0 + warp * PW + it * PPI + sub < ctx;
#pragma unroll
    for (int j = 0; j < kDecHeads; ++j) {
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
  for (int j = 0; j < kDecHeads; ++j) {
#pragma unroll
    for (int o = 16; o >= LG; o /= 2) mx[j] = fmaxf(mx[j], __shfl_xor_sync(kFull, mx[j], o));
    if (lane == 0) red_m[warp][j] = mx[j];
  }
  __syncthreads();
  float acc[kDecHeads][8], l[kDecHeads];
#pragma unroll
  for (int j = 0; j < kDecHeads; ++j) {
    // The span's max over the block (warps in order); finite: position p0 < ctx is in warp 0.
    mx[j] = fmaxf(fmaxf(red_m[0][j], red_m[1][j]), fmaxf(red_m[2][j], red_m[3][j]));
    l[j] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[j][e] = 0.0f;
  }
#pragma unroll
  for (int it = 0; it < IT; ++it) {
    float v[8];
    const uint32_t w[4] = {vr[it].x, vr[it].y, vr[it].z, vr[it].w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = pair_to_f2(w[e], T{});
      v[2 * e] = f.x, v[2 * e + 1] = f.y;
    }
#pragma unroll
    for (int j = 0; j < kDecHeads; ++j) {
      const float pe = expf(s[it][j] - mx[j]);  // 0 for masked positions (-inf)
      l[j] += pe;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[j][e] += pe * v[e];
    }
  }
#pragma unroll
  for (int j = 0; j < kDecHeads; ++j) {
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
  for (int i = threadIdx.x; i < ng * HD; i += 128) {
    const int j = i / HD, d = i % HD;
    const int64_t idx = (rl * p.heads + int64_t(kvh) * G + g0 + j) * p.max_splits + sp;
    p.part_acc[idx * HD + d] = ((red_acc[0][j][d] + red_acc[1][j][d]) + red_acc[2][j][d]) + red_acc[3][j][d];
    if (d == 0) {
      p.part_ml[2 * idx] = mx[j];
      p.part_ml[2 * idx + 1] = ((red_l[0][j] + red_l[1][j]) + red_l[2][j]) + red_l[3][j];
    }
  }
  // Fused merge (round 12): the block completing the row merges it, so a batch-1 step has no
  // combine kernel. Rows of more spans, or without counters, are left to the combine kernel.
  const int spans = (ctx + kAttnSplit - 1) / kAttnSplit;
  if (p.counters == nullptr || spans > kAttnFuseSpans) return;
  if (!arrive_last(p.counters + (rl * p.kv.kv_heads + kvh) * groups + blockIdx.y % groups, 1, spans)) return;
  if (warp < ng) merge_head<HD>(p, rl, r, kvh * G + g0 + warp, spans, lane);
}

// ---- split path, 16-bit pools with 64 or 128 dims, round 7: staged runs of spans ---------------

// mma (mma16.cuh) serves this path and the tensor-core prefill path below; pack2: pack16.cuh.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* smem_row) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// cp.async helpers (also used by the tensor-core path below).
// 16 bytes global → shared without registers; src_bytes 0 fills zeros (positions past the context).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

template <int HD, int STAGES>
constexpr size_t dec_smem_bytes() {  // stages × (K, V) × one span × HD × 2 bytes
  return size_t(STAGES) * 2 * kAttnSplit * HD * 2;
}

// Element offset of dims [8c, 8c + 8) of span position pos in a staged K or V tile: the 16-byte
// chunks of a row are XOR-swizzled by pos % 8, so that 8 positions' same chunk (mma fragments,
// ldmatrix rows) fall in 8 different bank groups without padding the rows.
template <int HD>
__device__ __forceinline__ int swz(int pos, int c) {
  return pos * HD + ((c ^ (pos & 7)) << 3);
}

// One thread block per (KV head and ≤4-head query group, run of consecutive spans, row).
// Each span's K and V (64 positions) are copied through the block table into shared memory by
// cp.async, STAGES deep, so that the next spans' bytes are in flight while one is computed (round
// 5's kernel had one round trip per block and nothing in flight while it computed). A span's
// partial is computed the same way whichever block takes it and however many spans a block takes,
// so the runs are free to follow the grid's waves (spans_per_block).
// The span's math: S = Q·Kᵀ and O = P·V on mma.sync m16n8k16, f32 accumulators; warp w owns span
//   positions 16w..16w+15; the group's ≤4 heads are rows 0-3 of the 16-row A operand (rows 4-15
//   zero). Q and P are rounded to the pool's type (the tensor-core prefill's bounds). Round 5's
//   CUDA-core math spent ~1 500 instructions per thread and span (16 lanes per position: 4 heads ×
//   4 shuffle steps per position pair, every lane recomputing the 4 exps): the SMs, not memory,
//   were the limit (round 7 v1 measurement, docs/cuda.md; that math on the staged tile, measured as
//   variant 2, lost to round 5's kernel and was removed).
// Rows of ≤ kAttnFuseSpans spans are merged by the last block to finish of their (row, group):
// an arrival counter (reset by that block), spans in order, no second launch.
template <typename T, int HD, int STAGES>
__global__ void __launch_bounds__(128, 3) attn_decode2_kernel(AttnParams p, int64_t row0) {
  pdl_wait();
  constexpr int LG = HD / 8;
  constexpr int CSTEP = 128 / LG, CPT = kAttnSplit / CSTEP;  // copy: rows per pass, rows per thread
  constexpr int KK = HD / 16;
  extern __shared__ uint4 dec_smem[];
  T* const ks = reinterpret_cast<T*>(dec_smem);  // [STAGES][kAttnSplit][HD], swizzled rows
  T* const vs = ks + STAGES * kAttnSplit * HD;
  __shared__ float red_m[4][kDecHeads], red_l[4][kDecHeads];
  __shared__ __align__(16) float red_acc[4][kDecHeads][HD];
  const int64_t rl = blockIdx.z, r = split_row(p, row0, rl);
  const int ctx = p.row_ctx[r];
  const int spans = (ctx + kAttnSplit - 1) / kAttnSplit;
  // The row's own spans over the grid's gridDim.y runs (the grid is sized for the launch's longest,
  // possibly graph-padded, row): every block of the row gets work, whatever its context.
  const int per = (spans + gridDim.y - 1) / gridDim.y;
  const int sp0 = blockIdx.y * per;
  if (sp0 >= spans) return;
  const int n = min(per, spans - sp0);
  const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
  const int kvh = blockIdx.x / groups, g0 = (blockIdx.x % groups) * kDecHeads, ng = min(kDecHeads, G - g0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const int gr = lane >> 2, gc = lane & 3;  // mma fragment row / column group
  const int32_t* table = p.tables + p.row_table[r];
  const int64_t row_elems = int64_t(p.kv.kv_heads) * HD;
  const T* pool = static_cast<const T*>(p.kv.pool);
  const int cch = threadIdx.x % LG, cr0 = threadIdx.x / LG;
  int blk[CPT], slot[CPT];
  auto fetch = [&](int k) {  // block ids of this thread's copy rows of span k (-1: none) and their slots
    const int bs = p.kv.block_size, pos0 = (sp0 + k) * kAttnSplit + cr0;
    BlockSlot at(pos0, bs);
#pragma unroll
    for (int c = 0; c < CPT; ++c, at.advance(CSTEP, bs)) {
      blk[c] = k < n && pos0 + c * CSTEP < ctx ? table[at.block] : -1;
      slot[c] = at.slot;
    }
  };
  auto issue = [&](int k) {  // span k into stage k % STAGES; always one commit group
    if (k < n) {
      const int stage = k % STAGES;
#pragma unroll
      for (int c = 0; c < CPT; ++c) {
        const int pr = cr0 + c * CSTEP;
        const bool in = blk[c] >= 0;
        const T* base = in ? pool + int64_t(blk[c]) * p.kv.block_elems + int64_t(slot[c]) * row_elems +
                                 int64_t(kvh) * HD + cch * 8
                           : pool;
        const int dst = stage * kAttnSplit * HD + swz<HD>(pr, cch);
        cp_async16(ks + dst, in ? base + p.kv.k_off : pool, in ? 16 : 0);
        cp_async16(vs + dst, in ? base + p.kv.v_off : pool, in ? 16 : 0);
      }
    }
    cp_async_commit();
  };
#pragma unroll
  for (int k = 0; k < STAGES - 1; ++k) {
    fetch(k);
    issue(k);
  }
  fetch(STAGES - 1);
  // Q: A-fragment halves a0/a2 of head row gr (zero past the group).
  uint32_t qa[KK][2];
  {
    const float* qp = p.q + r * p.ldq + int64_t(kvh * G + g0 + min(gr, ng - 1)) * HD;
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
      const float2 a = *reinterpret_cast<const float2*>(qp + kk * 16 + gc * 2);
      const float2 b = *reinterpret_cast<const float2*>(qp + kk * 16 + gc * 2 + 8);
      qa[kk][0] = gr < ng ? pack2(a.x, a.y, T{}) : 0u;
      qa[kk][1] = gr < ng ? pack2(b.x, b.y, T{}) : 0u;
    }
  }
  for (int k = 0; k < n; ++k) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of span k landed
    __syncthreads();              // everyone's; the stage of span k - 1 and red_* are free again
    issue(k + STAGES - 1);
    fetch(k + STAGES);
    const int sp = sp0 + k, p0 = sp * kAttnSplit;
    const T* kt = ks + (k % STAGES) * kAttnSplit * HD;
    const T* vt = vs + (k % STAGES) * kAttnSplit * HD;
    {
      const int wp0 = warp * 16;
      float s[2][4];
#pragma unroll
      for (int t = 0; t < 2; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < KK; ++kk) {
        const uint32_t a[4] = {qa[kk][0], 0u, qa[kk][1], 0u};
#pragma unroll
        for (int t = 0; t < 2; ++t) {
          const int pl = wp0 + 8 * t + gr;
          const uint32_t b0 = *reinterpret_cast<const uint32_t*>(kt + swz<HD>(pl, 2 * kk) + gc * 2);
          const uint32_t b1 = *reinterpret_cast<const uint32_t*>(kt + swz<HD>(pl, 2 * kk + 1) + gc * 2);
          mma(s[t], a, b0, b1, T{});
        }
      }
      float mloc = -INFINITY;
#pragma unroll
      for (int t = 0; t < 2; ++t) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          s[t][e] = p0 + wp0 + 8 * t + gc * 2 + e < ctx ? s[t][e] * p.scale : -INFINITY;
          mloc = fmaxf(mloc, s[t][e]);
        }
      }
      mloc = fmaxf(mloc, __shfl_xor_sync(kFull, mloc, 1));
      mloc = fmaxf(mloc, __shfl_xor_sync(kFull, mloc, 2));
      if (gc == 0 && gr < kDecHeads) red_m[warp][gr] = mloc;
      __syncthreads();
      // The span's max over the block (warps in order); finite: position p0 < ctx is in warp 0.
      const int hr = min(gr, kDecHeads - 1);
      const float mx = fmaxf(fmaxf(red_m[0][hr], red_m[1][hr]), fmaxf(red_m[2][hr], red_m[3][hr]));
      float pr[2][2];
#pragma unroll
      for (int t = 0; t < 2; ++t) {
#pragma unroll
        for (int e = 0; e < 2; ++e) pr[t][e] = gr < ng ? expf(s[t][e] - mx) : 0.0f;  // masked: exp(-inf) = 0
      }
      float lsum = (pr[0][0] + pr[0][1]) + (pr[1][0] + pr[1][1]);
      lsum += __shfl_xor_sync(kFull, lsum, 1);
      lsum += __shfl_xor_sync(kFull, lsum, 2);
      // P as the A operand over this warp's 16 positions (k = 8t + 2gc + e), rows 8-15 zero.
      const uint32_t pa[4] = {pack2(pr[0][0], pr[0][1], T{}), 0u, pack2(pr[1][0], pr[1][1], T{}), 0u};
      float o[HD / 8][4];
#pragma unroll
      for (int d = 0; d < HD / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
      const int vl = wp0 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
      for (int dn = 0; dn < HD / 16; ++dn) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, vt + swz<HD>(vl, 2 * dn + (lane >> 4)));
        mma(o[2 * dn], pa, b[0], b[1], T{});
        mma(o[2 * dn + 1], pa, b[2], b[3], T{});
      }
      if (gr < ng) {
#pragma unroll
        for (int d = 0; d < HD / 8; ++d) {
          *reinterpret_cast<float2*>(&red_acc[warp][gr][d * 8 + gc * 2]) = make_float2(o[d][0], o[d][1]);
        }
      }
      if (gc == 0 && gr < kDecHeads) red_l[warp][gr] = lsum;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < ng * HD; i += 128) {
      const int j = i / HD, d = i % HD;
      const int64_t idx = (rl * p.heads + int64_t(kvh) * G + g0 + j) * p.max_splits + sp;
      p.part_acc[idx * HD + d] = ((red_acc[0][j][d] + red_acc[1][j][d]) + red_acc[2][j][d]) + red_acc[3][j][d];
      if (d == 0) {  // the span's max again from red_m (a register array at a run-time j would go to local memory)
        p.part_ml[2 * idx] = fmaxf(fmaxf(red_m[0][j], red_m[1][j]), fmaxf(red_m[2][j], red_m[3][j]));
        p.part_ml[2 * idx + 1] = ((red_l[0][j] + red_l[1][j]) + red_l[2][j]) + red_l[3][j];
      }
    }
  }
  if (spans > kAttnFuseSpans) return;  // the combine kernel merges long rows
  // Fused merge: publish this block's partials, count them in; the block completing the row merges.
  if (!arrive_last(p.counters + (rl * p.kv.kv_heads + kvh) * groups + blockIdx.x % groups, n, spans)) return;
  if (warp < ng) merge_head<HD>(p, rl, r, kvh * G + g0 + warp, spans, lane);
}

// ---- split path, 16-bit pools with 64 or 128 dims, round 14: a copy pipeline per warp ------------

// Round 7's kernel (above) measured 55-62% of copy bandwidth at many sequences: each span costs
// three block barriers and a 2 KB partial (written, then read back by the merge: 12.5% on top of
// the K/V bytes), and while a block waits for its span nothing else of its own is in flight.
// Round 14's kernel gives each warp its own cp.async ring of NS 16-position tiles (K and V of one
// KV head: 8 KB at 128 dims) and its own online softmax, and writes one partial per chunk of
// kChunk positions (4x fewer than per span). A chunk's partial depends on its positions only, so
// it is the same whichever block computes it and however many chunks a block takes: graphs and the
// chunks-per-block choice see the same bits. (A block per run of chunks with a warp per KV head,
// reading whole pool rows, measured 2-11 points lower and was removed: docs/cuda.md, round 14.)
constexpr int kChunk = 256, kWarpTile = 16, kChunkTiles = kChunk / kWarpTile;

template <int HD>
constexpr int warp_ring_elems(int stages) {  // one warp's ring: stages × (K, V) × 16 positions × HD
  return stages * 2 * kWarpTile * HD;
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// Warps a block, and tiles each warp takes of a chunk (w, w + 4, w + 8, w + 12).
constexpr int kDec3Warps = 4, kTilesPerWarp = kChunkTiles / kDec3Warps;

// One warp's tiles of one KV head: the k-th tile of its run starts at position
// (c0 + k / kTilesPerWarp) · kChunk + (warp + kDec3Warps · (k % kTilesPerWarp)) · kWarpTile, for
// k < total (round 14's chunks), or, with first >= 0, at (first + warp + stride · k) · kWarpTile
// (round 17's one-row runs of tiles); copied through the block table into stage k % NS of the
// warp's ring (swizzled rows, zeros past the context).
template <typename T, int HD, int NS>
struct WarpTiles {
  const T* pool;  // the pool at this KV head's dims
  const int32_t* table;
  int64_t block_elems, row_elems, k_off, v_off;
  int ctx, bs, c0, total, warp;
  bool one_block;  // a tile lies in one KV block: one table entry a tile
  T* ring;
  int first = -1, stride = 0;

  __device__ int t0(int k) const {  // -1: past the run or the context
    if (k >= total) return -1;
    const int t = first >= 0 ? (first + warp + stride * k) * kWarpTile
                             : (c0 + k / kTilesPerWarp) * kChunk + (warp + kDec3Warps * (k % kTilesPerWarp)) * kWarpTile;
    return t < ctx ? t : -1;
  }
  __device__ int lookup(int k) const {  // the tile's block id, loaded a tile before its copy is issued
    const int t = t0(k);
    return t >= 0 && one_block ? table[t / bs] : 0;
  }
  __device__ void issue(int k, int blk, int lane) const {  // always one commit group
    constexpr int CPR = HD / 8, CPL = kWarpTile * CPR / 32;  // 16-byte chunks: per row, per lane
    const int t = t0(k);
    if (t >= 0) {
      T* const kd = ring + (k % NS) * 2 * kWarpTile * HD;
      T* const vd = kd + kWarpTile * HD;
#pragma unroll
      for (int i = 0; i < CPL; ++i) {  // lanes cover 512 contiguous bytes an instruction
        const int c = i * 32 + lane, row = c / CPR, col = c % CPR, pos = t + row;
        const bool in = pos < ctx;
        const int b = one_block ? blk : in ? table[pos / bs] : 0;
        const int64_t off = int64_t(b) * block_elems + int64_t(one_block ? t % bs + row : pos % bs) * row_elems + col * 8;
        cp_async16(kd + swz<HD>(row, col), in ? pool + off + k_off : pool, in ? 16 : 0);
        cp_async16(vd + swz<HD>(row, col), in ? pool + off + v_off : pool, in ? 16 : 0);
      }
    }
    cp_async_commit();
  }
  __device__ const T* k_tile(int k) const { return ring + (k % NS) * 2 * kWarpTile * HD; }
};

// A warp's online softmax over its tiles for ≤4 query heads (rows 0-3 of the mma fragments): per
// tile, S = Q·Kᵀ (K by ldmatrix), the running max and sum per head row (the accumulators rescaled
// only when a max moved), O += P·V (P rounded to the pool's type, V by ldmatrix.trans). Q and P are
// rounded as in round 7's kernel (same error bounds).
template <typename T, int HD>
struct WarpSoftmax {
  float m, l, o[HD / 8][4];

  __device__ void reset() {
    m = -INFINITY, l = 0.0f;
#pragma unroll
    for (int d = 0; d < HD / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  }
  // The tile at kt (K) / kt + 16·HD (V) starting at position t0 (< ctx).
  __device__ void add(const uint32_t (&qa)[HD / 16][2], const T* kt, int t0, int ctx, float scale, int ng, int lane) {
    const T* vt = kt + kWarpTile * HD;
    const int gr = lane >> 2, gc = lane & 3;
    float s[2][4];
#pragma unroll
    for (int t = 0; t < 2; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      const uint32_t a[4] = {qa[kk][0], 0u, qa[kk][1], 0u};
      uint32_t b[4];  // positions 0-7 / 8-15 × dims 16kk..16kk+7 / +8..+15
      ldmatrix_x4(b, kt + swz<HD>((lane & 7) + ((lane >> 4) << 3), 2 * kk + ((lane >> 3) & 1)));
      mma(s[0], a, b[0], b[1], T{});
      mma(s[1], a, b[2], b[3], T{});
    }
    float mloc = -INFINITY;
#pragma unroll
    for (int t = 0; t < 2; ++t) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        s[t][e] = t0 + 8 * t + gc * 2 + e < ctx ? s[t][e] * scale : -INFINITY;
        mloc = fmaxf(mloc, s[t][e]);
      }
    }
    mloc = fmaxf(mloc, __shfl_xor_sync(kFull, mloc, 1));
    mloc = fmaxf(mloc, __shfl_xor_sync(kFull, mloc, 2));
    const float mn = fmaxf(m, mloc);   // finite: position t0 < ctx
    const float alpha = expf(m - mn);  // 0 at the first tile (m = -inf)
    float pr[2][2];
#pragma unroll
    for (int t = 0; t < 2; ++t) {
#pragma unroll
      for (int e = 0; e < 2; ++e) pr[t][e] = gr < ng ? expf(s[t][e] - mn) : 0.0f;  // masked: exp(-inf) = 0
    }
    l = l * alpha + ((pr[0][0] + pr[0][1]) + (pr[1][0] + pr[1][1]));
    if (__any_sync(kFull, alpha != 1.0f)) {
#pragma unroll
      for (int d = 0; d < HD / 8; ++d) o[d][0] *= alpha, o[d][1] *= alpha;
    }
    m = mn;
    const uint32_t pa[4] = {pack2(pr[0][0], pr[0][1], T{}), 0u, pack2(pr[1][0], pr[1][1], T{}), 0u};
#pragma unroll
    for (int dn = 0; dn < HD / 16; ++dn) {
      uint32_t b[4];
      ldmatrix_x4_trans(b, vt + swz<HD>((lane & 7) + ((lane >> 3) & 1) * 8, 2 * dn + (lane >> 4)));
      mma(o[2 * dn], pa, b[0], b[1], T{});
      mma(o[2 * dn + 1], pa, b[2], b[3], T{});
    }
  }
  // The sum of the weights of head row gr over the quad (fixed order).
  __device__ float quad_sum() const {
    float lq = l + __shfl_xor_sync(kFull, l, 1);
    return lq + __shfl_xor_sync(kFull, lq, 2);
  }
};

// Q of head row gr of the group (kvh, g0) as A-fragment halves a0/a2 (zero past the group).
template <typename T, int HD>
__device__ __forceinline__ void load_q(uint32_t (&qa)[HD / 16][2], const AttnParams& p, int64_t r, int head0, int ng, int lane) {
  const int gr = lane >> 2, gc = lane & 3;
  const float* qp = p.q + r * p.ldq + int64_t(head0 + min(gr, ng - 1)) * HD;
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    const float2 a = *reinterpret_cast<const float2*>(qp + kk * 16 + gc * 2);
    const float2 b = *reinterpret_cast<const float2*>(qp + kk * 16 + gc * 2 + 8);
    qa[kk][0] = gr < ng ? pack2(a.x, a.y, T{}) : 0u;
    qa[kk][1] = gr < ng ? pack2(b.x, b.y, T{}) : 0u;
  }
}

// The states of a block's W warps (put by each), merged in warp order into one partial (write):
// the max over the warps, then the rescaled V sums and weight sums added warp by warp.
template <int HD, int W>
struct BlockMerge {
  float m[W][kDecHeads], l[W][kDecHeads];
  __align__(16) float acc[W][kDecHeads][HD];

  template <typename Softmax>
  __device__ void put(const Softmax& st, int warp, int ng, int lane) {
    const int gr = lane >> 2, gc = lane & 3;
    const float lq = st.quad_sum();
    if (gr < ng) {
#pragma unroll
      for (int d = 0; d < HD / 8; ++d) *reinterpret_cast<float2*>(&acc[warp][gr][d * 8 + gc * 2]) = make_float2(st.o[d][0], st.o[d][1]);
      if (gc == 0) m[warp][gr] = st.m, l[warp][gr] = lq;
    }
  }
  // Head row h's merged state at dim d: the max, the V sum and the weight sum.
  __device__ void merged(int h, int d, float& mx, float& a, float& sum) const {
    mx = m[0][h];
#pragma unroll
    for (int w = 1; w < W; ++w) mx = fmaxf(mx, m[w][h]);
    a = 0.0f, sum = 0.0f;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const float e = expf(m[w][h] - mx);
      a += acc[w][h][d] * e;
      sum += l[w][h] * e;
    }
  }
  // Partial idx0 + h · max_splits of head row h < ng (idx0: the first head's partial).
  __device__ void write(const AttnParams& p, int64_t idx0, int ng) const {
    for (int i = threadIdx.x; i < ng * HD; i += blockDim.x) {
      const int h = i / HD, d = i % HD;
      float mx, a, sum;
      merged(h, d, mx, a, sum);
      const int64_t idx = idx0 + int64_t(h) * p.max_splits;
      p.part_acc[idx * HD + d] = a;
      if (d == 0) p.part_ml[2 * idx] = mx, p.part_ml[2 * idx + 1] = sum;
    }
  }
  // The same values into the block's own shared memory (the cluster merge, round 50).
  __device__ void keep(float (&o)[kDecHeads][HD], float (&ml)[kDecHeads][2], int ng) const {
    for (int i = threadIdx.x; i < ng * HD; i += blockDim.x) {
      const int h = i / HD, d = i % HD;
      float mx, a, sum;
      merged(h, d, mx, a, sum);
      o[h][d] = a;
      if (d == 0) ml[h][0] = mx, ml[h][1] = sum;
    }
  }
};

// One thread block of 4 warps per (KV head and ≤4-head query group, run of consecutive
// chunks, row); warp w takes tiles w, w + 4, w + 8, w + 12 of each chunk, and the 4 warps' states
// are merged in warp order at the chunk's end (a warp without a tile there has weight 0).

template <int HD, int NS>
constexpr size_t dec3_smem_bytes() {
  return size_t(kDec3Warps) * warp_ring_elems<HD>(NS) * 2;
}

template <typename T, int HD, int NS>
__global__ void __launch_bounds__(128, NS == 2 ? 3 : 2) attn_decode3_kernel(AttnParams p, int64_t row0) {
  extern __shared__ uint4 dec_smem[];
  __shared__ BlockMerge<HD, kDec3Warps> red;
  // The step's inputs (row, context, block table) are read before the wait (pdl.cuh).
  const int64_t rl = blockIdx.z, r = split_row(p, row0, rl);
  const int ctx = p.row_ctx[r];
  const int chunks = (ctx + kChunk - 1) / kChunk;
  const int per = (chunks + gridDim.y - 1) / gridDim.y;  // the row's own chunks over the grid's runs
  const int c0 = blockIdx.y * per;
  const int n = max(0, min(per, chunks - c0));
  const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
  const int kvh = blockIdx.x / groups, g0 = (blockIdx.x % groups) * kDecHeads, ng = min(kDecHeads, G - g0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  WarpTiles<T, HD, NS> tiles{static_cast<const T*>(p.kv.pool) + int64_t(kvh) * HD, p.tables + p.row_table[r], p.kv.block_elems,
                             int64_t(p.kv.kv_heads) * HD, p.kv.k_off, p.kv.v_off, ctx, p.kv.block_size, c0,
                             n * kTilesPerWarp, warp, p.kv.block_size % kWarpTile == 0,
                             reinterpret_cast<T*>(dec_smem) + warp * warp_ring_elems<HD>(NS)};
  const auto prologue = [&] {
#pragma unroll
    for (int k = 0; k < NS - 1; ++k) tiles.issue(k, tiles.lookup(k), lane);
  };
  // kv_before_wait (a step of one token row, round 12's contract): the first tiles' copies go out
  // before the wait when they hold only positions older than ctx - 1, the one this step writes.
  bool early = p.kv_before_wait != 0 && n > 0;
#pragma unroll
  for (int k = 0; k < NS - 1; ++k) early = early && tiles.t0(k) + kWarpTile <= ctx - 1;
  if (early) prologue();
  pdl_wait();
  if (n == 0) return;
  if (!early) prologue();
  int next_blk = tiles.lookup(NS - 1);
  uint32_t qa[HD / 16][2];
  load_q<T, HD>(qa, p, r, kvh * G + g0, ng, lane);
  WarpSoftmax<T, HD> st;
  for (int j = 0; j < n; ++j) {
    st.reset();
    for (int i = 0; i < kTilesPerWarp; ++i) {
      const int k = j * kTilesPerWarp + i;
      cp_async_wait<NS - 2>();  // this lane's copies of tile k landed
      __syncwarp();             // every lane's; the stage read at tile k - 1 is free again
      tiles.issue(k + NS - 1, next_blk, lane);
      next_blk = tiles.lookup(k + NS);
      const int t0 = tiles.t0(k);
      if (t0 >= 0) st.add(qa, tiles.k_tile(k), t0, ctx, p.scale, ng, lane);  // warp-uniform
    }
    red.put(st, warp, ng, lane);
    __syncthreads();
    red.write(p, (rl * p.heads + int64_t(kvh) * G + g0) * p.max_splits + c0 + j, ng);
    __syncthreads();  // red is written again by the next chunk
  }
  if (chunks > kAttnFuseSpans) return;  // the combine kernel merges long rows
  if (!arrive_last(p.counters + (rl * p.kv.kv_heads + kvh) * groups + blockIdx.x % groups, n, chunks)) return;
  if (warp < ng) merge_head<HD>(p, rl, r, kvh * G + g0 + warp, chunks, lane);
}

// ---- split path, one row at long context (round 17) ----------------------------------------------

// Round 14's kernel writes a partial per 256-position chunk, so a row of more than 32 chunks (8k)
// needs the combine kernel, and each chunk costs its block two barriers and a 2 KB partial a head.
// A one-row launch (batch-1 decode) instead splits the row's 16-position tiles into `runs` even
// runs per KV head and group, a block each, all resident at once: each warp walks tiles
// w, w + W, ... of its block's run with one online softmax, the W warps are merged once, and the
// block writes one partial. runs ≤ kAttnFuseSpans, so the row's last block merges them (no combine
// kernel). runs depends on the context, the model's KV heads and the SM count only (never on the
// launch's padded split count), so a graph and an eager step give the same bits.
// min_tiles: tiles a run at least (VELLUM_CUDA_ATTN_LONG_TILES). Round 17 took 8, one a warp of the
// default 8 warps, so 1 025-2 047 positions ran 8-15 runs; round 50's 4 fills 16 runs from 1 024
// (llama3-8b Q4_K_M batch 1 after 1 500 / 1 800 tokens +1.0% / +2.8%, qwen2.5-0.5b after 1 100 +2-3%).
constexpr int kLongMinTiles = 4;
__host__ __device__ constexpr int long_runs(int ctx, int max_runs, int min_tiles = kLongMinTiles) {
  const int t = (ctx + kWarpTile - 1) / kWarpTile / min_tiles;
  return t < 1 ? 1 : t < max_runs ? t : max_runs;
}

template <int HD, int W, int NS>
constexpr size_t long_smem_bytes() {
  return size_t(W) * warp_ring_elems<HD>(NS) * 2;
}

// The cluster merge (round 50, kCluster): a (KV head, group)'s runs are one thread block cluster of
// gridDim.y blocks (≤ 16, a non-portable size on Hopper). Round 17's merge has the row's last block
// load every run's partial after a fence and an atomic: three dependent L2 round trips on the step's
// chain after the slowest run. Here each block keeps its partial (BlockMerge::write's values) in its
// own shared memory, one cluster barrier, and warp w of block y merges the 32-dim slices y + R·w
// of the group's heads from every run's shared memory with merge_head's arithmetic (merge_spans: lane s
// takes run s's max and weight sum, the V sums in run order), so the outputs are the same bits as
// round 17's.
template <int HD>
struct ClusterPartial {
  float o[kDecHeads][HD];
  float ml[kDecHeads][2];
};

// After every block of the cluster has kept its partial (or has none: a run past the row's): warp w
// of block y merges the group's 32-dim slices u = y + R·w, y + R·(w + W), ... (u = h·HD/32 + e) over
// the row's `runs` runs as merge_head does from global memory, the int8 copy included.
template <int HD, int W>
__device__ __forceinline__ void cluster_merge(const AttnParams& p, ClusterPartial<HD>& part, int64_t r, int head0, int ng,
                                              int runs, int warp, int lane) {
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every run's partial is in its block's shared memory
  const int R = int(cluster.dim_blocks().y), y = int(cluster.block_index().y);
  for (int u = y + R * warp; u < ng * HD / 32; u += R * W) {  // warp-uniform
    const int h = u / (HD / 32), d = (u % (HD / 32)) * 32 + lane;
    float2 mine = make_float2(-INFINITY, 0.0f);
    if (lane < runs) {
      const ClusterPartial<HD>* at = cluster.map_shared_rank(&part, lane);
      mine = make_float2(at->ml[h][0], at->ml[h][1]);
    }
    merge_spans<1>(p, mine, runs, [&](int s2, int) { return cluster.map_shared_rank(&part, s2)->o[h][d]; }, r,
                   int64_t(head0 + h) * HD + d);
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
}

template <typename T, int HD, int W, int NS, bool kCluster = false>
__global__ void __launch_bounds__(W * 32) attn_decode_long_kernel(AttnParams p, int64_t row0, int max_runs, int min_tiles) {
  extern __shared__ uint4 dec_smem[];
  __shared__ BlockMerge<HD, W> red;
  // The step's inputs (row, context, block table) are read before the wait (pdl.cuh).
  const int64_t rl = blockIdx.z, r = split_row(p, row0, rl);
  const int ctx = p.row_ctx[r];
  const int runs = long_runs(ctx, max_runs, min_tiles), run = blockIdx.y;
  const int all = (ctx + kWarpTile - 1) / kWarpTile;
  const int tb = int(int64_t(run) * all / runs), n = run < runs ? int(int64_t(run + 1) * all / runs) - tb : 0;
  const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
  const int kvh = blockIdx.x / groups, g0 = (blockIdx.x % groups) * kDecHeads, ng = min(kDecHeads, G - g0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const int mine = n > warp ? (n - warp + W - 1) / W : 0;  // this warp's tiles
  WarpTiles<T, HD, NS> tiles{static_cast<const T*>(p.kv.pool) + int64_t(kvh) * HD, p.tables + p.row_table[r], p.kv.block_elems,
                             int64_t(p.kv.kv_heads) * HD, p.kv.k_off, p.kv.v_off, ctx, p.kv.block_size, 0,
                             mine, warp, p.kv.block_size % kWarpTile == 0,
                             reinterpret_cast<T*>(dec_smem) + warp * warp_ring_elems<HD>(NS), tb, W};
  // kv_before_wait: the leading prologue tiles that hold only positions older than ctx - 1 (the one
  // this step writes) are copied before the wait, the rest after it, in order (one group a tile).
  int early = 0;
  if (p.kv_before_wait != 0) {
#pragma unroll
    for (int k = 0; k < NS - 1; ++k) early += early == k && k < mine && tiles.t0(k) + kWarpTile <= ctx - 1 ? 1 : 0;
  }
#pragma unroll
  for (int k = 0; k < NS - 1; ++k) {
    if (k < early) tiles.issue(k, tiles.lookup(k), lane);
  }
  pdl_wait();
  if constexpr (!kCluster) {
    if (n == 0) return;
  }
  if (n > 0) {  // block-uniform; a cluster's blocks past the row's runs only take part in its barriers
#pragma unroll
    for (int k = 0; k < NS - 1; ++k) {
      if (k >= early) tiles.issue(k, tiles.lookup(k), lane);
    }
    int next_blk = tiles.lookup(NS - 1);
    uint32_t qa[HD / 16][2];
    load_q<T, HD>(qa, p, r, kvh * G + g0, ng, lane);
    WarpSoftmax<T, HD> st;
    st.reset();
    for (int k = 0; k < mine; ++k) {
      cp_async_wait<NS - 2>();  // this lane's copies of tile k landed
      __syncwarp();             // every lane's; the stage read at tile k - 1 is free again
      tiles.issue(k + NS - 1, next_blk, lane);
      next_blk = tiles.lookup(k + NS);
      st.add(qa, tiles.k_tile(k), tiles.t0(k), ctx, p.scale, ng, lane);
    }
    red.put(st, warp, ng, lane);  // a warp without tiles: max -inf, weight 0
    __syncthreads();
  }
  if constexpr (kCluster) {
    __shared__ ClusterPartial<HD> part;
    if (n > 0) red.keep(part.o, part.ml, ng);
    cluster_merge<HD, W>(p, part, r, kvh * G + g0, ng, runs, warp, lane);
    return;
  }
  red.write(p, (rl * p.heads + int64_t(kvh) * G + g0) * p.max_splits + run, ng);
  if (!arrive_last(p.counters + (rl * p.kv.kv_heads + kvh) * groups + blockIdx.x % groups, 1, runs)) return;
  constexpr int SPLIT = W / kDecHeads;  // warps a head in the merge
  if (warp < ng * SPLIT) merge_head<HD, SPLIT>(p, rl, r, kvh * G + g0 + warp / SPLIT, runs, lane, warp % SPLIT);
}

// Merges a (row, head)'s spans. Block (head, row, 32-dim slice) of 8 warps: the max and the weight
// sum by a fixed tree over the row's own spans (thread t takes spans t, t + 256, ...); warp w sums
// spans w, w + 8, ... of its lane's dim, then the 8 warp sums are added by a fixed tree. Every
// order depends on the row's context only, never on the padded split count or the batch.
constexpr int kCombineWarps = 8, kCombineThreads = 32 * kCombineWarps;
__device__ __forceinline__ float tree8(const float* v, bool is_max) {
  return is_max ? fmaxf(fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3])), fmaxf(fmaxf(v[4], v[5]), fmaxf(v[6], v[7])))
                : ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}
__device__ __forceinline__ float block_reduce(float v, bool is_max, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const float u = __shfl_xor_sync(kFull, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  __syncthreads();  // red is reused
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  return tree8(red, is_max);
}
// part_len: positions per partial (kAttnSplit, or kChunk for round 14's kernel); fused_spans: rows
// of at most this many partials were merged by the decode kernel (0: none).
__global__ void __launch_bounds__(kCombineThreads) attn_combine_kernel(AttnParams p, int64_t row0, int part_len, int fused_spans) {
  pdl_wait();
  __shared__ float red[kCombineWarps];
  __shared__ float part[32][kCombineWarps];
  const int64_t rl = blockIdx.y, r = split_row(p, row0, rl);
  const int h = blockIdx.x, hd = p.kv.head_dim, warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const int d = blockIdx.z * 32 + lane;
  const int spans = (p.row_ctx[r] + part_len - 1) / part_len;
  if (spans <= fused_spans) return;
  const int64_t base = (rl * p.heads + h) * p.max_splits;
  const float2* ml = reinterpret_cast<const float2*>(p.part_ml) + base;
  float mx = -INFINITY;
  for (int s = threadIdx.x; s < spans; s += kCombineThreads) mx = fmaxf(mx, ml[s].x);
  mx = block_reduce(mx, true, red);
  float sum = 0.0f;
  for (int s = threadIdx.x; s < spans; s += kCombineThreads) sum += ml[s].y * expf(ml[s].x - mx);
  sum = block_reduce(sum, false, red);
  float o = 0.0f;
  if (d < hd) {
#pragma unroll 4
    for (int s = warp; s < spans; s += kCombineWarps) o += p.part_acc[(base + s) * hd + d] * expf(ml[s].x - mx);
  }
  part[lane][warp] = o;
  __syncthreads();
  if (warp != 0) return;
  const float v = d < hd ? tree8(part[lane], false) / sum : 0.0f;
  if (d < hd) p.out[r * p.ldo + int64_t(h) * hd + d] = v;
  store_q8(p, r, int64_t(h) * hd + d, v);  // hd % 32 == 0 with a copy: these 32 outputs are one quantization block
}

// ---- tensor-core path ----------------------------------------------------------------------------

constexpr int kTcCols = 64, kTcThreads = 128;
template <int HD, int STAGES>
constexpr size_t tc_smem_bytes() {  // stages × (K, V) × 64 positions × padded row × 2 bytes
  return size_t(STAGES) * 2 * kTcCols * (HD + 8) * 2;
}

// One thread block per (tile of ≤64 query rows of one sequence, query head); warp w owns rows
// 16w..16w+15. K/V tiles of 64 positions are staged in shared memory through the block table
// (cp.async, STAGES stages; each thread's block-table entries are loaded one tile ahead, so no
// copy waits on them), rows padded by 8 elements so that fragment loads hit 32 distinct banks.
// S = Q·Kᵀ and O += P·V on mma.sync; the online softmax is f32 in the accumulator layout.
//
// kSpans (the deterministic mode, round 24): block z of a tile covers only the positions of span z
// (p.span_tiles tiles from z · p.span_tiles) and writes each row's softmax state of that span to
// part_acc / part_ml ([row][head][p.spans]) for attn_span_merge_kernel; its mma rows are a KV head's
// query heads × the tile's rows (below). A row's arithmetic depends on its own q, context and position
// only: every tile is aligned to position 0, mma rows are independent, the softmax code is the same
// in every row slot, and a tile masked whole for a row leaves its state as it was (scale exp2(0) = 1,
// P = 0).
//
// HPB (round 25): query heads a block takes, 2 in the default mode when a KV group has an even number
// of heads. Warps 4w..4w+3 take head HPB·y + w over the same K/V tiles, so a copied tile serves
// twice the rows (prefill attention at 2 048 tokens: 234 → 218 µs against one head a block).
template <typename T, int HD, int STAGES, bool kSpans, int HPB>
__global__ void __launch_bounds__(kTcThreads * HPB, 1) attn_tc_kernel(AttnParams p, const AttnTile* tiles, int n_tiles) {
  pdl_wait();
  constexpr int NT = kTcThreads * HPB;
  constexpr int LDS = HD + 8, KK = HD / 16, NS = kTcCols / 8, ND = HD / 8;
  extern __shared__ uint4 tc_smem[];
  T* const ks = reinterpret_cast<T*>(tc_smem);  // [STAGES][kTcCols][LDS]
  T* const vs = ks + STAGES * kTcCols * LDS;    // [STAGES][kTcCols][LDS]
  // mma row slots: by default slot i is query row i of the tile, for query head blockIdx.y. kSpans packs
  // the G query heads of KV head blockIdx.y (GQA): slot s is row s / G, head s % G, so a K/V tile
  // serves the whole group (a decode row fills G slots), and a tile's rows · G slots take p.tc_sub
  // blocks of 64. A slot's arithmetic is the same either way.
  const int G = p.heads / p.kv.kv_heads, gp = kSpans ? G : 1, sub = kSpans ? p.tc_sub : 1;
  const AttnTile tile = tiles[n_tiles - 1 - int(blockIdx.x) / sub];  // longest contexts first
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, gr = lane >> 2, gc = lane & 3;
  const int h = int(blockIdx.y) * HPB + warp / 4, kvh = kSpans ? int(blockIdx.y) : h / G;
  const int ctx_last = tile.ctx0 + tile.rows - 1;
  const int slots = tile.rows * gp, sw = (kSpans ? int(blockIdx.x) % sub * 64 : 0) + warp % 4 * 16;  // the warp's first slot
  const int s0 = sw + gr, s1 = s0 + 8;
  const int i0 = s0 / gp, i1 = s1 / gp;  // query rows (past the tile for slots past it)
  const int h0 = kSpans ? kvh * G + min(s0, slots - 1) % G : h, h1 = kSpans ? kvh * G + min(s1, slots - 1) % G : h;
  const int c0 = min(tile.ctx0 + i0, ctx_last), c1 = min(tile.ctx0 + i1, ctx_last);
  const bool warp_live = sw < slots;
  const int warp_ctx_min = min(tile.ctx0 + sw / gp, ctx_last), warp_ctx_max = min(tile.ctx0 + (sw + 15) / gp, ctx_last);

  // Q as A fragments (rows past the tile repeat its last row; they are never stored).
  uint32_t qa[KK][4];
  {
    const float* q0 = p.q + int64_t(tile.row0 + min(i0, tile.rows - 1)) * p.ldq + int64_t(h0) * HD;
    const float* q1 = p.q + int64_t(tile.row0 + min(i1, tile.rows - 1)) * p.ldq + int64_t(h1) * HD;
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
      const int c = kk * 16 + gc * 2;
      const float2 a = *reinterpret_cast<const float2*>(q0 + c), b = *reinterpret_cast<const float2*>(q1 + c);
      const float2 a8 = *reinterpret_cast<const float2*>(q0 + c + 8), b8 = *reinterpret_cast<const float2*>(q1 + c + 8);
      qa[kk][0] = pack2(a.x, a.y, T{}), qa[kk][1] = pack2(b.x, b.y, T{});
      qa[kk][2] = pack2(a8.x, a8.y, T{}), qa[kk][3] = pack2(b8.x, b8.y, T{});
    }
  }

  const int32_t* table = p.tables + tile.table;
  const int64_t row_elems = int64_t(p.kv.kv_heads) * HD;
  const T* pool = static_cast<const T*>(p.kv.pool);
  const int n_kv = (ctx_last + kTcCols - 1) / kTcCols;
  const int jb = kSpans ? int(blockIdx.z) * p.span_tiles : 0;  // this block's tiles: [jb, je)
  const int je = kSpans ? min(n_kv, jb + p.span_tiles) : n_kv;
  if constexpr (kSpans) {
    if (jb >= je) return;  // a span past every row of the tile (block-uniform)
  }
  // Thread t copies 16-byte chunk t % CH of rows t / CH + STEP·k of each tile.
  constexpr int CH = HD / 8, STEP = NT / CH, RPT = kTcCols / STEP;
  const int ch = (threadIdx.x % CH) * 8, pr0 = threadIdx.x / CH;
  int blk[RPT], slot[RPT];
  auto fetch = [&](int j) { table_rows(table, j * kTcCols + pr0, STEP, p.kv.block_size, ctx_last, blk, slot); };
  auto issue = [&](int j) {  // tile j into stage j % STAGES; always one commit group
    if (j < je) {
      const int stage = j % STAGES;
#pragma unroll
      for (int k = 0; k < RPT; ++k) {
        const int pr = pr0 + k * STEP;
        const bool in = blk[k] >= 0;
        const T* base = pool + (in ? int64_t(blk[k]) * p.kv.block_elems + int64_t(slot[k]) * row_elems +
                                         int64_t(kvh) * HD + ch
                                   : 0);
        cp_async16(ks + (stage * kTcCols + pr) * LDS + ch, in ? base + p.kv.k_off : pool, in ? 16 : 0);
        cp_async16(vs + (stage * kTcCols + pr) * LDS + ch, in ? base + p.kv.v_off : pool, in ? 16 : 0);
      }
    }
    cp_async_commit();
  };

  const float sl2 = p.scale * 1.4426950408889634f;  // exp(x) = exp2(x · log2 e)
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
  float o[ND][4];
#pragma unroll
  for (int d = 0; d < ND; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;

#pragma unroll
  for (int j = 0; j < STAGES - 1; ++j) {
    fetch(jb + j);
    issue(jb + j);
  }
  fetch(jb + STAGES - 1);
  for (int j = jb; j < je; ++j) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile j landed
    __syncthreads();              // everyone's; and the stage read at j - 1 is free
    issue(j + STAGES - 1);
    fetch(j + STAGES);
    const int t0 = j * kTcCols;
    if (warp_live && t0 < warp_ctx_max) {  // warp-uniform: some position of the tile is visible
      const T* kt = ks + (j % STAGES) * kTcCols * LDS;
      const T* vt = vs + (j % STAGES) * kTcCols * LDS;
      float s[NS][4];
#pragma unroll
      for (int n = 0; n < NS; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
      // K fragments by ldmatrix: one x4 holds positions 8n..8n+7 at dims 32k2..32k2+31 (matrix i
      // from lane 8i's row address), the B operands of two mma; s[n] adds k in order as before.
      const T* kl = kt + (lane & 7) * LDS + ((lane >> 3) & 1) * 8 + (lane >> 4) * 16;
#pragma unroll
      for (int k2 = 0; k2 < KK / 2; ++k2) {
#pragma unroll
        for (int n = 0; n < NS; ++n) {
          uint32_t b[4];
          ldmatrix_x4(b, kl + n * 8 * LDS + k2 * 32);
          mma(s[n], qa[2 * k2], b[0], b[1], T{});
          mma(s[n], qa[2 * k2 + 1], b[2], b[3], T{});
        }
      }
      float a0, a1;
      online_softmax_tile(s, t0, t0 + kTcCols > warp_ctx_min, c0, c1, gc, sl2, m0, m1, l0, l1, a0, a1);
      rescale_rows(o, a0, a1);
#pragma unroll
      for (int kk = 0; kk < kTcCols / 16; ++kk) {
        const uint32_t pa[4] = {pack2(s[2 * kk][0], s[2 * kk][1], T{}), pack2(s[2 * kk][2], s[2 * kk][3], T{}),
                                pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], T{}),
                                pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], T{})};
        const T* vrow = vt + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDS + (lane >> 4) * 8;
#pragma unroll
        for (int dn = 0; dn < HD / 16; ++dn) {
          uint32_t b[4];
          ldmatrix_x4_trans(b, vrow + dn * 16);
          mma(o[2 * dn], pa, b[0], b[1], T{});
          mma(o[2 * dn + 1], pa, b[2], b[3], T{});
        }
      }
    }
  }
  if (!warp_live) return;
  l0 += __shfl_xor_sync(kFull, l0, 1);
  l0 += __shfl_xor_sync(kFull, l0, 2);
  l1 += __shfl_xor_sync(kFull, l1, 1);
  l1 += __shfl_xor_sync(kFull, l1, 2);
  if constexpr (kSpans) {  // the span's state: unnormalized sums, max and weight sum (log2 units)
    const int64_t at0 = (int64_t(tile.row0 + i0) * p.heads + h0) * p.spans + blockIdx.z;
    const int64_t at1 = (int64_t(tile.row0 + i1) * p.heads + h1) * p.spans + blockIdx.z;
#pragma unroll
    for (int d = 0; d < ND; ++d) {
      if (s0 < slots) *reinterpret_cast<float2*>(p.part_acc + at0 * HD + d * 8 + gc * 2) = make_float2(o[d][0], o[d][1]);
      if (s1 < slots) *reinterpret_cast<float2*>(p.part_acc + at1 * HD + d * 8 + gc * 2) = make_float2(o[d][2], o[d][3]);
    }
    if (gc == 0 && s0 < slots) *reinterpret_cast<float2*>(p.part_ml + 2 * at0) = make_float2(m0, l0);
    if (gc == 0 && s1 < slots) *reinterpret_cast<float2*>(p.part_ml + 2 * at1) = make_float2(m1, l1);
    return;
  }
  store_rows(o, l0, l1, p.out + int64_t(tile.row0 + i0) * p.ldo + int64_t(h) * HD + gc * 2,
             p.out + int64_t(tile.row0 + i1) * p.ldo + int64_t(h) * HD + gc * 2, i0 < tile.rows, i1 < tile.rows);
}

// The deterministic mode's merge: row r's spans (those of its context, row_ctx[r]) in order, as the
// f32 sums o · exp2(m − M) and l · exp2(m − M) from zero, then o · (1 / l) as attn_tc_kernel writes a
// whole row. A block per (row, query head), a thread per dimension.
__global__ void attn_span_merge_kernel(AttnParams p) {
  pdl_wait();
  const int64_t r = blockIdx.x;
  const int h = int(blockIdx.y), d = int(threadIdx.x), hd = int(blockDim.x);
  const int span = p.span_tiles * kTcCols, spans = (p.row_ctx[r] + span - 1) / span;
  const int64_t s0 = (r * p.heads + h) * p.spans;
  const float2* ml = reinterpret_cast<const float2*>(p.part_ml) + s0;
  float mx = -INFINITY;
  for (int z = 0; z < spans; ++z) mx = fmaxf(mx, ml[z].x);
  float l = 0.0f, o = 0.0f;
  for (int z = 0; z < spans; ++z) {
    const float w = exp2f(ml[z].x - mx);
    l += ml[z].y * w;
    o += p.part_acc[(s0 + z) * hd + d] * w;
  }
  p.out[r * p.ldo + int64_t(h) * hd + d] = o * (1.0f / l);
}

// ---- launchers -----------------------------------------------------------------------------------

template <typename T>
cudaError_t launch_split(const AttnParams& p, int64_t row0, dim3 grid, size_t smem, size_t max_smem, cudaStream_t stream) {
  static bool raised = false;
  if (!raised) {
    const cudaError_t rc =
        cudaFuncSetAttribute(attn_split_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(max_smem));
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  launch_kernel(attn_split_kernel<T>, grid, kAttnThreads, smem, stream, p, row0);
  return cudaGetLastError();
}

template <typename T, int HD>
void launch_decode(const AttnParams& p, int64_t row0, int64_t rows, cudaStream_t stream) {
  const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
  const dim3 grid(p.max_splits, p.kv.kv_heads * groups, static_cast<unsigned>(rows));
  launch_kernel(attn_decode_kernel<T, HD>, grid, 128, 0, stream, p, row0);
}

int env_int(const char* name, int fallback) {  // a measurement knob, read once by its caller
  const char* e = std::getenv(name);
  return e != nullptr ? std::atoi(e) : fallback;
}
int g_decode_variant = -1;  // -1: not read from the environment yet
int g_spans_per_block = -1;
int decode_variant() {
  if (g_decode_variant < 0) g_decode_variant = env_int("VELLUM_CUDA_ATTN_DECODE", 0);
  return g_decode_variant;
}
int forced_spans_per_block() {
  if (g_spans_per_block < 0) g_spans_per_block = std::max(0, env_int("VELLUM_CUDA_ATTN_SPB", 0));
  return g_spans_per_block;
}

// Spans per block: the grid's blocks over the SM slots (resident blocks) in whole waves, each block
// costing its spans plus about one span of pipeline fill: min over s of ceil(blocks(s) / slots) ×
// (s + 1). Depends only on the launch shape (rows, heads, padded split count), never on contexts,
// so a captured graph stays valid; the grid gets ceil(max_splits / s) runs per (row, group) and
// each row spreads its own spans over them (the kernel), so a graph-padded split count does not
// leave half the runs idle. Any choice gives the same bits.
int spans_per_block(int64_t pairs, int max_splits, int slots) {
  if (const int f = forced_spans_per_block(); f > 0) return std::min(f, max_splits);
  int best = 1;
  int64_t best_cost = INT64_MAX;
  for (int sp = 1; sp <= max_splits; ++sp) {
    const int64_t blocks = pairs * ((max_splits + sp - 1) / sp);
    const int64_t cost = (blocks + slots - 1) / slots * (sp + 1);
    if (cost < best_cost) best_cost = cost, best = sp;
  }
  return best;
}


// Blocks of 128 threads of `kernel` with `smem` bytes of dynamic shared memory resident on the
// device at once, into `slots` (the kernel's shared-memory limit raised first; once: slots != 0).
template <typename Kernel>
cudaError_t resident_blocks(Kernel kernel, size_t smem, int& slots) {
  if (slots != 0) return cudaSuccess;
  cudaError_t rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  int per_sm = 0;
  if (rc == cudaSuccess) rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 128, smem);
  if (rc == cudaSuccess) slots = std::max(1, device_sms() * per_sm);
  return rc;
}

// A decode kernel of 128-thread blocks per (KV head and group, run, row) over `units` (spans or
// chunks) per row: runs of the wave rule's length (spans_per_block; VELLUM_CUDA_ATTN_SPB forces it).
template <typename Kernel>
cudaError_t launch_runs(Kernel kernel, size_t smem, int& slots, const AttnParams& p, int64_t row0, int64_t rows, int units,
                        cudaStream_t stream) {
  if (const cudaError_t rc = resident_blocks(kernel, smem, slots); rc != cudaSuccess) return rc;
  const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
  const int per = spans_per_block(rows * p.kv.kv_heads * groups, units, slots);
  const dim3 grid(p.kv.kv_heads * groups, (units + per - 1) / per, static_cast<unsigned>(rows));
  launch_kernel(kernel, grid, 128, smem, stream, p, row0);
  return cudaGetLastError();
}

template <typename T, int HD, int STAGES>
cudaError_t launch_decode2(const AttnParams& p, int64_t row0, int64_t rows, cudaStream_t stream) {
  static int slots = 0;  // once per instantiation
  return launch_runs(attn_decode2_kernel<T, HD, STAGES>, dec_smem_bytes<HD, STAGES>(), slots, p, row0, rows, p.max_splits, stream);
}

// Round 14's kernel: runs of chunks.
template <typename T, int HD, int NS>
cudaError_t launch_decode3(const AttnParams& p, int64_t row0, int64_t rows, cudaStream_t stream) {
  static int slots = 0;
  const int max_chunks = (p.max_splits * kAttnSplit + kChunk - 1) / kChunk;
  return launch_runs(attn_decode3_kernel<T, HD, NS>, dec3_smem_bytes<HD, NS>(), slots, p, row0, rows, max_chunks, stream);
}

// Round 17's one-row kernel: variant v of VELLUM_CUDA_ATTN_LONG (warps a block, stages a warp,
// runs at most, and never more than fill the SMs once: one block an SM, two for 1 and 2):
// 1 = 4 warps, 2 stages, 32 runs; 2 = 4, 3, 32; 3 = 4, 4, 16; 4 = 8, 2, 16; 5 = 8, 3, 16;
// 6 (default since round 50) = 4 with the runs merged in a cluster where every group's cluster fits,
// else 4 itself (the same bits either way). Variant 4 measured best of 1-5 at 2k-32k (llama3-8b batch
// 1, docs/cuda.md round 17); 6 is 4 on llama3-8b (8 groups: 7 clusters of 16 fit an H200) and 6-9%
// faster on qwen2.5-0.5b at 2k-8k (round 50).
// VELLUM_CUDA_ATTN_LONG_RUNS overrides the runs (≤ kAttnFuseSpans; ≤ 16 in a cluster).
int g_long_variant = -1, g_long_min = -1, g_long_runs = -1, g_long_tiles = -1;
int long_tiles() {
  if (g_long_tiles < 0) g_long_tiles = std::clamp(env_int("VELLUM_CUDA_ATTN_LONG_TILES", kLongMinTiles), 1, 64);
  return g_long_tiles;
}
int long_variant() {
  if (g_long_variant < 0) g_long_variant = std::max(0, env_int("VELLUM_CUDA_ATTN_LONG", 6));
  return g_long_variant;
}
// Positions a launch must be able to hold (max_splits × kAttnSplit) to take it: 2 048, i.e. in a
// decode graph (splits padded to a power of two, at least 1 024 positions) rows past 1 024
// positions. Measured: at 1k no faster or slower than round 5's kernel, at 2k 8-13% a token faster.
int long_min() {
  if (g_long_min < 0) g_long_min = std::max(0, env_int("VELLUM_CUDA_ATTN_LONG_MIN", 2048));
  return g_long_min;
}

constexpr int kMaxLongCluster = 16;  // Hopper's largest (non-portable) cluster
std::atomic<int64_t> g_long_cluster_launches{0};

// Whether the device holds a cluster of max_runs blocks for every (KV head group, row) at once
// (max_active_clusters, once per device, kernel, group count and runs). An H200 holds 7 clusters of
// 12 or 16 blocks of 128 KB (round 50's --attn-clusters): enough for the 4 of a model with 2 KV heads,
// not for llama3-8b's 8 (fewer runs a cluster so that they fit, 9, was slower at 4k-8k than 16
// merged in global memory).
bool long_clusters_fit(const void* kernel, const cudaLaunchConfig_t& cfg) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void*, unsigned, unsigned, unsigned>, bool> fits;
  int dev = 0;
  (void)cudaGetDevice(&dev);
  const std::tuple<int, const void*, unsigned, unsigned, unsigned> key{dev, kernel, cfg.gridDim.x, cfg.gridDim.y, cfg.gridDim.z};
  const std::lock_guard<std::mutex> lock(mu);
  const auto it = fits.find(key);
  if (it != fits.end()) return it->second;
  return fits[key] = max_active_clusters(kernel, cfg) >= int(cfg.gridDim.x * cfg.gridDim.z);
}

// The long kernel's grid: a block per (KV head group, run), enough runs for the longest context the
// launch can hold (a row uses long_runs(its context)); max_runs as the kernel gets it.
template <int W, int NS, bool kCluster>
dim3 long_grid(const AttnParams& p, int& max_runs) {
  if (g_long_runs < 0) g_long_runs = std::max(0, env_int("VELLUM_CUDA_ATTN_LONG_RUNS", 0));
  const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
  // One block an SM (variants 3-6) or two: at most as many runs as fill the SMs once.
  max_runs = std::clamp(device_sms() * (W == 4 && NS < 4 ? 2 : 1) / (p.kv.kv_heads * groups), 1, max_runs);
  if (g_long_runs > 0) max_runs = std::min(g_long_runs, kCluster ? kMaxLongCluster : kAttnFuseSpans);
  return dim3(p.kv.kv_heads * groups, long_runs(p.max_splits * kAttnSplit, max_runs, long_tiles()), 1);
}

template <typename T, int HD, int W, int NS, bool kCluster>
cudaError_t long_kernel_attributes() {
  static const cudaError_t attr = [] {
    const auto kernel = attn_decode_long_kernel<T, HD, W, NS, kCluster>;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(long_smem_bytes<HD, W, NS>()));
    if (e == cudaSuccess && kCluster) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess) (void)cudaGetLastError();  // reported through the return value only
    return e;
  }();
  return attr;
}

// A cluster launch's configuration: the runs of a (KV head group, row) one cluster; at[0] its size.
cudaLaunchConfig_t long_cluster_config(dim3 grid, int threads, size_t smem, cudaStream_t stream, cudaLaunchAttribute (&at)[2]) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = 1;
  at[0].val.clusterDim.y = grid.y;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  return cfg;
}

template <typename T, int HD, int W, int NS, bool kCluster = false>
cudaError_t launch_long(const AttnParams& p, int64_t row0, int max_runs, cudaStream_t stream) {
  constexpr size_t smem = long_smem_bytes<HD, W, NS>();
  const auto kernel = attn_decode_long_kernel<T, HD, W, NS, kCluster>;
  const cudaError_t attr = long_kernel_attributes<T, HD, W, NS, kCluster>();
  if constexpr (kCluster) {  // a device or driver without non-portable clusters: the global merge
    if (attr != cudaSuccess) return launch_long<T, HD, W, NS, false>(p, row0, max_runs, stream);
  }
  if (attr != cudaSuccess) return attr;
  const dim3 grid = long_grid<W, NS, kCluster>(p, max_runs);
  if constexpr (kCluster) {
    // The cluster of the launch's largest runs count must fit for every group (a row with fewer runs
    // leaves the rest of its cluster idle); else the global merge, the same bits.
    cudaLaunchAttribute at[2];
    const dim3 widest(grid.x, max_runs, grid.z);  // a row of the longest context
    if (!long_clusters_fit(reinterpret_cast<const void*>(kernel), long_cluster_config(widest, W * 32, smem, stream, at))) {
      return launch_long<T, HD, W, NS, false>(p, row0, max_runs, stream);
    }
    cudaLaunchConfig_t cfg = long_cluster_config(grid, W * 32, smem, stream, at);
    if (launch_programmatically(reinterpret_cast<const void*>(kernel), stream)) {
      at[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      at[1].val.programmaticStreamSerializationAllowed = 1;
      cfg.numAttrs = 2;
    }
    const cudaError_t rc = cudaLaunchKernelEx(&cfg, kernel, p, row0, max_runs, long_tiles());
    if (rc == cudaSuccess) g_long_cluster_launches.fetch_add(1, std::memory_order_relaxed);
    return rc != cudaSuccess ? rc : cudaGetLastError();
  } else {
    launch_kernel(kernel, grid, W * 32, smem, stream, p, row0, max_runs, long_tiles());
    return cudaGetLastError();
  }
}

// Clusters of variant 6's launch for p, with `runs` runs a cluster, held at once (-1: the query failed).
template <typename T, int HD>
int long_max_clusters(const AttnParams& p, int runs) {
  constexpr int W = 8, NS = 2;
  if (long_kernel_attributes<T, HD, W, NS, true>() != cudaSuccess) return -1;
  int max_runs = kMaxLongCluster;
  dim3 grid = long_grid<W, NS, true>(p, max_runs);
  grid.y = unsigned(runs);
  cudaLaunchAttribute at[2];
  return max_active_clusters(reinterpret_cast<const void*>(attn_decode_long_kernel<T, HD, W, NS, true>),
                             long_cluster_config(grid, W * 32, long_smem_bytes<HD, W, NS>(), nullptr, at));
}

// 6 (round 50): 4's shape with the runs merged through a cluster's shared memory (the same bits).
template <typename T, int HD>
cudaError_t launch_long_variant(int v, const AttnParams& p, int64_t row0, cudaStream_t stream) {
  switch (v) {
    case 2: return launch_long<T, HD, 4, 3>(p, row0, 32, stream);
    case 3: return launch_long<T, HD, 4, 4>(p, row0, 16, stream);
    case 4: return launch_long<T, HD, 8, 2>(p, row0, 16, stream);
    case 5: return launch_long<T, HD, 8, 3>(p, row0, 16, stream);
    case 6: return launch_long<T, HD, 8, 2, true>(p, row0, kMaxLongCluster, stream);
    default: return launch_long<T, HD, 4, 2>(p, row0, 32, stream);
  }
}

// The decode kernel for a 16-bit pool with 64 or 128 dims; false when the pool needs the generic
// kernel. fused: whether rows of ≤ kAttnFuseSpans partials are already merged; merged: whether
// every row is (round 17's kernel); part_len: positions per partial.
template <typename T>
bool try_decode(const AttnParams& p, int64_t row0, int64_t rows, cudaStream_t stream, cudaError_t& rc, bool& fused,
                bool& merged, int& part_len) {
  if (!rows_aligned8(p.kv) || (p.kv.head_dim != 64 && p.kv.head_dim != 128)) return false;
  // Default: round 5's kernel only where it was measured faster end to end (F16 pools, ≤ 3 rows since
  // round 53, 8 before; contexts ≤ 2k); alone, round 7's is faster at 8k-32k and twice as fast on
  // BF16 pools. (One row at 8k, llama3-8b Q4_K_M batch 1 in a decode graph: round 5's 2.70-2.92 ms
  // a token, round 7's 2.78, round 14's 2.85-2.91 over three calls, i.e. within the calls' spread;
  // at 32k round 14's 3.59-3.70 against round 7's 4.42 and round 5's 4.89.)
  const int knob = decode_variant();
  // One row that may be long (round 17): a run of tiles a block, merged by the row's last block.
  if (knob == 0 && rows == 1 && !p.deterministic && p.counters != nullptr && long_variant() > 0 &&
      int64_t(p.max_splits) * kAttnSplit >= long_min()) {
    rc = p.kv.head_dim == 128 ? launch_long_variant<T, 128>(long_variant(), p, row0, stream)
                              : launch_long_variant<T, 64>(long_variant(), p, row0, stream);
    fused = merged = true;
    return true;
  }
  const bool small = rows <= p.small_rows && p.max_splits <= kAttnFuseSpans && std::is_same_v<T, __half>;
  int v = knob;
  if (knob == 0) {
    // Round 14's kernel has a block per 256-position chunk: a one-row launch at 1k context gets 32
    // blocks (14.9 µs against round 7's 11.2 with 128 blocks, H200), and at 8k 256 (llama3-8b
    // batch 1 in a decode graph: 2.85 ms a token against 2.78; at 32k 3.62 against 4.42), so it
    // takes launches of at least two blocks per SM; round 7's the others and every launch of the
    // deterministic mode.
    const int G = p.heads / p.kv.kv_heads, groups = (G + kDecHeads - 1) / kDecHeads;
    const int64_t blocks = rows * p.kv.kv_heads * groups * ((p.max_splits * kAttnSplit + kChunk - 1) / kChunk);
    const bool round7 = (rows <= kAttnRound7Rows && p.max_splits <= kAttnFuseSpans) ||  // round 53 (attention.h)
                        (rows <= kAttnRound7LongRows && p.max_splits <= 2 * kAttnFuseSpans);  // round 54
    v = p.deterministic ? 2 : small ? 1 : round7 || blocks < 2 * device_sms() ? 2 : 4;
  }
  const bool hd128 = p.kv.head_dim == 128;
  fused = p.counters != nullptr;
  if (v == 1 || !fused) {
    // Round 5's kernel merges only one-row launches (round 12: as fast as the combine kernel at
    // batch 1; at 4-8 rows 1% slower than it, BF16 llama3-8b).
    AttnParams p1 = p;
    if (rows != 1) p1.counters = nullptr, fused = false;
    hd128 ? launch_decode<T, 128>(p1, row0, rows, stream) : launch_decode<T, 64>(p1, row0, rows, stream);
    rc = cudaGetLastError();
  } else if (v == 3) {  // measurement only: 3 stages (2 blocks per SM)
    rc = hd128 ? launch_decode2<T, 128, 3>(p, row0, rows, stream) : launch_decode2<T, 64, 3>(p, row0, rows, stream);
  } else if (v >= 4) {
    // 2 stages a warp and 3 blocks per SM: 73-80% of copy bandwidth at 128 x 1k, 8 x 32k and
    // 64 x 8k; 3 stages (2 blocks per SM) 66-73%, 4 stages (one block) 39-42% (H200, docs/cuda.md).
    part_len = kChunk;
    if (v == 4) {
      rc = hd128 ? launch_decode3<T, 128, 2>(p, row0, rows, stream) : launch_decode3<T, 64, 2>(p, row0, rows, stream);
    } else {  // measurement: 3 stages
      rc = hd128 ? launch_decode3<T, 128, 3>(p, row0, rows, stream) : launch_decode3<T, 64, 3>(p, row0, rows, stream);
    }
  } else {
    rc = hd128 ? launch_decode2<T, 128, 2>(p, row0, rows, stream) : launch_decode2<T, 64, 2>(p, row0, rows, stream);
  }
  return true;
}

template <typename T, int HD, int STAGES, bool kSpans, int HPB>
cudaError_t launch_tc_stages(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream) {
  static bool raised = false;
  constexpr size_t smem = tc_smem_bytes<HD, STAGES>();
  const auto kernel = attn_tc_kernel<T, HD, STAGES, kSpans, HPB>;
  if (!raised) {
    const cudaError_t rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  const dim3 grid = kSpans ? dim3(unsigned(n_tiles * p.tc_sub), unsigned(p.kv.kv_heads), unsigned(p.spans)) : dim3(n_tiles, p.heads / HPB);
  launch_kernel(kernel, grid, kTcThreads * HPB, smem, stream, p, tiles, n_tiles);
  return cudaGetLastError();
}

// Two cp.async stages: three measured 3-5% slower (docs/cuda.md, round 5, v3) and 0-2% slower in
// round 25. The default mode pairs the heads of a KV group when their count is even.
template <typename T, int HD>
cudaError_t launch_tc(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream) {
  if (p.spans > 0) return launch_tc_stages<T, HD, 2, true, 1>(p, tiles, n_tiles, stream);
  if ((p.heads / p.kv.kv_heads) % 2 == 0) return launch_tc_stages<T, HD, 2, false, 2>(p, tiles, n_tiles, stream);
  return launch_tc_stages<T, HD, 2, false, 1>(p, tiles, n_tiles, stream);
}

}  // namespace

bool rows_aligned8(const KvPoolView& kv) {
  return kv.block_elems % 8 == 0 && kv.k_off % 8 == 0 && kv.v_off % 8 == 0 && kv.head_dim % 8 == 0;
}

cudaError_t launch_attention(const AttnParams& p, int64_t row0, int64_t rows, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const int G = p.heads / p.kv.kv_heads, hd = p.kv.head_dim;
  if (G > kMaxAttnGroup || hd > kMaxAttnHeadDim) return cudaErrorInvalidValue;
  if (p.out_q8 != nullptr && (rows != 1 || p.split_rows != nullptr)) return cudaErrorInvalidValue;  // the caller's one row
  if (p.q8_rows != nullptr && (p.out_q8 != nullptr || p.split_rows != nullptr || row0 != 0 || rows < 2 || rows > kMmaRowsMax ||
                               hd % 32 != 0 || (p.q8_rows_stride == 0 && p.q8_rows_nt != mma_tiles(int(rows))))) {
    return cudaErrorInvalidValue;
  }
  // The int8 copy is written by whichever kernel merges the row (32 dims of a head are one
  // quantization block), else by a quantize kernel at the end.
  const bool q8_in_merge = hd % 32 == 0;
  AttnParams pk = p;
  if (!q8_in_merge) pk.out_q8 = nullptr;
  if (rows != 1) pk.kv_before_wait = 0;
  bool done = false, fused = false, merged = false;
  int part_len = kAttnSplit;
  cudaError_t rc = cudaSuccess;
  if (p.kv.type == TensorType::F16) done = try_decode<__half>(pk, row0, rows, stream, rc, fused, merged, part_len);
  if (p.kv.type == TensorType::BF16) done = try_decode<__nv_bfloat16>(pk, row0, rows, stream, rc, fused, merged, part_len);
  if (rc != cudaSuccess) return rc;
  if (!done) {
    const size_t smem = sizeof(float) * (size_t(G) * hd + 2 * size_t(kAttnTile) * (hd + 1));
    // The largest shape needs more than the default 48 KiB (once per instantiation).
    const size_t max_smem =
        sizeof(float) * (size_t(kMaxAttnGroup) * kMaxAttnHeadDim + 2 * size_t(kAttnTile) * (kMaxAttnHeadDim + 1));
    const dim3 grid(p.max_splits, p.kv.kv_heads, static_cast<unsigned>(rows));
    rc = cudaErrorInvalidValue;
    switch (p.kv.type) {
      case TensorType::F32: rc = launch_split<float>(p, row0, grid, smem, max_smem, stream); break;
      case TensorType::F16: rc = launch_split<__half>(p, row0, grid, smem, max_smem, stream); break;
      case TensorType::BF16: rc = launch_split<__nv_bfloat16>(p, row0, grid, smem, max_smem, stream); break;
      default: break;
    }
    if (rc != cudaSuccess) return rc;
  }
  rc = cudaGetLastError();
  if (rc != cudaSuccess) return rc;
  // Every row has at most this many partials: when the decode kernel merged them all, no combine.
  const int max_parts = (p.max_splits * kAttnSplit + part_len - 1) / part_len;
  if (!merged && !(fused && max_parts <= kAttnFuseSpans)) {
    launch_kernel(attn_combine_kernel, dim3(p.heads, static_cast<unsigned>(rows), (hd + 31) / 32), kCombineThreads, 0, stream,
        pk, row0, part_len, fused ? kAttnFuseSpans : 0);
    rc = cudaGetLastError();
    if (rc != cudaSuccess) return rc;
  }
  if (p.out_q8 == nullptr || q8_in_merge) return cudaSuccess;
  return launch_quantize_q8(p.out + row0 * p.ldo, int64_t(p.heads) * hd, p.out_q8, stream);
}

int64_t attn_counters(int heads, int kv_heads, int64_t rows) {
  return rows * kv_heads * ((heads / kv_heads + kDecHeads - 1) / kDecHeads);
}
void set_attn_decode_variant(int variant) { g_decode_variant = variant; }
int attn_decode_variant() { return decode_variant(); }
void set_attn_spans_per_block(int spans) { g_spans_per_block = std::max(0, spans); }
void set_attn_long(int variant, int min_positions) {
  g_long_variant = std::max(0, variant);
  g_long_min = std::max(0, min_positions);
}
int attn_long_variant() { return long_variant(); }
int attn_long_min() { return long_min(); }
int64_t attn_long_cluster_launches() { return g_long_cluster_launches.load(std::memory_order_relaxed); }
int attn_long_max_clusters(const AttnParams& p, int runs) {
  if (p.kv.head_dim != 64 && p.kv.head_dim != 128) return -1;
  if (p.kv.type == TensorType::F16) {
    return p.kv.head_dim == 128 ? long_max_clusters<__half, 128>(p, runs) : long_max_clusters<__half, 64>(p, runs);
  }
  if (p.kv.type == TensorType::BF16) {
    return p.kv.head_dim == 128 ? long_max_clusters<__nv_bfloat16, 128>(p, runs) : long_max_clusters<__nv_bfloat16, 64>(p, runs);
  }
  return -1;
}

bool attn_tc_supported(const KvPoolView& kv) {
  return (kv.type == TensorType::F16 || kv.type == TensorType::BF16) && (kv.head_dim == 64 || kv.head_dim == 128) &&
         rows_aligned8(kv);
}

cudaError_t launch_attention_tc(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream) {
  if (n_tiles == 0) return cudaSuccess;
  if (!attn_tc_supported(p.kv) || p.heads % p.kv.kv_heads != 0) return cudaErrorInvalidValue;
  if (p.spans > 0 && (p.part_acc == nullptr || p.part_ml == nullptr || p.tc_sub < 1 || p.span_tiles < 1)) return cudaErrorInvalidValue;
  if (attn_wg_takes(p)) return launch_attention_wg(p, tiles, n_tiles, stream);  // round 27: wgmma
  const bool f16 = p.kv.type == TensorType::F16;
  if (p.kv.head_dim == 64) return f16 ? launch_tc<__half, 64>(p, tiles, n_tiles, stream) : launch_tc<__nv_bfloat16, 64>(p, tiles, n_tiles, stream);
  return f16 ? launch_tc<__half, 128>(p, tiles, n_tiles, stream) : launch_tc<__nv_bfloat16, 128>(p, tiles, n_tiles, stream);
}

cudaError_t launch_attention_span_merge(const AttnParams& p, int64_t rows, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (p.spans <= 0 || p.span_tiles < 1 || p.part_acc == nullptr || p.part_ml == nullptr) return cudaErrorInvalidValue;
  launch_kernel(attn_span_merge_kernel, dim3(unsigned(rows), unsigned(p.heads)), unsigned(p.kv.head_dim), 0, stream, p);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
