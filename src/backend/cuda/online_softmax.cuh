#pragma once
// One K/V tile's step of the tensor-core attention kernels' online softmax (attention.cu's
// attn_tc_kernel, attn_wgmma.cu), for a thread's two rows of a 16-row slice in mma.sync's C layout:
// s[n][0..1] are row g's scores at positions t0 + 8n + 2t, +1, s[n][2..3] row g + 8's (g = lane / 4,
// t = lane % 4 = gc), the quad of lanes sharing a row reduced by shuffles.

#include <cmath>

#include "backend/cuda/exp2_approx.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {

// The tile's scores become the rows' weights 2^(s·sl2 − m) and the running maxima m and weight sums
// l move on; a0, a1 rescale the rows' earlier sums. Positions at or past a row's context (c0, c1)
// are hidden when the tile reaches them (masked). Scores stay unscaled: the maximum scales exactly
// (sl2 > 0: 1/sqrt(d) or a model's positive scale), and each weight takes one rounding (an fma).
// Position 0 is visible to every row, so after the first tile the maxima are finite; a row whose
// tile is hidden whole keeps its state (a = 1, weights 0).
template <int NS>
__device__ __forceinline__ void online_softmax_tile(float (&s)[NS][4], int t0, bool masked, int c0, int c1, int gc, float sl2,
                                                    float& m0, float& m1, float& l0, float& l1, float& a0, float& a1) {
  float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
  for (int n = 0; n < NS; ++n) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int pos = t0 + n * 8 + gc * 2 + e;
      if (masked && pos >= c0) s[n][e] = -INFINITY;
      if (masked && pos >= c1) s[n][2 + e] = -INFINITY;
      mx0 = fmaxf(mx0, s[n][e]), mx1 = fmaxf(mx1, s[n][2 + e]);
    }
  }
  mx0 = fmaxf(mx0, __shfl_xor_sync(kFull, mx0, 1));
  mx0 = fmaxf(mx0, __shfl_xor_sync(kFull, mx0, 2));
  mx1 = fmaxf(mx1, __shfl_xor_sync(kFull, mx1, 1));
  mx1 = fmaxf(mx1, __shfl_xor_sync(kFull, mx1, 2));
  const float n0 = fmaxf(m0, mx0 * sl2), n1 = fmaxf(m1, mx1 * sl2);
  a0 = tc_exp2(m0 - n0), a1 = tc_exp2(m1 - n1);
  m0 = n0, m1 = n1;
  float r0 = 0.0f, r1 = 0.0f;
#pragma unroll
  for (int n = 0; n < NS; ++n) {
    s[n][0] = tc_exp2(fmaf(s[n][0], sl2, -n0)), s[n][1] = tc_exp2(fmaf(s[n][1], sl2, -n0));
    s[n][2] = tc_exp2(fmaf(s[n][2], sl2, -n1)), s[n][3] = tc_exp2(fmaf(s[n][3], sl2, -n1));
    r0 += s[n][0] + s[n][1], r1 += s[n][2] + s[n][3];
  }
  l0 = l0 * a0 + r0, l1 = l1 * a1 + r1;
}

// The rows' earlier sums o (ND 8-column blocks) times a0, a1. A row whose maximum held has a = 1
// exactly: the warp skips the rescale when all of its rows held (most tiles of a long row), with
// the same bits.
template <int ND>
__device__ __forceinline__ void rescale_rows(float (&o)[ND][4], float a0, float a1) {
  if (__any_sync(kFull, a0 != 1.0f || a1 != 1.0f)) {
#pragma unroll
    for (int d = 0; d < ND; ++d) o[d][0] *= a0, o[d][1] *= a0, o[d][2] *= a1, o[d][3] *= a1;
  }
}

// The end of a row pair: o (ND 8-column blocks) times 1 / l into the rows' outputs at out0 / out1
// (this lane's column pair of each block), rows past the tile (in0, in1 false) not written.
template <int ND>
__device__ __forceinline__ void store_rows(const float (&o)[ND][4], float l0, float l1, float* out0, float* out1, bool in0, bool in1) {
  const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
#pragma unroll
  for (int d = 0; d < ND; ++d) {
    if (in0) *reinterpret_cast<float2*>(out0 + d * 8) = make_float2(o[d][0] * inv0, o[d][1] * inv0);
    if (in1) *reinterpret_cast<float2*>(out1 + d * 8) = make_float2(o[d][2] * inv1, o[d][3] * inv1);
  }
}

}  // namespace vellum::cuda
