#pragma once
// Logprobs of rows reduced on the device: each row's log normalizer log Σ exp(x) (backend/
// logit_rows.h's arithmetic in a fixed blocked order), and the logits of tokens chosen there (argmax,
// draws), so that a request asking for logprobs needs no whole row copied back. Plain C++17, shared
// with nvcc.

#include <cstdint>

#include <cuda_runtime.h>

namespace vellum::cuda {

// out[r] (device) = max + log(Σ exp(x − max)) of row r in double: the max over the values that
// compare, thread t summing columns t, t + 256, ... in order, the threads added in a fixed tree.
cudaError_t launch_log_normalizers(const float* x, int64_t rows, int64_t cols, double* out, cudaStream_t stream);
// out[r] = x[r · cols + picks[r]] (device arrays).
cudaError_t launch_pick_values(const float* x, int64_t rows, int64_t cols, const int32_t* picks, float* out,
                               cudaStream_t stream);

}  // namespace vellum::cuda
