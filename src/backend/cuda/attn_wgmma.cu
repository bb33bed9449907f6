// The tensor-core prefill attention on warpgroup MMA (attn_wgmma.h; round 27).
//
// Round 25 left attn_tc_kernel (mma.sync) at 230 TFLOP/s at 8k tokens: every K and V fragment of a
// tile passes through registers (ldmatrix) for each warp's 16 rows, so each warp reads the whole
// tile from shared memory for 16 rows of work. Here a warpgroup owns the tile's 64 query rows of one
// head and the tensor cores read K and V from shared memory themselves:
// - S = Q·Kᵀ: 8 wgmma m64nNKVk16, A = Q (rounded to the pool's type once, a K-major tile in shared
//   memory), B = the K tile, K-major;
// - the online softmax in f32 on S in the accumulator layout: attn_tc_kernel's step
//   (online_softmax.cuh);
// - O += P·V: NKV/16 wgmma m64n128k16, A = P rounded to the pool's type in registers (S's
//   accumulator layout is wgmma's A layout), B = the V tile read MN-major (transposed by the
//   instruction, no copy).
// K and V tiles share one shared-memory layout: two 64-dim halves, each NKV rows of 128 bytes in
// the 128-byte swizzle, so one copy pattern (cp.async through the block table) fills both.
// A block holds HPB warpgroups, one query head each over the same K/V tiles (a KV group's heads);
// with two, they take turns issuing their products (FlashAttention-3's ping-pong), so that one's
// softmax runs while the other's products hold the tensor cores.
// Each wgmma group is awaited before its results are read, and P's registers are fenced until the
// products reading them are done: ptxas gave P's registers to a live Q when Q was A in registers
// (round 27, docs/cuda.md), which is why Q now sits in shared memory.
// Who fills the K/V stages (CP): every thread with cp.async (round 27), a copying warpgroup with
// cp.async (round 31), or one copying warp that has the bulk tensor copy engine move each KV
// block's rows (round 39: the warpgroup's address arithmetic was ~38% of the launch's instructions).

#include "backend/cuda/attn_wgmma.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "backend/cuda/block_slot.cuh"
#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/online_softmax.cuh"
#include "backend/cuda/pack16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/tensor_map.h"
#include "backend/cuda/tma.cuh"
#include "backend/cuda/warp_reduce.cuh"
#include "backend/cuda/wgmma.cuh"

