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

// The consumer's scale s, after the programmatic wait, in two steps (round 49): the partials' loads
// are issued at construction, ahead of the launch's first loads of x, and summed where s is used
// (the store): lane j adds partials j, j + 32, ... in order, then the warp's butterfly (every lane
// the same bits). Summing them at once put a whole L2 round trip ahead of x's on the chain (the
// SASS: the partials' loads, their shuffles and rsqrt, then x's loads). s = 1 without partials (the
// plain launch: x·1 = x). RowNormIn::scale_first (a measurement knob) sums at construction.
struct RowNormScale {
  static constexpr int kEarly = 4;  // partials a lane loads early: every one for k <= 4 096
  const float* partial;
  float eps, kf;
  int64_t groups;
  float part[kEarly];
  bool summed = false;
  float s = 1.0f;
  __device__ RowNormScale(const RowNormIn& in, int64_t k) : partial(in.partial), eps(in.eps), kf(float(k)), groups(k / 32) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < kEarly; ++i) {
      const int64_t j = lane + 32 * i;
      part[i] = partial != nullptr && j < groups ? partial[j] : 0.0f;
    }
    if (in.scale_first && partial != nullptr) s = sum(), summed = true;
  }
  // One full warp.
  __device__ float get() const { return partial == nullptr ? 1.0f : summed ? s : sum(); }

 private:
  __device__ float sum() const {
    const int lane = threadIdx.x & 31;
    float t = 0.0f;
#pragma unroll
    for (int i = 0; i < kEarly; ++i) {
      if (lane + 32 * i < groups) t += part[i];
    }
    for (int64_t j = lane + 32 * kEarly; j < groups; j += 32) t += partial[j];
    t = warp_sum(t);
    return 1.0f / sqrtf(t / kf + eps);  // as add_rms_norm_kernel's scale
  }
};

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
