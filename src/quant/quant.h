#pragma once
// Row conversion between f32 and the tensor types vellum reads and writes: F32, F16, BF16, the legacy
// 32-element quants (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) and the K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K).
// These are the slow reference paths: dequantization is bit-identical to ggml's dequantize_row_* and
// gguf-py's gguf.quants.dequantize; quantization is ggml's quantize_row_*_ref (no importance matrix),
// so the bytes are what llama.cpp writes. Block layouts: quant/blocks.h. See docs/quant.md.

#include <cstdint>

#include "core/tensor_type.h"

namespace vellum::quant {

bool can_dequantize(TensorType type);
bool can_quantize(TensorType type);

// Converts n elements (a whole number of blocks; row_bytes(type, n) bytes at src, any alignment).
// n must be a non-negative multiple of the type's block size; throws vellum::Error (core/error.h)
// otherwise or if the type is unsupported.
void dequantize_row(TensorType type, const void* src, float* dst, int64_t n);
void quantize_row(TensorType type, const float* src, void* dst, int64_t n);

}  // namespace vellum::quant
