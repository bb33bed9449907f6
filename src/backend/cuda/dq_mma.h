#pragma once
// Quantized weights times bf16 activations on Hopper's warpgroup tensor cores (wgmma, sm_90a),
// each 64-element stage of a 128-row weight tile dequantized once and multiplied by up to 256
// token rows. Two kernels: round 11's dequantizes the stage into a shared-memory A tile (Q8_0,
// Q4_K, Q6_K); round 15's has each thread dequantize exactly its own wgmma A fragments into
// registers (Q4_K, Q6_K; the default for them). Meant for ~9 to a few hundred token rows. By default
// (CudaBackend) Q4_K / Q6_K at 17..128 token rows and Q8_0 at 17..64, where it beats mmq and
// dequantize + cuBLAS end to end on an H200 (docs/cuda.md, round 15); VELLUM_CUDA_DQ_MMA=1 forces
// it at 9..256 rows.
//
// mmq (mmq.h) rounds x to int8 and must scale every 32-element int32 sum of every output in f32,
// work that grows with the token rows; dequantize + cuBLAS writes and reads a BF16 copy of every
// weight each step (~4.5 ms a llama3-8b step).
// Plain C++17 interface (host side: cuda_backend.cpp); kernels: dq_mma.cu.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

// Q8_0, Q4_K and Q6_K (in the device layouts of cuda_kernels.h), k a multiple of 256.
bool dq_mma_supports(TensorType type, int64_t k);
// DIAGNOSTIC: the last register-A launch's per-block global times (start, K walk done, end) when
// VELLUM_CUDA_DQ_DBG has bit 8.
std::vector<unsigned long long> dq_mma_debug_times(int blocks);
// The register-A kernel (round 15, DqMmaPlan::rs): Q4_K and Q6_K.
bool dq_mma_rs_supports(TensorType type, int64_t k);

// How one matmul is cut: blocks of 8·nt tokens (32, 64, 128 or 256) × 128 weight rows, K split `splits` ways (then the
// last block of each tile to arrive adds the partial sums, in split order: deterministic).
struct DqMmaPlan {
  int nt = 0;                  // 8-token mma tiles per block
  unsigned tok_tiles = 0, row_tiles = 0, splits = 0;
  size_t ws_floats = 0;        // partial sums (splits > 1)
  size_t counters = 0;         // one arrival counter per output tile (splits > 1), zero between launches
  // Round 15's kernel: each thread dequantizes its own wgmma A fragments into registers (no A tile
  // in shared memory, one barrier a stage). Same tiles, split and results (the same bf16 weights).
  // 0: round 11's kernel; 1: register A, each stage's wgmma waited for; 2: one stage in flight.
  int rs = 0;
};
// `sms`: the device's multiprocessors (the K split aims at one wave of blocks); `splits` > 0 forces it.
DqMmaPlan dq_mma_plan(int64_t n, int64_t k, int64_t m, int sms, int splits = 0);

// out[r][o] = Σ_k x[r][k] W[o][k] (+ bias[o]) for r < m: x bf16, rows k apart (16-byte aligned);
// out f32, rows ldo apart. ws / counters as the plan sizes them (counters zeroed before the first
// launch; every launch leaves them zero).
cudaError_t launch_dq_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                          float* ws, int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream);

}  // namespace vellum::cuda
