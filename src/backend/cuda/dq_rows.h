#pragma once
// 17..64 token rows of Q4_K / Q6_K weights on bf16 mma.sync (round 54): the decode steps of 17-64
// sequences, which dq_tma's 128 x 64 tiles ran at 13-23% of copy bandwidth (one block an SM, two
// multiplying warps a scheduler, latency-bound: docs/cuda.md, round 54).
//
// A block is 4 warps; a warp owns 32 weight rows (two m16 tiles) or, in a SwiGLU pair, 16 gate rows
// and the same 16 up rows, and walks the block's K range super-block by super-block. Lane t of a
// quad takes sub-blocks t and 4 + t of each of its rows: it loads their quants straight from global
// memory into registers (one super-block ahead), decodes only those sub-blocks' scales, and builds
// its A fragments from them (the bf16 values of dq_weights.cuh), so the MMA's k order is a
// permutation of the sub-block's elements and x's B fragments follow it. x (bf16, rows k apart) is
// staged a super-block at a time in a shared ring for all four warps; K is split over a thread
// block cluster by k alone (clamp(k / 1 024, 1, 8) splits) and the splits' sums added in rank order
// through distributed shared memory. So a row's bits depend on k only: not on the token rows, the
// other weights of a grouped launch, or pairing.
//
// Not batch-invariant across row counts of other kernels: the deterministic mode does not take it.

#include <cstdint>

#include <cuda_runtime.h>

#include "backend/cuda/dq_tma.h"
#include "core/tensor_type.h"

namespace vellum::cuda {

// The most token rows a launch takes.
inline constexpr int kDqRowsMax = 64;
// Q4_K or Q6_K, k a multiple of 256.
bool dq_rows_supports(TensorType type, int64_t k);
// The most token rows the dequantizing GEMM plans give this kernel (dq_tma_plan: DqMmaPlan::rs 5):
// kDqRowsMax by default, 0 never. VELLUM_CUDA_DQ_ROWS_MAX sets the initial value.
void set_dq_rows_max(int rows);
int dq_rows_max();
// Launches made so far (checks: that a path took the kernel).
int64_t dq_rows_launches();
// The K split of a k-long row (blocks of one cluster).
int dq_rows_splits(int64_t k);
// Each segment's out (f32: rows ldo apart, + bias, or += with DqSeg::add; bf16 where out_bf16, one
// weight type) = x · Wᵀ for m (1..kDqRowsMax) rows of x (bf16, rows k apart, 16-byte aligned).
// Types: one of Q4_K / Q6_K, or both (f32 out).
cudaError_t launch_dq_rows(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, bool out_bf16, cudaStream_t stream);
// out[r · ldo + o] = silu(gate_o · x_r) · (up_o · x_r) in bf16: the gate and up sums rounded to bf16
// and swiglu8.cuh's arithmetic, so the same bits as two bf16 launch_dq_rows and launch_swiglu_bf16.
cudaError_t launch_dq_rows_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* x, int64_t m,
                                  void* out, int64_t ldo, cudaStream_t stream);

}  // namespace vellum::cuda