namespace vellum::cuda {
namespace {

constexpr int kHD = 128;  // head dims this kernel takes

enum : int { kCpAll = 0, kCpGroup = 1, kCpTma = 2 };  // who copies the K/V tiles (above)
constexpr int copier_threads(int cp) { return cp == kCpGroup ? 128 : cp == kCpTma ? 32 : 0; }

// The TMA copier's view of the pool: rows of kv_heads x 128 elements (the tensor map's), where slot
// s of block b of this layer's K is row b * per_block + k_row + s (V: v_row), and boxes of `box`
// rows (min(block size, NKV)) that never cross a block.
struct KvRows {
  int per_block = 0, k_row = 0, v_row = 0, box = 0;
  int poison = 0;  // checks only (set_attn_wg_poison): the stages start as NaN, so unzeroed rows would show
};

template <int NKV, int STAGES, int HPB>
constexpr int wg_smem_bytes() {  // stages × (K, V) × NKV rows × 256 bytes, Q tiles, + 1 KiB to align atoms
  return STAGES * 2 * NKV * kHD * 2 + HPB * 64 * kHD * 2 + 1024;
}

// Named barriers 1 and 2 (0 is __syncthreads): warpgroup w waits on 1 + w for its turn at the
// tensor cores and hands the turn to the other by arriving on the other's barrier.
__device__ __forceinline__ void named_sync(int id, int threads) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory"); }
__device__ __forceinline__ void named_arrive(int id, int threads) { asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory"); }

// CP = kCpGroup (round 31): a third warpgroup copies the K/V tiles (cp.async through the block
// table) and hands each stage over on mbarriers: full[s] when a tile has landed, empty[s] when
// both multiplying warpgroups are done with it. The multiplying warpgroups then never meet at a
// block barrier, so one can start its next tile's products while the other is still in its softmax
// or P·V, and they issue no copies. Without WS every thread copies and a block barrier a tile hands the stage
// over (round 27). CP = kCpTma (round 39): one warp after the multiplying warpgroups; per tile its
// lanes look up one box of rows each in the block table and have the copy engine land K and V on
// full[s] (the expected bytes announced first); the rows of boxes past the context are zeroed
// (their weights are 0, but 0 times a NaN left in shared memory is not).
template <typename T, int NKV, int STAGES, int HPB, int CP>
__global__ void __launch_bounds__(128 * HPB + copier_threads(CP), 1)
    attn_wg_kernel(AttnParams p, const AttnTile* tiles, int n_tiles, int pingpong, int heads_fastest, const __grid_constant__ CUtensorMap kvmap,
                   KvRows kr) {
  pdl_wait();
  constexpr bool WS = CP != kCpAll;
  static_assert(!WS || HPB == 2, "the copying threads feed two-head blocks only (launch_kv)");
  constexpr int NT = CP == kCpGroup ? 128 : 128 * HPB, KK = kHD / 16, NS = NKV / 8, ND = kHD / 8;
  constexpr int kHalf = NKV * 128;     // bytes of one 64-dim half of a K or V tile
  constexpr int kTile = 2 * kHalf;     // one K (or V) tile
  constexpr int kQTile = 64 * kHD * 2;  // a warpgroup's 64 query rows
  extern __shared__ uint8_t wg_smem_raw[];
  uint8_t* const smem = wg_smem_raw + ((1024 - (__cvta_generic_to_shared(wg_smem_raw) & 1023)) & 1023);
  const int bt = heads_fastest ? int(blockIdx.y) : int(blockIdx.x), bh = heads_fastest ? int(blockIdx.x) : int(blockIdx.y);
  const AttnTile tile = tiles[n_tiles - 1 - bt];  // longest contexts first
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, gr = lane >> 2, gc = lane & 3;
  const int G = p.heads / p.kv.kv_heads;
  // The copying warpgroup (WS) copies for the block's KV head: its heads are one KV group's.
  const int h = bh * HPB + min(warp / 4, HPB - 1), kvh = h / G;
  const int ctx_last = tile.ctx0 + tile.rows - 1;
  const int i0 = warp % 4 * 16 + gr, i1 = i0 + 8;  // query rows (past the tile: never stored)
  const int c0 = min(tile.ctx0 + i0, ctx_last), c1 = min(tile.ctx0 + i1, ctx_last);
  const int warp_ctx_min = min(tile.ctx0 + warp % 4 * 16, ctx_last);
  // Ping-pong (two warpgroups): their wgmma groups take turns, 0 first, so that one's softmax runs
  // while the other's products occupy the tensor cores (issued at once, they would finish together
  // and leave the tensor cores idle through both softmaxes).
  const int wgi = warp / 4;
  const bool pp = HPB == 2 && pingpong != 0;
  __shared__ uint64_t full[STAGES], empty[STAGES];  // WS only
  const bool copier = WS && wgi == HPB;
  if (kr.poison != 0) {
    for (int c = threadIdx.x; c < STAGES * 2 * kTile / 16; c += blockDim.x) reinterpret_cast<uint4*>(smem)[c] = make_uint4(~0u, ~0u, ~0u, ~0u);
    __syncthreads();
  }
  if constexpr (WS) {
    if (threadIdx.x == 0) {
      for (int st = 0; st < STAGES; ++st) mbar_init(&full[st], CP == kCpTma ? 1 : 128), mbar_init(&empty[st], 128 * HPB);
      mbar_init_fence();
    }
    __syncthreads();
    // Meant to move registers to the multiplying warpgroups; ptxas (CUDA 13) ignores both (C7507:
    // the copying warpgroup's addressing needs more than 40), so every warp keeps the launch's 168,
    // in which the multiplying code fits without spills. They stay because they order the prologue
    // of the SASS that round 31 measured.
    if constexpr (CP == kCpGroup) {
      if (copier) {
        setmaxnreg_dec<40>();
      } else {
        setmaxnreg_inc<232>();
      }
    }
  }
  // The copying warp goes its own way before the multiplying warpgroups' setup (its few registers).
  if constexpr (CP == kCpTma) {
    if (copier) {  // tile j into stage j % STAGES once both multiplying warpgroups are done with j - STAGES
      const int32_t* table = p.tables + tile.table;
      const int n_kv = (ctx_last + NKV - 1) / NKV, bs = p.kv.block_size, box = kr.box, boxes = NKV / box;
      for (int j = 0; j < n_kv; ++j) {
        const int st = j % STAGES, t0 = j * NKV;
        if (j >= STAGES) mbar_wait(&empty[st], (j / STAGES - 1) & 1);
        const int loaded = min(boxes, (ctx_last - t0 + box - 1) / box);  // boxes holding a visible position
        uint8_t* const ks = smem + st * 2 * kTile;
        uint8_t* const vs = ks + kTile;
        if (loaded < boxes) {  // V's rows past them: zeros, both 64-dim halves (whole rows: the swizzle keeps them)
          for (int c = (loaded * box) * 16 + lane; c < NKV * 16; c += 32) {
            *reinterpret_cast<uint4*>(vs + (c % 16) / 8 * kHalf + c / 16 * 128 + (c % 8) * 16) = make_uint4(0u, 0u, 0u, 0u);
          }
          fence_proxy_async_smem();
        }
        __syncwarp();
        if (lane == 0) mbar_arrive_expect_tx(&full[st], uint32_t(loaded) * 4u * uint32_t(box) * 128u);
        __syncwarp();
        if (lane < loaded) {
          const int pos = t0 + lane * box, row = table[pos / bs] * kr.per_block + pos % bs, col = kvh * kHD;
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            tma_load_2d(ks + half * kHalf + lane * box * 128, &kvmap, col + half * 64, row + kr.k_row, &full[st]);
            tma_load_2d(vs + half * kHalf + lane * box * 128, &kvmap, col + half * 64, row + kr.v_row, &full[st]);
          }
        }
      }
      return;
    }
  }
  if (pp && wgi == 1) named_arrive(1, 256);

  // Q as the S products' A operand: this warpgroup's 64 rows in a K-major tile after the stages (two
  // 64-dim halves of 8 KiB, 128-byte swizzle), rounded to the pool's type; rows past the tile repeat
  // its last row. (From registers, ptxas gave P's registers Q's while Q was still live across the
  // loop: call 6 of round 27.) Written before the proxy fence and the loop's first block barrier
  // (WS: named barrier 3 of the multiplying warpgroups). The copying warpgroup writes none.
  uint8_t* const qt = smem + STAGES * 2 * kTile + (copier ? 0 : warp / 4) * kQTile;
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    if (copier) break;
    const int idx = threadIdx.x % 128 + c * 128, row = idx / 16, ch16 = idx % 16;
    const int64_t at = int64_t(tile.row0 + min(row, tile.rows - 1)) * p.ldq + int64_t(h) * kHD + ch16 * 8;
    uint4 packed;
    if (p.q16 != nullptr) {  // rotated and rounded already (launch_rope_kv_rows)
      packed = *reinterpret_cast<const uint4*>(static_cast<const T*>(p.q16) + at);
    } else {
      const float4 a = *reinterpret_cast<const float4*>(p.q + at), b = *reinterpret_cast<const float4*>(p.q + at + 4);
      packed = make_uint4(pack2(a.x, a.y, T{}), pack2(a.z, a.w, T{}), pack2(b.x, b.y, T{}), pack2(b.z, b.w, T{}));
    }
    *reinterpret_cast<uint4*>(qt + ch16 / 8 * 8192 + sw128(row, ch16 % 8)) = packed;
  }

