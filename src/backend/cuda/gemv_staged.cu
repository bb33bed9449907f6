// Batch-1 int8 GEMV from weights staged in shared memory before the programmatic wait (round 32):
// see gemv_staged.h.

#include "backend/cuda/gemv_staged.h"

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kq.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/tma.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {
namespace {

constexpr int kRows = 32;                      // weight rows a block
constexpr int kThreads = 256;                  // 8 warps of 4 rows
constexpr int kRowsPerWarp = kRows / (kThreads / 32);
constexpr size_t kMaxStage = 200 * 1024;       // a block's rows in shared memory at most

struct Q8Rows {};  // Q8_0 (I8Q8_0 on DecQ8_0R): gemv_i8_kernel's lane order
template <class F>
struct KqRows {};  // Q4_K / Q6_K (GemvQ4K / GemvQ6K): gemv_kq_kernel's lane order

size_t row_bytes(TensorType type, int64_t k) {
  switch (type) {
    case TensorType::Q8_0: return row_stride<DecQ8_0R>(k);
    case TensorType::Q4_K: return GemvQ4K::row_bytes(k);
    case TensorType::Q6_K: return GemvQ6K::row_bytes(k);
    default: return 0;
  }
}

// Lane `lane`'s sums of the warp's rows (rows past n: not read, left 0): chunks lane, lane + 32, ...
// for Q8_0, sub-block `lane` of each 1 024-element group for Q4_K / Q6_K, in the order the
// ordinary launches add them.
__device__ __forceinline__ void row_sums(Q8Rows, const uint8_t* const (&rows)[kRowsPerWarp], int valid, int64_t k, const int8_t* xq,
                                         const float2* xs, int lane, float (&acc)[kRowsPerWarp]) {
  const int64_t chunks = k / I8Q8_0::kChunk;
#pragma unroll 2
  for (int64_t c = lane; c < chunks; c += 32) {
    I8X<I8Q8_0::kChunk> xv;
    xv.load(xq, xs, c);
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      if (r >= valid) break;  // warp-uniform
      I8Q8_0::Raw raw;
      I8Q8_0::load(rows[r], c, raw);  // generic loads: shared memory here
      acc[r] += I8Q8_0::dot(raw, xv);
    }
  }
}
template <class F>
__device__ __forceinline__ void row_sums(KqRows<F>, const uint8_t* const (&rows)[kRowsPerWarp], int valid, int64_t k, const int8_t* xq,
                                         const float2* xs, int lane, float (&acc)[kRowsPerWarp]) {
  const int64_t nb = k / 256;
  const int passes = int((nb + 3) / 4), sb = lane / 8;
  const typename F::Lane L(lane);
#pragma unroll 4
  for (int p = 0; p < passes; ++p) {
    if (int64_t(p) * 4 + sb >= nb) continue;  // a short last group: this super-block does not exist
    const int64_t e = int64_t(p) * 1024 + 32 * lane;
    const uint4* xp = reinterpret_cast<const uint4*>(xq + e);
    const uint4 x0 = xp[0], x1 = xp[1];
    const float2 xsv = xs[e / 32];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      if (r >= valid) break;
      typename F::Raw raw;
      F::load_shared(rows[r] + size_t(p) * F::kGroupBytes, lane, L, raw);
      acc[r] += F::dot(raw, x0, x1, xsv, L);
    }
  }
}

