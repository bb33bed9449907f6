// The dequantizing GEMMs fed by the bulk tensor copy engine (dq_tma.h): round 26's kernel
// (dq_tma_kernel, opt-in) and round 28's (dq_tma_rs_kernel, the default at 33..1 024 token rows).
// They share the copy side, the plan and the tensor maps.
//
// Round 26: a block of 128 weight rows x BT tokens (128, 192 or 256), K in 64-element stages, three
// roles.
// - The last warp's lane 0 issues the bulk tensor copies: the x tile (BT tokens x 64 bf16, swizzled by
//   the copy engine as wgmma reads it) and each 16-byte piece of the 128 rows' stage, into a ring
//   slot once `raw_empty` says both the dequantizers and the multipliers are done with it. Rows
//   past n and tokens past m arrive as zeros.
// - The warps between (3 at 256 tokens, 7 below: kDequantizers) dequantize: wait for a stage's raw
//   pieces (`raw_full`), turn the 128 rows' 64 elements into bf16 (dq_weights.cuh) in an A tile in
//   wgmma's 128-byte swizzle (a ring of kABufs), fence the writes for the async proxy and arrive
//   on `a_full`.
// - Warpgroups 0 and 1 multiply (64 weight rows each): wait on `a_full`, issue 4 wgmma m64nBTk16
//   with both operands in shared memory, keep one stage in flight, and release the stage before
//   (`a_empty`, `raw_empty`). No block barrier in the K walk and no A operand in registers (round
//   26's first version had each multiplying warpgroup dequantize its own register fragments: ptxas
//   serialized every wgmma, and the dequantization sat on the multipliers' critical path).
// The end is dq_mma's (dq_finish.cuh), over the multipliers only.
//
// Round 28 (dq_tma_rs_kernel, DqMmaPlan::rs 4): two roles. The copies as above (one warpgroup, its
// lane 0 busy, its registers given back with setmaxnreg); two warpgroups each dequantize exactly
// their own wgmma A fragments from the raw pieces (round 15's frag) and multiply in the RS form, A
// from registers, one stage in flight while the next stage's fragments are built into the other
// register set. What round 26's first version of this lacked: registers (setmaxnreg gives the
// multipliers 232, where 384 threads cap every thread at 168, so the 256-token accumulators left
// A spilling), and each register set kept alive until the wait that retires its wgmma, with whole
// rotations of the sets in the loop (otherwise ptxas may give the next set the same registers, or
// see a path that redefines a set in flight, and serializes every wgmma: C7513).

#include "backend/cuda/dq_tma.h"

#include <cuda.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "backend/cuda/dq_finish.cuh"
#include "backend/cuda/dq_weights.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/pack16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/swiglu8.cuh"
#include "backend/cuda/tensor_map.h"
#include "backend/cuda/tma.cuh"
#include "backend/cuda/wgmma.cuh"

namespace vellum::cuda {
namespace {
using namespace dq;

constexpr int kK = 64;                        // K elements a stage: one 128-byte swizzled row
constexpr int kMultipliers = kTileThreads;    // warpgroups 0 and 1
// The dequantizing warps follow the multipliers, then one warp whose lane 0 issues the copies. A
// block's threads set the register cap (65 536 / threads, rounded to warpgroups): 384 threads allow
// 168 registers, which 256 tokens' accumulators (128) need, so 3 dequantizing warps; with 192 or 128
// tokens 512 threads fit (128 registers), so 7.
template <int BT>
constexpr int kDequantizers = BT == 256 ? 96 : 224;
template <int BT>
constexpr int kThreads = kMultipliers + kDequantizers<BT> + 32;
constexpr int kPieceBytes = kTileRows * 16;   // one 16-byte piece of each of the tile's rows
constexpr int kSmemPerBlock = 232448;         // 227 KiB at most a block (sm_90)

template <class T, int BT>
struct TmaLayout {
  static constexpr int kXBytes = BT * 128;
  static constexpr uint32_t kTx = kXBytes + T::kPieces * kPieceBytes;  // bytes a stage
  static constexpr int kStageBytes = (int(kTx) + 1023) / 1024 * 1024;
  static constexpr int kATile = kTileRows * kK * 2;                    // 16 KiB of bf16 weights
  static constexpr int kABufs = 3;
  // What is left for the copy ring: the block's limit less the A tiles, alignment slack and the
  // static part.
  static constexpr int kBudget = kSmemPerBlock - kABufs * kATile - 1024 - 256;
  static constexpr int kStages = kBudget / kStageBytes < 6 ? kBudget / kStageBytes : 6;
  static constexpr int kSmem = kStages * kStageBytes + kABufs * kATile + 1024;  // + 1 KiB to align the base
  static_assert(kStages >= 3, "copies two stages ahead at least");
};

template <class T, int BT>
struct Ring {
  using L = TmaLayout<T, BT>;
  uint8_t* smem;
  uint64_t *raw_full, *raw_empty, *a_full, *a_empty;
  __device__ uint8_t* slot(int it) const { return smem + (it % L::kStages) * L::kStageBytes; }
  __device__ uint8_t* atile(int it) const { return smem + L::kStages * L::kStageBytes + (it % L::kABufs) * L::kATile; }
  __device__ static uint32_t parity(int it, int depth) { return uint32_t(it / depth) & 1; }
};

// Stage sb + it of this block into its ring slot, once the slot's previous stage is released.
template <class T, int BT>
__device__ __forceinline__ void copy_stage(const Ring<T, BT>& r, const CUtensorMap& wmap, const CUtensorMap& xmap, int sb, int it) {
  using L = TmaLayout<T, BT>;
  const int sl = it % L::kStages, s = sb + it;
  if (it >= L::kStages) mbar_wait(&r.raw_empty[sl], Ring<T, BT>::parity(it - L::kStages, L::kStages));
  uint8_t* st = r.slot(it);
  mbar_arrive_expect_tx(&r.raw_full[sl], L::kTx);
  tma_load_2d(st, &xmap, s * kK, int(blockIdx.x) * BT, &r.raw_full[sl]);
#pragma unroll
  for (int i = 0; i < T::kPieces; ++i) {
    tma_load_2d(st + L::kXBytes + i * kPieceBytes, &wmap, int(T::piece_off(s, i)), int(blockIdx.y) * kTileRows, &r.raw_full[sl]);
  }
}

// The dequantizing warps: every stage's 128 rows x 2 halves into the A ring, a half-row at a time.
template <class T, int BT>
__device__ __forceinline__ void dequantize(const Ring<T, BT>& r, int sb, int ns, int dbg) {
  using L = TmaLayout<T, BT>;
  const int d = int(threadIdx.x) - kMultipliers;
  for (int it = 0; it < ns; ++it) {
    const int sl = it % L::kStages, ab = it % L::kABufs;
    mbar_wait(&r.raw_full[sl], Ring<T, BT>::parity(it, L::kStages));
    if (it >= L::kABufs) mbar_wait(&r.a_empty[ab], Ring<T, BT>::parity(it - L::kABufs, L::kABufs));
    const uint8_t* raw = r.slot(it) + L::kXBytes;
    uint8_t* a = r.atile(it);
    if (!(dbg & 2)) {  // DIAGNOSTIC bit 2: no dequantization (the A tile keeps whatever it held)
      // All of a thread's half-rows at once (unrolled, the last one clamped and not stored when past
      // the tile): their loads and arithmetic interleave instead of running one chain after another.
      constexpr int kUnits = (2 * kTileRows + kDequantizers<BT> - 1) / kDequantizers<BT>;
      uint32_t p[kUnits][16];
#pragma unroll
      for (int j = 0; j < kUnits; ++j) {
        const int u = min(d + j * kDequantizers<BT>, 2 * kTileRows - 1);
        T::dequant(raw + (u / 2) * 16, kPieceBytes, sb + it, u % 2, p[j]);
      }
#pragma unroll
      for (int j = 0; j < kUnits; ++j) {
        const int u = d + j * kDequantizers<BT>, row = u / 2, h = u % 2;
        if (u < 2 * kTileRows) {
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            *reinterpret_cast<uint4*>(a + sw128(row, 4 * h + c)) = {p[j][4 * c], p[j][4 * c + 1], p[j][4 * c + 2], p[j][4 * c + 3]};
          }
        }
      }
    }
    fence_proxy_async();  // the A writes, visible to wgmma
    mbar_arrive(&r.a_full[ab]);
    mbar_arrive(&r.raw_empty[sl]);
  }
}

// Warpgroups 0 and 1: the K walk on the tensor cores, then the tile's end.
template <class T, int BT>
__device__ __forceinline__ void multiply(const Ring<T, BT>& r, int ns, int64_t n, int64_t m, float* __restrict__ ws,
                                         int32_t* __restrict__ counters, float* __restrict__ out, int64_t ldo,
                                         const float* __restrict__ bias, int* last_block) {
  using L = TmaLayout<T, BT>;
  const int wg = int(threadIdx.x) / 128, lane = int(threadIdx.x) % 32;
  float acc[BT / 8][4];
#pragma unroll
  for (int j = 0; j < BT / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
  for (int it = 0; it < ns; ++it) {
    mbar_wait(&r.a_full[it % L::kABufs], Ring<T, BT>::parity(it, L::kABufs));
    mbar_wait(&r.raw_full[it % L::kStages], Ring<T, BT>::parity(it, L::kStages));  // the x tile
    const uint64_t da = smem_desc_sw128(r.atile(it) + wg * (64 * 128)), db = smem_desc_sw128(r.slot(it));
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) wgmma_m64k16<BT>(acc, da + 2 * kk, db + 2 * kk);  // +32 bytes a k16 step
    wgmma_commit();
    wgmma_wait<1>();  // stage it - 1's wgmma are done: its A tile and x slot are free
    if (it >= 1 && lane == 0) {
      mbar_arrive(&r.a_empty[(it - 1) % L::kABufs]);
      mbar_arrive(&r.raw_empty[(it - 1) % L::kStages]);
    }
  }
  wgmma_wait<0>();
  wgmma_fence_operands(acc);
  finish_tile<BT>(acc, ws, counters, out, ldo, bias, n, m, last_block, [] { asm volatile("bar.sync 1, 256;\n" ::: "memory"); });
}

template <class T, int BT>
__global__ void __launch_bounds__(kThreads<BT>, 1)
    dq_tma_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap xmap, int64_t n, int nk, int64_t m,
                  float* __restrict__ ws, int32_t* __restrict__ counters, float* __restrict__ out, int64_t ldo,
                  const float* __restrict__ bias, int dbg) {
  using L = TmaLayout<T, BT>;
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t raw_full[L::kStages], raw_empty[L::kStages], a_full[L::kABufs], a_empty[L::kABufs];
  __shared__ int last_block;
  pdl_wait();
  const Ring<T, BT> r{smem_raw + ((1024 - (__cvta_generic_to_shared(smem_raw) & 1023)) & 1023),  // swizzle atoms: 1 KiB aligned
                      raw_full, raw_empty, a_full, a_empty};
  const int splits = int(gridDim.z), split = int(blockIdx.z);
  const int sb = int(int64_t(nk) * split / splits), se = int(int64_t(nk) * (split + 1) / splits);
  if (threadIdx.x == 0) {
    for (int i = 0; i < L::kStages; ++i) {
      mbar_init(&raw_full[i], 1);                                 // the copying thread (+ the stage's bytes)
      mbar_init(&raw_empty[i], kDequantizers<BT> + kMultipliers / 32);  // every dequantizer, each multiplying warp
    }
    for (int i = 0; i < L::kABufs; ++i) {
      mbar_init(&a_full[i], kDequantizers<BT>);
      mbar_init(&a_empty[i], kMultipliers / 32);
    }
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x >= kMultipliers + kDequantizers<BT>) {  // the last warp: lane 0 keeps the copy ring full
    if (threadIdx.x == kMultipliers + kDequantizers<BT>) {
      for (int it = 0; it < se - sb; ++it) copy_stage(r, wmap, xmap, sb, it);
    }
  } else if (threadIdx.x >= kMultipliers) {
    dequantize<T, BT>(r, sb, se - sb, dbg);
  } else {
    multiply<T, BT>(r, se - sb, n, m, ws, counters, out, ldo, bias, &last_block);
  }
}

