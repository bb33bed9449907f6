#pragma once
// The two halves of a batch-1 RMSNorm carried by GEMVs (gemv_kernels.h, RowNormOut / RowNormIn):
// the producer's 32-row group turned into z = x ⊙ gain's int8 copy and its Σx², and the consumer's
// scale s = 1/sqrt(Σx²/k + eps) from those partial sums. Both orders are fixed by k alone, so a
// row gets the same bits in every launch (graphs or eager).

#include <cstdint>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {

// One full warp, after the programmatic wait: lane j adds partials j, j + 32, ... in order, then
// the warp's butterfly (every lane the same bits). 1 without partials (the plain launch: x·1 = x).
__device__ __forceinline__ float row_norm_scale(const RowNormIn& in, int64_t k) {
  if (in.partial == nullptr) return 1.0f;
  const int lane = threadIdx.x & 31;
  const int64_t groups = k / 32;
  float t = 0.0f;
  for (int64_t j = lane; j < groups; j += 32) t += in.partial[j];
  t = warp_sum(t);
  return 1.0f / sqrtf(t / static_cast<float>(k) + in.eps);  // as add_rms_norm_kernel's scale
}

// Warp 0 of a producer block: xn[i] is the new x of row row0 + i (row0 % 32 == 0), gain_lane the
// gain of this lane's row (loaded before the wait: a weight). Writes z's 32 int8 values and scale
// pair (quantize_q8_warp, as every int8 copy) and the group's Σx².
__device__ __forceinline__ void row_norm_group(const float* xn, float gain_lane, int64_t row0, int64_t n,
                                               const RowNormOut& no) {
  const int lane = threadIdx.x & 31;
  const float v = xn[lane];
  int8_t* zq = static_cast<int8_t*>(no.z_q8);
  float2* zs = reinterpret_cast<float2*>(zq + (n + 15) / 16 * 16);
  quantize_q8_warp(mul(v, gain_lane), zq + row0 + lane, zs + row0 / 32);
  const float ss = warp_sum(__fmul_rn(v, v));
  if (lane == 0) no.partial[row0 / 32] = ss;
}

}  // namespace vellum::cuda
