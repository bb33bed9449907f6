// A layer's attention for a step of one token row, RoPE and the K/V store included (round 29):
// see attn_rope_row.h.

#include "backend/cuda/attn_rope_row.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <cooperative_groups.h>

#include "backend/cuda/block_slot.cuh"
#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/cuda_util.h"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/pack16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kWarpPositions = kRopeRowSpan / kWarps;  // 16
constexpr int kMaxSlices = kRopeRowMaxPositions / kRopeRowSpan;  // 8: the portable cluster size

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
// A 16-byte K or V piece as 8 floats.
template <typename T>
__device__ __forceinline__ void unpack8(const uint4& u, float (&x)[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float2 f = to_f2(w[e], T{});
    x[2 * e] = f.x, x[2 * e + 1] = f.y;
  }
}

// Block (slice, query head), the slices of a head one thread block cluster: positions
// [128·slice, 128·slice + 128) of row 0 against one query head. Everything after the wait is one
// chain of latencies that the step waits for (docs/cuda.md, round 29), so the kernel keeps it short:
// a block one head (round 29's first version gave a block a KV group's 4 heads: ~4 µs of arithmetic
// a layer on few SMs), each warp its own softmax state (no block max before the sums), and the
// slices merged in slice 0's shared memory, written by each slice through distributed shared memory
// before one cluster barrier (the first version merged through global memory by the row's last
// block: a fence, an atomic and the partials' loads, ~3 µs a layer).
// kVSmem (round 49): V's pieces go into the thread's own shared-memory slots by cp.async (zeros past
// the newest position) instead of registers, so a block fits in 80 registers and an SM holds 3
// blocks instead of 2. With registers, 8 slices (513–1 024 positions) × 32 heads are 32 clusters of
// 8, of which an H200 holds 30 at once (cudaOccupancyMaxActiveClusters): the rest ran as a second
// wave and the kernel held the chain 11.7 µs instead of ~5 (round 49's traces).
// Here a block holds 8 warps of 16 positions; HD/8 lanes share a position, each holding 8 dims in
// one 16-byte K and one V load (round 5's layout), so a query head's K/V are loaded by each of its
// group's blocks (before the wait, where they cost nothing measurable).
// Before the programmatic wait: the step's inputs, the K/V of every position older than the row's
// own, and the RoPE angles (one double sincos a thread, as rope_store_kv_kernel). After it: the raw
// q row of the head and k / v rows of its KV head (L2) are rotated exactly as rope_store_kv_kernel
// rotates them, the newest k and v rounded to the pool's type, stored by the group's first head's
// block that holds the position, and used from shared memory, not read back. Slice 0 merges the
// slices' states (max, weight sum, weighted V sum) and writes out and, for the output projection's
// int8 GEMV, its int8 copy.
template <typename T, int HD, bool kVSmem>
__global__ void __launch_bounds__(kThreads, kVSmem ? 3 : 0) attn_rope_row_kernel(AttnParams p, RopeRowInputs in) {
  constexpr int LG = HD / 8, PPI = 32 / LG, IT = kWarpPositions / PPI;
  static_assert(IT >= 1 && kWarpPositions % PPI == 0, "whole position groups a warp");
  static_assert(2 * HD <= kThreads, "a thread per rotated q and k element");
  __shared__ __align__(16) float qs[HD];
  __shared__ __align__(16) float kn[HD];
  __shared__ __align__(16) float vn[HD];
  __shared__ float red_m[kWarps], red_l[kWarps];
  __shared__ float red_acc[kWarps][HD];
  // Slice 0's: every slice's state (weighted V sum; max and weight sum), written by the slice.
  __shared__ float merge_o[kMaxSlices * HD];
  __shared__ float merge_ml[2 * kMaxSlices];
  // kVSmem: thread t's V piece of its position group it at [it][t] (consecutive threads, consecutive 16 bytes).
  __shared__ __align__(16) uint4 v_own[kVSmem ? IT : 1][kVSmem ? kThreads : 1];
  cg::cluster_group cluster = cg::this_cluster();
  const int slice = blockIdx.x, slices = gridDim.x, p0 = slice * kRopeRowSpan;
  const int head = blockIdx.y, G = p.heads / p.kv.kv_heads, kvh = head / G;
  const int t = threadIdx.x, warp = t / 32, lane = t & 31, lp = lane / LG, part8 = lane % LG;
  const int64_t row_elems = int64_t(p.kv.kv_heads) * HD;
  const int ctx = p.row_ctx[0], newest = ctx - 1;
  const int32_t* table = p.tables + p.row_table[0];
  const int pos0 = p0 + warp * kWarpPositions + lp;  // lane group lp's first position
  const T* pool = static_cast<const T*>(p.kv.pool);
  const bool active = p0 < ctx;                                    // slice 0 always is
  const bool holds_newest = active && newest < p0 + kRopeRowSpan;  // and newest >= p0
  uint4 kr[IT];
  uint4 vr[kVSmem ? 1 : IT];
  {
    const int bs = p.kv.block_size;
    BlockSlot at(pos0, bs);
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if (it > 0) at.advance(PPI, bs);
      if (pos0 + it * PPI < newest) {
        const T* base = pool + int64_t(table[at.block]) * p.kv.block_elems + int64_t(at.slot) * row_elems + int64_t(kvh) * HD + part8 * 8;
        kr[it] = *reinterpret_cast<const uint4*>(base + p.kv.k_off);
        if constexpr (kVSmem) {
          cp_async16_z(unsigned(__cvta_generic_to_shared(&v_own[it][t])), base + p.kv.v_off, true);
        } else {
          vr[it] = *reinterpret_cast<const uint4*>(base + p.kv.v_off);
        }
      } else {
        kr[it] = make_uint4(0, 0, 0, 0);
        if constexpr (kVSmem) {
          cp_async16_z(unsigned(__cvta_generic_to_shared(&v_own[it][t])), pool, false);  // zeros: nothing read
        } else {
          vr[it] = make_uint4(0, 0, 0, 0);
        }
      }
    }
    if constexpr (kVSmem) cp_async_commit();
  }
  // Threads [0, HD) rotate q's dim td, threads [HD, 2·HD) the newest k's (and carry v's): pair pi =
  // (a, b), whose angle they compute now.
  const RopeParams& rp = in.rope;
  const int td = t % HD;
  const bool rotated = td < 2 * rp.half;
  const int pi = rp.interleaved ? td / 2 : (td < rp.half ? td : td - rp.half);
  const int a = rp.interleaved ? 2 * pi : pi, b = rp.interleaved ? 2 * pi + 1 : pi + rp.half;
  float cf = 0.0f, sf = 0.0f;
  if (rotated && (t < HD ? active : t < 2 * HD && holds_newest)) {  // only the angles this block uses
    double s, c;
    sincos(double(*in.position) * rp.inv_freq[pi], &s, &c);
    cf = static_cast<float>(c * rp.magnitude);
    sf = static_cast<float>(s * rp.magnitude);
  }
  pdl_wait();
  if ((in.dbg & 1) != 0) return;
  if ((in.dbg & 2) != 0) {  // spin 2 µs, then leave (calibrates what a step charges for time spent here)
    uint64_t t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    } while (t1 - t0 < 2000);
    return;
  }
  // Slice 0's shared memory may be written only once every block of the cluster runs: arrive now,
  // wait just before the first write (long after every block has arrived).
  cluster.barrier_arrive();
  const auto rotate = [&](const float* h) {
    if (!rotated) return h[td];
    const float x0 = h[a], x1 = h[b];
    return td == a ? sub(mul(x0, cf), mul(x1, sf)) : add(mul(x0, sf), mul(x1, cf));
  };
  if (active && t < HD) qs[td] = rotate(p.q + int64_t(head) * HD);
  if (holds_newest && t >= HD && t < 2 * HD) {
    const float kx = rounded(rotate(in.k + int64_t(kvh) * HD), T{});
    const float vx = rounded(in.v[int64_t(kvh) * HD + td], T{});
    kn[td] = kx;
    vn[td] = vx;
    if (head % G == 0) {  // one writer per KV head
      const int64_t slot = *in.slot;
      T* base = static_cast<T*>(p.kv.pool) + (slot / p.kv.block_size) * p.kv.block_elems +
                (slot % p.kv.block_size) * row_elems + int64_t(kvh) * HD + td;
      put(base + p.kv.k_off, kx);
      put(base + p.kv.v_off, vx);
    }
  }
  if (active) {  // block-uniform
    __syncthreads();
    if (holds_newest) {
#pragma unroll
      for (int it = 0; it < IT; ++it) {
        if (pos0 + it * PPI != newest) continue;
        kr[it] = pack8<T>(kn + part8 * 8);
        if constexpr (kVSmem) {
          cp_async_wait<0>();  // the slot's zero fill lands before it is overwritten
          v_own[it][t] = pack8<T>(vn + part8 * 8);
        } else {
          vr[it] = pack8<T>(vn + part8 * 8);
        }
      }
    }
    float q[8];
    {
      const float4 x0 = *reinterpret_cast<const float4*>(qs + part8 * 8), x1 = *reinterpret_cast<const float4*>(qs + part8 * 8 + 4);
      q[0] = x0.x, q[1] = x0.y, q[2] = x0.z, q[3] = x0.w, q[4] = x1.x, q[5] = x1.y, q[6] = x1.z, q[7] = x1.w;
    }
    // Scores, then each warp's own softmax state over its 16 positions (no block max first).
    float s[IT], mx = -INFINITY;
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      float k[8];
      unpack8<T>(kr[it], k);
      float dot = 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) dot += q[e] * k[e];
