#pragma once
// Launchers of the CUDA backend's kernels (cuda_kernels.cu). Plain C++17 types only, so the host
// side (cuda_backend.cpp, C++20) and nvcc share this header. Every launcher enqueues on `stream`
// and returns the launch status; the caller checks it.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

// Weight types the kernels decode (dequantization bit-identical to quant/dequantize_row).
bool kernel_supports(TensorType type);

// Types stored in a different layout on the device (Q8_0: scales apart from quants; Q4_K and Q6_K:
// groups of 4 super-blocks, each field of the group contiguous; see dequant.cuh):
// upload the GGUF rows, then launch_repack into device_row_bytes(type, k) * rows.
inline bool needs_repack(TensorType type) {
  return type == TensorType::Q8_0 || type == TensorType::Q6_K || type == TensorType::Q4_K;
}
size_t device_row_bytes(TensorType type, int64_t k);
cudaError_t launch_repack(TensorType type, const void* src, int64_t rows, int64_t k, void* dst, cudaStream_t stream);

// out[b][o] = Σ_k x[b][k] W[o][k] (+ bias[o]) for b < nb ≤ kMaxGemvRows: one warp per output
// feature, the weight read once for all nb rows, f32 arithmetic on the exact dequantized values.
inline constexpr int kMaxGemvRows = 8;
// nb == 1 takes the faster launch_gemv1 (gemv_kernels.h; another reduction order).
cudaError_t launch_gemv(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int64_t ldx, int nb,
                        float* out, int64_t ldo, const float* bias, cudaStream_t stream);

// dst[r][k] (bf16, row-major, rows [row0, row0 + rows)) = dequantized W rows.
cudaError_t launch_dequant_bf16(TensorType type, const void* w, int64_t row0, int64_t rows, int64_t k, void* dst,
                                cudaStream_t stream);
cudaError_t launch_f32_to_bf16(const float* src, void* dst, int64_t n, cudaStream_t stream);
cudaError_t launch_f32_to_f16(const float* src, void* dst, int64_t n, cudaStream_t stream);
cudaError_t launch_bf16_to_f32(const void* src, float* dst, int64_t n, cudaStream_t stream);
// out[r][o] += bias[o]
cudaError_t launch_add_bias(float* out, int64_t rows, int64_t cols, int64_t ldo, const float* bias, cudaStream_t stream);

// out[i] = dequantized row tokens[i] of the table.
cudaError_t launch_embed(TensorType type, const void* table, int64_t vocab, int64_t cols, const int32_t* tokens,
                         int64_t n, float* out, int64_t ldo, cudaStream_t stream);

// RMSNorm over groups of `group` columns; out may alias x.
cudaError_t launch_rms_norm(const float* x, const float* gain, int64_t rows, int64_t cols, int64_t group, float eps,
                            float* out, cudaStream_t stream);

// The host computes the per-pair frequencies in double exactly as the CPU backend does.
inline constexpr int kMaxRopePairs = 256;
struct RopeParams {
  double inv_freq[kMaxRopePairs];
  double magnitude;
  int half;
  int interleaved;
};
cudaError_t launch_rope(float* x, int64_t rows, int64_t cols, int head_dim, const int32_t* positions,
                        const RopeParams& p, cudaStream_t stream);

// K and V rows into their slots of a block-major pool of `type` elements (F32, F16 or BF16; the
// kernels convert on store and read back to f32, so all arithmetic stays f32).
inline bool kv_type_supported(TensorType t) {
  return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
}
struct KvPoolView {
  void* pool = nullptr;
  int64_t block_elems = 0;  // elements per block (all layers)
  int64_t k_off = 0, v_off = 0;  // elements inside a block for this layer
  int block_size = 0;
  int kv_heads = 0, head_dim = 0;
  TensorType type = TensorType::F32;
  int64_t blocks = 0;  // blocks in the pool (the prefill attention's tensor map; 0: not known)
};
cudaError_t launch_store_kv(const KvPoolView& kv, const float* k, const float* v, const int64_t* slots, int64_t n,
                            cudaStream_t stream);

// Paged attention: attention.h.

cudaError_t launch_swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);
// swiglu on bf16 gate/up (a GEMM's bf16 outputs; round 7): out in f32 and out_bf16, its bf16
// rounding, for the next GEMM (each skipped when null). n % 8 == 0, every pointer 16-byte aligned.
cudaError_t launch_swiglu_bf16(const void* gate, const void* up, float* out, void* out_bf16, int64_t n, cudaStream_t stream);
// The same on f16 gate/up (F16 weights' GEMMs, round 14): out in f32 and out_f16.
cudaError_t launch_swiglu_f16(const void* gate, const void* up, float* out, void* out_f16, int64_t n, cudaStream_t stream);
cudaError_t launch_add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream);
cudaError_t launch_gather_rows(const float* x, int64_t cols, const int32_t* rows, int64_t n, float* out,
                               cudaStream_t stream);
cudaError_t launch_fill(float* p, int64_t n, float value, cudaStream_t stream);

}  // namespace vellum::cuda