// ---- round 28: A fragments in registers -------------------------------------------------------
// T0 and T1: the weight types of a launch (the same, or round 33's Q4_K + Q6_K groups); a ring slot
// holds the larger stage.
template <class T0, class T1, int BT>
struct RsLayout {
  static constexpr int kXBytes = BT * 128;
  static constexpr int kPieces = T0::kPieces > T1::kPieces ? T0::kPieces : T1::kPieces;
  static constexpr uint32_t kTx = kXBytes + kPieces * kPieceBytes;  // bytes of the larger stage
  static constexpr int kStageBytes = (int(kTx) + 1023) / 1024 * 1024;
  static constexpr int kBudget = kSmemPerBlock - 1024 - 256;
  static constexpr int kStages = kBudget / kStageBytes < 8 ? kBudget / kStageBytes : 8;
  static constexpr int kSmem = kStages * kStageBytes + 1024;  // + 1 KiB to align the base
  static_assert(kStages >= 3, "copies two stages ahead at least");
};
constexpr int kRsThreads = kMultipliers + 128;  // the multipliers, then the copying warpgroup

// The tile's store through shared memory (round 32): the 256 multiplying threads write their sums
// (+ bias, rounded to OutT) into a token-major copy of the tile in the copy ring, free once every
// wgmma has read its last stage, then write each token's 128 values as 16-byte vectors. Storing
// each value where it lies in the accumulators (store_row_token_tiles) took 4-byte stores spread
// over 4 token rows a warp instruction: ~11% of a 14 336 x 4 096 launch at 512 rows (call 8).
// The same values, so the same bits.
template <int BT, class OutT>
struct StagedTile {
  static constexpr int kPad = sizeof(OutT) == 4 ? 4 : 8;  // a token row 16 bytes longer: the transposed writes spread over the banks
  static constexpr int kStride = kTileRows + kPad;         // values a token row
  static constexpr int kVec = 16 / int(sizeof(OutT));      // values a 16-byte vector
  static constexpr int kBytes = BT * kStride * int(sizeof(OutT));
};
// The accumulators (+ bias, rounded to OutT) into the token-major tile in shared memory; the
// caller has synchronized the multipliers after their last wgmma (the tile overlays the ring) and
// synchronizes again before reading it.
template <int BT, class OutT>
__device__ __forceinline__ void stage_tile(const float (&acc)[BT / 8][4], OutT* tile, int64_t n0, int64_t n, const float* __restrict__ bias) {
  using Tile = StagedTile<BT, OutT>;
  const int tid = int(threadIdx.x), lane = tid % 32, g = lane / 4, t = lane % 4;
  const int r0 = (tid / 128) * 64 + ((tid % 128) / 32) * 16 + g;  // rows r0 and r0 + 8 of the tile
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = r0 + 8 * h;
    const float bv = bias != nullptr && n0 + row < n ? bias[n0 + row] : 0.0f;
#pragma unroll
    for (int j = 0; j < BT / 8; ++j) {
      const int tok = j * 8 + 2 * t;
      tile[tok * Tile::kStride + row] = OutT(acc[j][2 * h] + bv);
      tile[(tok + 1) * Tile::kStride + row] = OutT(acc[j][2 * h + 1] + bv);
    }
  }
}

// add (f32 only): out += the tile (+ bias), for a residual stream (round 34: the output and down
// projections add into x, so the norm after them reads x alone and o is never written).
// Round 35, `bulk_add` (set_dq_tma_bulk_add): the add as one bulk reduction in L2 a token's row, so
// the block reads no x and leaves once its reductions have read shared memory. Full rows of 16-byte
// aligned outputs only.
template <int BT, class OutT, class Sync>
__device__ __forceinline__ void store_staged(const float (&acc)[BT / 8][4], uint8_t* smem, int64_t n0, int64_t m0, int64_t n, int64_t m,
                                             OutT* __restrict__ out, int64_t ldo, const float* __restrict__ bias, bool add, bool bulk_add,
                                             Sync sync) {
  using Tile = StagedTile<BT, OutT>;
  OutT* tile = reinterpret_cast<OutT*>(smem);
  const int tid = int(threadIdx.x);
  const bool vec = ((reinterpret_cast<uintptr_t>(out) | uintptr_t(ldo * int64_t(sizeof(OutT)))) & 15) == 0;
  const bool in_l2 = std::is_same_v<OutT, float> && add && bulk_add && vec && n0 + kTileRows <= n;
  sync();  // both warpgroups' last wgmma have read the ring
  stage_tile<BT>(acc, tile, n0, n, bias);
  if (in_l2) fence_proxy_async_smem();  // the tile's stores, seen by the copy engine
  sync();
  if constexpr (std::is_same_v<OutT, float>) {
    if (in_l2) {
      if (tid < BT && m0 + tid < m) {
        bulk_add_f32(out + (m0 + tid) * ldo + n0, tile + tid * Tile::kStride, kTileRows * sizeof(float));
        bulk_commit();
        bulk_wait_read();
      }
      return;
    }
  }
  constexpr int kPerTok = kTileRows / Tile::kVec;
  if constexpr (std::is_same_v<OutT, float>) {
    if (add && vec && n0 + kTileRows <= n) {
      // x + o, add_rms_norm's order and rounding. x's vectors 16 at a time, all loads before the
      // stores: one at a time, each load waited for the store before it (it may alias). Round 34,
      // 512 rows, ncu: +6 to +14 us a launch that way (call 2), +4 to +10 us so (call 3).
      constexpr int kIt = BT * kPerTok / kTileThreads, kPhase = kIt < 16 ? kIt : 16;
      static_assert(BT * kPerTok % kTileThreads == 0 && kIt % kPhase == 0, "whole phases");
#pragma unroll
      for (int ph = 0; ph < kIt; ph += kPhase) {
        float4 xv[kPhase];
#pragma unroll
        for (int i = 0; i < kPhase; ++i) {
          const int v = tid + (ph + i) * kTileThreads, tok = v / kPerTok, c = (v % kPerTok) * Tile::kVec;
          xv[i] = m0 + tok < m ? *reinterpret_cast<const float4*>(out + (m0 + tok) * ldo + n0 + c) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int i = 0; i < kPhase; ++i) {
          const int v = tid + (ph + i) * kTileThreads, tok = v / kPerTok, c = (v % kPerTok) * Tile::kVec;
          if (m0 + tok >= m) continue;
          const float4 b = *reinterpret_cast<const float4*>(tile + tok * Tile::kStride + c);
          *reinterpret_cast<float4*>(out + (m0 + tok) * ldo + n0 + c) = make_float4(xv[i].x + b.x, xv[i].y + b.y, xv[i].z + b.z, xv[i].w + b.w);
        }
      }
      return;
    }
  }
  for (int v = tid; v < BT * kPerTok; v += kTileThreads) {
    const int tok = v / kPerTok, c = (v % kPerTok) * Tile::kVec;
    if (m0 + tok >= m) break;  // later v only have later tokens
    const OutT* src = tile + tok * Tile::kStride + c;
    OutT* dst = out + (m0 + tok) * ldo + n0 + c;
    if constexpr (std::is_same_v<OutT, float>) {
      if (add) {  // the last row tile of a height that is no multiple of 128, or an unaligned x
        for (int i = 0; i < Tile::kVec && n0 + c + i < n; ++i) dst[i] = dst[i] + src[i];
        continue;
      }
    }
    if (vec && n0 + c + Tile::kVec <= n) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int i = 0; i < Tile::kVec && n0 + c + i < n; ++i) dst[i] = src[i];
    }
  }
}

