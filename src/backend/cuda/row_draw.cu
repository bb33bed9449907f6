#include "backend/cuda/row_draw.h"
#include "backend/cuda/logit_key.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/warp_reduce.cuh"

#include <climits>
#include <cstdint>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kChunk = kDrawPart / kThreads;  // consecutive columns a thread sums
static_assert(kChunk * kThreads == kDrawPart, "a part is the block's chunks");

int parts_of(int64_t cols) { return static_cast<int>((cols + kDrawPart - 1) / kDrawPart); }

// A column's weight, with draw_of_row's expression (float operands promoted to double).
__device__ __forceinline__ double weight(float v, float max_logit, float temperature) {
  return isnan(v) ? 0.0 : exp((static_cast<double>(v) - static_cast<double>(max_logit)) / static_cast<double>(temperature));
}

// The row's best key from its parts' best keys (every thread reads them: a handful of broadcasts).
__device__ __forceinline__ uint64_t row_best_key(const uint64_t* part_keys, int parts) {
  uint64_t k = 0;
  for (int p = 0; p < parts; ++p) k = part_keys[p] > k ? part_keys[p] : k;
  return k;
}

struct ChunkScan {
  double before;  // the part's weight before this thread's chunk
  double total;   // the part's weight
};

// Part `part` of the row scanned in its fixed order: each thread sums its 16 consecutive columns in
// column order; the chunks are scanned within each warp (shuffles, a fixed pattern) and the warps
// in order. Every block that scans the part gets the same bits.
__device__ ChunkScan scan_part(const float* row, int64_t cols, int part, float max_logit, float temperature, double* s) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t c0 = static_cast<int64_t>(part) * kDrawPart + threadIdx.x * kChunk;
  double sum = 0;
#pragma unroll
  for (int j = 0; j < kChunk; ++j) {
    if (c0 + j < cols) sum += weight(row[c0 + j], max_logit, temperature);
  }
  double inclusive = sum;
#pragma unroll
  for (int o = 1; o < 32; o *= 2) {
    const double y = __shfl_up_sync(kFull, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  double exclusive = __shfl_up_sync(kFull, inclusive, 1);
  if (lane == 0) exclusive = 0;
  if (lane == 31) s[warp] = inclusive;
  __syncthreads();
  double base = 0, total = 0;
  for (int w = 0; w < kWarps; ++w) {
    if (w < warp) base += s[w];
    total += s[w];
  }
  __syncthreads();  // s is reused
  return {base + exclusive, total};
}

// Block (part, row): the part's best key.
__global__ void __launch_bounds__(kThreads) draw_part_max_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                                 uint64_t* __restrict__ part_keys) {
  pdl_wait();
  __shared__ uint64_t s[kWarps];
  const float* row = x + static_cast<int64_t>(blockIdx.y) * cols;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kDrawPart + threadIdx.x;
  uint64_t best = 0;
#pragma unroll
  for (int j = 0; j < kChunk; ++j) {
    const int64_t c = c0 + static_cast<int64_t>(j) * kThreads;
    if (c < cols) {
      const uint64_t k = key_of(row[c], static_cast<int>(c));
      best = k > best ? k : best;
    }
  }
  best = warp_max_u64(best);
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) best = s[w] > best ? s[w] : best;
    part_keys[static_cast<int64_t>(blockIdx.y) * parts + blockIdx.x] = best;
  }
}

// Block (part, row): the part's weight (0 for a row without a finite best logit).
__global__ void __launch_bounds__(kThreads) draw_part_sum_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                                 const DrawArg* __restrict__ args,
                                                                 const uint64_t* __restrict__ part_keys,
                                                                 double* __restrict__ part_sums) {
  pdl_wait();
  __shared__ double s[kWarps];
  const int r = static_cast<int>(blockIdx.y);
  const float* row = x + static_cast<int64_t>(r) * cols;
  const float max_logit = row[id_of(row_best_key(part_keys + static_cast<int64_t>(r) * parts, parts))];
  double total = 0;
  if (isfinite(max_logit)) total = scan_part(row, cols, static_cast<int>(blockIdx.x), max_logit, args[r].temperature, s).total;
  if (threadIdx.x == 0) part_sums[static_cast<int64_t>(r) * parts + blockIdx.x] = total;
}

