#include "backend/cuda/argmax.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"

#include <algorithm>
#include <climits>
#include <cmath>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 512;
constexpr int64_t kPartCols = 4096;  // columns a block scans (round 8: one block a row took 19 us for 32k)
constexpr int kMaxParts = 64;

struct Best {
  float v;
  int i;
};

// (value, index) pairs: the larger value wins, the smaller index on a tie, so the result is the
// first maximum whatever the order in which partial results meet.
__device__ __forceinline__ void better(float& v, int& i, float ov, int oi) {
  if (ov > v || (ov == v && oi < i)) {
    v = ov;
    i = oi;
  }
}
__device__ __forceinline__ void warp_best(float& v, int& i) {
  for (int off = 16; off > 0; off >>= 1) better(v, i, __shfl_down_sync(0xffffffffu, v, off), __shfl_down_sync(0xffffffffu, i, off));
}

// Block (part, row): the first maximum of columns [part·chunk, (part + 1)·chunk) of the row. Each
// thread scans a strided slice (loads unrolled, so several are in flight), then warps and the block
// reduce.
__global__ void __launch_bounds__(kThreads) argmax_part_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                               Best* __restrict__ ws) {
  pdl_wait();
  const float* row = x + static_cast<int64_t>(blockIdx.y) * cols;
  const int64_t chunk = (cols + parts - 1) / parts;
  const int64_t c0 = blockIdx.x * chunk, c1 = min(cols, c0 + chunk);
  float v = -INFINITY;
  int i = INT_MAX;
#pragma unroll 8
  for (int64_t c = c0 + threadIdx.x; c < c1; c += kThreads) {
    const float e = row[c];
    if (e > v) {  // strict: a thread's own slice keeps its first maximum; NaN never passes
      v = e;
      i = static_cast<int>(c);
    }
  }
  warp_best(v, i);
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
    warp_best(v, i);
    if (lane == 0) ws[static_cast<int64_t>(blockIdx.y) * parts + blockIdx.x] = {v, i};
  }
}

// One warp a row: the best of its parts.
__global__ void argmax_merge_kernel(const Best* __restrict__ ws, int parts, int32_t* __restrict__ out) {
  pdl_wait();
  const Best* row = ws + static_cast<int64_t>(blockIdx.x) * parts;
  float v = -INFINITY;
  int i = INT_MAX;
  for (int p = threadIdx.x; p < parts; p += 32) better(v, i, row[p].v, row[p].i);
  warp_best(v, i);
  if (threadIdx.x == 0) out[blockIdx.x] = i == INT_MAX ? 0 : i;
}

int parts_for(int64_t cols) { return static_cast<int>(std::clamp<int64_t>((cols + kPartCols - 1) / kPartCols, 1, kMaxParts)); }

}  // namespace

size_t argmax_workspace_bytes(int64_t rows, int64_t cols) { return size_t(rows) * size_t(parts_for(cols)) * sizeof(Best); }

cudaError_t launch_argmax_rows(const float* x, int64_t rows, int64_t cols, int32_t* out, void* ws, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (rows > 65535 || cols > INT_MAX || cols <= 0) return cudaErrorInvalidValue;
  const int parts = parts_for(cols);
  auto* best = static_cast<Best*>(ws);
  launch_kernel(argmax_part_kernel, dim3(parts, static_cast<unsigned>(rows)), kThreads, 0, stream, x, cols, parts, best);
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) return rc;
  launch_kernel(argmax_merge_kernel, static_cast<unsigned>(rows), 32, 0, stream, best, parts, out);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