// Round 37 (opt-in, VELLUM_CUDA_QKV_ROPE=1; round 38 measured it slower), a grouped Q/K/V launch's
// end after store_staged: the staged f32 tile (the stored values, bias included) as
// rope_kv_rows_kernel would read them back: role 0 (Q) rotated into q16, role 1 (K) rotated and
// role 2 (V) as is into the token's pool slot, with that kernel's arithmetic and cos/sin values.
// One 128-dim head a tile with a rotary half of 64 (dq_rope_supports), interleaved pairs (llama's
// GGUF) or halves (NeoX / Qwen).
template <class T>
__device__ __forceinline__ void put4_16(T* p, float a, float b, float c, float d) {
  *reinterpret_cast<uint2*>(p) = make_uint2(pack2(a, b, T{}), pack2(c, d, T{}));
}
// Round 38: a thread's tasks are one 4-dim group j of tokens t0 + kStep·u, so no division in the
// loop, and the loads (slots, cos/sin) of U tokens go first, then their stores. Interleaved: 32
// tasks a token, dims 4j..4j+3 = pairs 2j, 2j+1 (one float4 of cos/sin); halves: 16, dims i..i+3
// and 64+i.. (two). V: 32 tasks of 4 dims unrotated.
template <int BT, bool kInterleaved, class T, class SlotBase>
__device__ __forceinline__ void store_rope_128(const float* tile, T* q16, int64_t q_cols, const float2* cs, const int64_t* slots,
                                               const SlotBase& slot_base, int64_t kv_off, int role, int64_t n0, int64_t m0, int64_t m) {
  using Tile = StagedTile<BT, float>;
  const int tid = int(threadIdx.x);
  if (role == 2) {  // v: 4 dims a task, 32 tasks a token
    constexpr int kIt = BT / 8, U = kIt < 8 ? kIt : 8;
    const int c = (tid & 31) * 4, t0 = tid >> 5;
    for (int u0 = 0; u0 < kIt; u0 += U) {
      int64_t slot[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t r = m0 + t0 + 8 * (u0 + u);
        slot[u] = r < m ? __ldg(slots + r) : -1;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (slot[u] < 0) continue;
        const float4 x = *reinterpret_cast<const float4*>(tile + (t0 + 8 * (u0 + u)) * Tile::kStride + c);
        put4_16(slot_base(slot[u]) + kv_off + n0 + c, x.x, x.y, x.z, x.w);
      }
    }
    return;
  }
  constexpr int kTasks = kInterleaved ? 32 : 16, kStep = kTileThreads / kTasks, kIt = BT / kStep, U = kIt < 8 ? kIt : 8;
  const int j = tid % kTasks, t0 = tid / kTasks;
  for (int u0 = 0; u0 < kIt; u0 += U) {
    float4 ca[U], cb[U];  // cos/sin: pairs 2j, 2j+1 (ca; interleaved) or i..i+3 (ca, cb; halves)
    int64_t slot[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t r = m0 + t0 + kStep * (u0 + u);
      slot[u] = r >= m ? -1 : role == 1 ? __ldg(slots + r) : 0;
      if (r < m) {
        const float4* p = reinterpret_cast<const float4*>(cs + r * 64 + (kInterleaved ? 2 * j : 4 * j));
        ca[u] = __ldg(p);
        if constexpr (!kInterleaved) cb[u] = __ldg(p + 1);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (slot[u] < 0) continue;
      const int tok = t0 + kStep * (u0 + u);
      const float* h = tile + tok * Tile::kStride;
      T* dst = role == 0 ? q16 + (m0 + tok) * q_cols + n0 : slot_base(slot[u]) + kv_off + n0;
      if constexpr (kInterleaved) {  // rope_kv_rows_kernel's interleaved rotate
        const float4 x = *reinterpret_cast<const float4*>(h + 4 * j);
        const float2 a = make_float2(ca[u].x, ca[u].y), b = make_float2(ca[u].z, ca[u].w);
        put4_16(dst + 4 * j, sub(mul(x.x, a.x), mul(x.y, a.y)), add(mul(x.x, a.y), mul(x.y, a.x)), sub(mul(x.z, b.x), mul(x.w, b.y)),
                add(mul(x.z, b.y), mul(x.w, b.x)));
      } else {
        const int i = 4 * j;
        const float4 xa = *reinterpret_cast<const float4*>(h + i), xb = *reinterpret_cast<const float4*>(h + 64 + i);
        const float x0[4] = {xa.x, xa.y, xa.z, xa.w}, x1[4] = {xb.x, xb.y, xb.z, xb.w};
        const float2 c[4] = {make_float2(ca[u].x, ca[u].y), make_float2(ca[u].z, ca[u].w), make_float2(cb[u].x, cb[u].y),
                             make_float2(cb[u].z, cb[u].w)};
        float ya[4], yb[4];
#pragma unroll
        for (int w = 0; w < 4; ++w) {  // rope_store_kv_kernel's rotate
          ya[w] = sub(mul(x0[w], c[w].x), mul(x1[w], c[w].y));
          yb[w] = add(mul(x0[w], c[w].y), mul(x1[w], c[w].x));
        }
        put4_16(dst + i, ya[0], ya[1], ya[2], ya[3]);
        put4_16(dst + 64 + i, yb[0], yb[1], yb[2], yb[3]);
      }
    }
  }
}

template <int BT, class T>
__device__ __forceinline__ void store_rope_t(const float* tile, const DqRope& e, int role, int64_t n0, int64_t m0, int64_t m) {
  // DqRope lies in the kernel's parameters: its fields read once, here, into the arguments (read
  // through the reference after each store, they were reloaded every time; round 38, call 2).
  T* const pool = static_cast<T*>(e.kv.pool);
  const int64_t block_elems = e.kv.block_elems, kv_row = int64_t(e.kv.kv_heads) * e.kv.head_dim;
  const uint32_t block_size = uint32_t(e.kv.block_size);
  const auto base = [=](int64_t slot) {
    // 32 bits: a pool of 128-dim heads holds under 2^32 token slots (>= 512 bytes a slot)
    const uint32_t s = uint32_t(slot), b = s / block_size;
    return pool + int64_t(b) * block_elems + int64_t(s - b * block_size) * kv_row;
  };
  const int64_t kv_off = role == 1 ? e.kv.k_off : e.kv.v_off;
  if (e.interleaved != 0) {
    store_rope_128<BT, true>(tile, static_cast<T*>(e.q16), e.q_cols, e.cs, e.slots, base, kv_off, role, n0, m0, m);
  } else {
    store_rope_128<BT, false>(tile, static_cast<T*>(e.q16), e.q_cols, e.cs, e.slots, base, kv_off, role, n0, m0, m);
  }
}
template <int BT>
__device__ __forceinline__ void store_rope(const float* tile, const DqRope& e, int role, int64_t n0, int64_t m0, int64_t m) {
  if (e.kv.type == TensorType::F16) {
    store_rope_t<BT, __half>(tile, e, role, n0, m0, m);
  } else {
    store_rope_t<BT, __nv_bfloat16>(tile, e, role, n0, m0, m);
  }
}

// Round 36, the fused SwiGLU's end: the tile's rows 0..63 are gate rows n0.. and rows 64..127 the
// same up rows (dq_tma_swiglu_kernel). Both are rounded to bf16 in the staged tile, as the unfused
// launches store them, then each token's 64 values of silu(gate)·up go out as 16-byte vectors of
// bf16 (swiglu8: swiglu16_kernel's arithmetic, so the same bits as the three launches). Neither
// gate nor up is written.
template <int BT, class Sync>
__device__ __forceinline__ void store_swiglu(const float (&acc)[BT / 8][4], uint8_t* smem, int64_t n0, int64_t m0, int64_t n, int64_t m,
                                             __nv_bfloat16* __restrict__ out, int64_t ldo, Sync sync) {
  using Tile = StagedTile<BT, __nv_bfloat16>;
  constexpr int kHalf = kTileRows / 2, kPerTok = kHalf / 8;
  __nv_bfloat16* tile = reinterpret_cast<__nv_bfloat16*>(smem);
  const int tid = int(threadIdx.x);
  const bool vec = ((reinterpret_cast<uintptr_t>(out) | uintptr_t(ldo * 2)) & 15) == 0;
  sync();  // both warpgroups' last wgmma have read the ring
  stage_tile<BT>(acc, tile, 0, kTileRows, static_cast<const float*>(nullptr));
  sync();
  for (int v = tid; v < BT * kPerTok; v += kTileThreads) {
    const int tok = v / kPerTok, c = (v % kPerTok) * 8;
    if (m0 + tok >= m) break;  // later v only have later tokens
    const __nv_bfloat16* src = tile + tok * Tile::kStride + c;
    float y[8];
    swiglu8<__nv_bfloat16>(*reinterpret_cast<const uint4*>(src), *reinterpret_cast<const uint4*>(src + kHalf), y);
    __nv_bfloat16* dst = out + (m0 + tok) * ldo + n0 + c;
    if (vec && n0 + c + 8 <= n) {
      *reinterpret_cast<uint4*>(dst) = make_uint4(pack2(y[0], y[1], __nv_bfloat16{}), pack2(y[2], y[3], __nv_bfloat16{}),
                                                  pack2(y[4], y[5], __nv_bfloat16{}), pack2(y[6], y[7], __nv_bfloat16{}));
    } else {
      for (int i = 0; i < 8 && n0 + c + i < n; ++i) dst[i] = __float2bfloat16_rn(y[i]);
    }
  }
}

// Round 33: one launch for several weights of one K times the same x (a layer's Q, K and V). Each
// segment's row tiles follow the previous segment's along blockIdx.y, with its own tensor map, rows,
// output and bias; the K split's partial tiles are indexed by the launch's tiles. Where a layer's
// weights made three launches of 32-128 blocks (K and V with a 4-way K split), one launch of 256-token
// tiles fills the machine once. Types: one (T0 = T1), or Q4_K and Q6_K (Q4_K_M's Q/K and Q6_K V).
struct RsSegs {
  CUtensorMap wmap[kMaxDqSegs];
  void* out[kMaxDqSegs];
  const float* bias[kMaxDqSegs];
  int64_t n[kMaxDqSegs], ldo[kMaxDqSegs];
  int add[kMaxDqSegs];       // 1: out += the product (DqSeg::add)
  int tile_end[kMaxDqSegs];  // row tiles up to the end of segment s
  int second[kMaxDqSegs];    // 1: the segment's weights are T1's
  int count;
  DqRope rope;  // round 37: segments 0, 1, 2 are Q, K, V, roped and stored in the tile's end (rope_on)
  int rope_on;
};

// One block's tile of segment weights of type T: the copying warpgroup streams the stages, the two
// multiplying warpgroups build their A fragments and multiply, then the tile's end. One stage's
// wgmma in flight while the next stage's fragments are built into the other register set (two
// stages in flight, three sets, measured the same: round 28, call 2). out: f32 or bf16 (OutT).
// kPair (round 36, dq_tma_swiglu_kernel): wmap is gate's and umap up's, 64-row boxes at rows n0..:
// warpgroup 0 multiplies the gate rows, warpgroup 1 the same up rows, and the end is store_swiglu.
template <class T, class L, int BT, class OutT, bool kPair = false>
__device__ __forceinline__ void rs_tile(const CUtensorMap* wmap, const CUtensorMap* umap, const CUtensorMap* xmap, uint8_t* smem, uint64_t* full, uint64_t* empty,
                                        uint64_t* fin, int* last_block, int sb, int ns, int64_t n, int64_t n0, int64_t m, float* __restrict__ ws,
                                        int32_t* __restrict__ counters, OutT* __restrict__ out, int64_t ldo, const float* __restrict__ bias,
                                        bool add, bool bulk_add, int dbg, const DqRope* rope = nullptr, int role = 0) {
  constexpr int S = L::kStages;
  constexpr uint32_t kTx = L::kXBytes + T::kPieces * kPieceBytes;  // this type's bytes a stage
  const auto parity = [](int it) { return uint32_t(it / S) & 1; };
  if (threadIdx.x >= kMultipliers) {  // the copying warpgroup: lane 0 of its first warp keeps the ring full
    setmaxnreg_dec<40>();
    if (threadIdx.x == kMultipliers) {
      for (int it = 0; it < ns; ++it) {
        const int sl = it % S, s = sb + it;
        if (it >= S) mbar_wait(&empty[sl], parity(it - S));
        uint8_t* st = smem + sl * L::kStageBytes;
        // DIAGNOSTIC (VELLUM_CUDA_DQ_TMA_DBG, results wrong): 4 no weight copies, 8 no x copies.
        mbar_arrive_expect_tx(&full[sl], (dbg & 4 ? 0u : kTx - L::kXBytes) + (dbg & 8 ? 0u : uint32_t(L::kXBytes)));
        if (!(dbg & 8)) tma_load_2d(st, xmap, s * kK, int(blockIdx.x) * BT, &full[sl]);
        if (!(dbg & 4)) {
#pragma unroll
          for (int i = 0; i < T::kPieces; ++i) {
            tma_load_2d(st + L::kXBytes + i * kPieceBytes, wmap, int(T::piece_off(s, i)), int(n0), &full[sl]);
            if constexpr (kPair) tma_load_2d(st + L::kXBytes + i * kPieceBytes + kPieceBytes / 2, umap, int(T::piece_off(s, i)), int(n0), &full[sl]);
          }
        }
      }
    }
    return;
  }
  setmaxnreg_inc<232>();
  const int tid = int(threadIdx.x), wg = tid / 128, lane = tid % 32, t = lane % 4;
  const int row = wg * 64 + ((tid % 128) / 32) * 16 + lane / 4;  // and row + 8
  float acc[BT / 8][4];
#pragma unroll
  for (int j = 0; j < BT / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
  // Stage it uses register set C = it % 2: it is built into set C while stage it - 1 runs; after it
  // is issued, the wait retires stage it - 1, whose set (1 - C) and ring slot are then free.
  uint32_t a[2][4][4] = {};
  // q: (sb + it) % 4, known here (sb is a multiple of 4; round 33).
  const auto step = [&](int it, auto c, auto q) {
    constexpr int C = decltype(c)::value, R = 1 - C, Q = decltype(q)::value;
    const int sl = it % S;
    mbar_wait(&full[sl], parity(it));
    const uint8_t* st = smem + sl * L::kStageBytes;
    const uint8_t* raw = st + L::kXBytes;
    if (dbg & 2) {  // DIAGNOSTIC: raw bytes as A, no dequantization
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        a[C][kk][0] = quad_bytes(raw + row * 16 + (kk / 2) * kPieceBytes, t);
        a[C][kk][1] = quad_bytes(raw + (row + 8) * 16 + (kk / 2) * kPieceBytes, t);
        a[C][kk][2] = a[C][kk][0] ^ kk, a[C][kk][3] = a[C][kk][1] ^ kk;
      }
    } else {
      uint32_t lo[4], hi[4];
      T::template frag<Q>(raw + row * 16, kPieceBytes, sb + it, t, lo, hi);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) a[C][kk][0] = lo[kk], a[C][kk][2] = hi[kk];
      T::template frag<Q>(raw + (row + 8) * 16, kPieceBytes, sb + it, t, lo, hi);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) a[C][kk][1] = lo[kk], a[C][kk][3] = hi[kk];
    }
    const uint64_t db = smem_desc_sw128(st);
    wgmma_fence_operands(a[C]);  // all of the set defined before the fence
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) wgmma_m64k16_rs<BT>(acc, a[C][kk], db + 2 * kk);  // +32 bytes a k16 step
    wgmma_commit();
    wgmma_wait<1>();               // stage it - 1 is done: its slot and register set are free
    wgmma_fence_operands(a[R]);    // that set live until here, so its registers are not reused while it is read
    if (it >= 1 && lane == 0) mbar_arrive(&empty[(it - 1) % S]);
  };
  using C0 = std::integral_constant<int, 0>;
  using C1 = std::integral_constant<int, 1>;
  using Q0 = std::integral_constant<int, 0>;
  using Q1 = std::integral_constant<int, 1>;
  using Q2 = std::integral_constant<int, 2>;
  using Q3 = std::integral_constant<int, 3>;
  // Whole rotations of the register sets in the loop (a conditional step inside it would give ptxas
  // a path on which a set is redefined while its own wgmma may run, and it serializes every wgmma of
  // the kernel: C7513). Four stages a turn, a super-block of Q4_K / Q6_K: each stage's position in it
  // is a constant (ns is a multiple of 4).
  for (int it = 0; it < ns; it += 4) {
    step(it, C0{}, Q0{});
    step(it + 1, C1{}, Q1{});
    step(it + 2, C0{}, Q2{});
    step(it + 3, C1{}, Q3{});
  }
  wgmma_wait<0>();
  wgmma_fence_operands(acc);
  if (dbg & 16) {  // DIAGNOSTIC: no output stores (results wrong); one value kept so the sums are not dropped
    if (acc[0][0] == 1.2345f) out[0] = OutT(acc[BT / 8 - 1][3]);
    return;
  }
  const auto sync = [] { asm volatile("bar.sync 1, 256;\n" ::: "memory"); };
  const int64_t m0 = int64_t(blockIdx.x) * BT;
  finish_tile<BT, true>(acc, ws, counters, last_block, sync, [&](const float(&sum)[BT / 8][4]) {
    if (!kPair && (dbg & 32)) {  // set_dq_tma_direct_store: each value from the accumulators (before round 32)
      store_row_token_tiles(reinterpret_cast<const float(&)[1][BT / 8][4]>(sum), n0 + wg * 64 + ((tid % 128) / 32) * 16, m0, lane / 4,
                            t, n, m, out, ldo, bias);
    } else {
      static_assert(StagedTile<BT, OutT>::kBytes <= L::kStages * L::kStageBytes, "the tile fits in the copy ring");
      static_assert(kTileRows * BT * 4 <= L::kStages * L::kStageBytes, "a two-way split's part fits in the copy ring");
      if constexpr (kPair) {
        store_swiglu<BT>(sum, smem, n0, m0, n, m, out, ldo, sync);
      } else {
        store_staged<BT>(sum, smem, n0, m0, n, m, out, ldo, bias, add, bulk_add, sync);
        if constexpr (std::is_same_v<OutT, float>) {
          if (rope != nullptr) store_rope<BT>(reinterpret_cast<const float*>(smem), *rope, role, n0, m0, m);  // the tile is still there
        }
      }
    }
  }, smem, fin);
}

