#include "backend/cuda/topk.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/warp_reduce.cuh"

#include <climits>
#include <cmath>

namespace vellum::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kPer = 16;               // candidates a thread holds
constexpr int kCap = kThreads * kPer;  // a block's candidates: a part's columns, or the lists it merges
constexpr int kNone = INT_MAX;         // the id of an empty slot (NaN value): after every real candidate

// core/logit_order.h's logit_before: the larger value, then the smaller id; NaN after numbers.
__device__ __forceinline__ bool before(float a, int ia, float b, int ib) {
  const bool na = isnan(a), nb = isnan(b);
  if (na || nb) return na == nb ? ia < ib : nb;
  return a > b || (a == b && ia < ib);
}
__device__ __forceinline__ void warp_best(float& v, int& i) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const float ov = __shfl_xor_sync(kFull, v, o);
    const int oi = __shfl_xor_sync(kFull, i, o);
    if (before(ov, oi, v, i)) v = ov, i = oi;
  }
}

// The block's k best of sv/si (kCap slots, thread t holding t, t + kThreads, ...), best first, into
// ov/oi. k rounds of a block-wide best among the threads' own bests; the thread that held the
// winner marks it taken and rescans its slots. Real ids are unique within a block's slots, so one
// thread owns each winner (empty slots all read kNone, and only come out when nothing else is left).
__device__ void select_top(const float* sv, const int* si, int k, float* ov, int32_t* oi) {
  __shared__ float wv[kThreads / 32];
  __shared__ int wi[kThreads / 32];
  __shared__ int won;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  unsigned taken = 0;
  float bv;
  int bi, bj;
  const auto rescan = [&] {
    bv = NAN, bi = kNone, bj = -1;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const float v = sv[t + j * kThreads];
      const int i = si[t + j * kThreads];
      if (!((taken >> j) & 1u) && before(v, i, bv, bi)) bv = v, bi = i, bj = j;
    }
  };
  rescan();
  for (int s = 0; s < k; ++s) {
    float v = bv;
    int i = bi;
    warp_best(v, i);
    if (lane == 0) wv[warp] = v, wi[warp] = i;
    __syncthreads();
    if (warp == 0) {
      v = lane < kThreads / 32 ? wv[lane] : NAN;
      i = lane < kThreads / 32 ? wi[lane] : kNone;
      warp_best(v, i);
      if (lane == 0) ov[s] = v, oi[s] = i, won = i;
    }
    __syncthreads();
    if (bj >= 0 && bi == won) {
      taken |= 1u << bj;
      rescan();
    }
  }
}

// Block (part, row): the k best of columns [part·kCap, (part + 1)·kCap) of the row.
__global__ void __launch_bounds__(kThreads) top_k_part_kernel(const float* __restrict__ x, int64_t cols, int k, int parts,
                                                              float* __restrict__ ov, int32_t* __restrict__ oi) {
  pdl_wait();
  __shared__ float sv[kCap];
  __shared__ int si[kCap];
  const float* row = x + static_cast<int64_t>(blockIdx.y) * cols;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kCap;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int slot = threadIdx.x + j * kThreads;
    const int64_t c = c0 + slot;
    sv[slot] = c < cols ? row[c] : NAN;
    si[slot] = c < cols ? static_cast<int>(c) : kNone;
  }
  __syncthreads();
  const int64_t list = static_cast<int64_t>(blockIdx.y) * parts + blockIdx.x;
  select_top(sv, si, k, ov + list * k, oi + list * k);
}

// Block (group, row): the k best of lists [group·per, (group + 1)·per) of the row's `lists` lists
// of k, per = kCap / k.
__global__ void __launch_bounds__(kThreads) top_k_merge_kernel(const float* __restrict__ iv, const int32_t* __restrict__ ii,
                                                               int k, int lists, int groups, float* __restrict__ ov,
                                                               int32_t* __restrict__ oi) {
  pdl_wait();
  __shared__ float sv[kCap];
  __shared__ int si[kCap];
  const int per = kCap / k;
  const int first = blockIdx.x * per, count = min(per, lists - first) * k;
  const int64_t base = (static_cast<int64_t>(blockIdx.y) * lists + first) * k;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int slot = threadIdx.x + j * kThreads;
    sv[slot] = slot < count ? iv[base + slot] : NAN;
    si[slot] = slot < count ? ii[base + slot] : kNone;
  }
  __syncthreads();
  const int64_t list = static_cast<int64_t>(blockIdx.y) * groups + blockIdx.x;
  select_top(sv, si, k, ov + list * k, oi + list * k);
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
  if (rows > 65535 || cols <= 0 || cols > INT_MAX - kCap || k < 1 || k > kMaxTopKDevice || k > cols) return cudaErrorInvalidValue;
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
