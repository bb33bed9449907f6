#pragma once
// Two floats rounded to nearest even as one 32-bit pair of a 16-bit type (f16 or bf16, chosen by
// the tag argument): the layout of mma.sync operand registers and of 4-byte stores.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace vellum::cuda {

__device__ __forceinline__ uint32_t pack2(float a, float b, __half) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t pack2(float a, float b, __nv_bfloat16) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

}  // namespace vellum::cuda
