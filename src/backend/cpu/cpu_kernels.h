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

// The same functions vectorised for an ISA level (cpu_features.h): identical bits (the 16 lanes are
// one AVX-512 or two AVX2 registers; products and sums round exactly as above). Fetch once per op.
using DotF32Fn = float (*)(const float* a, const float* b, int64_t n);
using AxpyF32Fn = void (*)(float a, const float* x, float* y, int64_t n);
DotF32Fn dot_f32_for(IsaLevel level);
AxpyF32Fn axpy_f32_for(IsaLevel level);

}  // namespace vellum::backend::cpu