  const int32_t* table = p.tables + tile.table;
  const int64_t row_elems = int64_t(p.kv.kv_heads) * kHD;
  const T* pool = static_cast<const T*>(p.kv.pool);
  const int n_kv = (ctx_last + NKV - 1) / NKV;
  // Thread t copies 16-byte chunk t % 16 of rows t / 16 + STEP·k of each tile; all its rows have the
  // same row % 8, so the chunk's swizzled place in a row is fixed.
  constexpr int STEP = NT / 16, RPT = NKV / STEP;
  static_assert(STEP % 8 == 0 && NKV % STEP == 0, "a thread's rows share row % 8");
  const int ct = WS ? threadIdx.x % 128 : threadIdx.x;  // this thread's place among the copying threads
  const int ch = ct % 16, pr0 = ct / 16;
  const uint32_t dst0 = uint32_t(ch / 8 * kHalf + pr0 * 128 + (((ch % 8) ^ (pr0 & 7)) << 4));
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  int blk[RPT], slot[RPT];
  auto fetch = [&](int j) { table_rows(table, j * NKV + pr0, STEP, p.kv.block_size, ctx_last, blk, slot); };
  auto issue = [&](int j) {  // tile j into stage j % STAGES; always one commit group
    if (j < n_kv) {
      const uint32_t ks = smem_base + uint32_t((j % STAGES) * 2 * kTile) + dst0, vs = ks + kTile;
#pragma unroll
      for (int k = 0; k < RPT; ++k) {
        const bool in = blk[k] >= 0;
        const T* base = pool + (in ? int64_t(blk[k]) * p.kv.block_elems + int64_t(slot[k]) * row_elems + int64_t(kvh) * kHD + ch * 8 : 0);
        cp_async16_z(ks + k * STEP * 128, in ? base + p.kv.k_off : pool, in);
        cp_async16_z(vs + k * STEP * 128, in ? base + p.kv.v_off : pool, in);
      }
    }
    cp_async_commit();
  };