// A register-A block's barriers (static shared memory) and its start after the dependency wait: the
// ring's 1 KiB-aligned base (swizzle atoms), its K range (the K split at whole super-blocks, 4
// stages; nk is a multiple of 4: rs_tile's loop turns by 4) and the barriers initialized.
template <int S>
struct RsBarriers {
  uint64_t full[S], empty[S];
  uint64_t fin;  // a two-way K split's other part, copied in at the end (finish_tile)
  int last_block;
};
template <int S>
__device__ __forceinline__ uint8_t* rs_begin(RsBarriers<S>& b, uint8_t* smem_raw, int nk, int& sb, int& ns) {
  const int splits = int(gridDim.z), split = int(blockIdx.z), nk4 = nk / 4;
  sb = 4 * int(int64_t(nk4) * split / splits), ns = 4 * int(int64_t(nk4) * (split + 1) / splits) - sb;
  if (threadIdx.x == 0) {
    for (int i = 0; i < S; ++i) {
      mbar_init(&b.full[i], 1);                   // the copying thread (+ the stage's bytes)
      mbar_init(&b.empty[i], kMultipliers / 32);  // each multiplying warp, once its wgmma read the stage
    }
    mbar_init(&b.fin, 1);
    mbar_init_fence();
  }
  __syncthreads();
  return smem_raw + ((1024 - (__cvta_generic_to_shared(smem_raw) & 1023)) & 1023);
}

