#pragma once
// Sampling without top-k, on the device: a token drawn from each logit row's softmax after its min-p
// and top-p cuts, so a row sampled at a temperature (the OpenAI API's defaults, or top_p / min_p
// set) copies back one token id instead of the row (0.4-0.5 MB at a 100k+ vocabulary). Plain C++17,
// shared with nvcc.
//
// The draw is backend/logit_rows.h's draw_of_row: w = exp((l - max) / T) in double, integer masses
// (w scaled by 2^mass_shift and rounded), so the parallel sums are exact and the token is the host's
// (unless the device's exp differs from the host's by an ulp that moves a mass by one unit, and the
// cut or the draw lands on it). Rows are cut into parts of kDrawPart columns, a block a part:
// 1. the parts' best keys;
// 2. the parts' masses (whole, and after min-p), and for rows with top-p a histogram of the mass by
//    the logits' top 8 key bits; the row's last block picks the bin where top-p's target is reached;
// 3. (rows with top-p) three more passes narrow the cut V to a logit by the next 8 bits each;
// 4. (rows with top-p) the parts' kept masses (min-p, and logits >= V);
// 5. a block a row: r = draw_point(u, kept mass), the part where the running masses pass r, then in
//    it the first kept column that does.
// Passes 3-4 are launched only when some row has top-p below 1.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace vellum::cuda {

inline constexpr int kDrawPart = 4096;

// One row's draw, laid out as backend::RowDraw (the backend copies its array as it is).
struct DrawArg {
  double u;           // in [0, 1)
  float temperature;  // > 0
  float min_p;        // [0, 1]
  float top_p;        // (0, 1]
  float unused;
};

size_t draw_rows_workspace_bytes(int64_t rows, int64_t cols);
// out[r] (device) = the token drawn from row r of x (rows × cols, row-major, at most 65 535 rows)
// with args[r] (device). `top_p` false: no row has top_p below 1 (passes 3-4 are skipped).
cudaError_t launch_draw_rows(const float* x, int64_t rows, int64_t cols, const DrawArg* args, bool top_p, int32_t* out,
                             void* ws, cudaStream_t stream);

}  // namespace vellum::cuda
