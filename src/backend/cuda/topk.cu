#include "backend/cuda/topk.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/logit_key.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/warp_reduce.cuh"

#include <climits>
#include <cstdint>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kPer = 16;               // columns a lane holds in a part
constexpr int kCap = kThreads * kPer;  // a part's columns; a merge's candidates at most

// How many entries of the descending list l[0, n) are above `key`.
__device__ __forceinline__ int count_above(const uint64_t* l, int n, uint64_t key) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (l[mid] > key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The k best of `lists` descending lists of k keys (shared memory, list l at l·k): a key's rank is
// its place in its own list plus how many keys of every other list are above it (keys are unique,
// so ranks are distinct); ranks below k go to out[rank]. One pass, no rounds.
__device__ void merge_ranked(const uint64_t* s, int lists, int k, uint64_t* out) {
  for (int c = threadIdx.x; c < lists * k; c += kThreads) {
    const int own = c / k;
    const uint64_t key = s[c];
    int rank = c - own * k;
    for (int l = 0; l < lists && rank < k; ++l) {
      if (l != own) rank += count_above(s + l * k, k, key);
    }
    if (rank < k) out[rank] = key;
  }
}

// Block (part, row): the k best keys of columns [part·kCap, (part + 1)·kCap) of the row. Each warp
// takes 512 of them (16 a lane, in registers) and selects its k best in k rounds of a warp maximum
// (the lane that held the winner clears it and takes the maximum of its 16 again); the 8 warp
// lists are then merged by rank.
__global__ void __launch_bounds__(kThreads) top_k_part_kernel(const float* __restrict__ x, int64_t cols, int k, int parts,
                                                              uint64_t* __restrict__ out) {
  pdl_wait();
  __shared__ uint64_t s[kWarps * kMaxTopKDevice];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const float* row = x + static_cast<int64_t>(blockIdx.y) * cols;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kCap + warp * (32 * kPer) + lane;
  uint64_t v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int64_t c = c0 + 32 * j;
    v[j] = c < cols ? key_of(row[c], int(c)) : uint64_t(c);
  }
  uint64_t best = 0;
#pragma unroll
  for (int j = 0; j < kPer; ++j) best = v[j] > best ? v[j] : best;
  for (int r = 0; r < k; ++r) {
    const uint64_t w = warp_max_u64(best);
    if (lane == 0) s[warp * k + r] = w;
    if (best == w) {  // this lane held the winner (keys are unique)
      uint64_t next = 0;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        if (v[j] == w) v[j] = 0;
        next = v[j] > next ? v[j] : next;
      }
      best = next;
    }
  }
  __syncthreads();
  const int64_t list = static_cast<int64_t>(blockIdx.y) * parts + blockIdx.x;
  merge_ranked(s, kWarps, k, out + list * k);
}

// Block (group, row): the k best of lists [group·per, (group + 1)·per) of the row's `lists` lists
// of k keys, per = kCap / k, merged by rank.
__global__ void __launch_bounds__(kThreads) top_k_merge_kernel(const uint64_t* __restrict__ in, int k, int lists, int groups,
                                                               uint64_t* __restrict__ out) {
  pdl_wait();
  __shared__ uint64_t s[kCap];
  const int per = kCap / k;
  const int first = blockIdx.x * per, count = min(per, lists - first);
  const int64_t base = (static_cast<int64_t>(blockIdx.y) * lists + first) * k;
  for (int c = threadIdx.x; c < count * k; c += kThreads) s[c] = in[base + c];
  __syncthreads();
  const int64_t list = static_cast<int64_t>(blockIdx.y) * groups + blockIdx.x;
  merge_ranked(s, count, k, out + list * k);
}

// The row's final keys as ids, and their values read again from the row (the exact bits: -0 and
// NaN payloads included).
__global__ void top_k_output_kernel(const float* __restrict__ x, int64_t cols, int k, const uint64_t* __restrict__ keys,
                                    float* __restrict__ values, int32_t* __restrict__ ids) {
  pdl_wait();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x, row = blockIdx.y;
  if (i >= k) return;
  const int id = id_of(keys[row * k + i]);
  ids[row * k + i] = id;
  values[row * k + i] = x[row * cols + id];
}

int parts_for(int64_t cols) { return static_cast<int>((cols + kCap - 1) / kCap); }

}  // namespace

size_t top_k_workspace_bytes(int64_t rows, int64_t cols, int k) {
  return 2 * size_t(rows) * size_t(parts_for(cols)) * size_t(k) * sizeof(uint64_t);  // two buffers of lists
}

cudaError_t launch_top_k_rows(const float* x, int64_t rows, int64_t cols, int k, float* values, int32_t* ids, void* ws,
                              cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  // Keys of columns past the end reach parts·kCap: below 2^31.
  if (rows > 65535 || cols <= 0 || cols > INT_MAX - kCap || k < 1 || k > kMaxTopKDevice || k > cols) return cudaErrorInvalidValue;
  int lists = parts_for(cols);
  const size_t cap = size_t(rows) * size_t(lists) * size_t(k);
  uint64_t* buf[2] = {static_cast<uint64_t*>(ws), static_cast<uint64_t*>(ws) + cap};
  int cur = 0;
  launch_kernel(top_k_part_kernel, dim3(lists, unsigned(rows)), kThreads, 0, stream, x, cols, k, lists, buf[0]);
  cudaError_t rc = cudaGetLastError();
  while (rc == cudaSuccess && lists > 1) {  // merge until one list of k is left
    const int per = kCap / k, groups = (lists + per - 1) / per;
    launch_kernel(top_k_merge_kernel, dim3(groups, unsigned(rows)), kThreads, 0, stream, buf[cur], k, lists, groups, buf[1 - cur]);
    rc = cudaGetLastError();
    lists = groups, cur = 1 - cur;
  }
  if (rc != cudaSuccess) return rc;
  launch_kernel(top_k_output_kernel, dim3(1, unsigned(rows)), kMaxTopKDevice, 0, stream, x, cols, k, buf[cur], values, ids);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
