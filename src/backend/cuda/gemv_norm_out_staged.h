// Round 48: the batch-1 producer of a short weight (the output projection: x += wo·a with the
// ffn norm's int8 copy, gemv_kernels.h's RowNormOut) with its whole weight share staged in shared
// memory by bulk copies issued before the programmatic wait. The register producer
// (gemv_kq_norm_out_kernel) is 1 024 threads a block and cannot become resident beside the one-row
// attention's blocks, so on those SMs its weights start streaming only once the attention has left.
// Here a block is 8 warps with few registers, one block an SM (its shared memory padded past half
// an SM's), and its 32 rows (Q4_K 4 096 × 4 096: 72 KB) arrive while Q/K/V ends and the attention
// runs; after the wait it copies x once and reads only shared memory. Each row is summed exactly as
// the register producer sums it (the same bits). The default for Q4_K / Q6_K (+0.2–1.2% llama3-8b
// Q4_K_M batch 1 on an H200), not Q8_0 (−0.5 to −1.6%): the copies take DRAM time from the kernels
// around them nearly one for one (docs/cuda.md, round 48).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "backend/cuda/gemv_kernels.h"
#include "core/tensor_type.h"

namespace vellum::cuda {

// Whether the staged producer takes n rows of k of this type (n % 32 == 0, Q4_K / Q6_K / Q8_0 on
// the int8 path, a block's 32 rows within kNormOutStagedMaxBytes).
bool gemv_norm_out_staged_takes(TensorType type, int64_t n, int64_t k);
inline constexpr size_t kNormOutStagedMaxBytes = 192 * 1024;

// launch_gemv_i8_norm_out's contract (x += w·a, z's copy and Σx² of each 32 rows); rows = weight
// rows a warp (1, 2, 4 or 8: 32, 16, 8 or 4 warps a block).
cudaError_t launch_gemv_norm_out_staged(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, float* x,
                                        const RowNormOut& no, int rows, cudaStream_t stream);

}  // namespace vellum::cuda
