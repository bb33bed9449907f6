#pragma once
// Scalar building blocks of the CPU backend, written so the compiler vectorises them while the
// summation order stays fixed (16 independent partial sums, then a fixed pairwise reduction):
// the same inputs give the same bits on every call, whatever else runs.

#include <cstdint>

#include "backend/cpu/cpu_features.h"

namespace vellum::backend::cpu {

float dot_f32(const float* a, const float* b, int64_t n);
float sum_squares_f32(const float* a, int64_t n);
// y += a * x
void axpy_f32(float a, const float* x, float* y, int64_t n);
// out[i] = gate[i] / (1 + exp(-gate[i])) * up[i] with libm's expf (out may alias gate or up). A
// vectorised exp within 1 ulp was faster but moved near-tied greedy tokens of the real Qwen2.5-Coder
// 1.5B off the float64 forward's choice (tests/py/test_real_model.py), so the unfused swiglu and the
// fused gate/up matmul keep these bits.
void swiglu_f32(const float* gate, const float* up, float* out, int64_t n);

// The same functions vectorised for an ISA level (cpu_features.h): identical bits (the 16 lanes are
// one AVX-512 or two AVX2 registers; products and sums round exactly as above). Fetch once per op.
using DotF32Fn = float (*)(const float* a, const float* b, int64_t n);
using AxpyF32Fn = void (*)(float a, const float* x, float* y, int64_t n);
DotF32Fn dot_f32_for(IsaLevel level);
AxpyF32Fn axpy_f32_for(IsaLevel level);

// Attention's two inner loops for a group of query heads sharing one KV head (grouped-query
// attention), with exactly the operations of the single-head functions above, so the bits do not
// change; the gain is that each K/V row is loaded once per group and the heads' independent
// dependency chains overlap.
//   scores[g * s_stride + p] = dot_f32(q + g * q_stride, k[p], n) * scale   for g < heads, p < keys
//   out + g * o_stride = Σ_p w[g * w_stride + p] * v[p], accumulated as out += w * v in order of p
//     from zero (axpy_f32's operations; out is overwritten)
struct AttentionKernels {
  void (*scores)(const float* q, int64_t q_stride, int heads, const float* const* k, int64_t keys, int64_t n,
                 float scale, float* scores, int64_t s_stride);
  void (*values)(const float* w, int64_t w_stride, int heads, const float* const* v, int64_t keys, int64_t n,
                 float* out, int64_t o_stride);
};
AttentionKernels attention_kernels_for(IsaLevel level);

}  // namespace vellum::backend::cpu
