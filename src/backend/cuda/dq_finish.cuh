#pragma once
// The end of a dequantizing GEMM's block (dq_mma.cu, dq_tma.cu): 128 weight rows x BT tokens in
// two warpgroups' wgmma accumulators (threads 0..255). With a K split (or stream-K's shared tiles)
// every block stores its partial tile and the last to arrive adds them in order (deterministic;
// the counters reset themselves); then the tile goes out (+ bias).

#include <cstdint>

#include "backend/cuda/mma_tile_store.cuh"

namespace vellum::cuda::dq {

constexpr int kTileRows = 128;     // weight rows a block: 2 warpgroups x 64
constexpr int kTileThreads = 256;  // the threads that hold the accumulators

// `sync` is a barrier of exactly those 256 threads (__syncthreads where they are the whole block).
// `out` f32 or bf16 (OutT). The tile is weight rows [n0, n0 + 128) x tokens [m0, m0 + BT); with
// parts > 1 this block's sum is partial sum `part` of the tile's `parts`, stored at
// ws_tile + part · 128 · BT, and the last block to arrive on `counter` adds them all.
template <int BT, class Sync, class OutT>
__device__ __forceinline__ void finish_part(float (&acc)[BT / 8][4], int parts, int part, float* __restrict__ ws_tile,
                                            int32_t* __restrict__ counter, OutT* __restrict__ out, int64_t ldo,
                                            const float* __restrict__ bias, int64_t n0, int64_t m0, int64_t n, int64_t m,
                                            int* last_block, Sync sync) {
  const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, wwarp = (tid % 128) / 32, g = lane / 4, t = lane % 4;
  if (parts > 1) {
    constexpr int kTile = kTileRows * BT;
    float* mine = ws_tile + part * kTile;
#pragma unroll
    for (int j = 0; j < BT / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) mine[(j * 4 + e) * kTileThreads + tid] = acc[j][e];
    __threadfence();
    sync();
    if (tid == 0) *last_block = atomicAdd(counter, 1) == parts - 1;
    sync();
    if (!*last_block) return;
    __threadfence();
    // Part by part, all of a part's values at once: `parts` round trips to L2 (round 15; the
    // loops the other way round made one a value and a part, ~20-100 us a tile). The same sums in
    // the same order (0 + part 0 + part 1 + ...).
#pragma unroll
    for (int j = 0; j < BT / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    for (int q = 0; q < parts; ++q) {
      const float* src = ws_tile + q * kTile + tid;
#pragma unroll
      for (int j = 0; j < BT / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][e] += __ldcg(src + (j * 4 + e) * kTileThreads);
    }
    if (tid == 0) *counter = 0;  // ready for the next launch (graphs replay this one)
  }
  store_row_token_tiles(reinterpret_cast<const float(&)[1][BT / 8][4]>(acc), n0 + wg * 64 + wwarp * 16, m0, g, t, n, m, out, ldo, bias);
}

// A block of a grid of (token tiles, weight row tiles, K splits).
template <int BT, class Sync, class OutT>
__device__ __forceinline__ void finish_tile(float (&acc)[BT / 8][4], float* __restrict__ ws, int32_t* __restrict__ counters,
                                            OutT* __restrict__ out, int64_t ldo, const float* __restrict__ bias, int64_t n, int64_t m,
                                            int* last_block, Sync sync) {
  const int splits = int(gridDim.z);
  const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  finish_part<BT>(acc, splits, int(blockIdx.z), splits > 1 ? ws + tile * splits * (kTileRows * BT) : nullptr,
                  splits > 1 ? counters + tile : nullptr, out, ldo, bias, int64_t(blockIdx.y) * kTileRows, int64_t(blockIdx.x) * BT, n,
                  m, last_block, sync);
}

}  // namespace vellum::cuda::dq
