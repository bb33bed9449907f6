#pragma once
// The deterministic mode's F16/BF16 matmul on tensor cores (round 23), for every row count,
// batch 1 included. Round 9's mode sent these types through an f32 GEMV at every row count (the
// batch-1 kernel's arithmetic, so that a row's bits do not depend on its batch): ~12 TFLOP/s, so
// BF16 llama3-8b stayed at ~790 tok/s from 32 sequences on and prefilled 40x slower than the default.
//
// Here both ends take one arithmetic on bf16/f16 tensor cores (k16 steps, f32 accumulation; A = token
// rows, B = weight rows): x is rounded to the weight's 16-bit type (round to nearest), and
// every output (token row b, weight row o) is, for K parts p of a length fixed by the weight's shape,
// part_p = a chain of mma over p's 32-element windows in order (the window's two k16 halves in a
// fixed order, from +0), then total = ((0 + part_0) + part_1) + ..., then + bias[o]. An mma's C
// element depends only on its own A row, B column and C input, so the chain gives the same bits
// whatever the other token rows of the tile hold; the batch-1 launch (one token row, the others
// zero) and the many-row launch differ only in how they schedule the chains. A window's k16 step h
// takes its elements 16h..16h+15 in slot order, as wgmma reads them from shared memory (lane (g, t)
// of an mma.sync holds elements 16h + 2t, +1 and 16h + 2t + 8, +9). Round 23's probe found wgmma's
// and mma.sync's chains bit for bit equal on the same slots (tools/cuda/wgmma_probe.cu).
//
// Two kernels:
// - rows <= det16_gemm_min_rows() - 1 (default 16): mma.sync, one block per 16 weight rows, one warp
//   per K part; 16-byte weight loads transposed among a quad's lanes into B registers, x read as f32
//   and rounded in registers; the parts are folded in shared memory. Takes up to kMaxGemvSegs
//   weights that read the same x (Q, K and V) in one launch.
// - more rows: wgmma, 128 weight rows × 64 (up to 64 rows) or 128 token rows a block. x is first
//   rounded into a paired layout (each lane's A quad is one 16-byte load); weight stages (128-byte
//   swizzle) and quads go through a 4-deep cp.async ring, one stage of wgmma in flight; each
//   warpgroup runs its outputs' parts one after the other and folds them as it goes, or, when the
//   tiles would fill less than half the GPU, one block per part stores its sums and a third kernel
//   folds them in order.

#include <cstdint>

#include <cuda_runtime.h>

#include "backend/cuda/gemv_kernels.h"
#include "core/tensor_type.h"

namespace vellum::cuda {

// F16 and BF16 with k a multiple of 8 (16-byte rows).
bool det16_supports(TensorType type, int64_t k);

// Row counts from which the many-row schedule is taken (a measurement and check knob; >= 2).
int det16_gemm_min_rows();
void set_det16_gemm_min_rows(int rows);
// The few-row kernel's schedule (det_mma16.cu; the same arithmetic), a measurement knob.
void set_det16_gemv_variant(int v);

// out_s[b·ldo + o] (+ bias_s[o]) for token rows b < rows (1..16) and every segment's rows o; x is f32
// (token rows ldx floats apart, 16-byte aligned).
cudaError_t launch_det16_gemv(TensorType type, const GemvSegs& segs, int64_t k, const float* x, int64_t ldx, int rows,
                              int64_t ldo, cudaStream_t stream);

// The same outputs for any row count, one weight, x as in launch_det16_gemv. xpair holds
// det16_gemm_x_bytes(k, rows) bytes (x rounded into the kernel's layout). Launches of few tiles
// split the K parts over blocks and fold them in a further kernel: ws then holds
// det16_gemm_ws_floats(n, k, rows) floats (0: no split).
size_t det16_gemm_x_bytes(int64_t k, int rows);
size_t det16_gemm_ws_floats(int64_t n, int64_t k, int rows);
cudaError_t launch_det16_gemm(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int64_t ldx, int rows,
                              float* out, int64_t ldo, const float* bias, void* xpair, float* ws, cudaStream_t stream);

}  // namespace vellum::cuda