#pragma unroll
      for (int o = LG / 2; o > 0; o /= 2) dot += __shfl_xor_sync(kFull, dot, o);
      s[it] = pos0 + it * PPI < ctx ? dot * p.scale : -INFINITY;
      mx = fmaxf(mx, s[it]);
    }
#pragma unroll
    for (int o = 16; o >= LG; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, o));
    float acc[8], l = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[e] = 0.0f;
    if constexpr (kVSmem) cp_async_wait<0>();  // this thread's own V slots (no other thread reads them)
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      float v[8];
      if constexpr (kVSmem) {
        unpack8<T>(v_own[it][t], v);
      } else {
        unpack8<T>(vr[it], v);
      }
      const float pe = s[it] == -INFINITY ? 0.0f : expf(s[it] - mx);  // a warp past the row's end: mx = -inf
      l += pe;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[e] += pe * v[e];
    }
#pragma unroll
    for (int o = 16; o >= LG; o /= 2) {
      l += __shfl_xor_sync(kFull, l, o);
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[e] += __shfl_xor_sync(kFull, acc[e], o);
    }
    if (lane < LG) {
#pragma unroll
      for (int e = 0; e < 8; ++e) red_acc[warp][part8 * 8 + e] = acc[e];
      if (lane == 0) red_m[warp] = mx, red_l[warp] = l;
    }
    __syncthreads();
    cluster.barrier_wait();
    if (t < HD) {  // the slice's state from its warps' (in order), into slice 0's shared memory
      float m = red_m[0];  // finite: position p0 < ctx is warp 0's
#pragma unroll
      for (int w = 1; w < kWarps; ++w) m = fmaxf(m, red_m[w]);
      float o = 0.0f, lt = 0.0f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const float wt = red_m[w] == -INFINITY ? 0.0f : expf(red_m[w] - m);
        o += red_acc[w][t] * wt;
        lt += red_l[w] * wt;
      }
      cluster.map_shared_rank(merge_o, 0)[slice * HD + t] = o;
      if (t == 0) {
        float* ml = cluster.map_shared_rank(merge_ml, 0);
        ml[2 * slice] = m, ml[2 * slice + 1] = lt;
      }
    }
  } else {
    if constexpr (kVSmem) cp_async_wait<0>();  // its zero fills, before the block may leave
    cluster.barrier_wait();
    if (t < HD) {  // a slice past the row's end: an empty state
      cluster.map_shared_rank(merge_o, 0)[slice * HD + t] = 0.0f;
      if (t == 0) {
        float* ml = cluster.map_shared_rank(merge_ml, 0);
        ml[2 * slice] = -INFINITY, ml[2 * slice + 1] = 0.0f;
      }
    }
  }
  cluster.sync();  // every slice's state is in slice 0's shared memory
  if (slice == 0 && t < HD) {  // whole warps: HD % 32 == 0
    float m = merge_ml[0];  // finite: slice 0 holds position 0
    for (int sl = 1; sl < slices; ++sl) m = fmaxf(m, merge_ml[2 * sl]);
    float o = 0.0f, lt = 0.0f;
    for (int sl = 0; sl < slices; ++sl) {
      const float w = expf(merge_ml[2 * sl] - m);  // 0 for an empty slice
      lt += merge_ml[2 * sl + 1] * w;
      o += merge_o[sl * HD + t] * w;
    }
    const float y = o / lt;
    const int64_t i = int64_t(head) * HD + t;
    p.out[i] = y;
    if (p.out_q8 != nullptr) quantize_q8_warp(y, p.out_q8 + i, reinterpret_cast<float2*>(p.out_q8 + p.q8_xs_off) + i / 32);
  }
}

