// Quantized weights × bf16 activations on Hopper's warpgroup tensor cores, the weights
// dequantized once per block into shared memory (dq_mma.h; round 11).
//
// A block: 2 warpgroups (256 threads), 128 weight rows (64 a warpgroup: wgmma's M side) × BT
// tokens (N = 32, 64, 128 or 256), K walked in 64-element stages. Per stage, cp.async brings the
// rows' raw quant bytes (the device layouts of dequant.cuh: 3 or 5 16-byte pieces a row) and the
// tokens' bf16 values (already in wgmma's 128-byte swizzled K-major layout) into a 4-deep ring;
// then every thread dequantizes one 32-element half of one row's stage (bf16x2 arithmetic for the
// K-quants, see the weight types) and writes it into a swizzled A
// tile (double-buffered), which the two warpgroups multiply by the x tile with 4 wgmma
// m64nBTk16 while the next stage is dequantized. Each weight element is thus dequantized once for
// all BT tokens, not once per token tile and warp (round 10's register version, which was
// issue-bound on dequantization), and the tensor work runs asynchronously beside it.
// K may be split across blocks (small M); the last block of a tile to arrive adds the partial
// sums in split order (deterministic, counters self-resetting).

#include "backend/cuda/dq_mma.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/dq_finish.cuh"
#include "backend/cuda/dq_weights.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/wgmma.cuh"

namespace vellum::cuda {
namespace {
using namespace dq;

constexpr int kK = 64;              // K elements a stage: one 128-byte swizzled row of bf16
constexpr int kRows = kTileRows;    // weight rows a block: 2 warpgroups × 64 (dq_finish.cuh)
constexpr int kThreads = kTileThreads;
constexpr int kStages = 4;          // raw (weights + x) ring
constexpr int kATile = kRows * kK * 2;  // 16 KiB of dequantized bf16 weights, double-buffered


template <class T, int BT, int Stages = kStages, int ABufs = 2>
struct DqLayout {
  static constexpr int kStages = Stages;
  static constexpr int kXBytes = BT * 128, kRawStride = T::kPieces * 16, kRawBytes = kRows * kRawStride;
  static constexpr int kStageBytes = (kXBytes + kRawBytes + 1023) / 1024 * 1024;
  static constexpr int kSmem = kStages * kStageBytes + ABufs * kATile + 1024;  // + 1 KiB to align the base
};
// The register-A kernel has no A tile and a deeper ring (its refill distance is kStages - 2).
template <class T, int BT>
using DqRsLayout = DqLayout<T, BT, BT >= 256 ? 5 : 6, 0>;

// Slot `buf` of a kernel's copy ring (layout L) in shared memory.
template <class L>
__device__ __forceinline__ uint8_t* ring_slot(uint8_t* smem, int buf) { return smem + buf * L::kStageBytes; }

// What one thread copies into a stage of the ring, fixed for the whole K walk: its share of the
// block's 128 rows × kPieces raw pieces and of the BT tokens' 128 bytes of x (in wgmma's swizzled
// layout). Rows past n / tokens past m re-read the last one; their results are not stored.
template <class T, int BT, class L>
struct StageCopies {
  static constexpr int kWItems = (kRows * T::kPieces + kThreads - 1) / kThreads;
  static constexpr int kXItems = BT * 8 / kThreads;
  static_assert(BT * 8 % kThreads == 0, "x pieces split evenly");
  const uint8_t* wsrc[kWItems];
  int wdst[kWItems];
  int wpiece[kWItems];
  const uint8_t* xsrc[kXItems];
  int xdst[kXItems];
  int tid;

