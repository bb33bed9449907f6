#include "backend/cuda/logit_edits.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"

#include <cmath>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 128;

// Block r: row r's edits, a thread an edit (a row's tokens are distinct), with backend::apply_logit_edit's
// operations in its order (IEEE division and multiplication: the host's bits).
__global__ void __launch_bounds__(kThreads) edit_logits_kernel(float* __restrict__ x, int64_t cols, const uint8_t* base,
                                                               const uint32_t* __restrict__ rows) {
  pdl_wait();
  using E = EditArg;
  const auto* edits = reinterpret_cast<const E*>(base + rows[0]);
  const uint32_t begin = rows[1 + blockIdx.x], end = rows[2 + blockIdx.x];
  float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  for (uint32_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const E e = edits[i];
    float v = row[e.token];
    if (e.ops & E::kBias) v = __fadd_rn(v, e.bias);
    if (e.ops & E::kSuppress) v = -INFINITY;
    if (e.ops & E::kRepetition) v = v > 0.0f ? __fdiv_rn(v, e.repetition) : __fmul_rn(v, e.repetition);
    if (e.ops & E::kSubtract) v = __fsub_rn(v, e.subtract);
    row[e.token] = v;
  }
}

}  // namespace

cudaError_t launch_edit_logits(float* x, int64_t logit_rows, int64_t cols, const uint8_t* base, const uint32_t* rows,
                               cudaStream_t stream) {
  if (logit_rows <= 0) return cudaSuccess;
  if (logit_rows > 2147483647) return cudaErrorInvalidValue;
  launch_kernel(edit_logits_kernel, static_cast<unsigned>(logit_rows), kThreads, 0, stream, x, cols, base, rows);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
