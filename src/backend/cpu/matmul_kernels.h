#pragma once
// Dot-product kernels of one weight row with a tile of activation rows, one set per ISA level
// (matmul_scalar.cpp, matmul_avx2.cpp, matmul_avx512.cpp). The matmul driver (cpu_matmul.h) picks
// a kernel with kernel_for(type, level) and calls it on tiles of token rows.
//
// Numerics, identical for every tile size: a kernel's `rows` calls compute each output with exactly
// the sequence of float operations of a 1-row call (the rows of a tile share only the weight
// decoding, which is integer or exact). And every level computes the same lanes in the same order:
//  - F32: 16 lanes, lane l += a[i] * w[i] (multiply, then add: llama2.c's rounding) for i = l mod 16,
//    then a pairwise reduction (8, 4, 2, 1) — the reference dot_f32 (cpu_kernels.h), bit for bit;
//  - F16 / BF16: 16 lanes of fma(w, a, lane) (weights widened exactly to f32), the same reduction;
//  - quantized types: activations quantized per 32 (activation_q8.h); per block of 32 an exact
//    integer dot in 8 lanes of 4 elements each (with the type's integer scales and offsets), each
//    lane then accumulated as fma(float(lane), d_w * d_a, acc); mins in one scalar fma chain per
//    row; a pairwise reduction (4, 2, 1) plus the min chain.
// So the scalar, AVX2 and AVX-512 kernels return the same bits, and a row's result never depends on
// the tile it lands in or the thread that computes it (batch invariance).

#include <cstdint>

#include "backend/cpu/activation_q8.h"
#include "backend/cpu/cpu_features.h"
#include "core/tensor_type.h"

namespace vellum::backend::cpu {

// Activation rows r0 … r0+rows-1: as f32 (x + r * x_stride) and, for quantized weights, as Q8.
struct ActRows {
  const float* x = nullptr;
  int64_t x_stride = 0;
  ActQ8View q8;
};

// out[i * out_stride] = dot(weight row, activation row r0 + i) for i < rows (rows <= tile_rows).
using TileFn = void (*)(const uint8_t* w_row, const ActRows& act, int64_t r0, int rows, int64_t k, float* out,
                        int64_t out_stride);

// The same for `wide` consecutive weight rows (w_row + c * w_stride) into out[i * out_stride + c]
// for c < wide: each output with the float operations of a 1-row TileFn call.
using TileFn2 = void (*)(const uint8_t* w_row, size_t w_stride, const ActRows& act, int64_t r0, int rows, int64_t k,
                         float* out, int64_t out_stride);

// Decodes `rows` weight rows (w_stride apart) into `pre`, pre_pair_bytes per pair of blocks per row.
using PredecodeFn = void (*)(const uint8_t* w_row, size_t w_stride, int rows, int64_t k, uint8_t* pre);

struct MatmulKernel {
  TileFn fn = nullptr;
  int tile_rows = 1;             // most rows one call takes
  bool q8_activations = false;   // needs act.q8
  int64_t k_multiple = 1;        // k must be a multiple of this (the type's block)
  bool q8_records = false;       // needs act.q8's records too
  TileFn2 fn2 = nullptr;         // optional: `wide` weight rows per call
  int wide = 2;                  // weight rows one fn2 call takes (divides the driver's block of 16)
  // Optional, for many token rows: a block of weight rows decoded once (predecode), then fn_pre /
  // fn2_pre take w_row pointing at decoded rows (stride pairs * pre_pair_bytes) — same bits.
  PredecodeFn predecode = nullptr;
  int64_t pre_pair_bytes = 0;
  TileFn fn_pre = nullptr;
  TileFn2 fn2_pre = nullptr;
};

// The kernel for weights of `type` at `level` (fn == nullptr when the type has no kernel).
MatmulKernel kernel_for(TensorType type, IsaLevel level);

MatmulKernel scalar_kernel(TensorType type);
MatmulKernel avx2_kernel(TensorType type);
MatmulKernel avx512_kernel(TensorType type);

}  // namespace vellum::backend::cpu