  __device__ StageCopies(const uint8_t* w, size_t row_bytes, int64_t n, int64_t n0, const uint8_t* x, int64_t k, int64_t m, int64_t m0)
      : tid(int(threadIdx.x)) {
#pragma unroll
    for (int it = 0; it < kWItems; ++it) {
      const int i = min(tid + it * kThreads, kRows * T::kPieces - 1), row = i / T::kPieces;
      wpiece[it] = i % T::kPieces;
      wsrc[it] = w + min(n0 + row, n - 1) * int64_t(row_bytes);
      wdst[it] = L::kXBytes + row * L::kRawStride + 16 * wpiece[it];
    }
#pragma unroll
    for (int it = 0; it < kXItems; ++it) {
      const int i = tid + it * kThreads, tok = i / 8, c = i % 8;
      xsrc[it] = x + (min(m0 + tok, m - 1) * k + 8 * c) * 2;
      xdst[it] = sw128(tok, c);
    }
  }
  __device__ void weights(uint8_t* stage, int s) const {
#pragma unroll
    for (int it = 0; it < kWItems; ++it) {
      if (tid + it * kThreads < kRows * T::kPieces) cp_async16(stage + wdst[it], wsrc[it] + T::piece_off(s, wpiece[it]));
    }
  }
  __device__ void activations(uint8_t* stage, int s) const {
#pragma unroll
    for (int it = 0; it < kXItems; ++it) cp_async16(stage + xdst[it], xsrc[it] + int64_t(s) * kK * 2);
  }
};


// grid: (token tiles, row tiles, K splits); token tiles vary fastest, so the blocks that read one
// weight tile run together and share it through L2.
template <class T, int BT>
__global__ void __launch_bounds__(kThreads, 1)
    dq_mma_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int64_t n, int nk, const uint8_t* __restrict__ x, int64_t k,
                  int64_t m, float* __restrict__ ws, int32_t* __restrict__ counters, float* __restrict__ out, int64_t ldo,
                  const float* __restrict__ bias) {
  using L = DqLayout<T, BT>;
  extern __shared__ uint8_t smem_raw[];
  __shared__ int last_block;
  // Swizzle atoms must be 1 024-byte aligned.
  uint8_t* smem = smem_raw + ((1024 - (__cvta_generic_to_shared(smem_raw) & 1023)) & 1023);
  uint8_t* abuf = smem + kStages * L::kStageBytes;
  const int tid = threadIdx.x, wg = tid / 128;
  const int64_t m0 = int64_t(blockIdx.x) * BT, n0 = int64_t(blockIdx.y) * kRows;
  const int splits = int(gridDim.z), split = int(blockIdx.z);
  const int sb = int(int64_t(nk) * split / splits), se = int(int64_t(nk) * (split + 1) / splits);
  const StageCopies<T, BT, L> copies(w, row_bytes, n, n0, x, k, m, m0);

  // Thread tid dequantizes half tid % 2 of row tid / 2.
  const int drow = tid / 2, dh = tid % 2;
  const auto dequant = [&](int buf, int s, int a) {
    uint32_t p[16];
    T::dequant(ring_slot<L>(smem, buf) + L::kXBytes + drow * L::kRawStride, 16, s, dh, p);
    uint8_t* dst = abuf + a * kATile;
#pragma unroll
    for (int c = 0; c < 4; ++c) *reinterpret_cast<uint4*>(dst + sw128(drow, 4 * dh + c)) = {p[4 * c], p[4 * c + 1], p[4 * c + 2], p[4 * c + 3]};
  };

  // Weights are never written by a kernel: the first stages' weight copies start before the wait
  // (into this block's shared memory only); they join the first stage's group.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s)
    if (sb + s < se) copies.weights(ring_slot<L>(smem, s), sb + s);
  pdl_wait();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (sb + s < se) copies.activations(ring_slot<L>(smem, s), sb + s);
    cp_async_commit();
  }