  const float sl2 = p.scale * 1.4426950408889634f;  // exp(x) = exp2(x · log2 e)
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
  float o[ND][4], s[NS][4];
#pragma unroll
  for (int d = 0; d < ND; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
#pragma unroll
  for (int n = 0; n < NS; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;

  if constexpr (CP == kCpTma) {
    fence_proxy_async();  // Q's tile, for the S products
    named_sync(3, 128 * HPB);
  } else if constexpr (WS) {
    if (copier) {  // tile j into stage j % STAGES once both multiplying warpgroups are done with j - STAGES
      fetch(0);
      for (int j = 0; j < n_kv; ++j) {
        if (j >= STAGES) mbar_wait(&empty[j % STAGES], (j / STAGES - 1) & 1);
        issue(j);
        fetch(j + 1);
        if (j > 0) {
          cp_async_wait<1>();  // tile j - 1 landed
          fence_proxy_async();
          mbar_arrive(&full[(j - 1) % STAGES]);
        }
      }
      cp_async_wait<0>();
      fence_proxy_async();
      mbar_arrive(&full[(n_kv - 1) % STAGES]);
      return;
    }
    fence_proxy_async();  // Q's tile, for the S products
    named_sync(3, 128 * HPB);
  } else {
#pragma unroll
    for (int j = 0; j < STAGES - 1; ++j) {
      fetch(j);
      issue(j);
    }
    fetch(STAGES - 1);
  }
  // The tile's S products (Q's 64 rows against the K tile at kt) and its O += P·V products (V at vt).
  const auto issue_s = [&](const uint8_t* kt) {
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
      WgmmaSs<NKV, T>::run(s, smem_desc_sw128(qt + kk / 4 * 8192 + kk % 4 * 32), smem_desc_sw128(kt + kk / 4 * kHalf + kk % 4 * 32),
                           kk > 0);
    }
    wgmma_commit();
  };
  const auto issue_pv = [&](const uint8_t* vt, const uint32_t(&pa)[NKV / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < NKV / 16; ++kk) {
      // V: 16 rows of K from row 16kk, its two 64-dim halves kHalf bytes apart, 8-row groups 1 KiB apart.
      WgmmaRs<kHD, T, 1>::run(o, pa[kk], smem_desc_sw128_mn(vt + kk * 16 * 128, kHalf, 1024), 1);
    }
    wgmma_commit();
  };
  // The online softmax of the tile at t0 on S (two copies: the mask's compares and selects only where
  // the tile reaches the warp's rows; as one predicated body they ran on every tile, ~25% of its
  // instructions), its weights rounded into P.
  const auto softmax_into = [&](int t0, uint32_t(&pa)[NKV / 16][4], float& a0, float& a1) {
    if (t0 + NKV > warp_ctx_min) {
      online_softmax_tile(s, t0, true, c0, c1, gc, sl2, m0, m1, l0, l1, a0, a1);
    } else {
      online_softmax_tile(s, t0, false, c0, c1, gc, sl2, m0, m1, l0, l1, a0, a1);
    }
#pragma unroll
    for (int kk = 0; kk < NKV / 16; ++kk) {
      pa[kk][0] = pack2(s[2 * kk][0], s[2 * kk][1], T{}), pa[kk][1] = pack2(s[2 * kk][2], s[2 * kk][3], T{});
      pa[kk][2] = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], T{}), pa[kk][3] = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], T{});
    }
  };
  for (int j = 0; j < n_kv; ++j) {
    if constexpr (WS) {
      mbar_wait(&full[j % STAGES], (j / STAGES) & 1);
    } else {
      cp_async_wait<STAGES - 2>();  // this thread's copies of tile j landed
      fence_proxy_async();          // ... and are visible to wgmma
      __syncthreads();              // everyone's; and the stage read at j - 1 is free (its wgmma were awaited)
      issue(j + STAGES - 1);
      fetch(j + STAGES);
    }
    const uint8_t* kt = smem + (j % STAGES) * 2 * kTile;
    const uint8_t* vt = kt + kTile;
    const int t0 = j * NKV;

    wgmma_fence_operands(s);
    if (pp) named_sync(1 + wgi, 256);
    wgmma_fence();
    issue_s(kt);
    if (pp) named_arrive(2 - wgi, 256);
    wgmma_wait<0>();
    wgmma_fence_operands(s);

    float a0, a1;
    uint32_t pa[NKV / 16][4];
    softmax_into(t0, pa, a0, a1);
    rescale_rows(o, a0, a1);
    wgmma_fence_operands(pa);
    wgmma_fence_operands(o);
    if (pp) named_sync(1 + wgi, 256);
    wgmma_fence();
    issue_pv(vt, pa);
    if (pp) named_arrive(2 - wgi, 256);
    wgmma_wait<0>();
    wgmma_fence_operands(o);
    wgmma_fence_operands(pa);  // P's registers stay P's until the products reading them are done
    if constexpr (WS) mbar_arrive(&empty[j % STAGES]);
  }
  if constexpr (!WS) cp_async_wait<0>();
  l0 += __shfl_xor_sync(kFull, l0, 1);
  l0 += __shfl_xor_sync(kFull, l0, 2);
  l1 += __shfl_xor_sync(kFull, l1, 1);
  l1 += __shfl_xor_sync(kFull, l1, 2);
  const int64_t at0 = int64_t(tile.row0 + i0) * p.ldo + int64_t(h) * kHD + gc * 2, at1 = at0 + 8 * p.ldo;
  store_rows(o, l0, l1, p.out + at0, p.out + at1, i0 < tile.rows, i1 < tile.rows);
  if (p.out16 != nullptr) {  // the output projection's bf16 copy: store_rows' values, rounded
    auto* o16 = static_cast<__nv_bfloat16*>(p.out16);
    const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
#pragma unroll
    for (int d = 0; d < ND; ++d) {
      if (i0 < tile.rows) *reinterpret_cast<uint32_t*>(o16 + at0 + d * 8) = pack2(o[d][0] * inv0, o[d][1] * inv0, __nv_bfloat16{});
      if (i1 < tile.rows) *reinterpret_cast<uint32_t*>(o16 + at1 + d * 8) = pack2(o[d][2] * inv1, o[d][3] * inv1, __nv_bfloat16{});
    }
  }
}