unsigned slices_of(const AttnParams& p) { return unsigned((p.max_splits * kAttnSplit + kRopeRowSpan - 1) / kRopeRowSpan); }

// Every instantiation has one signature: the pool's type, the head size and V's placement pick one.
using RowKernel = void (*)(AttnParams, RopeRowInputs);
RowKernel kernel_for(const AttnParams& p, bool v_smem) {
  const bool hd128 = p.kv.head_dim == 128;
  if (p.kv.type == TensorType::F16) {
    if (hd128) return v_smem ? attn_rope_row_kernel<__half, 128, true> : attn_rope_row_kernel<__half, 128, false>;
    return v_smem ? attn_rope_row_kernel<__half, 64, true> : attn_rope_row_kernel<__half, 64, false>;
  }
  if (hd128) return v_smem ? attn_rope_row_kernel<__nv_bfloat16, 128, true> : attn_rope_row_kernel<__nv_bfloat16, 128, false>;
  return v_smem ? attn_rope_row_kernel<__nv_bfloat16, 64, true> : attn_rope_row_kernel<__nv_bfloat16, 64, false>;
}

// A slice a block, a query head's slices one cluster.
cudaLaunchConfig_t config(const AttnParams& p, cudaStream_t stream, cudaLaunchAttribute (&attr)[1]) {
  const unsigned slices = slices_of(p);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(slices, unsigned(p.heads));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = slices;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

// VELLUM_CUDA_ROPE_ATTN_VSMEM: 1 = V through shared memory (kVSmem), 0 = in registers, unset = V in
// registers while the device holds every cluster of the launch at once, else in shared memory
// (llama3-8b on an H200: from 8 slices, 513–1 024 positions, where registers hold 30 clusters of 32).
int v_smem_knob() {
  static const int knob = [] {
    const char* e = std::getenv("VELLUM_CUDA_ROPE_ATTN_VSMEM");
    return e == nullptr ? -1 : std::atoi(e) != 0 ? 1 : 0;
  }();
  return knob;
}
bool v_in_smem(const AttnParams& p) {
  if (v_smem_knob() >= 0) return v_smem_knob() == 1;
  static std::mutex mu;
  static std::map<std::tuple<int, int, int, unsigned, int>, bool> by_shape;  // (device, type, dims, slices, heads)
  int dev = 0;
  (void)cudaGetDevice(&dev);
  const std::tuple<int, int, int, unsigned, int> key{dev, int(p.kv.type), p.kv.head_dim, slices_of(p), p.heads};
  const std::lock_guard<std::mutex> lock(mu);
  const auto it = by_shape.find(key);
  if (it != by_shape.end()) return it->second;
  const int n = attn_rope_row_max_clusters(p, false);
  return by_shape[key] = n >= 0 && n < p.heads;
}

int g_on = -1;  // -1: not read from the environment yet

}  // namespace

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
         p.split_rows == nullptr && rope.half >= 0 && 2 * rope.half <= hd && rope.half <= kMaxRopePairs;
}

int attn_rope_row_max_clusters(const AttnParams& p, bool v_smem) {
  cudaLaunchAttribute attr[1];
  return max_active_clusters(reinterpret_cast<const void*>(kernel_for(p, v_smem)), config(p, nullptr, attr));
}

cudaError_t launch_attention_rope_row(const AttnParams& p, const RopeRowInputs& in, cudaStream_t stream) {
  if (!attn_rope_row_takes(p, in.rope) || in.k == nullptr || in.v == nullptr || in.position == nullptr || in.slot == nullptr) {
    return cudaErrorInvalidValue;
  }
  static const int env_dbg = [] {  // RopeRowInputs::dbg for whole programs (measurements)
    const char* e = std::getenv("VELLUM_CUDA_ROPE_ATTN_DBG");
    return e != nullptr ? std::atoi(e) : 0;
  }();
  RopeRowInputs d = in;
  if (d.dbg == 0) d.dbg = env_dbg;
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = config(p, stream, attr);
  return cudaLaunchKernelEx(&cfg, kernel_for(p, v_in_smem(p)), p, d);
}

}  // namespace vellum::cuda
