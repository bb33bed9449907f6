#pragma once
// 17-32 token rows (4 tiles of 8 token columns) of a Q8_0 / Q4_K / Q6_K weight on int8 tensor
// cores (round 53): decode steps of 17-32 sequences, which took dq_tma before (bf16 x, every weight
// dequantized to bf16 for a 64-token tile of which half or more is empty).
//
// gemv_mma.cu's kernel splits K over a block's warps, so each warp stages its own x side: at 4 tiles
// 12 KB of x a super-block beside 2.3 KB of Q4_K weights, all of it read from L2 by every block. Here
// a block's RG warps own 16 weight rows each and walk the same super-blocks: each super-block's x
// side is staged once a block (cp.async, one block barrier a super-block) and read by all of them,
// beside each warp's own weight pieces. A warp's step is gemv_mma.cu's (gemv_mma_step.cuh).
//
// K is split over `splits` blocks of a thread block cluster by super-blocks (gemv_mma_wide_splits:
// by k alone), whose partial sums are added in rank order through distributed shared memory. So a
// row's bits depend on k and on nothing else of the launch: the same in a launch of its weight alone,
// of several weights (Q, K and V) or of a SwiGLU pair.
//
// Plain C++17 interface (host side: gemv_mma.cu dispatches 4-tile launches here).

#include <cstdint>

#include <cuda_runtime.h>

#include "backend/cuda/gemv_kernels.h"
#include "core/tensor_type.h"

namespace vellum::cuda {

// Blocks of one row's K split (1..8): a cluster of that many blocks adds their sums.
int gemv_mma_wide_splits(int64_t k);
// s's weights (one type; k % 256 == 0) times 4-tile x (launch_quantize_mma_x at 17..32 rows): token
// row r of weight g at s.out[g] + r · ldo[g] (+ its bias; ldo null: its rows). pair: s holds a
// SwiGLU's gate and up (count 2, the same rows), silu(gate)·up into s.out[0].
cudaError_t launch_gemv_mma_wide(TensorType type, const GemvSegs& s, const int64_t* ldo, bool pair, int64_t k, const void* xf,
                                 int rows, int sms, cudaStream_t stream);
// Measurement knobs (VELLUM_CUDA_MMA_WIDE=RG,SB at the first launch): warps a block (4 or 8; 0 = by
// the launch's blocks) and super-blocks a split at least (0 = the default, 8; -1 = no split).
void set_gemv_mma_wide_shape(int warps, int sb_per_split);

}  // namespace vellum::cuda
