#pragma once
// x² + y² + z² + w² of a float4 with explicit roundings, for every kernel whose norm must give
// add_rms_norm_kernel's bits (fused_kernels.cu; the layer kernel, layer_kernel.cu). Written as an
// expression, the sum was contracted into FMAs as the compiler chose per instantiation: the norm
// kernel got fma(y, y, x·x) at one float4 a thread but fma(x, x, y·y) at two or more, the layer
// kernel fma(x, x, y·y). So a norm could differ in its last bits between two kernels meant to
// match, and round 19's layer kernel gave other logits than the ops in a model while every op-level
// check agreed (docs/cuda.md, round 30).

namespace vellum::cuda {

__device__ __forceinline__ float sum_squares(float4 v) {
  return __fmaf_rn(v.w, v.w, __fmaf_rn(v.z, v.z, __fmaf_rn(v.y, v.y, __fmul_rn(v.x, v.x))));
}

}  // namespace vellum::cuda
