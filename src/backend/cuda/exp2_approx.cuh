#pragma once
// 2^x as the hardware computes it (ex2.approx, subnormal results flushed to 0): exp2f's extra
// instructions for results below 2^-126 sat on every score's dependency chain in the tensor-core
// attention kernels. Such weights are below f32's resolution of a row sum, which always holds a
// weight of 1 (the row's maximum).

namespace vellum::cuda {

__device__ __forceinline__ float tc_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace vellum::cuda
