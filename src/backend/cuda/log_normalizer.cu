#include "backend/cuda/log_normalizer.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"

#include <cmath>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 256;

// Block r: row r's normalizer. A NaN anywhere makes the sum NaN, as on the host; so does a row with
// no value above -inf (exp(-inf - -inf)).
__global__ void __launch_bounds__(kThreads) log_normalizer_kernel(const float* __restrict__ x, int64_t cols,
                                                                  double* __restrict__ out) {
  pdl_wait();
  __shared__ double s[kThreads];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  double m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const double v = row[c];
    m = m < v ? v : m;  // std::max<double>: a NaN never replaces the max
  }
  s[threadIdx.x] = m;
  __syncthreads();
  for (int o = kThreads / 2; o > 0; o /= 2) {
    if (threadIdx.x < o) s[threadIdx.x] = s[threadIdx.x] < s[threadIdx.x + o] ? s[threadIdx.x + o] : s[threadIdx.x];
    __syncthreads();
  }
  const double max_logit = s[0];
  __syncthreads();
  double sum = 0;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) sum += exp(static_cast<double>(row[c]) - max_logit);
  s[threadIdx.x] = sum;
  __syncthreads();
  for (int o = kThreads / 2; o > 0; o /= 2) {
    if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = max_logit + log(s[0]);
}

__global__ void pick_values_kernel(const float* __restrict__ x, int64_t rows, int64_t cols, const int32_t* __restrict__ picks,
                                   float* __restrict__ out) {
  pdl_wait();
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) out[r] = x[r * cols + picks[r]];
}

}  // namespace

cudaError_t launch_log_normalizers(const float* x, int64_t rows, int64_t cols, double* out, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (rows > 2147483647) return cudaErrorInvalidValue;
  launch_kernel(log_normalizer_kernel, static_cast<unsigned>(rows), kThreads, 0, stream, x, cols, out);
  return cudaGetLastError();
}

cudaError_t launch_pick_values(const float* x, int64_t rows, int64_t cols, const int32_t* picks, float* out,
                               cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  launch_kernel(pick_values_kernel, static_cast<unsigned>((rows + 127) / 128), 128, 0, stream, x, rows, cols, picks, out);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
