#pragma once
// silu(gate) * up on eight 16-bit values (one 16-byte vector of each): swiglu_kernel's expression
// and bits, widened to f32 first. One definition for every kernel that computes it from 16-bit gate/up
// (swiglu16_kernel, the dequantizing GEMM's fused SwiGLU end in dq_tma.cu), so they give the same
// bits.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backend/cuda/dequant.cuh"

namespace vellum::cuda {

__device__ __forceinline__ float2 widen2(uint32_t u, __nv_bfloat16) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u));
}
__device__ __forceinline__ float2 widen2(uint32_t u, __half) { return __half22float2(*reinterpret_cast<const __half2*>(&u)); }

// a / b rounded to nearest even, as `/` compiles (div.rn.f32): ptxas's fast path, a reciprocal and
// four fused multiply-adds, without the range check (FCHK) and its branch to the slow path. The
// branch made each of swiglu8's eight divisions its own region, so their latency chains ran one
// after another (round 36: ~2 us a 64 x 256 tile). The caller takes it only where the fast path is
// exact (swiglu8: normal quotients, no overflow); check_swiglu16_exhaustive compares every 16-bit
// gate value with `/`, bit for bit.
__device__ __forceinline__ float div_rn_unchecked(float a, float b) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(b));
  const float e = __fmaf_rn(-b, r, 1.0f);
  const float r2 = __fmaf_rn(r, e, r);
  const float q0 = __fmaf_rn(a, r2, 0.0f);
  const float rem = __fmaf_rn(-b, q0, a);
  return __fmaf_rn(r2, rem, q0);
}

template <typename T>
__device__ __forceinline__ void swiglu8(const uint4 g8, const uint4 u8, float (&y)[8]) {
  const uint32_t g[4] = {g8.x, g8.y, g8.z, g8.w}, u[4] = {u8.x, u8.y, u8.z, u8.w};
  float gf[8], uf[8], d[8];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 a = widen2(g[j], T{}), b = widen2(u[j], T{});
    gf[2 * j] = a.x, gf[2 * j + 1] = a.y, uf[2 * j] = b.x, uf[2 * j + 1] = b.y;
  }
  // The fast path is exact for 2^-60 <= |g| and g > -44 (1 <= d < 2^64: a normal quotient, no
  // intermediate overflow); zeros (the sign of -0 / d), tiny, very negative, infinite and NaN
  // values take `/` for the whole vector.
  bool fast = true;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    d[i] = 1.0f + expf(-gf[i]);
    fast = fast && fabsf(gf[i]) >= 0x1p-60f && gf[i] > -44.0f && gf[i] < 0x1p64f;
  }
  if (fast) {
#pragma unroll
    for (int i = 0; i < 8; ++i) y[i] = mul(div_rn_unchecked(gf[i], d[i]), uf[i]);
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) y[i] = mul(gf[i] / d[i], uf[i]);
  }
}

}  // namespace vellum::cuda
