// The batch-1 producer with its weight share staged in shared memory (round 48):
// see gemv_norm_out_staged.h.

#include "backend/cuda/gemv_norm_out_staged.h"

#include <algorithm>
#include <type_traits>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kq.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/row_norm.cuh"
#include "backend/cuda/tma.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {
namespace {

constexpr int kBlockRows = 32;  // a producer block's rows: one group of z's int8 copy

// The R rows' sums as the register producers build them, from shared memory only (x staged beside
// the weights). K-quants (gemv_kq.cuh, KqGemvBlock): lane l adds sub-block l of each 1 024-element
// group in group order. Q8_0 (gemv_i8_kernel, split 1): lane l adds chunks l, l + 32, ... in
// order. Then the warp's butterfly.
template <class K, int R>
__device__ __forceinline__ void staged_rows_dot(const uint8_t* rows, size_t rb, int64_t k, const int8_t* xq, const float2* xs,
                                                int lane, float (&acc)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  if constexpr (std::is_same_v<K, I8Q8_0>) {
    const int64_t chunks = k / K::kChunk;
    for (int64_t c = lane; c < chunks; c += 32) {
      I8X<K::kChunk> xv;
      xv.load(xq, xs, c);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        typename K::Raw raw;
        K::load(rows + size_t(r) * rb, c, raw);
        acc[r] += K::dot(raw, xv);
      }
    }
  } else {
    const typename K::Lane L(lane);
    const int64_t nb = k / 256;
    const int passes = int((nb + 3) / 4);
    for (int p = 0; p < passes; ++p) kq_pass_shared<K, R>(rows + size_t(p) * K::kGroupBytes, rb, p, nb, xq, xs, lane, L, acc);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
}

// Shared memory: the block's 32 weight rows, then a copy of x's int8 copy (q8_bytes(k): its values
// and scale pairs).
size_t staged_smem_bytes(size_t rb, int64_t k) { return size_t(kBlockRows) * rb + q8_bytes(k); }

// Block b owns rows [32b, 32b + 32); warp w rows 32b + R·w .. + R − 1. Before the wait thread 0
// starts one bulk copy of each warp's R rows into shared memory, on a barrier a warp. After it the
// block copies x (the previous kernel's output: one L2 round trip for all warps), and each warp
// waits for its rows only. x_bytes and xs_off: q8_bytes(k) and where q8_scales puts the scale pairs.
template <class K, int R>
__global__ void __launch_bounds__(kBlockRows / R * 32)
    gemv_norm_out_staged_kernel(const uint8_t* w, size_t rb, int64_t n, int64_t k, const int8_t* xq, size_t x_bytes,
                                size_t xs_off, float* x, RowNormOut no) {
  constexpr int W = kBlockRows / R;
  extern __shared__ __align__(128) uint8_t ws[];
  __shared__ __align__(8) uint64_t bar[W];
  __shared__ float xn[kBlockRows];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const int64_t row0 = int64_t(blockIdx.x) * kBlockRows;
  const uint32_t bytes = uint32_t(R * rb);
  uint8_t* mine = ws + size_t(warp) * bytes;
  if (threadIdx.x == 0) {  // weights are read-only: before the wait
#pragma unroll 1
    for (int i = 0; i < W; ++i) mbar_init(&bar[i], 1);
    mbar_init_fence();
#pragma unroll 1
    for (int i = 0; i < W; ++i) {
      mbar_arrive_expect_tx(&bar[i], bytes);
      bulk_load(ws + size_t(i) * bytes, w + size_t(row0 + int64_t(i) * R) * rb, bytes, &bar[i]);
    }
  }
  // No block barrier before the wait (pdl.cuh's contract): the other warps first touch the barriers
  // after the one below x's copy.
  const float gain = warp == 0 ? no.gain[row0 + lane] : 0.0f;  // a weight: before the wait
  pdl_wait();
  // The residual this lane adds its row's sum to: loaded now, beside x's copy (one round trip).
  const float resid = lane < R ? x[row0 + int64_t(warp) * R + lane] : 0.0f;
  // x's copy, values then scale pairs: whole 16-byte pieces (k % 64 == 0).
  auto* xq_s = reinterpret_cast<int8_t*>(ws + size_t(kBlockRows) * rb);
  for (size_t i = threadIdx.x; i < x_bytes / 16; i += blockDim.x) {
    reinterpret_cast<uint4*>(xq_s)[i] = reinterpret_cast<const uint4*>(xq)[i];
  }
  __syncthreads();  // x's copy, and the barriers' initialization
  mbar_wait(&bar[warp], 0);
  float acc[R];
  staged_rows_dot<K, R>(mine, rb, k, xq_s, reinterpret_cast<const float2*>(xq_s + xs_off), lane, acc);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (lane != r) continue;
    const int64_t o = row0 + int64_t(warp) * R + r;
    const float v = mul(acc[r], 1.0f) + resid;  // RowMap::store with the output as its bias
    x[o] = v;
    xn[warp * R + r] = v;
  }
  __syncthreads();
  if (warp == 0) row_norm_group(xn, gain, row0, n, no);
}

