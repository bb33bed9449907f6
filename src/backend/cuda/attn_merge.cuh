#pragma once
// The merge of a one-row decode's span partials by the block that completes the row (round 5's and
// round 7's decode kernels, attention.cu, and the one-row kernel with RoPE, attn_rope_row.cu).

#include <cmath>
#include <cstdint>

#include "backend/cuda/attention.h"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {

// After a block has written its spans' partials it counts them in on the (row, KV head group)'s
// arrival counter (arrive_last.cuh); the block that completes the row merges it.

// Warp merges head `head` of row (rl, r) over its `spans` (≤ kAttnFuseSpans) partials: the max
// and the weight sum by butterflies over lanes (lane s takes span s), the V sums in span order, each
// lane's dims lane + 32e; every order depends on the span count only. Round 14: the partials'
// loads are independent (8 spans' in flight a lane) instead of one span a step (a serial chain of
// L2 round trips, ~5 µs at 32 spans). With p.out_q8 (one row) it also writes the int8 copy: dims
// 32e..32e+31 are one quantization block.
// SPLIT > 1 (round 17): this warp takes only the part-th of SPLIT slices of the head's dims (lane +
// 32e for e in [part·DPL/SPLIT, (part+1)·DPL/SPLIT)), so that SPLIT warps share a head; the
// same sums in the same order per dim.
static_assert(kAttnFuseSpans <= 32, "merge_head gives each lane one span");
template <int HD, int SPLIT = 1>
__device__ __forceinline__ void merge_head(const AttnParams& p, int64_t rl, int64_t r, int head, int spans, int lane, int part = 0) {
  static_assert(HD / 32 % SPLIT == 0, "whole 32-dim slices a warp");
  constexpr int DPL = HD / 32 / SPLIT;
  const int64_t base = (rl * p.heads + head) * p.max_splits;
  const float2* ml = reinterpret_cast<const float2*>(p.part_ml) + base;
  const float2 mine = lane < spans ? __ldcg(&ml[lane]) : make_float2(-INFINITY, 0.0f);
  const float m = warp_max(mine.x);
  const float w = expf(mine.x - m);  // 0 past the spans
  const float sum = warp_sum(mine.y * w);
  float o[DPL];
#pragma unroll
  for (int e = 0; e < DPL; ++e) o[e] = 0.0f;
  const float* acc = p.part_acc + base * HD + lane + 32 * DPL * part;
#pragma unroll 8
  for (int s2 = 0; s2 < spans; ++s2) {
    const float ws = __shfl_sync(kFull, w, s2);
#pragma unroll
    for (int e = 0; e < DPL; ++e) o[e] += __ldcg(acc + int64_t(s2) * HD + 32 * e) * ws;
  }
  const int64_t i0 = int64_t(head) * HD + lane + 32 * DPL * part;
  float* out = p.out + r * p.ldo + i0;
#pragma unroll
  for (int e = 0; e < DPL; ++e) {
    const float v = o[e] / sum;
    out[32 * e] = v;
    if (p.out_q8 != nullptr) {
      const int64_t i = i0 + 32 * e;
      quantize_q8_warp(v, p.out_q8 + i, reinterpret_cast<float2*>(p.out_q8 + p.q8_xs_off) + i / 32);
    }
  }
}

}  // namespace vellum::cuda