template <class T0, class T1, int BT, class OutT>
__global__ void __launch_bounds__(kRsThreads, 1)
    dq_tma_rs_kernel(const __grid_constant__ RsSegs segs, const __grid_constant__ CUtensorMap xmap, int nk, int64_t m,
                     float* __restrict__ ws, int32_t* __restrict__ counters, bool bulk_add, int dbg) {
  using L = RsLayout<T0, T1, BT>;
  constexpr int S = L::kStages;
  extern __shared__ uint8_t smem_raw[];
  __shared__ RsBarriers<S> bars;
  pdl_wait();
  int sb, ns;
  uint8_t* smem = rs_begin<S>(bars, smem_raw, nk, sb, ns);
  // The block's segment, its fields picked with constant indices (no copy of the parameters).
  const int y = int(blockIdx.y);
  const int s = segs.count > 1 && y >= segs.tile_end[0] ? (segs.count > 2 && y >= segs.tile_end[1] ? 2 : 1) : 0;
  const auto pick = [s](const auto& f) { return s == 0 ? f[0] : s == 1 ? f[1] : f[2]; };
  const CUtensorMap* wmap = s == 0 ? &segs.wmap[0] : s == 1 ? &segs.wmap[1] : &segs.wmap[2];
  const int64_t row0 = int64_t(y - (s == 0 ? 0 : s == 1 ? segs.tile_end[0] : segs.tile_end[1])) * kTileRows;
  OutT* out = static_cast<OutT*>(pick(segs.out));
  const int64_t n = pick(segs.n), ldo = pick(segs.ldo);
  const float* bias = pick(segs.bias);
  const bool add = pick(segs.add) != 0;
  const DqRope* rope = segs.rope_on != 0 ? &segs.rope : nullptr;
  if constexpr (std::is_same_v<T0, T1>) {
    rs_tile<T0, L, BT, OutT>(wmap, nullptr, &xmap, smem, bars.full, bars.empty, &bars.fin, &bars.last_block, sb, ns, n, row0, m, ws, counters, out, ldo, bias, add, bulk_add, dbg, rope, s);
  } else if (pick(segs.second) != 0) {
    rs_tile<T1, L, BT, OutT>(wmap, nullptr, &xmap, smem, bars.full, bars.empty, &bars.fin, &bars.last_block, sb, ns, n, row0, m, ws, counters, out, ldo, bias, add, bulk_add, dbg, rope, s);
  } else {
    rs_tile<T0, L, BT, OutT>(wmap, nullptr, &xmap, smem, bars.full, bars.empty, &bars.fin, &bars.last_block, sb, ns, n, row0, m, ws, counters, out, ldo, bias, add, bulk_add, dbg, rope, s);
  }
}

// Round 36: a SwiGLU's gate and up in one launch, block y holding gate rows and the same up rows
// 64y.. (rs_tile's kPair) and writing silu(gate)·up in bf16 (store_swiglu). Where the unfused
// launches wrote gate and up (bf16) and a third kernel read them back, the tile's end makes the
// SwiGLU's bf16 rows from shared memory: 29 MB written and read less at 512 rows of llama3-8b.
template <class T, int BT>
__global__ void __launch_bounds__(kRsThreads, 1)
    dq_tma_swiglu_kernel(const __grid_constant__ CUtensorMap gmap, const __grid_constant__ CUtensorMap umap,
                         const __grid_constant__ CUtensorMap xmap, int nk, int64_t n, int64_t m, float* __restrict__ ws,
                         int32_t* __restrict__ counters, __nv_bfloat16* __restrict__ out, int64_t ldo, int dbg) {
  using L = RsLayout<T, T, BT>;
  constexpr int S = L::kStages;
  extern __shared__ uint8_t smem_raw[];
  __shared__ RsBarriers<S> bars;
  pdl_wait();
  int sb, ns;
  uint8_t* smem = rs_begin<S>(bars, smem_raw, nk, sb, ns);
  const int64_t row0 = int64_t(blockIdx.y) * (kTileRows / 2);
  rs_tile<T, L, BT, __nv_bfloat16, true>(&gmap, &umap, &xmap, smem, bars.full, bars.empty, &bars.fin, &bars.last_block, sb, ns, n, row0, m, ws, counters, out, ldo,
                                         nullptr, false, false, dbg);
}

// DIAGNOSTIC (VELLUM_CUDA_DQ_TMA_DBG, results wrong): 2 no dequantization; the register-A kernel
// also 4 no weight copies, 8 no x copies, 16 no output stores (round 32); 32 (not a diagnostic:
// set_dq_tma_direct_store) each value stored from the accumulators.
bool g_direct_store = [] {
  const char* e = std::getenv("VELLUM_CUDA_DQ_TMA_DIRECT_STORE");
  return e != nullptr && std::atoi(e) != 0;
}();
bool g_bulk_add = [] {
  const char* e = std::getenv("VELLUM_CUDA_DQ_BULK_ADD");
  return e == nullptr || std::atoi(e) != 0;
}();
int dbg_bits() {
  static const int bits = [] {
    const char* e = std::getenv("VELLUM_CUDA_DQ_TMA_DBG");
    return e != nullptr ? std::atoi(e) : 0;
  }();
  return bits;
}

