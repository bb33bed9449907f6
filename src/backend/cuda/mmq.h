#pragma once
// Quantized matmul for many token rows on int8 tensor cores (llama.cpp's MMQ idea, written anew):
// x is quantized to int8 per 32 elements (scale amax/127, plus scale·Σq for the K-quant minimums),
// the weight's integers are staged raw in shared memory and unpacked to int8 fragments, multiplied
// by `mma.sync.m16n8k32.s8` (m16n8k16 for Q6_K's 16-element scales) and each 32-element block's
// int32 sum is scaled in f32. No per-step dequantization to BF16, no cuBLAS. Plain C++17 interface
// (host side: cuda_backend.cpp). Kernels and tile sizes: mmq.cu; measurements: docs/cuda.md.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

// Q8_0 (as repacked at upload), Q4_0, Q5_0, Q4_K, Q5_K and Q6_K (padded), k a multiple of 256.
bool mmq_supports(TensorType type, int64_t k);
// Rows up to which CudaBackend::matmul takes mmq (set_mmq_max_rows changes it). Measured on an
// H200 (docs/cuda.md, rounds 5 and 8): mmq beats dequantize + cuBLAS BF16 at 8-32 rows (decode
// batches), but since round 8's dequantization (whole-matrix tiles, coalesced stores) the cuBLAS
// path wins above ~32 rows: llama3-8b decode, 1k context, Q4_K_M 64 seqs 2.9k -> 4.1k tok/s, 128
// seqs 4.2k -> 6.5k, 256 seqs 5.1k -> 9.1k (Q8_0 alike); at 512-2048 rows (prefill) mmq's per-32
// f32 scaling, not the tensor cores, is its limit.
inline constexpr int64_t kMmqMaxRows = 32;
// Bytes of int8 activations (+ scales) for m rows of k: the `scratch` of launch_mmq (16-byte aligned).
size_t mmq_scratch_bytes(int64_t m, int64_t k);
// out[r][o] = Σ_k x[r][k] W[o][k] (+ bias[o]) for r < m; x rows contiguous (k floats each),
// out rows ldo apart. W in the device layout of its type (cuda_kernels.h: needs_repack).
cudaError_t launch_mmq(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int64_t m, void* scratch,
                       float* out, int64_t ldo, const float* bias, cudaStream_t stream);

}  // namespace vellum::cuda
