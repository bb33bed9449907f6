#include "backend/cuda/topk.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/warp_reduce.cuh"

#include <climits>
#include <cmath>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kPer = 16;               // columns a lane holds in a part
constexpr int kCap = kThreads * kPer;  // a part's columns; a merge's candidates at most

// core/logit_order.h's logit_before: the larger value, then the smaller id; NaN after numbers.
// Columns past the row's end are (NaN, cols + their slot): after every real candidate, and unique.
__device__ __forceinline__ bool before(float a, int ia, float b, int ib) {
  const bool na = isnan(a), nb = isnan(b);
  if (na || nb) return na == nb ? ia < ib : nb;
  return a > b || (a == b && ia < ib);
}

// Position in the sorted list (v, id)[0, n) of the first entry not before (cv, ci): how many of
// the list come before the candidate.
__device__ __forceinline__ int count_before(const float* v, const int* id, int n, float cv, int ci) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (before(v[mid], id[mid], cv, ci)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The k best of `lists` sorted lists of k (in shared memory, list l at l·k) into ov/oi: each
// candidate's rank in the union is its place in its own list plus how many of every other list
// come before it (ids are unique, so ranks are distinct); ranks below k are written there. One
// pass, no rounds.
__device__ void merge_ranked(const float* sv, const int* si, int lists, int k, float* ov, int32_t* oi) {
  for (int c = threadIdx.x; c < lists * k; c += kThreads) {
    const int own = c / k;
    const float cv = sv[c];
    const int ci = si[c];
    int rank = c - own * k;
    for (int l = 0; l < lists && rank < k; ++l) {
      if (l != own) rank += count_before(sv + l * k, si + l * k, k, cv, ci);
    }
    if (rank < k) ov[rank] = cv, oi[rank] = ci;
  }
}

// Block (part, row): the k best of columns [part·kCap, (part + 1)·kCap) of the row. Each warp takes
// 512 of them (16 a lane, in registers) and selects its k best in k rounds of a warp butterfly (the
// lane that held the winner marks it taken and rescans its 16); the 8 warp lists are then merged by
// rank.
__global__ void __launch_bounds__(kThreads) top_k_part_kernel(const float* __restrict__ x, int64_t cols, int k, int parts,
                                                              float* __restrict__ ov, int32_t* __restrict__ oi) {
  pdl_wait();
  __shared__ float sv[kWarps * kMaxTopKDevice];
  __shared__ int si[kWarps * kMaxTopKDevice];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const float* row = x + static_cast<int64_t>(blockIdx.y) * cols;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kCap + warp * (32 * kPer) + lane;
  float v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int64_t c = c0 + 32 * j;
    v[j] = c < cols ? row[c] : NAN;
  }
  const auto id_of = [&](int j) {
    const int64_t c = c0 + 32 * j;
    return static_cast<int>(c < cols ? c : cols + c);  // past the end: unique, after every column
  };
  unsigned taken = 0;
  float bv = NAN;
  int bi = INT_MAX, bj = 0;
  const auto rescan = [&] {
    bv = NAN, bi = INT_MAX, bj = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (!((taken >> j) & 1u) && before(v[j], id_of(j), bv, bi)) bv = v[j], bi = id_of(j), bj = j;
    }
  };
  rescan();
  for (int s = 0; s < k; ++s) {
    float wv = bv;
    int wi = bi;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
      const float xv = __shfl_xor_sync(kFull, wv, o);
      const int xi = __shfl_xor_sync(kFull, wi, o);
      if (before(xv, xi, wv, wi)) wv = xv, wi = xi;
    }
    if (lane == 0) sv[warp * k + s] = wv, si[warp * k + s] = wi;
    if (bi == wi) {  // this lane's best won (ids are unique within the warp)
      taken |= 1u << bj;
      rescan();
    }
  }
  __syncthreads();
  const int64_t list = static_cast<int64_t>(blockIdx.y) * parts + blockIdx.x;
  merge_ranked(sv, si, kWarps, k, ov + list * k, oi + list * k);
}

// Block (group, row): the k best of lists [group·per, (group + 1)·per) of the row's `lists`
// lists of k, per = kCap / k, merged by rank.
__global__ void __launch_bounds__(kThreads) top_k_merge_kernel(const float* __restrict__ iv, const int32_t* __restrict__ ii,
                                                               int k, int lists, int groups, float* __restrict__ ov,
                                                               int32_t* __restrict__ oi) {
  pdl_wait();
  __shared__ float sv[kCap];
  __shared__ int si[kCap];
  const int per = kCap / k;
  const int first = blockIdx.x * per, count = min(per, lists - first);
  const int64_t base = (static_cast<int64_t>(blockIdx.y) * lists + first) * k;
  for (int c = threadIdx.x; c < count * k; c += kThreads) sv[c] = iv[base + c], si[c] = ii[base + c];
  __syncthreads();
  const int64_t list = static_cast<int64_t>(blockIdx.y) * groups + blockIdx.x;
  merge_ranked(sv, si, count, k, ov + list * k, oi + list * k);
}

int parts_for(int64_t cols) { return static_cast<int>((cols + kCap - 1) / kCap); }

}  // namespace

size_t top_k_workspace_bytes(int64_t rows, int64_t cols, int k) {
  const size_t lists = size_t(rows) * size_t(parts_for(cols)) * size_t(k);
  return 2 * lists * (sizeof(float) + sizeof(int32_t));  // two buffers of lists, merged into each other
}

cudaError_t launch_top_k_rows(const float* x, int64_t rows, int64_t cols, int k, float* values, int32_t* ids, void* ws,
                              cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  // Ids past the end reach cols + parts·kCap: below INT_MAX.
  if (rows > 65535 || cols <= 0 || cols > INT_MAX / 2 - kCap || k < 1 || k > kMaxTopKDevice || k > cols) return cudaErrorInvalidValue;
  int lists = parts_for(cols);
  const size_t cap = size_t(rows) * size_t(lists) * size_t(k);
  float* bufv[2] = {static_cast<float*>(ws), static_cast<float*>(ws) + cap};
  int32_t* bufi[2] = {reinterpret_cast<int32_t*>(bufv[1] + cap), reinterpret_cast<int32_t*>(bufv[1] + cap) + cap};
  int cur = 0;
  // One part: straight into the output; else into buffer 0, then merges until one list is left.
  top_k_part_kernel<<<dim3(lists, unsigned(rows)), kThreads, 0, stream>>>(x, cols, k, lists, lists == 1 ? values : bufv[0],
                                                                          lists == 1 ? ids : bufi[0]);
  cudaError_t rc = cudaGetLastError();
  while (rc == cudaSuccess && lists > 1) {
    const int per = kCap / k, groups = (lists + per - 1) / per;
    float* ov = groups == 1 ? values : bufv[1 - cur];
    int32_t* oi = groups == 1 ? ids : bufi[1 - cur];
    top_k_merge_kernel<<<dim3(groups, unsigned(rows)), kThreads, 0, stream>>>(bufv[cur], bufi[cur], k, lists, groups, ov, oi);
    rc = cudaGetLastError();
    lists = groups, cur = 1 - cur;
  }
  return rc;
}

}  // namespace vellum::cuda