// Block (0, row): r = u · Σ parts, the part where the running part sums pass r, then the first
// column of it whose running sum passes r (a thread per chunk; the smallest column found wins: a
// chunk past the boundary finds its first column at once). Rounding can leave the chosen part
// without a crossing: then its last column that weighs anything; r past every part: the best column.
__global__ void __launch_bounds__(kThreads) draw_pick_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                             const DrawArg* __restrict__ args,
                                                             const uint64_t* __restrict__ part_keys,
                                                             const double* __restrict__ part_sums, int32_t* __restrict__ out) {
  pdl_wait();
  __shared__ double s[kWarps];
  __shared__ int s_part, s_first, s_last;
  __shared__ double s_base;
  const int r = static_cast<int>(blockIdx.y);
  const float* row = x + static_cast<int64_t>(r) * cols;
  const double* sums = part_sums + static_cast<int64_t>(r) * parts;
  const int best = id_of(row_best_key(part_keys + static_cast<int64_t>(r) * parts, parts));
  const float max_logit = row[best];
  const float temperature = args[r].temperature;
  if (threadIdx.x == 0) {
    double total = 0;
    for (int p = 0; p < parts; ++p) total += sums[p];
    const double target = args[r].u * total;
    int part = -1;
    double acc = 0;
    for (int p = 0; p < parts && isfinite(max_logit); ++p) {
      const double next = acc + sums[p];
      if (target < next) {
        part = p;
        break;
      }
      acc = next;
    }
    s_part = part;
    s_base = acc;
    s_first = INT_MAX;
    s_last = -1;
    s[0] = target;  // handed over in s, which scan_part overwrites only after its first barrier
  }
  __syncthreads();
  const int part = s_part;
  const double target = s[0];
  if (part < 0) {
    if (threadIdx.x == 0) out[r] = best;
    return;
  }
  __syncthreads();  // everyone has read s[0]
  const ChunkScan c = scan_part(row, cols, part, max_logit, temperature, s);
  const int64_t c0 = static_cast<int64_t>(part) * kDrawPart + threadIdx.x * kChunk;
  double acc = s_base + c.before;
  int first = INT_MAX, last = -1;
#pragma unroll
  for (int j = 0; j < kChunk; ++j) {
    if (c0 + j >= cols) break;
    const double w = weight(row[c0 + j], max_logit, temperature);
    if (w > 0.0) {
      acc += w;
      last = static_cast<int>(c0 + j);
      if (first == INT_MAX && target < acc) first = last;
    }
  }
  if (first != INT_MAX) atomicMin(&s_first, first);
  if (last >= 0) atomicMax(&s_last, last);
  __syncthreads();
  if (threadIdx.x == 0) out[r] = s_first != INT_MAX ? s_first : s_last >= 0 ? s_last : best;
}

}  // namespace

size_t draw_rows_workspace_bytes(int64_t rows, int64_t cols) {
  return static_cast<size_t>(rows) * static_cast<size_t>(parts_of(cols)) * (sizeof(uint64_t) + sizeof(double));
}

cudaError_t launch_draw_rows(const float* x, int64_t rows, int64_t cols, const DrawArg* args, int32_t* out, void* ws,
                             cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (rows > 65535 || cols >= INT_MAX) return cudaErrorInvalidValue;
  const int parts = parts_of(cols);
  auto* keys = static_cast<uint64_t*>(ws);
  auto* sums = reinterpret_cast<double*>(keys + rows * parts);
  const dim3 grid(static_cast<unsigned>(parts), static_cast<unsigned>(rows));
  draw_part_max_kernel<<<grid, kThreads, 0, stream>>>(x, cols, parts, keys);
  draw_part_sum_kernel<<<grid, kThreads, 0, stream>>>(x, cols, parts, args, keys, sums);
  draw_pick_kernel<<<dim3(1, static_cast<unsigned>(rows)), kThreads, 0, stream>>>(x, cols, parts, args, keys, sums, out);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
