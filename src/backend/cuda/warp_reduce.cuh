#pragma once
// Butterfly reductions across a warp (xor 16, 8, 4, 2, 1): every lane ends with the result, and the
// order of the operations is fixed, so a warp's sum depends on its inputs alone (batch invariance).

namespace vellum::cuda {

inline constexpr unsigned kFull = 0xFFFFFFFFu;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
  return v;
}

}  // namespace vellum::cuda