  float acc[BT / 8][4];
#pragma unroll
  for (int j = 0; j < BT / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

  if (sb < se) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    dequant(0, sb, 0);
    fence_proxy_async();
  }
  __syncthreads();
  for (int s = sb; s < se; ++s) {
    const int it = s - sb, buf = it % kStages, a = it & 1;
    const uint64_t da = smem_desc_sw128(abuf + a * kATile + wg * (64 * 128)), db = smem_desc_sw128(ring_slot<L>(smem, buf));
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) wgmma_m64k16<BT>(acc, da + 2 * kk, db + 2 * kk);  // +32 bytes a k16 step
    wgmma_commit();
    wgmma_wait<1>();  // this warpgroup's stage s - 1 is done ...
    __syncthreads();  // ... and the other's: stage s - 1's x slot and A buffer are free
    if (s + kStages - 1 < se) {
      copies.weights(ring_slot<L>(smem, (it + kStages - 1) % kStages), s + kStages - 1);
      copies.activations(ring_slot<L>(smem, (it + kStages - 1) % kStages), s + kStages - 1);
    }
    cp_async_commit();
    if (s + 1 < se) {
      cp_async_wait<kStages - 2>();
      __syncthreads();  // stage s + 1 has landed for every thread
      dequant((it + 1) % kStages, s + 1, a ^ 1);
      fence_proxy_async();  // this thread's A writes and landed copies, visible to wgmma
    }
    __syncthreads();
  }
  wgmma_wait<0>();
  wgmma_fence_operands(acc);
  cp_async_wait<0>();
  finish_tile<BT>(acc, ws, counters, out, ldo, bias, n, m, &last_block, [] { __syncthreads(); });
}

// DIAGNOSTIC (VELLUM_CUDA_DQ_DBG bit 8): per block, global timer at the start, after the K walk
// and at the end.
__device__ unsigned long long g_dq_dbg_times[3 * 8192];
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void dbg_time(int dbg, int slot) {
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if ((dbg & 8) && threadIdx.x == 0 && b < 8192) g_dq_dbg_times[3 * b + slot] = global_ns();
}

// Round 15: A from registers (wgmma's RS form). Each thread dequantizes exactly the elements of its
// own A fragments (rows g and g + 8 of its warp's 16, 16 elements each a stage) from the raw
// pieces in shared memory, so there is no A tile, no proxy fence and one block barrier a stage.
// The wgmma of stage s runs while the threads dequantize stage s + 1 into the other register set;
// the ring refills the slot of stage s - 2 (both warpgroups have waited for its wgmma before the
// barrier), so copies run kStages - 2 stages ahead.
// InFlight 1: a warpgroup's wgmma of stage s run while it dequantizes stage s + 1 into the other
// register set; ptxas then serializes the wgmma (C7513: registers of a pending wgmma's successor are
// defined while it runs). InFlight 0: each stage's wgmma complete before the next dequantization;
// the block's other warpgroup (and at <= 64 tokens the other block) keeps the tensor cores busy.
template <class T, int BT, int InFlight>
__global__ void __launch_bounds__(kThreads, BT <= 64 ? 2 : 1)
    dq_mma_rs_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int64_t n, int nk, const uint8_t* __restrict__ x, int64_t k,
                     int64_t m, float* __restrict__ ws, int32_t* __restrict__ counters, float* __restrict__ out, int64_t ldo,
                     const float* __restrict__ bias, int dbg) {
  using L = DqRsLayout<T, BT>;
  constexpr int kAhead = L::kStages - 2;
  extern __shared__ uint8_t smem_raw[];
  __shared__ int last_block;
  uint8_t* smem = smem_raw + ((1024 - (__cvta_generic_to_shared(smem_raw) & 1023)) & 1023);
  const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, wwarp = (tid % 128) / 32, g = lane / 4, t = lane % 4;
  const int64_t m0 = int64_t(blockIdx.x) * BT, n0 = int64_t(blockIdx.y) * kRows;
  const int splits = int(gridDim.z), split = int(blockIdx.z);
  const int sb = int(int64_t(nk) * split / splits), se = int(int64_t(nk) * (split + 1) / splits);
  const StageCopies<T, BT, L> copies(w, row_bytes, n, n0, x, k, m, m0);
  const int row = wg * 64 + wwarp * 16 + g;  // and row + 8

#pragma unroll
  for (int s = 0; s < kAhead; ++s)
    if (sb + s < se) copies.weights(ring_slot<L>(smem, s), sb + s);
  pdl_wait();
  dbg_time(dbg, 0);  // after the wait: nothing is stored before it (pdl.cuh)
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (sb + s < se) copies.activations(ring_slot<L>(smem, s), sb + s);
    cp_async_commit();
  }

  float acc[BT / 8][4];
