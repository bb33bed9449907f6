#pragma once
// The end of a dequantizing GEMM's block (dq_mma.cu, dq_tma.cu): 128 weight rows x BT tokens in
// two warpgroups' wgmma accumulators (threads 0..255). With a K split every block stores its
// partial tile and the last to arrive adds them in split order (deterministic; the counters reset
// themselves); then the tile goes out (+ bias).

#include <cstdint>

#include "backend/cuda/cluster_dsm.cuh"
#include "backend/cuda/mma_tile_store.cuh"

namespace vellum::cuda::dq {

constexpr int kTileRows = 128;     // weight rows a block: 2 warpgroups x 64
constexpr int kTileThreads = 256;  // the threads that hold the accumulators

// `sync` is a barrier of exactly those 256 threads (__syncthreads where they are the whole block).
// The tile's store is left to `store`, called by the 256 threads with the block's whole sums
// (dq_tma.cu stages it through shared memory).
template <int BT, class Sync, class Store>
__device__ __forceinline__ void finish_tile(float (&acc)[BT / 8][4], float* __restrict__ ws, int32_t* __restrict__ counters,
                                            int* last_block, Sync sync, Store&& store) {
  const int tid = threadIdx.x;
  const int splits = int(gridDim.z), split = int(blockIdx.z);
  if (splits > 1) {
    const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
    constexpr int kTile = kTileRows * BT;
    float* part = ws + (tile * splits + split) * kTile;
#pragma unroll
    for (int j = 0; j < BT / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) part[(j * 4 + e) * kTileThreads + tid] = acc[j][e];
    __threadfence();
    sync();
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

// Round 35: the K split's blocks of a tile as one thread block cluster (gridDim.z blocks, block z
// of rank z). Each block but the first writes its partial tile into its own shared memory (`smem`,
// BT x 128 floats, free once both warpgroups' wgmma have read it); the first adds them through
// distributed shared memory in split order, 0 + split 0 + split 1 + ..., the global path's order
// and bits, and stores the tile. No partial sums through L2 (round 32: 128 KB each, they reached
// DRAM). Two cluster barrier phases; the block's other threads pass them in cluster_split_idle.
template <int BT, class Sync, class Store>
__device__ __forceinline__ void finish_tile_cluster(float (&acc)[BT / 8][4], uint8_t* smem, Sync sync, Store&& store) {
  const int tid = threadIdx.x, splits = int(gridDim.z);
  float4* part = reinterpret_cast<float4*>(smem);
  const bool first = cluster_rank() == 0;
  if (!first) {
    sync();  // both warpgroups' last wgmma have read the ring
#pragma unroll
    for (int j = 0; j < BT / 8; ++j) part[j * kTileThreads + tid] = make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
  }
  cluster_arrive();  // phase 1: the partial tiles are written
  cluster_wait();
  if (!first) {
    cluster_arrive();  // phase 2: the first block has read them; the shared memory must live until then
    cluster_wait();
    return;
  }
#pragma unroll
  for (int j = 0; j < BT / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f + acc[j][e];
  for (int q = 1; q < splits; ++q) {
    const uint32_t base = cluster_map(part + tid, uint32_t(q));
#pragma unroll
    for (int j = 0; j < BT / 8; ++j) {
      const float4 v = cluster_load_f4(base + uint32_t(j * kTileThreads * 16));
      acc[j][0] += v.x, acc[j][1] += v.y, acc[j][2] += v.z, acc[j][3] += v.w;
    }
  }
  cluster_arrive();
  store(acc);
  cluster_wait();
}
// The threads of a finish_tile_cluster block that hold no accumulators: its two phases.
__device__ __forceinline__ void cluster_split_idle() {
  cluster_arrive();
  cluster_wait();
  cluster_arrive();
  cluster_wait();
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