// Block b: rows [32b, 32b + 32) of w. Thread 0 starts the bulk copy of the block's rows before the
// wait (weights: no kernel of the step writes them, pdl.cuh); after it the block reads x, waits for
// the copy and multiplies from shared memory.
template <class Kind>
__global__ void __launch_bounds__(kThreads, 1)
    gemv_staged_kernel(const uint8_t* w, size_t rb, int64_t n, int64_t k, const int8_t* xq, const float2* xs, float* out,
                       const float* bias) {
  extern __shared__ uint4 stage[];
  __shared__ uint64_t copied;
  const int64_t r0 = int64_t(blockIdx.x) * kRows;
  const int here = n - r0 < kRows ? int(n - r0) : kRows;
  uint8_t* rows_smem = reinterpret_cast<uint8_t*>(stage);
  if (threadIdx.x == 0) {
    mbar_init(&copied, 1);
    mbar_init_fence();
    mbar_arrive_expect_tx(&copied, uint32_t(size_t(here) * rb));
    for (int r = 0; r < here; ++r) bulk_load(rows_smem + size_t(r) * rb, w + size_t(r0 + r) * rb, uint32_t(rb), &copied);
  }
  pdl_wait();
  __syncthreads();  // the barrier's initialization, for every thread
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) & 31;
  const int first = warp * kRowsPerWarp, valid = max(0, min(kRowsPerWarp, here - first));
  const uint8_t* rows[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) rows[r] = rows_smem + size_t(first + r) * rb;
  float acc[kRowsPerWarp] = {};
  mbar_wait(&copied, 0);
  row_sums(Kind{}, rows, valid, k, xq, xs, lane, acc);
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = warp_sum(acc[r]);
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t o = r0 + first + r;
    if (lane == r && r < valid) out[o] = bias != nullptr ? acc[r] + bias[o] : acc[r];
  }
}

int g_on = [] {
  const char* e = std::getenv("VELLUM_CUDA_GEMV_STAGED");
  return e != nullptr ? std::atoi(e) : 0;
}();

int device_sms() {
  static const int sms = [] {
    int dev = 0, n = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    return n;
  }();
  return sms;
}

template <class Kind>
cudaError_t launch(const void* w, size_t rb, int64_t n, int64_t k, const void* q8, float* out, const float* bias, cudaStream_t stream) {
  const size_t smem = size_t(kRows) * rb;
  static bool raised = false;  // above the default 48 KiB, once
  if (!raised) {
    const cudaError_t rc = cudaFuncSetAttribute(gemv_staged_kernel<Kind>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxStage));
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  const auto* xq = static_cast<const int8_t*>(q8);
  const auto* xs = reinterpret_cast<const float2*>(static_cast<const uint8_t*>(q8) + (k + 15) / 16 * 16);
  const unsigned blocks = unsigned((n + kRows - 1) / kRows);
  gemv_staged_kernel<Kind><<<blocks, kThreads, smem, stream>>>(static_cast<const uint8_t*>(w), rb, n, k, xq, xs, out, bias);
  return cudaGetLastError();
}

}  // namespace

void set_gemv_staged(bool on) { g_on = on ? 1 : 0; }
bool gemv_staged_on() { return g_on != 0; }

bool gemv_staged_takes(TensorType type, int64_t n, int64_t k) {
  const size_t rb = row_bytes(type, k);
  const bool shape = type == TensorType::Q8_0 ? k % I8Q8_0::kChunk == 0 : k % 256 == 0;
  return g_on != 0 && rb > 0 && rb % 16 == 0 && shape && n > 0 && size_t(kRows) * rb <= kMaxStage &&
         n <= int64_t(kRows) * device_sms();
}

cudaError_t launch_gemv_staged(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, float* out, const float* bias,
                               cudaStream_t stream) {
  if (!gemv_staged_takes(type, n, k) || (reinterpret_cast<uintptr_t>(w) & 15) != 0) return cudaErrorInvalidValue;
  const size_t rb = row_bytes(type, k);
  switch (type) {
    case TensorType::Q8_0: return launch<Q8Rows>(w, rb, n, k, q8, out, bias, stream);
    case TensorType::Q4_K: return launch<KqRows<GemvQ4K>>(w, rb, n, k, q8, out, bias, stream);
    default: return launch<KqRows<GemvQ6K>>(w, rb, n, k, q8, out, bias, stream);
  }
}

}  // namespace vellum::cuda
