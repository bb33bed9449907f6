#pragma once
// Top-k sampling on the device: the k best logits of each row and their ids, so a sampled step
// copies back k (value, id) pairs per row instead of the row (issue #9 item 1; 2·k·4 bytes against
// 0.5 MB for a 128k vocabulary). Plain C++17, shared with nvcc.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace vellum::cuda {

// values[r·k + j], ids[r·k + j] (device arrays) = the j-th best of row r of x (rows × cols,
// row-major, at most 65 535 rows), in the order of core/logit_order.h: the larger value first, the
// smaller id on a tie, NaN after every number. 1 <= k <= min(kMaxTopK, cols). Candidates are
// 64-bit keys whose integer order is that order. A block takes a 4 096-column part of a row: each
// warp selects the best k of its 512 columns in k rounds of a warp maximum, and the block merges the
// 8 warp lists by rank (a key's place in its list plus, by binary search, how many keys of each
// other list are above it). Blocks then merge up to 4 096 / k part lists at a time the same way until
// one is left, and the values are read again from the row by id. ws holds the lists
// (top_k_workspace_bytes).
inline constexpr int kMaxTopKDevice = 128;
size_t top_k_workspace_bytes(int64_t rows, int64_t cols, int k);
cudaError_t launch_top_k_rows(const float* x, int64_t rows, int64_t cols, int k, float* values, int32_t* ids, void* ws,
                              cudaStream_t stream);

}  // namespace vellum::cuda