int g_wg = -1;     // -1: not read from the environment yet
int g_wg_kv = -1;
int env_or(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e != nullptr ? std::atoi(e) : fallback;
}

int g_poison = 0;  // set_attn_wg_poison
int64_t g_launches[3] = {};  // by copier (attn_wg_launches)

template <typename T, int NKV, int kStages, int HPB, int CP>
cudaError_t launch_wg(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream, const CUtensorMap& map, KvRows kr) {
  constexpr bool WS = CP != kCpAll;
  constexpr int smem = wg_smem_bytes<NKV, kStages, HPB>();
  static_assert(smem + 2 * 8 * kStages <= 232448, "227 KiB a block at most");
  const auto kernel = attn_wg_kernel<T, NKV, kStages, HPB, CP>;
  static bool raised = false;
  if (!raised) {
    const cudaError_t rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  // Which index the hardware dispatches first. Tiles fastest (round 27), the blocks running at once
  // are mostly one head pair's query tiles, longest first: one KV head's K/V in L2. With few tiles a
  // head, the later head pairs' longest tiles then start last and leave a tail, so there the head
  // pairs go fastest (every head's longest tiles first). Round 31: 2 048 tokens 222 -> 264 TFLOP/s,
  // 8 192 (128 tiles) 346 -> 343. VELLUM_CUDA_ATTN_WG_ORDER=0 / 1 forces either.
  // Round 27's kernel keeps tiles fastest (not measured the other way).
  static const int order = env_or("VELLUM_CUDA_ATTN_WG_ORDER", -1);
  const int heads_fastest = n_tiles > 65535 ? 0 : order >= 0 ? order : WS && n_tiles <= 64 ? 1 : 0;
  // Turns (the two warpgroups' products in turn): with the copying warpgroup they cost more than they
  // give on long prefills. Round 31, one sequence: 8 192 tokens (128 tiles) 346-348 TFLOP/s with
  // turns, 351-353 without; 2 048 the same; 512 107-109 with, 105-106 without. Round 27's kernel
  // keeps them (worth 6-8% there), and so does the copying warp (round 39: 8 192 tokens 517 TFLOP/s
  // with turns, 509 without; 512 and 2 048 took them already). VELLUM_CUDA_ATTN_WG_PP=0 / 1 forces
  // either.
  static const int turns = env_or("VELLUM_CUDA_ATTN_WG_PP", -1);
  const int pingpong = turns >= 0 ? turns : CP == kCpGroup && n_tiles > 64 ? 0 : 1;
  const dim3 grid = heads_fastest ? dim3(unsigned(p.heads / HPB), unsigned(n_tiles)) : dim3(unsigned(n_tiles), unsigned(p.heads / HPB));
  kr.poison = g_poison;
  ++g_launches[CP];
  launch_kernel(kernel, grid, 128 * HPB + copier_threads(CP), smem, stream, p, tiles, n_tiles, pingpong, heads_fastest, map, kr);
  return cudaGetLastError();
}

// VELLUM_CUDA_ATTN_WG_WS=0 / 1 / 2: round 27's kernel (every thread copies; a block barrier a
// tile), round 31's copying warpgroup, round 39's copying warp (the default where it applies).
int g_copier = env_or("VELLUM_CUDA_ATTN_WG_WS", -1);

// The copying warp's tensor map (the pool as rows of kv_heads x 128 elements, boxes of 64 elements
// x kr.box rows in the 128-byte swizzle), made once per pool and layer shape. False where the pool's
// layout does not fit it: a layer's K and V must start on whole rows, boxes must split NKV and the
// block size evenly in multiples of 8 rows (the swizzle's 1 KiB atoms), rows must fit in an int.
bool tma_view(const AttnParams& p, int nkv, CUtensorMap& map, KvRows& kr) {
  const int64_t row = int64_t(p.kv.kv_heads) * kHD, bs = p.kv.block_size, box = std::min<int64_t>(bs, nkv);
  if (p.kv.blocks <= 0 || bs <= 0 || p.kv.block_elems % row != 0 || p.kv.k_off % row != 0 || p.kv.v_off % row != 0 || box % 8 != 0 ||
      nkv % box != 0 || bs % box != 0 || reinterpret_cast<uintptr_t>(p.kv.pool) % 16 != 0 || !tensor_maps_available()) {
    return false;
  }
  const int64_t per_block = p.kv.block_elems / row, rows = p.kv.blocks * per_block;
  if (rows >= (int64_t(1) << 31)) return false;
  kr.per_block = int(per_block), kr.k_row = int(p.kv.k_off / row), kr.v_row = int(p.kv.v_off / row), kr.box = int(box);
  struct Cached {
    const void* pool = nullptr;
    int64_t row = 0, rows = 0, box = 0;
    CUtensorMap map{};
  };
  static thread_local Cached cached;
  if (cached.pool != p.kv.pool || cached.row != row || cached.rows != rows || cached.box != box) {
    if (encode_tensor_map_2d(cached.map, CU_TENSOR_MAP_DATA_TYPE_UINT16, p.kv.pool, uint64_t(row), uint64_t(rows), uint64_t(row) * 2, 64,
                             uint32_t(box), CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B) != cudaSuccess) {
      cached.pool = nullptr;
      return false;
    }
    cached.pool = p.kv.pool, cached.row = row, cached.rows = rows, cached.box = box;
  }
  map = cached.map;
  return true;
}

// The copying threads feed blocks of two heads (a KV group of even size, the shape the checks and
// timings cover: 32q/8kv); a block of one head keeps round 27's kernel. Three stages with copying
// threads (they keep two tiles in flight; round 31: 2 stages 269 TFLOP/s at 8k, 3 stages 346), two
// without them (round 27: 3 stages no faster). VELLUM_CUDA_ATTN_WG_STAGES=2 / 3 forces either.
template <typename T, int NKV>
cudaError_t launch_kv(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream) {
  const bool pair = (p.heads / p.kv.kv_heads) % 2 == 0;
  CUtensorMap map{};
  KvRows kr;
  const int copier = !pair || g_copier == 0 ? kCpAll : g_copier != 1 && tma_view(p, NKV, map, kr) ? kCpTma : kCpGroup;
  static const int forced = env_or("VELLUM_CUDA_ATTN_WG_STAGES", 0);
  const bool three = forced == 3 || (forced != 2 && copier != kCpAll);
  if (copier == kCpTma) {
    return three ? launch_wg<T, NKV, 3, 2, kCpTma>(p, tiles, n_tiles, stream, map, kr)
                 : launch_wg<T, NKV, 2, 2, kCpTma>(p, tiles, n_tiles, stream, map, kr);
  }
  if (copier == kCpGroup) {
    return three ? launch_wg<T, NKV, 3, 2, kCpGroup>(p, tiles, n_tiles, stream, map, kr)
                 : launch_wg<T, NKV, 2, 2, kCpGroup>(p, tiles, n_tiles, stream, map, kr);
  }
  if (pair) {
    return three ? launch_wg<T, NKV, 3, 2, kCpAll>(p, tiles, n_tiles, stream, map, kr)
                 : launch_wg<T, NKV, 2, 2, kCpAll>(p, tiles, n_tiles, stream, map, kr);
  }
  return three ? launch_wg<T, NKV, 3, 1, kCpAll>(p, tiles, n_tiles, stream, map, kr)
               : launch_wg<T, NKV, 2, 1, kCpAll>(p, tiles, n_tiles, stream, map, kr);
}
template <typename T>
cudaError_t launch_type(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream) {
  return attn_wg_kv() == 128 ? launch_kv<T, 128>(p, tiles, n_tiles, stream) : launch_kv<T, 64>(p, tiles, n_tiles, stream);
}

}  // namespace

