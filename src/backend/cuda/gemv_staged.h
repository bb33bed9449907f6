#pragma once
// A batch-1 int8 GEMV whose weights are copied into shared memory before the programmatic wait
// (round 32, gemv_staged.cu). In a decode graph a kernel's blocks become resident while the kernels
// before it still run (pdl.cuh), and until now each GEMV could only hold the weights its registers
// take ahead of its wait: round 31 loaded more there and found that whatever one launch holds in
// registers, the next launch's blocks cannot (docs/cuda.md). Shared memory is a buffer of its own:
// here each block (one a multiprocessor) starts one bulk copy of its 32 rows as soon as it is
// resident, during the attention before the output projection, and after the wait only multiplies
// from shared memory. A row's bits are those of gemv_kernels.cu's launch of it (each lane adds the
// same chunks in the same order, then the same warp sum).
// Plain C++17 interface shared with the host code.

#include <cstdint>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

// Whether launch_gemv_staged takes a one-segment launch of n rows of k (Q8_0, Q4_K, Q6_K; one
// wave of 32-row blocks whose rows fit in shared memory) with the knob on (set_gemv_staged,
// VELLUM_CUDA_GEMV_STAGED).
bool gemv_staged_takes(TensorType type, int64_t n, int64_t k);
void set_gemv_staged(bool on);
bool gemv_staged_on();
// out[o] = w_o · x (+ bias[o]), x as launch_gemv_i8 takes it (int8 per 32 elements, then scales).
cudaError_t launch_gemv_staged(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, float* out, const float* bias,
                               cudaStream_t stream);

}  // namespace vellum::cuda