size_t row_bytes(TensorType type, int64_t k) {
  switch (type) {
    case TensorType::Q4_K: return GemvQ4K::row_bytes(k);
    case TensorType::Q6_K: return GemvQ6K::row_bytes(k);
    case TensorType::Q8_0: return row_stride<DecQ8_0R>(k);
    default: return 0;
  }
}

// The device's shared memory an SM and a block's opt-in limit (the first launch's device).
struct SmemLimits {
  size_t per_sm = 0, per_block = 0;
};
const SmemLimits& smem_limits() {
  static const SmemLimits l = [] {
    SmemLimits r;
    int dev = 0, sm = 0, block = 0;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess) {
      r.per_sm = size_t(sm), r.per_block = size_t(block);
    }
    return r;
  }();
  return l;
}
constexpr size_t kStaticSmem = 1024;  // the kernel's barriers and xn, rounded up
// A block's shared memory, padded past half an SM's so that no SM takes two blocks (round 48 call
// 3: unpadded, 128 blocks of Q4_K's 72 KB landed on 86 SMs, two on many, and those SMs set the
// launch's end).
size_t one_block_an_sm(size_t bytes) {
  const SmemLimits& l = smem_limits();
  const size_t cap = std::min(kNormOutStagedMaxBytes, l.per_block > kStaticSmem ? l.per_block - kStaticSmem : 0);
  return std::max(bytes, std::min((l.per_sm / 2 + 1024) / 16 * 16, cap));
}

template <class K, int R>
cudaError_t launch(const void* w, size_t rb, int64_t n, int64_t k, const void* q8, float* x, const RowNormOut& no,
                   cudaStream_t stream) {
  const auto kernel = gemv_norm_out_staged_kernel<K, R>;
  const size_t smem = one_block_an_sm(staged_smem_bytes(rb, k));
  static size_t allowed = 0;  // the kernel's dynamic shared memory limit as set so far
  if (smem > allowed) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
    allowed = smem;
  }
  const auto* xq = static_cast<const int8_t*>(q8);
  const auto xs_off = size_t(reinterpret_cast<const int8_t*>(q8_scales(q8, k)) - xq);
  launch_kernel(kernel, unsigned(n / kBlockRows), kBlockRows / R * 32, smem, stream, static_cast<const uint8_t*>(w), rb, n,
                k, xq, q8_bytes(k), xs_off, x, no);
  return cudaGetLastError();
}

}  // namespace

bool gemv_norm_out_staged_takes(TensorType type, int64_t n, int64_t k) {
  if (!gemv_norm_out_supports(type, n, k)) return false;
  const size_t rb = row_bytes(type, k);
  const SmemLimits& l = smem_limits();
  const size_t bytes = staged_smem_bytes(rb, k);
  return rb > 0 && rb % 16 == 0 && k % 64 == 0 && bytes <= kNormOutStagedMaxBytes && bytes + kStaticSmem <= l.per_block;
}

cudaError_t launch_gemv_norm_out_staged(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, float* x,
                                        const RowNormOut& no, int rows, cudaStream_t stream) {
  if (!gemv_norm_out_staged_takes(type, n, k) || (rows != 1 && rows != 2 && rows != 4 && rows != 8) || no.gain == nullptr || no.z_q8 == nullptr ||
      no.partial == nullptr || x == nullptr || q8 == nullptr || w == nullptr) {
    return cudaErrorInvalidValue;
  }
  const size_t rb = row_bytes(type, k);
  const auto go = [&](auto kind) {
    using K = decltype(kind);
    switch (rows) {
      case 1: return launch<K, 1>(w, rb, n, k, q8, x, no, stream);
      case 2: return launch<K, 2>(w, rb, n, k, q8, x, no, stream);
      case 4: return launch<K, 4>(w, rb, n, k, q8, x, no, stream);
      default: return launch<K, 8>(w, rb, n, k, q8, x, no, stream);
    }
  };
  if (type == TensorType::Q4_K) return go(GemvQ4K{});
  if (type == TensorType::Q6_K) return go(GemvQ6K{});
  return go(I8Q8_0{});
}

}  // namespace vellum::cuda
