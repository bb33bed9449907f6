#pragma once
// The tails of batch-1 int8 GEMV launches (round 30; GemvTail, gemv_kernels.h): work that was the
// next kernel of a decode step, done inside the GEMV once the rows it needs are stored, so a
// layer's chain has three kernels fewer (two norms, the quantization of g).
//  - norm_tail: the launch's last block adds the output (the residual delta) into x and writes
//    h = rms_norm(x)·gain and h's int8 copy with add_rms_norm_kernel<V, T, 512>'s expressions and
//    reduction order (fused_kernels.cu): each of the 128 threads plays 4 of the norm's 512, so the
//    bits are the norm kernel's.
//  - q8_group_tail: the warp that completes a 32-row group of the output quantizes it with
//    quantize_q8_warp, the quantize kernel's bits.

#include <cstdint>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {

// Release / acquire at device scope: cheaper than __threadfence()'s sequentially consistent fence,
// and all an arrival counter needs. Issued by one thread after a block or warp barrier (which
// orders the other threads' stores before it; fences are cumulative), as a grid barrier does.
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// The block that completes the launch (its counter, left at zero): true in that block only, with
// every block's stores visible to it.
__device__ __forceinline__ bool last_block_of_grid(unsigned* counter) {
  __shared__ unsigned last;
  __syncthreads();
  if (threadIdx.x == 0) {
    fence_acq_rel_gpu();
    const unsigned before = atomicAdd(counter, 1u);
    last = before + 1 == gridDim.x ? 1u : 0u;
    if (last) {
      *counter = 0;
      fence_acq_rel_gpu();
    }
  }
  __syncthreads();
  return last != 0;
}

inline constexpr int kTailNone = 0, kTailNorm = 1, kTailQ8 = 2;
inline constexpr int kNormTailThreads = 512;  // the norm kernel's block (norm_threads(); the launcher checks it)

// o: the launch's one output segment, cols = x's columns. Every thread of every block calls it.
template <int kThreads>
__device__ __forceinline__ void norm_tail(const GemvTail& t, const float* o) {
  static_assert(kNormTailThreads % kThreads == 0 && kThreads % 32 == 0, "whole norm warps a thread block");
  constexpr int M = kNormTailThreads / kThreads;  // norm threads a thread: tid + kThreads·m
  if (!last_block_of_grid(t.counters)) return;
  __shared__ float partial[kNormTailThreads / 32];
  const int64_t n4 = t.cols / 4, per = (n4 + kNormTailThreads - 1) / kNormTailThreads;  // the norm's V, less idle j
  float4* x4 = reinterpret_cast<float4*>(t.x);
  const float4* o4 = reinterpret_cast<const float4*>(o);
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float ss[M];
#pragma unroll
  for (int m = 0; m < M; ++m) ss[m] = 0.0f;
  // x + o (written back, as the norm kernel does) and each norm thread's sum of squares over its j.
  for (int64_t j = 0; j < per; ++j) {
    float4 v[M], d[M];
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const int64_t i = threadIdx.x + kThreads * m + int64_t(kNormTailThreads) * j;
      v[m] = i < n4 ? __ldcg(x4 + i) : zero;
      d[m] = i < n4 ? __ldcg(o4 + i) : zero;
    }
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const int64_t i = threadIdx.x + kThreads * m + int64_t(kNormTailThreads) * j;
      v[m] = make_float4(v[m].x + d[m].x, v[m].y + d[m].y, v[m].z + d[m].z, v[m].w + d[m].w);  // as add_kernel
      if (i < n4) __stcg(x4 + i, v[m]);
      ss[m] += v[m].x * v[m].x + v[m].y * v[m].y + v[m].z * v[m].z + v[m].w * v[m].w;
    }
  }
  // Norm warp tid / 32 + (kThreads / 32)·m is this warp's lanes at m: its butterfly, then the
  // norm's sum over its warps in order.
#pragma unroll
  for (int m = 0; m < M; ++m) {
    float s = ss[m];
#pragma unroll
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(kFull, s, off);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32 + (kThreads / 32) * m] = s;
  }
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kNormTailThreads / 32; ++w) total += partial[w];
  const float scale = 1.0f / sqrtf(total / static_cast<float>(t.cols) + t.eps);
  const float4* g4 = reinterpret_cast<const float4*>(t.gain);
  float4* h4 = reinterpret_cast<float4*>(t.h);
  auto* xq = static_cast<int8_t*>(t.q8);
  auto* xs = reinterpret_cast<float2*>(static_cast<uint8_t*>(t.q8) + (t.cols + 15) / 16 * 16);
  for (int64_t j = 0; j < per; ++j) {
    float4 v[M], g[M];
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const int64_t i = threadIdx.x + kThreads * m + int64_t(kNormTailThreads) * j;
      v[m] = i < n4 ? __ldcg(x4 + i) : zero;  // this thread's own x + o from above
      g[m] = i < n4 ? g4[i] : zero;
    }
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const int64_t i = threadIdx.x + kThreads * m + int64_t(kNormTailThreads) * j;
      float4 y = zero;
      if (i < n4) {
        y = make_float4(mul(mul(v[m].x, scale), g[m].x), mul(mul(v[m].y, scale), g[m].y), mul(mul(v[m].z, scale), g[m].z),
                        mul(mul(v[m].w, scale), g[m].w));
        h4[i] = y;
      }
      // 8 consecutive norm threads hold a 32-element block: 8 consecutive lanes at one m
      quantize_q8_float4(y, i, i < n4, xq, xs);
    }
  }
}

// After warp-uniform `outs` outputs o0 .. o0 + outs - 1 of `out` are stored by this warp (all in one
// 32-row group): the warp that completes the group writes its int8 copy. The counters are the
// group's (GemvTail::counters + group), left at zero.
__device__ __forceinline__ void q8_group_tail(const GemvTail& t, const float* out, int64_t o0, int outs) {
  const int lane = int(threadIdx.x & 31);
  const int64_t group = o0 / 32;
  __syncwarp();
  unsigned before = 0;
  if (lane == 0) {
    fence_acq_rel_gpu();
    before = atomicAdd(t.counters + group, unsigned(outs));
    if (before + unsigned(outs) == 32u) {
      t.counters[group] = 0;
      fence_acq_rel_gpu();
    }
  }
  before = __shfl_sync(kFull, before, 0);
  if (before + unsigned(outs) != 32u) return;
  __syncwarp();  // lane 0's acquire before every lane's loads
  const float v = __ldcg(out + group * 32 + lane);
  auto* xs = reinterpret_cast<float2*>(static_cast<uint8_t*>(t.q8) + (t.cols + 15) / 16 * 16);
  quantize_q8_warp(v, static_cast<int8_t*>(t.q8) + group * 32 + lane, xs + group);
}

}  // namespace vellum::cuda
