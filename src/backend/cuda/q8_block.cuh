#pragma once
// One 32-element block of x quantized to int8 by a full warp, lane i holding element i: scale
// amax / 127, round to nearest, and the block's (d, d·Σq) pair (the K-quant minimums need Σq).
// Every kernel that writes an int8 copy of activations calls this, so a copy written by a norm, an
// attention combine or a quantize kernel holds the same bits for the same values.

#include <cstdint>

#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {

__device__ __forceinline__ void quantize_q8_warp(float v, int8_t* q_out, float2* scale_out) {
  const float amax = warp_max(fabsf(v));
  const float d = amax / 127.0f;
  const int q = amax == 0.0f ? 0 : __float2int_rn(v / d);
  *q_out = static_cast<int8_t>(q);
  const int sum = __reduce_add_sync(kFull, q);
  if ((threadIdx.x & 31) == 0) *scale_out = make_float2(d, d * float(sum));
}

}  // namespace vellum::cuda