bool attn_wg_on() {
  if (g_wg < 0) g_wg = env_or("VELLUM_CUDA_ATTN_WG", 1) != 0 ? 1 : 0;
  return g_wg == 1;
}
void set_attn_wg(bool on) { g_wg = on ? 1 : 0; }
void set_attn_wg_copier(int copier) { g_copier = copier; }
int64_t attn_wg_launches(int copier) { return copier >= 0 && copier < 3 ? g_launches[copier] : 0; }
void set_attn_wg_poison(bool on) { g_poison = on ? 1 : 0; }
void set_attn_wg_kv(int positions) { g_wg_kv = positions == 128 ? 128 : 64; }
int attn_wg_kv() {
  if (g_wg_kv < 0) set_attn_wg_kv(env_or("VELLUM_CUDA_ATTN_WG_KV", 128));
  return g_wg_kv;
}

bool attn_wg_takes(const AttnParams& p) {
  return attn_wg_on() && p.spans == 0 && p.kv.head_dim == kHD && (p.kv.type == TensorType::F16 || p.kv.type == TensorType::BF16) &&
         p.kv.block_elems % 8 == 0 && p.kv.k_off % 8 == 0 && p.kv.v_off % 8 == 0 && p.heads % p.kv.kv_heads == 0;
}

cudaError_t launch_attention_wg(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream) {
  if (n_tiles == 0) return cudaSuccess;
  if (!attn_wg_takes(p)) return cudaErrorInvalidValue;
  return p.kv.type == TensorType::F16 ? launch_type<__half>(p, tiles, n_tiles, stream)
                                      : launch_type<__nv_bfloat16>(p, tiles, n_tiles, stream);
}

}  // namespace vellum::cuda
