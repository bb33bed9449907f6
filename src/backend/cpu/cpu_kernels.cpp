#include "backend/cpu/cpu_kernels.h"

namespace vellum::backend::cpu {
namespace {

constexpr int kLanes = 16;

float reduce(float (&acc)[kLanes]) {
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int i = 0; i < width; ++i) acc[i] += acc[i + width];
  }
  return acc[0];
}

}  // namespace

float dot_f32(const float* a, const float* b, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) acc[l] += a[i] * b[i];
  return reduce(acc);
}

float sum_squares_f32(const float* a, int64_t n) { return dot_f32(a, a, n); }

void axpy_f32(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace vellum::backend::cpu