#pragma unroll
  for (int j = 0; j < BT / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

  // One stage into register set a: wait for its copies, refill the ring, dequantize, multiply.
  const auto step = [&](int s, uint32_t (&a)[4][4]) {
    const int it = s - sb;
    cp_async_wait<kAhead - 1>();
    __syncthreads();  // stage s has landed for every thread; stage s - 2's wgmma are done in both warpgroups
    if (s + kAhead < se) {
      if (!(dbg & 2)) copies.weights(ring_slot<L>(smem, (it + kAhead) % L::kStages), s + kAhead);
      if (!(dbg & 1)) copies.activations(ring_slot<L>(smem, (it + kAhead) % L::kStages), s + kAhead);
    }
    cp_async_commit();
    const uint8_t* raw = ring_slot<L>(smem, it % L::kStages) + L::kXBytes;
    if (dbg & 4) {  // DIAGNOSTIC: raw bytes as A, no dequantization
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        a[kk][0] = quad_bytes(raw + row * L::kRawStride + 16 * (kk / 2), t);
        a[kk][1] = quad_bytes(raw + (row + 8) * L::kRawStride + 16 * (kk / 2), t);
        a[kk][2] = a[kk][0] ^ kk, a[kk][3] = a[kk][1] ^ kk;
      }
    } else {
      uint32_t lo[4], hi[4];
      T::frag(raw + row * L::kRawStride, 16, s, t, lo, hi);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) a[kk][0] = lo[kk], a[kk][2] = hi[kk];
      T::frag(raw + (row + 8) * L::kRawStride, 16, s, t, lo, hi);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) a[kk][1] = lo[kk], a[kk][3] = hi[kk];
    }
    const uint64_t db = smem_desc_sw128(ring_slot<L>(smem, it % L::kStages));
    wgmma_fence_operands(a);  // all of a defined before the fence (else ptxas serializes the wgmma)
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) wgmma_m64k16_rs<BT>(acc, a[kk], db + 2 * kk);
    wgmma_commit();
    wgmma_wait<InFlight>();  // InFlight 1: stage s - 1's wgmma (the other register set) are done
  };
  uint32_t a0[4][4], a1[4][4];
  for (int s = sb; s < se; s += 2) {
    step(s, a0);
    if (s + 1 < se) step(s + 1, InFlight ? a1 : a0);
  }
  wgmma_wait<0>();
  wgmma_fence_operands(acc);
  cp_async_wait<0>();
  dbg_time(dbg, 1);
  finish_tile<BT>(acc, ws, counters, out, ldo, bias, n, m, &last_block, [] { __syncthreads(); });
  dbg_time(dbg, 2);
}

// DIAGNOSTIC (VELLUM_CUDA_DQ_DBG, results wrong): 1 no x copies, 2 no weight copies, 4 no dequantization.
inline int dbg_bits() {
  static const int bits = [] {
    const char* e = std::getenv("VELLUM_CUDA_DQ_DBG");
    return e != nullptr ? std::atoi(e) : 0;
  }();
  return bits;
}

template <class T, int BT, class L, auto kernel, class... Extra>
cudaError_t launch_with_layout(const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                          int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream, Extra... extra) {
  static bool raised = false;  // above the default 48 KiB, once per kernel
  if (!raised) {
    const cudaError_t rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmem);
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  const dim3 grid(plan.tok_tiles, plan.row_tiles, plan.splits);
  launch_kernel(kernel, grid, kThreads, L::kSmem, stream, static_cast<const uint8_t*>(w), T::row_bytes(k), n, int(k / kK),
                                               static_cast<const uint8_t*>(x), k, m, ws, counters, out, ldo, bias, extra...);
  return cudaGetLastError();
}

