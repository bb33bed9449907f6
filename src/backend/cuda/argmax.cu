#include "backend/cuda/argmax.h"
#include "backend/cuda/pdl.cuh"

#include <climits>
#include <cmath>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 512;

// (value, index) pairs: the larger value wins, the smaller index on a tie, so the result is the
// first maximum whatever the order in which partial results meet.
__device__ __forceinline__ void better(float& v, int& i, float ov, int oi) {
  if (ov > v || (ov == v && oi < i)) {
    v = ov;
    i = oi;
  }
}

// One block per row; each thread scans a strided slice, then warps and the block reduce.
__global__ void argmax_rows_kernel(const float* __restrict__ x, int64_t cols, int32_t* __restrict__ out) {
  pdl_wait();
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  float v = -INFINITY;
  int i = INT_MAX;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float e = row[c];
    if (e > v) {  // strict: a thread's own slice keeps its first maximum; NaN never passes
      v = e;
      i = static_cast<int>(c);
    }
  }
  for (int off = 16; off > 0; off >>= 1) better(v, i, __shfl_down_sync(0xffffffffu, v, off), __shfl_down_sync(0xffffffffu, i, off));
  __shared__ float sv[kThreads / 32];
  __shared__ int si[kThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sv[warp] = v;
    si[warp] = i;
  }
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? sv[lane] : -INFINITY;
    i = lane < kThreads / 32 ? si[lane] : INT_MAX;
    for (int off = 16; off > 0; off >>= 1) better(v, i, __shfl_down_sync(0xffffffffu, v, off), __shfl_down_sync(0xffffffffu, i, off));
    if (lane == 0) out[blockIdx.x] = i == INT_MAX ? 0 : i;
  }
}

}  // namespace

cudaError_t launch_argmax_rows(const float* x, int64_t rows, int64_t cols, int32_t* out, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (rows > INT_MAX || cols > INT_MAX) return cudaErrorInvalidValue;
  argmax_rows_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, cols, out);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
