#pragma once
// Fused element-wise kernels of the CUDA backend (fused_kernels.cu): the residual add with the
// whole-row RMSNorm (and, at batch 1, the int8 copy of the normed row for the next GEMV), and RoPE
// on Q and K with the K/V store. Plain C++17 interface shared with the host code.

#include <cstdint>

#include <cuda_runtime.h>

#include "backend/cuda/cuda_kernels.h"

namespace vellum::cuda {

// Whole rows held in registers: a row of at most this many floats, a multiple of 4.
inline constexpr int64_t kMaxFastNormCols = 8192;
inline bool fast_norm_supports(int64_t cols) { return cols > 0 && cols % 4 == 0 && cols <= kMaxFastNormCols; }
// Threads of a norm block (512, or VELLUM_CUDA_NORM_THREADS): part of a norm's bits.
int norm_threads();
// For each row: x += delta (when delta is not null; x is written back), then
// out = x / sqrt(mean(x²) + eps) · gain. With q8 (one row, cols % 32 == 0) also out quantized as
// launch_quantize_q8 writes it (gemv_kernels.h), so the next batch-1 matmul skips that kernel.
// With copy16 (any rows) also out rounded to bf16 (f16 when f16: F16 weights, round 14) [rows][cols],
// the copy a cuBLAS GEMM reads, so the next many-row matmul skips its conversion (round 7). out may
// alias x only without delta. out may be null with copy16 (round 34: the copy alone).
// Round 52: with rq.base (2..kMmaRowsMax rows, cols % 256 == 0), also out's int8 copy for the int8 rows
// kernels (the bits their quantize kernels write): stride != 0, rows q8_bytes(cols) apart
// (launch_quantize_q8_rows); stride == 0, gemv_mma's layout in nt tiles (launch_quantize_mma_x; token
// columns past `rows` are not written: their sums are dropped).
struct NormRowsQ8 {
  void* base = nullptr;
  size_t stride = 0;
  int nt = 0;
};
cudaError_t launch_add_rms_norm(float* x, const float* delta, const float* gain, int64_t rows, int64_t cols, float eps,
                                float* out, void* q8, cudaStream_t stream, void* copy16 = nullptr, bool f16 = false,
                                const NormRowsQ8& rq = {});

// RoPE on q (q_cols = heads × head_dim) and k in place at the step's positions, then k and v
// (kv_heads × head_dim each) into their slots: one thread per rotated or stored pair. head_dim even.
cudaError_t launch_rope_store_kv(float* q, int64_t q_cols, float* k, const float* v, int64_t rows, int head_dim,
                                 const int32_t* positions, const RopeParams& p, const KvPoolView& kv,
                                 const int64_t* slots, cudaStream_t stream);

// Many rows for the tensor-core prefill attention (round 34): q rotated and rounded to the pool's
// 16-bit type into q16 [rows][q_cols] (the rounding the attention applies to q), k rotated and v
// stored into their slots. q and k are read, not written (rope_attention's scratch). The same
// arithmetic as launch_rope_store_kv, so q16, K and V hold the same bits as its q, K and V rounded.
// Takes the halves layout (pairs i, i + half; half a multiple of 4) and the interleaved one (pairs
// 2i, 2i + 1; half even), head_dim a multiple of 4, F16 or BF16 pools (rope_kv_rows_takes); one
// block a row, each thread 4 dims a task (float4 loads).
bool rope_kv_rows_takes(const RopeParams& p, int head_dim, const KvPoolView& kv);
cudaError_t launch_rope_kv_rows(const float* q, int64_t q_cols, const float* k, const float* v, void* q16, int64_t rows,
                                int head_dim, const int32_t* positions, const RopeParams& p, const KvPoolView& kv,
                                const int64_t* slots, cudaStream_t stream);

// Round 37 (opt-in, VELLUM_CUDA_QKV_ROPE=1): the step's RoPE cos/sin values, cs[r·half + i] = (cos, sin) of
// position r's pair i, rope_kv_rows_kernel's double sincos and rounding (so the same values), for
// the Q/K/V launch's end (dq_tma.h, DqRope). One thread a pair.
cudaError_t launch_rope_table(const int32_t* positions, int64_t rows, const RopeParams& p, float2* cs, cudaStream_t stream);

}  // namespace vellum::cuda