template <class T, int BT>
cudaError_t launch_bt(const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                      int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  if constexpr (T::kRegFrags) {
    if (plan.rs == 1) {
      return launch_with_layout<T, BT, DqRsLayout<T, BT>, dq_mma_rs_kernel<T, BT, 0>>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream, dbg_bits());
    }
    if (plan.rs == 2) {
      return launch_with_layout<T, BT, DqRsLayout<T, BT>, dq_mma_rs_kernel<T, BT, 1>>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream, dbg_bits());
    }
  }
  return launch_with_layout<T, BT, DqLayout<T, BT>, dq_mma_kernel<T, BT>>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
}

template <class T>
cudaError_t launch_type(const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                        int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  switch (plan.nt) {
    case 4: return launch_bt<T, 32>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    case 8: return launch_bt<T, 64>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    case 16: return launch_bt<T, 128>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    case 32: return launch_bt<T, 256>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool dq_mma_supports(TensorType type, int64_t k) {
  const bool typed = type == TensorType::Q8_0 || type == TensorType::Q4_K || type == TensorType::Q6_K;
  return typed && k > 0 && k % 256 == 0 && k / kK <= (int64_t(1) << 30);
}

std::vector<unsigned long long> dq_mma_debug_times(int blocks) {
  std::vector<unsigned long long> t(size_t(3 * std::min(blocks, 8192)));
  cudaMemcpyFromSymbol(t.data(), g_dq_dbg_times, t.size() * 8);
  return t;
}

bool dq_mma_rs_supports(TensorType type, int64_t k) {
  return (type == TensorType::Q4_K || type == TensorType::Q6_K) && dq_mma_supports(type, k);
}

DqMmaPlan dq_mma_plan(int64_t n, int64_t k, int64_t m, int sms, int splits) {
  DqMmaPlan p;
  const int64_t toks = m <= 32 ? 32 : m <= 64 ? 64 : m <= 128 ? 128 : 256;
  p.nt = int(toks / 8);
  p.tok_tiles = unsigned((m + toks - 1) / toks);
  p.row_tiles = unsigned((n + kRows - 1) / kRows);
  const int64_t tiles = int64_t(p.tok_tiles) * p.row_tiles, nk = k / kK;
  // One wave: shared memory fits 2 blocks a multiprocessor up to 64 tokens, 1 above; each split
  // at least 8 stages (512 k) long.
  const int64_t per_sm = toks <= 64 ? 2 : 1;
  // Splits that stay within one wave (round 13: rounding up put 128 tokens × 14 336 rows, 112
  // tiles, into 224 blocks = 1.7 waves at one block a multiprocessor, the second wave a tail).
  const int64_t want = std::max<int64_t>(1, per_sm * int64_t(std::max(sms, 1)) / tiles);
  const int64_t s = splits > 0 ? splits : want;
  p.splits = unsigned(std::clamp<int64_t>(s, 1, std::max<int64_t>(1, splits > 0 ? nk : nk / 8)));
  if (p.splits > 1) {
    p.ws_floats = size_t(tiles) * p.splits * kRows * toks;
    p.counters = size_t(tiles);
  }
  return p;
}

cudaError_t launch_dq_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                          float* ws, int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  if (!dq_mma_supports(type, k) || (plan.rs != 0 && !dq_mma_rs_supports(type, k)) || plan.rs > 2 || m <= 0 || n <= 0 || plan.row_tiles > 65535u || plan.splits > 65535u ||
      (plan.splits > 1 && (ws == nullptr || counters == nullptr))) {
    return cudaErrorInvalidValue;
  }
  switch (type) {
    case TensorType::Q8_0: return launch_type<WQ8_0>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    case TensorType::Q4_K: return launch_type<WQ4_K>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    default: return launch_type<WQ6_K>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
  }
}

}  // namespace vellum::cuda
