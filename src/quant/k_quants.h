#pragma once
// Reference conversion of the 256-element K-quant super-blocks (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K).
// Dequantization uses ggml's float operations in ggml's order (bit-identical results).
// Quantization is ggml's quantize_row_*_ref (the variant without an importance matrix): the same
// scale searches (make_qkx2_quants for Q2_K/Q4_K/Q5_K, make_q3_quants for Q3_K, make_qx_quants for
// Q6_K), the same float expressions in the same order, the same round-to-nearest trick, so a file we
// write holds the bytes llama.cpp's reference quantizer would write.

#include "quant/blocks.h"

namespace vellum::quant {

// y receives the super-block's 256 elements.
void dequantize_block(const BlockQ2_K& b, float* y);
void dequantize_block(const BlockQ3_K& b, float* y);
void dequantize_block(const BlockQ4_K& b, float* y);
void dequantize_block(const BlockQ5_K& b, float* y);
void dequantize_block(const BlockQ6_K& b, float* y);

// x holds 256 elements.
void quantize_block(const float* x, BlockQ2_K& b);
void quantize_block(const float* x, BlockQ3_K& b);
void quantize_block(const float* x, BlockQ4_K& b);
void quantize_block(const float* x, BlockQ5_K& b);
void quantize_block(const float* x, BlockQ6_K& b);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K scales array.
inline void get_scale_min_k4(int j, const uint8_t* q, uint8_t& scale, uint8_t& min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    min = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

}  // namespace vellum::quant
