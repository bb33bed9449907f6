#pragma once
// Scalar building blocks of the CPU backend, written so the compiler vectorises them while the
// summation order stays fixed (16 independent partial sums, then a fixed pairwise reduction):
// the same inputs give the same bits on every call, whatever else runs.

#include <cstdint>

namespace vellum::backend::cpu {

float dot_f32(const float* a, const float* b, int64_t n);
float sum_squares_f32(const float* a, int64_t n);
// y += a * x
void axpy_f32(float a, const float* x, float* y, int64_t n);

}  // namespace vellum::backend::cpu
