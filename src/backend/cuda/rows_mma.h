#pragma once
// The deterministic mode's many-row int8 matmul on tensor cores (round 22). Its every output has
// the bits the batch-1 GEMV gives that token row alone (gemv_i8_kernel for Q8_0, gemv_kq_kernel for
// Q4_K / Q6_K), so a sequence's tokens do not depend on what else shares its steps, and yet the
// weights are read once per tile of up to 64 token rows instead of once per 8.
//
// Why the bits can match: the GEMV's integer sums (a 32-element sub-block's Σ q·x, a Q6_K half's
// Σ (q − 32)·x) are exact, so an `mma.sync` s8 product gives the same integers. What the GEMV rounds
// is the float work after them: each lane adds its sub-blocks' terms (gemv_kq.cuh `combine`) in
// pass order, then the warp sums its 32 lanes by a xor butterfly. This kernel computes each lane's
// sum for a tile of weight rows × token rows (all passes of lane position j, one position at a
// time) and adds the 32 of them in the butterfly's tree, taking the positions in bit-reversed order
// so that five pending sums a output suffice (the tree pairs neighbours in that order).

#include <cstdint>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

// Q8_0 (k a multiple of 64), Q4_K and Q6_K (k a multiple of 256): the types and widths of the
// int8 GEMV (int8_gemv_supports).
bool rows_mma_supports(TensorType type, int64_t k);

// Launches with few blocks (few weight rows and token rows) split the 32 lane positions over 2, 4 or
// 8 blocks: each sums a subtree of warp_sum's tree (a run of leaves in its bit-reversed order), and
// a second kernel adds the subtrees as the tree does. The split for `sms` multiprocessors (1: none),
// and the partial sums it needs (floats).
int rows_mma_splits(TensorType type, int64_t n, int rows, int sms);
size_t rows_mma_ws_floats(int splits, int64_t n, int rows);

// out[b·ldo + o] (+ bias[o]) for token rows b < rows, weight rows o < n: q8 holds the rows quantized
// by launch_quantize_q8_rows (q8_bytes(k) apart). Same contract as launch_gemv_i8_rows; with
// splits > 1, ws holds rows_mma_ws_floats(splits, n, rows) floats.
cudaError_t launch_rows_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, int rows, float* out,
                            int64_t ldo, const float* bias, int splits, float* ws, cudaStream_t stream);

}  // namespace vellum::cuda
