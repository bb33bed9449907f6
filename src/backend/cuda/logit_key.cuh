#pragma once
// Logits as 64-bit keys whose integer order is core/logit_order.h's (shared by top_k_rows and
// draw_rows): a row's best column is its largest key, found with integer maxima.

#include <cstdint>

#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {

// A candidate as one 64-bit key whose integer order is core/logit_order.h's logit_before: the high
// half the value made monotone (negatives' bits flipped, the sign bit set on the others; -0 read as
// +0, every NaN as 0, i.e. below -inf), the low half ~id (the smaller id wins a tie, and NaN ties
// too). A real candidate's low half is >= 2^31; a column past the row's end is key c (< 2^31,
// unique): after every real candidate. 0 is no candidate at all (a taken slot).
__device__ __forceinline__ uint64_t key_of(float v, int id) {
  uint32_t u = __float_as_uint(v == 0.0f ? 0.0f : v);
  u = isnan(v) ? 0u : (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return (uint64_t(u) << 32) | uint32_t(~uint32_t(id));
}
__device__ __forceinline__ int id_of(uint64_t key) { return int(~uint32_t(key)); }

__device__ __forceinline__ uint64_t warp_max_u64(uint64_t v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const uint64_t x = __shfl_xor_sync(kFull, v, o);
    v = x > v ? x : v;
  }
  return v;
}

}  // namespace vellum::cuda
