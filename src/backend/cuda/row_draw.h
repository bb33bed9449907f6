#pragma once
// Sampling with nothing cut, on the device: a token drawn from each logit row's whole softmax, so a
// row sampled at a temperature without top-k, top-p or min-p (the OpenAI API's defaults) copies
// back one token id instead of the row (0.4-0.5 MB at a 100k+ vocabulary). Plain C++17, shared with
// nvcc.
//
// The draw is backend/logit_rows.h's draw_of_row with the weights summed in a fixed blocked order
// instead of column by column: w = exp((l - max) / T) in double (NaN 0), rows cut into parts of
// kDrawPart columns, a part's sum a scan over 256 chunks of 16 consecutive columns (each chunk
// summed in column order, the chunks by warp scans, the 8 warps in order), the parts summed in
// order. r = u · Σ; the part where the running part sums pass r, then within it the first column
// whose running sum (the part's base plus its chunk's prefix plus its own columns) passes r. So the
// token is the host's except where r lies within rounding of a boundary between two columns'
// running sums; a row without a finite best logit gives its best column, as on the host. Three
// kernels: the parts' best keys, the parts' sums, the pick (one block a row).

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace vellum::cuda {

inline constexpr int kDrawPart = 4096;

// One row's draw, laid out as backend::RowDraw (the backend copies its array as it is).
struct DrawArg {
  double u;           // in [0, 1)
  float temperature;  // > 0
  float unused;
};

size_t draw_rows_workspace_bytes(int64_t rows, int64_t cols);
// out[r] (device) = the token drawn from row r of x (rows × cols, row-major, at most 65 535 rows)
// with args[r] (device).
cudaError_t launch_draw_rows(const float* x, int64_t rows, int64_t cols, const DrawArg* args, int32_t* out, void* ws,
                             cudaStream_t stream);

}  // namespace vellum::cuda
