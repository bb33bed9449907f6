#pragma once
// One 32-element block of x quantized to int8 by a full warp, lane i holding element i: scale
// amax / 127, round to nearest, and the block's (d, d·Σq) pair (the K-quant minimums need Σq).
// Every kernel that writes an int8 copy of activations calls this, so a copy written by a norm, an
// attention combine or a quantize kernel holds the same bits for the same values.

#include <cstdint>

#include "backend/cuda/gemv_mma.h"
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

// Round 53: the block (lane i: element i0 + i, i0 % 32 == 0, of token row `token`) into row `token`
// of int8 rows `stride` bytes apart over k: launch_quantize_q8_rows' layout (gemv_kernels.h).
__device__ __forceinline__ void quantize_q8_row_warp(float v, uint8_t* base, size_t stride, int token, int64_t i, int64_t k) {
  int8_t* xq = reinterpret_cast<int8_t*>(base + size_t(token) * stride);
  quantize_q8_warp(v, xq + i, reinterpret_cast<float2*>(xq + (k + 15) / 16 * 16) + i / 32);
}
// The K-quant minimums' tf32 pair of a block's d·Σq (m) in gemv_mma's x layout over kv = k · nt:
// hi (m's top 19 bits, what tf32 keeps) and lo (the rest), for block s of virtual super-block vj,
// token column col.
__device__ __forceinline__ void store_mma_min_pair(uint8_t* xf, int64_t kv, int64_t vj, int col, int s, float m) {
  const float hi = __uint_as_float(__float_as_uint(m) & 0xFFFFE000u);
  float* xm = reinterpret_cast<float*>(xf + mma_x_min_offset(kv));
  xm[mma_x_min_index(vj, col, s, false)] = hi;
  xm[mma_x_min_index(vj, col, s, true)] = m - hi;
}
// The same block into gemv_mma's x layout of nt tiles over k (gemv_mma.h): the bits
// quantize_mma_x_kernel writes (it calls this), and the minimums' tf32 pair of d·Σq.
__device__ __forceinline__ void quantize_mma_warp(float v, uint8_t* xf, int token, int64_t i, int64_t k, int nt) {
  const int64_t kv = k * nt;
  const int e = int(i % 256), s = e / 32, col = token % kMmaTile;
  const int64_t vj = mma_x_vsb(i / 256, token, nt);
  float2* xs = reinterpret_cast<float2*>(xf + kMmaTile * kv) + mma_x_scale_index(vj, col, s);
  quantize_q8_warp(v, reinterpret_cast<int8_t*>(xf + mma_x_frag_byte(vj, col, e)), xs);
  __syncwarp();
  if ((threadIdx.x & 31) == 0) store_mma_min_pair(xf, kv, vj, col, s, xs->y);  // this lane wrote *xs
}

// The same block held as one float4 by each of 8 consecutive threads (thread 8m + r: elements
// 4r..4r + 3 of block m; a norm's layout): the float4's four int8 values packed in a word, and the
// block's pair (d, d·Σq). All 8 threads call it (shuffles).
struct Q8Float4 {
  uint32_t packed;
  float2 pair;
};
__device__ __forceinline__ Q8Float4 q8_float4(float4 y) {
  float amax = fmaxf(fmaxf(fabsf(y.x), fabsf(y.y)), fmaxf(fabsf(y.z), fabsf(y.w)));
#pragma unroll
  for (int o = 4; o > 0; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(kFull, amax, o));
  const float d = amax / 127.0f;  // as quantize_q8_warp
  const int q0 = amax == 0.0f ? 0 : __float2int_rn(y.x / d), q1 = amax == 0.0f ? 0 : __float2int_rn(y.y / d);
  const int q2 = amax == 0.0f ? 0 : __float2int_rn(y.z / d), q3 = amax == 0.0f ? 0 : __float2int_rn(y.w / d);
  int sum = q0 + q1 + q2 + q3;
#pragma unroll
  for (int o = 4; o > 0; o /= 2) sum += __shfl_xor_sync(kFull, sum, o);
  return {(uint32_t(q0) & 0xFFu) | ((uint32_t(q1) & 0xFFu) << 8) | ((uint32_t(q2) & 0xFFu) << 16) | (uint32_t(q3) << 24),
          make_float2(d, d * float(sum))};
}
// float4 i of the row into xq (q8_bytes layout), the block's pair into xs by its first thread;
// `store` false: compute only.
__device__ __forceinline__ void quantize_q8_float4(float4 y, int64_t i, bool store, int8_t* xq, float2* xs) {
  const Q8Float4 q = q8_float4(y);
  if (store) {
    reinterpret_cast<uint32_t*>(xq)[i] = q.packed;
    if ((threadIdx.x & 7) == 0) xs[i / 8] = q.pair;
  }
}

}  // namespace vellum::cuda
