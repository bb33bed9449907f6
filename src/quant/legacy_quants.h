#pragma once
// Reference (scalar, obviously correct) conversion of the 32-element ggml block types between f32 and
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0. Quantization is ggml's quantize_row_*_ref algorithm step for step, so
// the bytes equal what llama.cpp and gguf-py write; dequantization uses the same float operations in
// the same order as ggml's dequantize_row_*, so the floats are bit-identical too.
// Fast paths (SIMD dot products, CUDA) are checked against these.

#include "quant/blocks.h"

namespace vellum::quant {

// y receives the block's 32 elements.
void dequantize_block(const BlockQ4_0& b, float* y);
void dequantize_block(const BlockQ4_1& b, float* y);
void dequantize_block(const BlockQ5_0& b, float* y);
void dequantize_block(const BlockQ5_1& b, float* y);
void dequantize_block(const BlockQ8_0& b, float* y);

// x holds 32 elements.
void quantize_block(const float* x, BlockQ4_0& b);
void quantize_block(const float* x, BlockQ4_1& b);
void quantize_block(const float* x, BlockQ5_0& b);
void quantize_block(const float* x, BlockQ5_1& b);
void quantize_block(const float* x, BlockQ8_0& b);

}  // namespace vellum::quant
