#pragma once
// Greedy sampling on the device: the first maximum of each logits row, so a greedy step copies back
// one int per row instead of the row (issue #9 item 1). Plain C++17, shared with nvcc.

#include <cstdint>

#include <cuda_runtime.h>

namespace vellum::cuda {

// out[r] = the smallest index among the largest values of row r of x (rows × cols, row-major, at
// most 65 535 rows); NaNs are skipped, and a row with no value above -inf gives 0 (std::max_element's
// answer there). Blocks scan 4 096-column parts of a row into ws (argmax_workspace_bytes), then one
// warp a row merges them.
size_t argmax_workspace_bytes(int64_t rows, int64_t cols);
cudaError_t launch_argmax_rows(const float* x, int64_t rows, int64_t cols, int32_t* out, void* ws, cudaStream_t stream);

}  // namespace vellum::cuda
