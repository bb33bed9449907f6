#pragma once
// The epilogue of the matmuls that put weight rows on mma's M side and tokens on N (mmq, dq_mma):
// acc[i][j] of a warp holds, for m16 tile i and n8 tile j, rows g / g + 8 and tokens 2t / 2t + 1
// (g = lane / 4, t = lane % 4); out is token-major, so each value goes to out[token][row] + bias,
// as f32 or rounded to bf16 (OutT).

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace vellum::cuda {

template <int MT, int NT, class OutT>
__device__ __forceinline__ void store_row_token_tiles(const float (&acc)[MT][NT][4], int64_t row0, int64_t tok0, int g, int t,
                                                      int64_t n, int64_t m, OutT* out, int64_t ldo, const float* bias) {
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int64_t row = row0 + i * 16 + g + 8 * e;
      if (row >= n) continue;
      const float bv = bias != nullptr ? bias[row] : 0.0f;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int64_t tok = tok0 + j * 8 + 2 * t;
        if (tok < m) out[tok * ldo + row] = OutT(acc[i][j][2 * e] + bv);
        if (tok + 1 < m) out[(tok + 1) * ldo + row] = OutT(acc[i][j][2 * e + 1] + bv);
      }
    }
  }
}

}  // namespace vellum::cuda
