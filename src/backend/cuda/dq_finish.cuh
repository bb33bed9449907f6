#pragma once
// The end of a dequantizing GEMM's block (dq_mma.cu, dq_tma.cu): 128 weight rows x BT tokens in
// two warpgroups' wgmma accumulators (threads 0..255). With a K split every block stores its
// partial tile and the last to arrive adds them in split order (deterministic; the counters reset
// themselves); in dq_tma.cu's register-A kernel, with two parts only the first to arrive stores
// (round 36). Then the tile goes out (+ bias).

#include <cstdint>

#include "backend/cuda/mma_tile_store.cuh"
#include "backend/cuda/tma.cuh"

namespace vellum::cuda::dq {

constexpr int kTileRows = 128;     // weight rows a block: 2 warpgroups x 64
constexpr int kTileThreads = 256;  // the threads that hold the accumulators

// `sync` is a barrier of exactly those 256 threads (__syncthreads where they are the whole block).
// The tile's store is left to `store`, called by the 256 threads with the block's whole sums
// (dq_tma.cu stages it through shared memory).
// The block's partial tile into `part` (each thread's values kTileThreads apart: coalesced), made
// visible to the blocks that read it after the barrier.
template <int BT, class Sync>
__device__ __forceinline__ void store_part(const float (&acc)[BT / 8][4], float* __restrict__ part, Sync sync) {
#pragma unroll
  for (int j = 0; j < BT / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) part[(j * 4 + e) * kTileThreads + threadIdx.x] = acc[j][e];
  __threadfence();
  sync();
}

// kStage, `stage` / `stage_bar` (dq_tma.cu): 4·128·BT bytes of the block's shared memory, free once the
// multiplying warpgroups are past their last wgmma, and an mbarrier initialized for one arrival and
// not used yet: the second block of a two-way split copies the first's part there with the copy
// engine instead of loading it into registers (round 36: 128 loads a thread beside 128
// accumulators are issued a few at a time, and spilled; Q6_K down at 512 rows 105.5 -> 103.2 us).
template <int BT, bool kStage = false, class Sync, class Store>
__device__ __forceinline__ void finish_tile(float (&acc)[BT / 8][4], float* __restrict__ ws, int32_t* __restrict__ counters,
                                            int* last_block, Sync sync, Store&& store, uint8_t* stage = nullptr,
                                            uint64_t* stage_bar = nullptr) {
  const int tid = threadIdx.x;
  const int splits = int(gridDim.z), split = int(blockIdx.z);
  if (kStage && splits == 2) {
    // Round 36: two parts, one partial tile. The first block to arrive stores its part and flags it
    // (kWritten); the second waits for the flag, adds that part to its own in split order (the
    // same sums as below) and stores the tile. Half the partial traffic of below, whose every block
    // stores its part and whose last block reads them all: at 512 rows the tiles end together, and
    // those bursts cost ~14 us a launch against ~4 unsplit (round 36, call 3). The second only
    // waits on a block that has taken its ticket, so is running.
    constexpr int32_t kWritten = 1 << 16;
    constexpr int kTile = kTileRows * BT;
    const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
    float* part = ws + tile * kTile;
    sync();
    if (tid == 0) *last_block = (atomicAdd(&counters[tile], 1) & (kWritten - 1)) != 0;
    sync();
    if (!*last_block) {
      store_part<BT>(acc, part, sync);
      if (tid == 0) atomicAdd(&counters[tile], kWritten);
      return;
    }
    if (tid == 0) {
      while (atomicAdd(&counters[tile], 0) < kWritten) __nanosleep(64);
      __threadfence();
      fence_proxy_async_global();  // the first block's stores, seen by the copy engine
      mbar_arrive_expect_tx(stage_bar, uint32_t(kTile) * 4);
      bulk_load(stage, part, uint32_t(kTile) * 4, stage_bar);
    }
    mbar_wait(stage_bar, 0);
#pragma unroll
    for (int j = 0; j < BT / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int at = (j * 4 + e) * kTileThreads + tid;
        const float other = reinterpret_cast<const float*>(stage)[at];
        const float p0 = split == 0 ? acc[j][e] : other, p1 = split == 0 ? other : acc[j][e];
        acc[j][e] = (0.0f + p0) + p1;  // below's 0 + split 0 + split 1
      }
    if (tid == 0) counters[tile] = 0;  // ready for the next launch (graphs replay this one)
  } else if (splits > 1) {
    const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
    constexpr int kTile = kTileRows * BT;
    store_part<BT>(acc, ws + (tile * splits + split) * kTile, sync);
    if (tid == 0) *last_block = atomicAdd(&counters[tile], 1) == splits - 1;
    sync();
    if (!*last_block) return;
    __threadfence();
    // Split by split, all of a split's values at once: `splits` round trips to L2 (round 15; the
    // loops the other way round made one a value and a split, ~20-100 us a tile). The same sums in
    // the same order (0 + split 0 + split 1 + ...).
    const float* base = ws + tile * splits * kTile;
#pragma unroll
    for (int j = 0; j < BT / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    for (int q = 0; q < splits; ++q) {
      const float* src = base + q * kTile + tid;
#pragma unroll
      for (int j = 0; j < BT / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][e] += __ldcg(src + (j * 4 + e) * kTileThreads);
    }
    if (tid == 0) counters[tile] = 0;  // ready for the next launch (graphs replay this one)
  }
  store(acc);
}

// The same storing each value where it lies in the accumulators: `out` f32 or bf16 (OutT).
template <int BT, class Sync, class OutT>
__device__ __forceinline__ void finish_tile(float (&acc)[BT / 8][4], float* __restrict__ ws, int32_t* __restrict__ counters,
                                            OutT* __restrict__ out, int64_t ldo, const float* __restrict__ bias, int64_t n, int64_t m,
                                            int* last_block, Sync sync) {
  finish_tile<BT>(acc, ws, counters, last_block, sync, [&](const float(&sum)[BT / 8][4]) {
    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, wwarp = (tid % 128) / 32;
    store_row_token_tiles(reinterpret_cast<const float(&)[1][BT / 8][4]>(sum), int64_t(blockIdx.y) * kTileRows + wg * 64 + wwarp * 16,
                          int64_t(blockIdx.x) * BT, lane / 4, lane % 4, n, m, out, ldo, bias);
  });
}
}  // namespace vellum::cuda::dq
