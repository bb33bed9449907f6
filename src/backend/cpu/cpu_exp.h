#pragma once
// exp for softmax and SwiGLU, vectorised with the same bits at every ISA level (libm's expf cannot be
// vectorised bit for bit, and was ~4% of a prefill step as a scalar call per element). Cephes-style:
// n = round(x log2 e), r = x - n ln2 (two-part ln2, fma), exp(r) by a degree-7 polynomial (Horner,
// fma), times 2^n as two exact power-of-two factors. Error ≤ 1 ulp (measured, test_cpu_exp.cpp);
// x is clamped to [-104, 89] (exp is 0 / inf beyond), and NaN gives exp(-104) = 0 (no UB in the scalar
// path's float → int conversion).

#include <cstdint>

#include "backend/cpu/cpu_features.h"

namespace vellum::backend::cpu {

float exp_f32(float x);

// x[i] = exp(x[i] - max) / Σ exp(x[j] - max): the sum in 16 lanes (i mod 16) from zero, then the
// pairwise 8, 4, 2, 1 reduction (dot_f32's order); each x[i] then multiplied by 1 / sum.
using SoftmaxFn = void (*)(float* x, int64_t n);
// out[i] = gate[i] / (1 + exp(-gate[i])) * up[i] (out may alias gate or up).
using SwigluFn = void (*)(const float* gate, const float* up, float* out, int64_t n);

SoftmaxFn softmax_for(IsaLevel level);
SwigluFn swiglu_for(IsaLevel level);

}  // namespace vellum::backend::cpu