// x (m rows of k bf16) as BT-token x 64-element boxes in wgmma's 128-byte swizzle: every kernel's
// x tile.
cudaError_t encode_x_map(CUtensorMap& map, const void* x, int64_t k, int64_t m, int bt) {
  return encode_tensor_map_2d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, x, uint64_t(k), uint64_t(m), uint64_t(k) * 2, kK, uint32_t(bt),
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

// The device layout's bytes a row (dq_weights.cuh) of the types these kernels take.
size_t weight_row_bytes(TensorType type, int64_t k) {
  return type == TensorType::Q8_0 ? WQ8_0::row_bytes(k) : type == TensorType::Q4_K ? WQ4_K::row_bytes(k) : WQ6_K::row_bytes(k);
}

// Round 26's kernel (f32 out, one weight).
template <class T, int BT>
cudaError_t launch_kind3(const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                         int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  constexpr int kSmem = TmaLayout<T, BT>::kSmem;
  static bool raised = false;  // above the default 48 KiB, once per kernel
  if (!raised) {
    const cudaError_t rc = cudaFuncSetAttribute(dq_tma_kernel<T, BT>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  const size_t row_bytes = T::row_bytes(k);
  CUtensorMap wmap, xmap;
  cudaError_t rc = encode_tensor_map_2d(wmap, CU_TENSOR_MAP_DATA_TYPE_UINT8, w, row_bytes, uint64_t(n), row_bytes, 16, kTileRows,
                                        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  if (rc == cudaSuccess) {
    rc = encode_x_map(xmap, x, k, m, BT);
  }
  if (rc != cudaSuccess) return rc;
  const dim3 grid(plan.tok_tiles, plan.row_tiles, plan.splits);
  launch_kernel(dq_tma_kernel<T, BT>, grid, kThreads<BT>, kSmem, stream, wmap, xmap, n, int(k / kK), m, ws, counters, out, ldo, bias, dbg_bits());
  return cudaGetLastError();
}

// What the last refused launch lacked (dq_tma_last_problem), for the caller's error message.
thread_local const char* g_problem = "";
cudaError_t refuse(const char* why) {
  g_problem = why;
  return cudaErrorInvalidValue;
}

// The register-A kernel over 1..kMaxDqSegs segments: T1's segments are those of type `second`.
template <class T0, class T1, int BT>
cudaError_t launch_rs(const DqSeg* segs, int count, TensorType second, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                      float* ws, int32_t* counters, bool out_bf16, cudaStream_t stream, const DqRope* rope) {
  constexpr int kSmem = RsLayout<T0, T1, BT>::kSmem;
  static bool raised = false;  // above the default 48 KiB, once per kernel
  if (!raised) {
    cudaError_t rc = cudaFuncSetAttribute(dq_tma_rs_kernel<T0, T1, BT, float>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (rc == cudaSuccess) {
      rc = cudaFuncSetAttribute(dq_tma_rs_kernel<T0, T1, BT, __nv_bfloat16>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    }
    if (rc != cudaSuccess) return refuse("the kernel's shared memory size");
    raised = true;
  }
  RsSegs g{};
  g.count = count;
  if (rope != nullptr) {
    if (out_bf16 || g_direct_store) return refuse("RoPE in the end with a bf16 output or the direct store");
    g.rope = *rope;
    g.rope_on = 1;
  }
  int tiles = 0;
  for (int i = 0; i < count; ++i) {
    const DqSeg& d = segs[i];
    g.second[i] = std::is_same_v<T0, T1> ? 0 : int(d.type == second);
    const size_t row_bytes = g.second[i] ? T1::row_bytes(k) : T0::row_bytes(k);
    const cudaError_t rc = encode_tensor_map_2d(g.wmap[i], CU_TENSOR_MAP_DATA_TYPE_UINT8, d.w, row_bytes, uint64_t(d.n), row_bytes, 16,
                                                kTileRows, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    if (rc != cudaSuccess) return refuse("a weight's tensor map");
    g.out[i] = d.out;
    g.bias[i] = d.bias;
    g.add[i] = d.add ? 1 : 0;
    if (d.add && (out_bf16 || g_direct_store)) return refuse("out += the product with a bf16 output or the direct store");
    g.n[i] = d.n;
    g.ldo[i] = d.ldo;
    tiles += int((d.n + kTileRows - 1) / kTileRows);
    g.tile_end[i] = tiles;
  }
  if (unsigned(tiles) != plan.row_tiles) return refuse("the plan's row tiles are not the segments'");
  CUtensorMap xmap;
  const cudaError_t rc = encode_x_map(xmap, x, k, m, BT);
  if (rc != cudaSuccess) return refuse("x's tensor map");
  const dim3 grid(plan.tok_tiles, plan.row_tiles, plan.splits);
  const int nk = int(k / kK), dbg = dbg_bits() | (g_direct_store ? 32 : 0);
  if (out_bf16) {
    launch_kernel(dq_tma_rs_kernel<T0, T1, BT, __nv_bfloat16>, grid, kRsThreads, kSmem, stream, g, xmap, nk, m, ws, counters, g_bulk_add, dbg);
  } else {
    launch_kernel(dq_tma_rs_kernel<T0, T1, BT, float>, grid, kRsThreads, kSmem, stream, g, xmap, nk, m, ws, counters, g_bulk_add, dbg);
  }
  return cudaGetLastError();
}

// Round 36's fused SwiGLU (dq_tma_swiglu_kernel): gate's and up's tensor maps with 64-row boxes.
template <class T, int BT>
cudaError_t launch_swiglu(const void* gate, const void* up, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                          float* ws, int32_t* counters, void* out, int64_t ldo, cudaStream_t stream) {
  constexpr int kSmem = RsLayout<T, T, BT>::kSmem;
  static bool raised = false;  // above the default 48 KiB, once per kernel
  if (!raised) {
    if (cudaFuncSetAttribute(dq_tma_swiglu_kernel<T, BT>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) != cudaSuccess) {
      return refuse("the kernel's shared memory size");
    }
    raised = true;
  }
  const size_t row_bytes = T::row_bytes(k);
  CUtensorMap gmap, umap, xmap;
  for (int i = 0; i < 2; ++i) {
    if (encode_tensor_map_2d(i == 0 ? gmap : umap, CU_TENSOR_MAP_DATA_TYPE_UINT8, i == 0 ? gate : up, row_bytes, uint64_t(n), row_bytes, 16,
                             kTileRows / 2, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B) != cudaSuccess) {
      return refuse("a weight's tensor map");
    }
  }
  if (encode_x_map(xmap, x, k, m, BT) != cudaSuccess) {
    return refuse("x's tensor map");
  }
  const dim3 grid(plan.tok_tiles, plan.row_tiles, plan.splits);
  launch_kernel(dq_tma_swiglu_kernel<T, BT>, grid, kRsThreads, kSmem, stream, gmap, umap, xmap, int(k / kK), n, m, ws, counters,
                                                                   static_cast<__nv_bfloat16*>(out), ldo, dbg_bits());
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_swiglu_bt(const void* gate, const void* up, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                             float* ws, int32_t* counters, void* out, int64_t ldo, cudaStream_t stream) {
  if (plan.nt == 8) return launch_swiglu<T, 64>(gate, up, n, k, x, m, plan, ws, counters, out, ldo, stream);
  if (plan.nt == 16) return launch_swiglu<T, 128>(gate, up, n, k, x, m, plan, ws, counters, out, ldo, stream);
  if (plan.nt == 32) return launch_swiglu<T, 256>(gate, up, n, k, x, m, plan, ws, counters, out, ldo, stream);
  return refuse("the plan's token tile");
}

template <class T0, class T1>
cudaError_t launch_rs_bt(const DqSeg* segs, int count, TensorType second, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                         float* ws, int32_t* counters, bool out_bf16, cudaStream_t stream, const DqRope* rope = nullptr) {
  if (plan.nt == 8) return launch_rs<T0, T1, 64>(segs, count, second, k, x, m, plan, ws, counters, out_bf16, stream, rope);
  if (plan.nt == 16) return launch_rs<T0, T1, 128>(segs, count, second, k, x, m, plan, ws, counters, out_bf16, stream, rope);
  if (plan.nt == 32) return launch_rs<T0, T1, 256>(segs, count, second, k, x, m, plan, ws, counters, out_bf16, stream, rope);
  return refuse("the plan's token tile");
}

template <class T>
cudaError_t launch_kind3_bt(const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                            int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  if (plan.nt == 16) return launch_kind3<T, 128>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
  if (plan.nt == 24) return launch_kind3<T, 192>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
  if (plan.nt == 32) return launch_kind3<T, 256>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
  return cudaErrorInvalidValue;
}

}  // namespace

void set_dq_tma_direct_store(bool on) { g_direct_store = on; }
void set_dq_tma_bulk_add(bool on) { g_bulk_add = on; }
bool dq_tma_bulk_add() { return g_bulk_add; }
bool dq_tma_direct_store() { return g_direct_store; }

bool dq_tma_supports(TensorType type, int64_t k) {
  return (type == TensorType::Q8_0 || type == TensorType::Q4_K || type == TensorType::Q6_K) && k > 0 && k % 256 == 0 && k / kK <= (int64_t(1) << 30) &&
         k <= (int64_t(1) << 31) / 2 && tensor_maps_available();
}

bool dq_tma_group_supports(const DqSeg* segs, int count, int64_t k) {
  if (segs == nullptr || count < 1 || count > kMaxDqSegs) return false;
  bool same = true, k_quants = true;  // one type, or Q4_K with Q6_K (Q4_K_M)
  for (int i = 0; i < count; ++i) {
    if (!dq_tma_supports(segs[i].type, k) || segs[i].n <= 0 || segs[i].w == nullptr || segs[i].out == nullptr) return false;
    same = same && segs[i].type == segs[0].type;
    k_quants = k_quants && (segs[i].type == TensorType::Q4_K || segs[i].type == TensorType::Q6_K);
  }
  return same || k_quants;
}

DqMmaPlan dq_tma_plan(int64_t n, int64_t k, int64_t m, int sms, int bt, int splits, int kind, TensorType type) {
  const int64_t slots = std::max(sms, 1), nk = k / kK, row_tiles = (n + kTileRows - 1) / kTileRows;
  // Share of the multiprocessors' time that does useful work: the last wave's empty slots and the
  // padded tokens of the last token tile are lost.
  const auto useful = [&](int64_t toks, int64_t& split) {
    const int64_t tok_tiles = (m + toks - 1) / toks, tiles = tok_tiles * row_tiles;
    split = splits > 0 ? splits : std::clamp<int64_t>(slots / tiles, 1, std::max<int64_t>(1, nk / 8));
    const int64_t blocks = tiles * split, waves = (blocks + slots - 1) / slots;
    return double(blocks) / double(waves * slots) * double(m) / double(tok_tiles * toks);
  };
  if (kind == 4 && bt == 192) bt = 256;  // the register-A kernel has 64-, 128- and 256-token tiles
  int64_t toks = bt == 128 || bt == 192 || bt == 256 || (kind == 4 && bt == 64) ? bt : 256, split = 1;
  if (kind == 4 && bt != 64 && bt != 128 && bt != 256) {
    // 256-token tiles run ~1.4x more work a stage than 128 (round 28, call 1), but on small weights
    // at up to 512 rows they leave so few tiles that the K split, whose last block adds every
    // split's partial tile, costs more: 128 there (Q4_K 1024 x 4096 at 512 rows: 21 µs against 28).
    // Q8_0 above 256 rows: 256 (4 096 x 4 096 at 512 rows, 128 against 256 with a 2-way K split:
    // 51 against 42 µs; Q4_K 36 against 40; round 33, call 4).
    const int64_t small_max = type == TensorType::Q8_0 ? 256 : 512;
    toks = m <= 64 ? 64 : m <= 128 || (m <= small_max && n * k <= int64_t(4096) * 4096) ? 128 : 256;
  } else if (kind != 4 && bt != 128 && bt != 192 && bt != 256) {  // 256 unless 192 wastes less (128 only for few rows)
    int64_t s192 = 1, s256 = 1;
    const double u192 = useful(192, s192), u256 = useful(256, s256);
    toks = m <= 128 ? 128 : u192 > u256 ? 192 : 256;
  }
  useful(toks, split);
  DqMmaPlan p;
  p.nt = int(toks / 8);
  p.tok_tiles = unsigned((m + toks - 1) / toks);
  p.row_tiles = unsigned(row_tiles);
  // The register-A kernel splits K at whole super-blocks (4 stages).
  p.splits = unsigned(std::clamp<int64_t>(split, 1, std::max<int64_t>(1, kind == 4 ? nk / 4 : nk)));
  p.rs = kind == 4 ? 4 : 3;
  if (p.splits > 1) {
    p.ws_floats = size_t(p.tok_tiles) * p.row_tiles * p.splits * kTileRows * toks;
    p.counters = size_t(p.tok_tiles) * p.row_tiles;
  }
  return p;
}

DqMmaPlan dq_tma_group_plan(const DqSeg* segs, int count, int64_t k, int64_t m, int sms, int bt, int splits) {
  int64_t tiles = 0;
  for (int i = 0; i < count; ++i) tiles += (segs[i].n + kTileRows - 1) / kTileRows;
  // The plan of one weight of the segments' row tiles: its token tile, K split and scratch.
  bool q8 = true;
  for (int i = 0; i < count; ++i) q8 = q8 && segs[i].type == TensorType::Q8_0;
  return dq_tma_plan(tiles * kTileRows, k, m, sms, bt, splits, 4, q8 ? TensorType::Q8_0 : segs[0].type);
}

const char* dq_tma_last_problem() { return g_problem; }

DqWaveSplit dq_tma_wave_split(const DqSeg* segs, int count, int64_t k, int64_t m, int sms, bool out_bf16) {
  DqWaveSplit w;  // host arithmetic only (unit-tested without a GPU); the launches check the rest
  if (segs == nullptr || count < 1 || count > kMaxDqSegs || k <= 0 || k % 256 != 0 || m <= 0 || sms <= 0) return w;
  for (int i = 0; i < count; ++i) {
    const TensorType t = segs[i].type;
    if (segs[i].n <= 0 || (t != TensorType::Q8_0 && t != TensorType::Q4_K && t != TensorType::Q6_K)) return w;
  }
  const DqMmaPlan plan = dq_tma_group_plan(segs, count, k, m, sms);
  const int64_t tok = plan.tok_tiles, rows = plan.row_tiles, waves = tok * rows / sms;
  if (plan.nt != 32 || plan.splits != 1 || waves < 1) return w;
  const int64_t main_rt = waves * sms / tok, tail_rt = rows - main_rt;
  const int64_t tail_blocks = tail_rt * ((m + 127) / 128);  // 128-token tiles, one wave at most
  if (tail_rt <= 0 || tail_blocks > sms) return w;
  // Whole segments into the main launch while they fit, the one that straddles its end cut at a tile.
  int64_t cum = 0;
  for (int i = 0; i < count; ++i) {
    const DqSeg& d = segs[i];
    const int64_t rt = (d.n + kTileRows - 1) / kTileRows;
    const int64_t take = std::clamp<int64_t>(main_rt - cum, 0, rt) * kTileRows;  // rows of d in the main launch
    if (take > 0) {
      if (w.main_count == kMaxDqSegs) return DqWaveSplit{};
      DqSeg a = d;
      a.n = std::min(take, d.n);
      w.main[w.main_count++] = a;
    }
    if (take < d.n) {
      if (w.tail_count == kMaxDqSegs) return DqWaveSplit{};
      const size_t rb = weight_row_bytes(d.type, k);
      DqSeg b = d;
      b.w = static_cast<const uint8_t*>(d.w) + size_t(take) * rb;
      b.n = d.n - take;
      b.out = static_cast<uint8_t*>(d.out) + size_t(take) * (out_bf16 ? 2 : 4);
      b.bias = d.bias != nullptr ? d.bias + take : nullptr;
      w.tail[w.tail_count++] = b;
    }
    cum += rt;
  }
  w.main_plan = dq_tma_group_plan(w.main, w.main_count, k, m, sms, 256, 1);
  w.tail_plan = dq_tma_group_plan(w.tail, w.tail_count, k, m, sms, 128, 1);
  if (int64_t(w.main_plan.tok_tiles) * w.main_plan.row_tiles > int64_t(waves) * sms) return DqWaveSplit{};
  return w;
}

namespace {
cudaError_t launch_group(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws, int32_t* counters,
                         bool out_bf16, cudaStream_t stream, const DqRope* rope);
}  // namespace

cudaError_t launch_dq_tma_group(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                                int32_t* counters, bool out_bf16, cudaStream_t stream) {
  return launch_group(segs, count, k, x, m, plan, ws, counters, out_bf16, stream, nullptr);
}

bool dq_rope_supports(const DqSeg* segs, int count, const DqRope& r) {
  if (segs == nullptr || count != 3 || (r.kv.type != TensorType::F16 && r.kv.type != TensorType::BF16)) return false;
  // One head a tile (kTileRows), rotary half 64: store_rope_128's layout. Other heads and partial
  // rotary take rope_kv_rows after the plain launch.
  if (r.head_dim != kTileRows || r.kv.head_dim != kTileRows || r.half != 64) return false;
  if (r.kv.block_elems % 4 != 0 || r.kv.k_off % 4 != 0 || r.kv.v_off % 4 != 0) return false;
  const int64_t kv_dim = int64_t(r.kv.kv_heads) * kTileRows;
  return segs[0].n == r.q_cols && r.q_cols % kTileRows == 0 && segs[1].n == kv_dim && segs[2].n == kv_dim && !segs[0].add && !segs[1].add &&
         !segs[2].add;
}

cudaError_t launch_dq_tma_group_rope(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                                     int32_t* counters, const DqRope& rope, cudaStream_t stream) {
  if (!dq_rope_supports(segs, count, rope)) return refuse("RoPE in the end: the segments, the heads or the pool");
  if (rope.q16 == nullptr || rope.slots == nullptr || rope.kv.pool == nullptr || reinterpret_cast<uintptr_t>(rope.cs) % 16 != 0) {
    return refuse("RoPE in the end: q16, the slots, the pool or the cos/sin table (16-byte aligned, read as float4)");
  }
  return launch_group(segs, count, k, x, m, plan, ws, counters, false, stream, &rope);
}

namespace {
cudaError_t launch_group(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws, int32_t* counters,
                         bool out_bf16, cudaStream_t stream, const DqRope* rope) {
  g_problem = "";
  if (!dq_tma_group_supports(segs, count, k)) return refuse("the weights' types, k or count");
  if (plan.rs != 4 || plan.row_tiles > 65535u || plan.splits > 65535u) return refuse("the plan");
  if (m <= 0 || m > (int64_t(1) << 31) - 256) return refuse("the token rows");
  if (plan.splits > 1 && (ws == nullptr || counters == nullptr)) return refuse("the K split's scratch");
  if ((reinterpret_cast<uintptr_t>(x) & 15) != 0) return refuse("x not 16-byte aligned");
  for (int i = 0; i < count; ++i) {
    if (segs[i].n > (int64_t(1) << 31) - 128) return refuse("a weight's rows");
  }
  TensorType t0 = segs[0].type;
  bool mixed = false;
  for (int i = 1; i < count; ++i) mixed = mixed || segs[i].type != t0;
  if (mixed) return launch_rs_bt<WQ4_K, WQ6_K>(segs, count, TensorType::Q6_K, k, x, m, plan, ws, counters, out_bf16, stream, rope);
  switch (t0) {
    case TensorType::Q8_0: return launch_rs_bt<WQ8_0, WQ8_0>(segs, count, t0, k, x, m, plan, ws, counters, out_bf16, stream, rope);
    case TensorType::Q4_K: return launch_rs_bt<WQ4_K, WQ4_K>(segs, count, t0, k, x, m, plan, ws, counters, out_bf16, stream, rope);
    default: return launch_rs_bt<WQ6_K, WQ6_K>(segs, count, t0, k, x, m, plan, ws, counters, out_bf16, stream, rope);
  }
}
}  // namespace

bool dq_tma_swiglu_supports(TensorType type, int64_t n, int64_t k) {
  return dq_tma_supports(type, k) && n > 0 && n % 8 == 0 && n <= (int64_t(1) << 31) - 128;
}

DqMmaPlan dq_tma_swiglu_plan(int64_t n, int64_t m, const DqMmaPlan& like) {
  DqMmaPlan p = like;
  const int64_t toks = int64_t(like.nt) * 8;
  p.tok_tiles = toks > 0 ? unsigned((m + toks - 1) / toks) : 0;
  p.row_tiles = unsigned((n + kTileRows / 2 - 1) / (kTileRows / 2));
  p.splits = std::max(like.splits, 1u);
  p.ws_floats = p.splits > 1 ? size_t(p.tok_tiles) * p.row_tiles * p.splits * kTileRows * size_t(toks) : 0;
  p.counters = p.splits > 1 ? size_t(p.tok_tiles) * p.row_tiles : 0;
  return p;
}

DqSwigluCut dq_tma_swiglu_cut(TensorType type, const void* gate, const void* up, void* out, int64_t n, int64_t k, int64_t m, int sms,
                              const DqMmaPlan& like, bool split_tail) {
  DqSwigluCut c;  // host arithmetic only (unit-tested without a GPU)
  if (like.rs != 4 || like.nt != 32 || like.splits != 1 || n <= 0 || k <= 0 || k % 256 != 0 || m <= 0 || sms <= 0) return c;
  if (type != TensorType::Q8_0 && type != TensorType::Q4_K && type != TensorType::Q6_K) return c;
  const int64_t pairs = (n + kTileRows / 2 - 1) / (kTileRows / 2), tok = (m + 255) / 256, waves = pairs * tok / sms;
  if (waves < 1) return c;
  const int64_t main_pairs = waves * sms / tok, tail_pairs = pairs - main_pairs;
  // The rest as 128-token tiles (or 256-token tiles split two ways), one wave at most.
  const int64_t tail_blocks = split_tail ? tail_pairs * tok * 2 : tail_pairs * ((m + 127) / 128);
  if (tail_pairs <= 0 || tail_blocks > sms) return c;
  c.main_rows = main_pairs * (kTileRows / 2);
  c.main_plan = dq_tma_swiglu_plan(c.main_rows, m, like);
  DqMmaPlan tail = like;
  if (split_tail) {
    tail.splits = 2;
  } else {
    tail.nt = 16;
  }
  c.tail_plan = dq_tma_swiglu_plan(n - c.main_rows, m, tail);
  const size_t rb = weight_row_bytes(type, k);
  c.tail_gate = static_cast<const uint8_t*>(gate) + size_t(c.main_rows) * rb;
  c.tail_up = static_cast<const uint8_t*>(up) + size_t(c.main_rows) * rb;
  c.tail_out = static_cast<uint8_t*>(out) + size_t(c.main_rows) * 2;
  return c;
}

cudaError_t launch_dq_tma_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* x, int64_t m,
                                 const DqMmaPlan& plan, float* ws, int32_t* counters, void* out, int64_t ldo, cudaStream_t stream) {
  g_problem = "";
  if (!dq_tma_swiglu_supports(type, n, k) || gate == nullptr || up == nullptr || out == nullptr) return refuse("the weights' type, n or k");
  if (plan.rs != 4 || int64_t(plan.row_tiles) != (n + kTileRows / 2 - 1) / (kTileRows / 2) || plan.row_tiles > 65535u ||
      plan.splits < 1 || plan.splits > 65535u) {
    return refuse("the plan");
  }
  if (m <= 0 || m > (int64_t(1) << 31) - 256 || int64_t(plan.tok_tiles) * plan.nt * 8 < m) return refuse("the token rows");
  if (ldo < n) return refuse("the output's row stride");
  if (plan.splits > 1 && (ws == nullptr || counters == nullptr)) return refuse("the K split's scratch");
  if ((reinterpret_cast<uintptr_t>(x) & 15) != 0) return refuse("x not 16-byte aligned");
  switch (type) {
    case TensorType::Q8_0: return launch_swiglu_bt<WQ8_0>(gate, up, n, k, x, m, plan, ws, counters, out, ldo, stream);
    case TensorType::Q4_K: return launch_swiglu_bt<WQ4_K>(gate, up, n, k, x, m, plan, ws, counters, out, ldo, stream);
    default: return launch_swiglu_bt<WQ6_K>(gate, up, n, k, x, m, plan, ws, counters, out, ldo, stream);
  }
}

namespace {
cudaError_t launch_any(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                       float* ws, int32_t* counters, void* out, bool out_bf16, int64_t ldo, const float* bias, cudaStream_t stream) {
  if (plan.rs == 4) {  // the register-A kernel: a group of one (launch_dq_tma_group checks the arguments)
    const DqSeg seg{type, w, n, out, ldo, bias};
    return launch_dq_tma_group(&seg, 1, k, x, m, plan, ws, counters, out_bf16, stream);
  }
  if (!dq_tma_supports(type, k) || plan.rs != 3 || m <= 0 || n <= 0 || m > (int64_t(1) << 31) - 256 ||
      n > (int64_t(1) << 31) - 128 || plan.row_tiles > 65535u || plan.splits > 65535u ||
      (plan.splits > 1 && (ws == nullptr || counters == nullptr)) || (reinterpret_cast<uintptr_t>(x) & 15) != 0) {
    return cudaErrorInvalidValue;
  }
  if (out_bf16) return cudaErrorInvalidValue;  // round 26's kernel writes f32 only
  float* o = static_cast<float*>(out);
  switch (type) {
    case TensorType::Q8_0: return launch_kind3_bt<WQ8_0>(w, n, k, x, m, plan, ws, counters, o, ldo, bias, stream);
    case TensorType::Q4_K: return launch_kind3_bt<WQ4_K>(w, n, k, x, m, plan, ws, counters, o, ldo, bias, stream);
    default: return launch_kind3_bt<WQ6_K>(w, n, k, x, m, plan, ws, counters, o, ldo, bias, stream);
  }
}
}  // namespace

cudaError_t launch_dq_tma(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                          float* ws, int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  return launch_any(type, w, n, k, x, m, plan, ws, counters, out, false, ldo, bias, stream);
}

cudaError_t launch_dq_tma_bf16(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                               float* ws, int32_t* counters, void* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  if (plan.rs != 4) return cudaErrorInvalidValue;
  return launch_any(type, w, n, k, x, m, plan, ws, counters, out, true, ldo, bias, stream);
}

}  // namespace vellum::cuda
